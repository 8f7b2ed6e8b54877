package tests

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

var repliesUnsubscribeLink = regexp.MustCompile(`http://127\.0\.0\.1:\d+/notifications/replies/unsubscribe\?token=[A-Za-z0-9_.%-]+`)

// TestReplyNotificationsTellTheMemberOnce: reply notifications are
// opt-in (a reply to Bob, who never opted in, emails nobody); Bob's reply
// to the comment of Ann, who opted in,
// emails Ann, by SMTP, once (the event handled again sends nothing), with
// both parts, a link to the reply and a working one-click unsubscribe
// link; Ann replying in her own thread, and a reply to a staff author's
// comment, email nobody; once Ann turns them off (by the link, or with
// setReplyNotifications) replies email her no more, and on again they
// do.
func TestReplyNotificationsTellTheMemberOnce(t *testing.T) {
	r := newNewsletterRig(t)
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, r.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada Lovelace"}))
	ada := r.as("ada", auth.RoleAuthor)
	ann := r.signInAs(t, "ann@example.com")
	bob := r.signInAs(t, "bob@example.com")
	optIn(t, r, ann.AccessToken)
	post := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Threads", Slug: "threads", Body: ptr("Talk.")})).CreatePost.Post.Id
	ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: post, SendNewsletter: ptr(false)}))
	r.awaitHandled(t, storage.EventPostPublished, post)

	// comment adds a comment as the reader of token (replying to parent
	// when set), waits until the worker handled it, and returns its id.
	comment := func(token, parent, body string) string {
		t.Helper()
		var c struct {
			Comment struct {
				ID string `json:"id"`
			} `json:"comment"`
		}
		vars := map[string]any{"p": post, "b": body, "parent": nil}
		if parent != "" {
			vars["parent"] = parent
		}
		if a := r.gql(t, token, `mutation($p: ID!, $b: String!, $parent: ID) { addComment(input: {postId: $p, body: $b, parentId: $parent}) { comment { id } } }`,
			vars, "addComment", &c); a.code() != "" {
			t.Fatalf("addComment = %s", a.body)
		}
		_, cid, _ := strings.Cut(rawID(t, c.Comment.ID, "Comment"), ":")
		r.awaitEvent(t, storage.EventCommentAdded, postIDOf(t, post), cid)
		return c.Comment.ID
	}

	anns := comment(ann.AccessToken, "", "First!")
	r.deliverN(t, 0)
	// Bob never opted in: a reply to his comment emails nobody.
	comment(ann.AccessToken, comment(bob.AccessToken, "", "Mine."), "Yours, Bob.")
	r.deliverN(t, 0)
	reply := comment(bob.AccessToken, anns, "Second, <b>Ann</b>.")
	emails := r.deliverN(t, 1)
	e := emails[0]
	equal(t, "To", e.header.Get("To"), "<ann@example.com>")
	equal(t, "Subject", e.header.Get("Subject"), "New reply to your comment on Threads")
	for part, body := range map[string]string{"text": e.text, "html": e.html} {
		if !strings.Contains(body, "https://blog.test/posts/threads#comment-"+reply) {
			t.Errorf("the %s part has no link to the reply: %q", part, body)
		}
	}
	if !strings.Contains(e.text, "Second, <b>Ann</b>.") || !strings.Contains(e.html, "Second, &lt;b&gt;Ann&lt;/b&gt;.") {
		t.Errorf("the parts do not quote the reply, escaped in HTML: %q / %q", e.text, e.html)
	}
	link := repliesUnsubscribeLink.FindString(e.text)
	if link == "" || !strings.Contains(e.html, link) {
		t.Fatalf("no reply unsubscribe link in both parts: %q", e.text)
	}
	equal(t, "List-Unsubscribe", e.header.Get("List-Unsubscribe"), "<"+link+">")
	equal(t, "List-Unsubscribe-Post", e.header.Get("List-Unsubscribe-Post"), "List-Unsubscribe=One-Click")

	// The same reply handled again (a retry of the worker) sends nothing.
	_, cid, _ := strings.Cut(rawID(t, reply, "Comment"), ":")
	if err := r.letters.NotifyReply(ctx, postIDOf(t, post), cid); err != nil {
		t.Fatal(err)
	}
	r.deliverN(t, 0)

	// Ann in her own thread, and Bob replying to Ada's comment: nobody.
	comment(ann.AccessToken, anns, "Thanks, Bob.")
	var adas struct {
		Comment struct {
			ID string `json:"id"`
		} `json:"comment"`
	}
	if a := r.gql(t, r.tokenOf("ada", auth.RoleAuthor), `mutation($p: ID!) { addComment(input: {postId: $p, body: "From the author."}) { comment { id } } }`,
		map[string]any{"p": post}, "addComment", &adas); a.code() != "" {
		t.Fatalf("addComment as the author = %s", a.body)
	}
	comment(bob.AccessToken, adas.Comment.ID, "Hello, Ada.")
	r.deliverN(t, 0)

	// The one-click POST turns them off, and a forged token does nothing.
	equal(t, "a forged token's status", httpStatus(t, http.MethodPost, strings.Replace(link, "token=", "token=x", 1)), http.StatusBadRequest)
	equal(t, "the one-click POST's status", httpStatus(t, http.MethodPost, link), http.StatusOK)
	comment(bob.AccessToken, anns, "Third.")
	r.deliverN(t, 0)

	const set = `mutation($on: Boolean!) { setReplyNotifications(input: {enabled: $on}) { enabled } }`
	if a := r.gql(t, "", set, map[string]any{"on": true}, "", nil); a.code() != "UNAUTHENTICATED" {
		t.Errorf("setReplyNotifications anonymously = %s, want UNAUTHENTICATED", a.body)
	}
	annsChoice := func() bool {
		t.Helper()
		m, _ := r.members(t, r.token(auth.RoleAdmin), map[string]any{"q": "ann@"})
		if len(m.Edges) != 1 {
			t.Fatalf("members matching ann@: %d", len(m.Edges))
		}
		return m.Edges[0].Node.ReplyNotifications
	}
	equal(t, "Ann's replyNotifications after the link", annsChoice(), false)
	if a := r.gql(t, ann.AccessToken, set, map[string]any{"on": true}, "", nil); a.code() != "" {
		t.Fatalf("setReplyNotifications = %s", a.body)
	}
	equal(t, "Ann's replyNotifications once on again", annsChoice(), true)
	comment(bob.AccessToken, anns, "Fourth.")
	equal(t, "the email of a reply once on again goes to", r.deliverN(t, 1)[0].header.Get("To"), "<ann@example.com>")
}

