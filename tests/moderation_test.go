package tests

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
)

// TestModerationDecisionsTakeEffectOnce walks a held comment through the
// moderation states: a decision applies to a pending comment once, a
// rejection is overturned only by an approval that says so, and every
// other decision is CONFLICT with reason NOT_PENDING; a resend with its
// idempotency key answers as the first call did.
func TestModerationDecisionsTakeEffectOnce(t *testing.T) {
	s := newServer(t) // holding readers' comments is the default
	b := s.seedReadersBlog(t)
	ctx := context.Background()
	lin := s.reader("lin", "Lin", "")
	hold := func(body string) string {
		t.Helper()
		s.clock.Advance(time.Minute)
		return ok[*AddCommentResponse](t)(AddComment(ctx, lin, AddCommentInput{PostId: b.post, Body: body})).AddComment.Comment.Id
	}
	notPending := func(t *testing.T, what string, err error) {
		t.Helper()
		if code(err) != "CONFLICT" || extension(err, "reason") != "NOT_PENDING" {
			t.Errorf("%s: err = %v, want CONFLICT with reason NOT_PENDING", what, err)
		}
	}
	count := func() int {
		return ok[*PostCommentsResponse](t)(PostComments(ctx, s.client, b.slug, nil, nil)).Post.CommentCount
	}

	t.Run("reject, reject again, approve, overturn", func(t *testing.T) {
		id := hold("Rejected once")
		r := ok[*RejectCommentResponse](t)(RejectComment(ctx, b.ada, RejectCommentInput{Id: id})).RejectComment.Comment
		equal(t, "rejected", r.Status, CommentStatusRejected)
		_, err := RejectComment(ctx, s.admin, RejectCommentInput{Id: id})
		notPending(t, "rejecting a rejected comment", err)
		_, err = ApproveComment(ctx, b.ada, ApproveCommentInput{Id: id})
		notPending(t, "approving a rejected comment", err)
		equal(t, "count while rejected", count(), 0)
		a := ok[*ApproveCommentResponse](t)(ApproveComment(ctx, s.admin, ApproveCommentInput{Id: id, OverturnRejection: ptr(true)})).ApproveComment.Comment
		equal(t, "overturned", a.Status, CommentStatusPublished)
		equal(t, "count once overturned", count(), 1)
		_, err = ApproveComment(ctx, b.ada, ApproveCommentInput{Id: id, OverturnRejection: ptr(true)})
		notPending(t, "overturning twice", err)
		_, err = ApproveComment(ctx, b.ada, ApproveCommentInput{Id: id})
		notPending(t, "approving a published comment", err)
		_, err = RejectComment(ctx, b.ada, RejectCommentInput{Id: id})
		notPending(t, "rejecting a published comment", err)
		equal(t, "count at the end", count(), 1)
		s.consistent()
	})

	t.Run("a resend with its key answers as the first call did", func(t *testing.T) {
		id := hold("Approved with a key")
		key := "approve-" + id[len(id)-8:]
		first := ok[*ApproveCommentResponse](t)(ApproveComment(ctx, b.ada, ApproveCommentInput{Id: id, IdempotencyKey: &key})).ApproveComment.Comment
		again := ok[*ApproveCommentResponse](t)(ApproveComment(ctx, b.ada, ApproveCommentInput{Id: id, IdempotencyKey: &key})).ApproveComment.Comment
		equal(t, "resent", fmt.Sprint(again.Id, again.Status), fmt.Sprint(first.Id, first.Status))
		_, err := ApproveComment(ctx, b.ada, ApproveCommentInput{Id: id})
		notPending(t, "approving again without the key", err)

		id = hold("Rejected with a key")
		key = "reject-" + id[len(id)-8:]
		ok[*RejectCommentResponse](t)(RejectComment(ctx, b.ada, RejectCommentInput{Id: id, IdempotencyKey: &key}))
		r := ok[*RejectCommentResponse](t)(RejectComment(ctx, b.ada, RejectCommentInput{Id: id, IdempotencyKey: &key})).RejectComment.Comment
		equal(t, "resent rejection", r.Status, CommentStatusRejected)
		_, err = RejectComment(ctx, b.ada, RejectCommentInput{Id: id})
		notPending(t, "rejecting again without the key", err)
		s.consistent()
	})

	t.Run("four approvals and four rejections at once: one succeeds", func(t *testing.T) {
		two := s.another()
		moderators := []graphql.Client{b.ada, s.admin, two.as("ada", auth.RoleAuthor), two.admin}
		published := count()
		for round := range 4 {
			id := hold(fmt.Sprint("Contested ", round))
			var (
				wg    sync.WaitGroup
				start = make(chan struct{})
				errs  = make([]error, 8)
				won   = make([]CommentStatus, 8)
			)
			for i := range errs {
				wg.Go(func() {
					<-start
					client := moderators[i/2]
					if i%2 == 0 {
						r, err := ApproveComment(ctx, client, ApproveCommentInput{Id: id})
						if errs[i] = err; err == nil {
							won[i] = r.ApproveComment.Comment.Status
						}
						return
					}
					r, err := RejectComment(ctx, client, RejectCommentInput{Id: id})
					if errs[i] = err; err == nil {
						won[i] = r.RejectComment.Comment.Status
					}
				})
			}
			close(start)
			wg.Wait()
			var successes []CommentStatus
			for i, err := range errs {
				if err == nil {
					successes = append(successes, won[i])
					continue
				}
				notPending(t, fmt.Sprintf("decision %d of round %d", i, round), err)
			}
			if len(successes) != 1 {
				t.Fatalf("round %d: successes %v, want exactly one", round, successes)
			}
			if successes[0] == CommentStatusPublished {
				published++
			}
			equal(t, "count", count(), published)
			s.consistent()
		}
	})
}

