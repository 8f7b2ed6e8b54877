package tests

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"

	"github.com/blogql/blog/auth"
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
		s.clock.advance(time.Minute)
		return ok[*AddCommentResponse](t)(AddComment(ctx, lin, AddCommentInput{PostId: b.post, Body: body})).AddComment.Comment.Id
	}
	notPending := func(what string, err error) {
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
		notPending("rejecting a rejected comment", err)
		_, err = ApproveComment(ctx, b.ada, ApproveCommentInput{Id: id})
		notPending("approving a rejected comment", err)
		equal(t, "count while rejected", count(), 0)
		a := ok[*ApproveCommentResponse](t)(ApproveComment(ctx, s.admin, ApproveCommentInput{Id: id, OverturnRejection: ptr(true)})).ApproveComment.Comment
		equal(t, "overturned", a.Status, CommentStatusPublished)
		equal(t, "count once overturned", count(), 1)
		_, err = ApproveComment(ctx, b.ada, ApproveCommentInput{Id: id, OverturnRejection: ptr(true)})
		notPending("overturning twice", err)
		_, err = ApproveComment(ctx, b.ada, ApproveCommentInput{Id: id})
		notPending("approving a published comment", err)
		_, err = RejectComment(ctx, b.ada, RejectCommentInput{Id: id})
		notPending("rejecting a published comment", err)
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
		notPending("approving again without the key", err)

		id = hold("Rejected with a key")
		key = "reject-" + id[len(id)-8:]
		ok[*RejectCommentResponse](t)(RejectComment(ctx, b.ada, RejectCommentInput{Id: id, IdempotencyKey: &key}))
		r := ok[*RejectCommentResponse](t)(RejectComment(ctx, b.ada, RejectCommentInput{Id: id, IdempotencyKey: &key})).RejectComment.Comment
		equal(t, "resent rejection", r.Status, CommentStatusRejected)
		_, err = RejectComment(ctx, b.ada, RejectCommentInput{Id: id})
		notPending("rejecting again without the key", err)
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
				notPending(fmt.Sprintf("decision %d of round %d", i, round), err)
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