// TestReplyNotificationsWaitForApproval: with readers' comments held for
// moderation, a reply tells the member nothing while it is pending, once
// when it is approved, and nothing when it is rejected.
func TestReplyNotificationsWaitForApproval(t *testing.T) {
	r := newNewsletterRig(t)
	r.opts.Comments.Moderation = graph.HoldReaderComments
	r.serve()
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, r.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada Lovelace"}))
	ada := r.as("ada", auth.RoleAuthor)
	ann := r.signInAs(t, "ann@example.com")
	bob := r.signInAs(t, "bob@example.com")
	optIn(t, r, ann.AccessToken)
	post := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Held", Slug: "held"})).CreatePost.Post.Id
	ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: post, SendNewsletter: ptr(false)}))
	postID := postIDOf(t, post)

	// held adds a comment as the reader of token, held for moderation,
	// and waits until the worker handled its comment.pending.
	held := func(token, parent, body string) (gid, id string) {
		t.Helper()
		var c struct {
			Comment struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"comment"`
		}
		vars := map[string]any{"p": post, "b": body, "parent": nil}
		if parent != "" {
			vars["parent"] = parent
		}
		if a := r.gql(t, token, `mutation($p: ID!, $b: String!, $parent: ID) { addComment(input: {postId: $p, body: $b, parentId: $parent}) { comment { id status } } }`,
			vars, "addComment", &c); a.code() != "" || c.Comment.Status != "PENDING" {
			t.Fatalf("addComment = %s, want PENDING", a.body)
		}
		_, id, _ = strings.Cut(rawID(t, c.Comment.ID, "Comment"), ":")
		r.awaitEvent(t, storage.EventCommentPending, postID, id)
		return c.Comment.ID, id
	}
	anns, annsID := held(ann.AccessToken, "", "Mine.")
	ok[*ApproveCommentResponse](t)(ApproveComment(ctx, ada, ApproveCommentInput{Id: anns}))
	r.awaitEvent(t, storage.EventCommentApproved, postID, annsID)

	reply, replyID := held(bob.AccessToken, anns, "A held reply.")
	r.deliverN(t, 0)
	ok[*ApproveCommentResponse](t)(ApproveComment(ctx, ada, ApproveCommentInput{Id: reply}))
	r.awaitEvent(t, storage.EventCommentApproved, postID, replyID)
	equal(t, "the approved reply's email goes to", r.deliverN(t, 1)[0].header.Get("To"), "<ann@example.com>")

	rejected, rejectedID := held(bob.AccessToken, anns, "A rejected reply.")
	ok[*RejectCommentResponse](t)(RejectComment(ctx, ada, RejectCommentInput{Id: rejected}))
	r.awaitEvent(t, storage.EventCommentRejected, postID, rejectedID)
	r.deliverN(t, 0)
}

// optIn turns on the reply notifications of the reader of token: they
// are off when a member joins.
func optIn(t *testing.T, r *newsletterRig, token string) {
	t.Helper()
	const set = `mutation { setReplyNotifications(input: {enabled: true}) { enabled } }`
	if a := r.gql(t, token, set, nil, "", nil); a.code() != "" {
		t.Fatalf("setReplyNotifications = %s", a.body)
	}
}
