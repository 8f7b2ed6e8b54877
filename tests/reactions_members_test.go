package tests

import (
	"context"
	"testing"

	"github.com/blogql/blog/auth"
)

const reactQuery = `mutation($s: ID!) { react(input: {subjectId: $s, kind: LIKE}) { post { reactions { kind count } } } }`

// TestReactionsNeedAMember: a reader signed in by a reader session reacts
// only as a member of the publication; one whose session is not a
// member's gets FORBIDDEN (reason NOT_MEMBER) and the counts stay as they
// were, while a member's reaction counts. Tokens of the staff's key react
// as before.
func TestReactionsNeedAMember(t *testing.T) {
	r := newSignInRig(t, 0)
	b := r.seedBlog(t)
	post := b.published[6]
	ctx := context.Background()

	// A reader session's token for an account that never signed in here.
	stranger := r.claims("acct-not-a-member", auth.RoleReader)
	stranger.SessionID = "some-session"
	token, err := auth.Sign(testReaderSecret, stranger)
	if err != nil {
		t.Fatal(err)
	}
	refused := r.gql(t, token, reactQuery, map[string]any{"s": post}, "", nil)
	equal(t, "a non-member's reaction", refused.code(), "FORBIDDEN")
	equal(t, "why", refused.ext("reason"), any("NOT_MEMBER"))
	equal(t, "counts after the refusal",
		counted(ok[*PostReactionsResponse](t)(PostReactions(ctx, r.client, post)).Post.Reactions), "")

	member := r.signInAs(t, "ann@example.com")
	var got struct {
		Post struct {
			Reactions []struct {
				Kind  string `json:"kind"`
				Count int    `json:"count"`
			} `json:"reactions"`
		} `json:"post"`
	}
	if a := r.gql(t, member.AccessToken, reactQuery, map[string]any{"s": post}, "react", &got); a.code() != "" {
		t.Fatalf("a member's reaction: %s", a.body)
	}
	equal(t, "TransactWriteItems of a member's reaction (the membership checked in it)", r.requests()["TransactWriteItems"], 1)
	equal(t, "counts after the member's", counted(ok[*PostReactionsResponse](t)(PostReactions(ctx, r.client, post)).Post.Reactions), "LIKE=1")

	ok[*ReactResponse](t)(React(ctx, r.reader("staff-signed-reader", "Reader", ""), ReactionInput{SubjectId: post, Kind: ReactionKindLike}))
	equal(t, "counts after a staff-signed reader's", counted(ok[*PostReactionsResponse](t)(PostReactions(ctx, r.client, post)).Post.Reactions), "LIKE=2")
	r.consistent()
}
