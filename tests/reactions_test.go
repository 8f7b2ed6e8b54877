package tests

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/Khan/genqlient/graphql"
)

// counted is a list of reaction counts as "LIKE=2,CLAP=1".
func counted[T any, P interface {
	*T
	GetKind() ReactionKind
	GetCount() int
}](list []T) string {
	var parts []string
	for i := range list {
		c := P(&list[i])
		parts = append(parts, fmt.Sprintf("%s=%d", c.GetKind(), c.GetCount()))
	}
	return strings.Join(parts, ",")
}

func kinds(list []ReactionKind) string {
	var parts []string
	for _, k := range list {
		parts = append(parts, string(k))
	}
	return strings.Join(parts, ",")
}

// TestReactionsAreOnceAKindAndCounted: readers react to a post and a
// comment, once a kind however often they send it, and take reactions
// back, once; the counts and the caller's own kinds follow, each
// reaction one TransactWriteItems. Anonymous callers get UNAUTHENTICATED,
// a draft NOT_FOUND.
func TestReactionsAreOnceAKindAndCounted(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	post := b.published[6]
	ann, bob := s.reader("ann", "Ann", ""), s.reader("bob", "Bob", "")

	react := func(c graphql.Client, id string, kind ReactionKind) ReactReactReactionPayload {
		t.Helper()
		return ok[*ReactResponse](t)(React(ctx, c, ReactionInput{SubjectId: id, Kind: kind})).React
	}
	for range 2 {
		p := react(ann, post, ReactionKindLike).Post
		equal(t, "TransactWriteItems of react", s.requests()["TransactWriteItems"], 1)
		equal(t, "counts after ann's like", counted(p.Reactions), "LIKE=1")
		equal(t, "ann's", kinds(p.ViewerReactions), "LIKE")
		equal(t, "ann has liked", p.ViewerHasReacted, true)
	}
	react(bob, post, ReactionKindClap)
	p := react(bob, post, ReactionKindLike).Post
	equal(t, "counts", counted(p.Reactions), "LIKE=2,CLAP=1")
	equal(t, "bob's", kinds(p.ViewerReactions), "LIKE,CLAP")

	anon := ok[*PostReactionsResponse](t)(PostReactions(ctx, s.client, post)).Post
	equal(t, "anonymous sees the counts", counted(anon.Reactions), "LIKE=2,CLAP=1")
	equal(t, "anonymous has none", kinds(anon.ViewerReactions), "")
	equal(t, "one BatchGetItem of counts for an anonymous reader", s.requests()["BatchGetItem"], 1)

	for range 2 {
		u := ok[*UnreactResponse](t)(Unreact(ctx, ann, ReactionInput{SubjectId: post, Kind: ReactionKindLike})).Unreact.Post
		equal(t, "counts after ann takes it back", counted(u.Reactions), "LIKE=1,CLAP=1")
		equal(t, "ann's after", kinds(u.ViewerReactions), "")
	}
	ok[*UnreactResponse](t)(Unreact(ctx, ann, ReactionInput{SubjectId: post, Kind: ReactionKindLove}))
	equal(t, "counts after taking back what was never given",
		counted(ok[*PostReactionsResponse](t)(PostReactions(ctx, s.client, post)).Post.Reactions), "LIKE=1,CLAP=1")

	// A comment's reactions are its own.
	c := ok[*AddCommentResponse](t)(AddComment(ctx, b.writers[0], AddCommentInput{PostId: post, Body: "Nice"})).AddComment.Comment
	cr := react(ann, c.Id, ReactionKindInsightful).Comment
	equal(t, "comment's counts", counted(cr.Reactions), "INSIGHTFUL=1")
	equal(t, "ann's on the comment", kinds(cr.ViewerReactions), "INSIGHTFUL")
	equal(t, "post's counts unchanged", counted(ok[*PostReactionsResponse](t)(PostReactions(ctx, s.client, post)).Post.Reactions), "LIKE=1,CLAP=1")

	_, err := React(ctx, s.client, ReactionInput{SubjectId: post, Kind: ReactionKindLike})
	equal(t, "anonymous react", code(err), "UNAUTHENTICATED")
	_, err = React(ctx, ann, ReactionInput{SubjectId: b.draft, Kind: ReactionKindLike})
	equal(t, "react to a draft", code(err), "NOT_FOUND")
	_, err = React(ctx, ann, ReactionInput{SubjectId: b.authors[0], Kind: ReactionKindLike})
	equal(t, "react to an author", code(err), "BAD_USER_INPUT")
	s.consistent()
}

// TestConcurrentReactionsCountTheReaders: readers reacting and taking
// their reactions back at once, several requests each, leave a count
// equal to the readers who hold the reaction, never below zero.
func TestConcurrentReactionsCountTheReaders(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	post := b.published[9]
	const readers = 8
	clients := make([]graphql.Client, readers)
	for i := range clients {
		clients[i] = s.reader(fmt.Sprintf("reader-%d", i), "Reader", "")
	}
	var wg sync.WaitGroup
	for i, c := range clients {
		for j := range 4 {
			wg.Go(func() {
				in := ReactionInput{SubjectId: post, Kind: ReactionKindLike}
				// Even goroutines react, odd ones take back; each reader's
				// last word is whichever lands last.
				if (i+j)%2 == 0 {
					if r, err := React(ctx, c, in); err == nil {
						for _, n := range r.React.Post.Reactions {
							if n.Count < 0 {
								t.Errorf("count %d", n.Count)
							}
						}
					} else {
						t.Error(err)
					}
				} else if _, err := Unreact(ctx, c, in); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	holding := 0
	for _, c := range clients {
		if kinds(ok[*PostReactionsResponse](t)(PostReactions(ctx, c, post)).Post.ViewerReactions) == "LIKE" {
			holding++
		}
	}
	want := ""
	if holding > 0 {
		want = fmt.Sprintf("LIKE=%d", holding)
	}
	equal(t, "count of likes", counted(ok[*PostReactionsResponse](t)(PostReactions(ctx, s.client, post)).Post.Reactions), want)
}