// TestReadersEditsAreModeratedAgain has a reader edit their approved
// comment and reply while readers' comments are held: each edit holds the
// comment again, out of every list and count until it is approved, so no
// text goes live unmoderated. An author's and an admin's edits, and every
// edit with edits unmoderated, stay published.
func TestReadersEditsAreModeratedAgain(t *testing.T) {
	s := newServer(t) // holding readers' comments, and their edits, is the default
	b := s.seedReadersBlog(t)
	ctx := context.Background()
	lin := s.reader("lin", "Lin", "")
	add := func(client graphql.Client, body string, parent *string) string {
		t.Helper()
		s.clock.Advance(time.Minute)
		c := ok[*AddCommentResponse](t)(AddComment(ctx, client, AddCommentInput{PostId: b.post, Body: body, ParentId: parent})).AddComment.Comment
		if c.Status == CommentStatusPending {
			ok[*ApproveCommentResponse](t)(ApproveComment(ctx, b.ada, ApproveCommentInput{Id: c.Id}))
		}
		return c.Id
	}
	edit := func(client graphql.Client, id, body string) (*UpdateCommentUpdateCommentUpdateCommentPayloadComment, error) {
		s.clock.Advance(time.Second)
		r, err := UpdateComment(ctx, client, UpdateCommentInput{Id: id, Body: body})
		if err != nil {
			return nil, err
		}
		return &r.UpdateComment.Comment, nil
	}
	public := func() (count int, bodies []string, replies map[string]int) {
		p := ok[*PostReplyPagesResponse](t)(PostReplyPages(ctx, s.client, b.slug, ptr(10))).Post
		replies = map[string]int{}
		for _, e := range p.Comments.Edges {
			bodies = append(bodies, e.Node.Body)
			replies[e.Node.Id] = e.Node.ReplyConnection.TotalCount
			for _, r := range e.Node.ReplyConnection.Edges {
				bodies = append(bodies, r.Node.Body)
			}
		}
		return ok[*PostCommentsResponse](t)(PostComments(ctx, s.client, b.slug, nil, nil)).Post.CommentCount, bodies, replies
	}

	top := add(lin, "Approved text", nil)
	thread := add(b.grace, "An author's thread", nil)
	reply := add(lin, "Approved reply", &thread)
	count, _, _ := public()
	equal(t, "count before the edits", count, 3)

	c := ok[*UpdateCommentUpdateCommentUpdateCommentPayloadComment](t)(edit(lin, top, "Spam, now that it is approved"))
	equal(t, "an edited comment", c.Status, CommentStatusPending)
	r := ok[*UpdateCommentUpdateCommentUpdateCommentPayloadComment](t)(edit(lin, reply, "Spam in a reply"))
	equal(t, "an edited reply", r.Status, CommentStatusPending)
	count, bodies, replies := public()
	equal(t, "count while held", count, 1)
	equal(t, "public texts while held", fmt.Sprint(bodies), fmt.Sprint([]string{"An author's thread"}))
	equal(t, "replies of the thread while held", replies[thread], 0)
	queue := ok[*ModerationQueueResponse](t)(ModerationQueue(ctx, b.ada, nil, nil)).ModerationQueue.Edges
	equal(t, "queue", len(queue), 2)
	equal(t, "queued text", queue[0].Node.Body, "Spam in a reply")
	s.consistent()

	ok[*ApproveCommentResponse](t)(ApproveComment(ctx, b.ada, ApproveCommentInput{Id: reply}))
	count, bodies, replies = public()
	equal(t, "count once the reply is approved", count, 2)
	equal(t, "replies once approved", replies[thread], 1)
	equal(t, "public texts", fmt.Sprint(bodies), fmt.Sprint([]string{"An author's thread", "Spam in a reply"}))
	_, err := RejectComment(ctx, b.ada, RejectCommentInput{Id: top})
	equal(t, "rejecting the edited comment", code(err), "")
	s.consistent()

	t.Run("a comment with replies cannot change while edits are moderated", func(t *testing.T) {
		answered := add(lin, "Answered", nil)
		add(b.grace, "An answer", &answered)
		_, err := edit(lin, answered, "Changed after the answer")
		equal(t, "code", code(err), "BAD_USER_INPUT")
		count, _, _ := public()
		equal(t, "count", count, 4)
		s.consistent()
	})

	t.Run("authors' and admins' edits stay published", func(t *testing.T) {
		again := add(lin, "Approved again", nil)
		c := ok[*UpdateCommentUpdateCommentUpdateCommentPayloadComment](t)(edit(s.admin, again, "Edited by an admin"))
		equal(t, "an admin's edit", c.Status, CommentStatusPublished)
		c = ok[*UpdateCommentUpdateCommentUpdateCommentPayloadComment](t)(edit(b.grace, thread, "An author's thread, edited"))
		equal(t, "an author's edit", c.Status, CommentStatusPublished)
		s.consistent()
	})

	t.Run("with edits unmoderated an edit stays published", func(t *testing.T) {
		free := s.with(func(o *graph.HandlerOptions) { o.Comments.UnmoderatedEdits = true })
		id := add(lin, "Approved before", nil)
		s.clock.Advance(time.Second)
		c := ok[*UpdateCommentResponse](t)(UpdateComment(ctx, free.reader("lin", "Lin", ""), UpdateCommentInput{Id: id, Body: "Changed at once"})).UpdateComment.Comment
		equal(t, "status", c.Status, CommentStatusPublished)
		s.consistent()
	})
}
