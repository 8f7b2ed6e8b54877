package tests

import (
	"context"
	"fmt"

	graphpkg "github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// The mixed workload's generators of comment calls and of the reads that
// race them: each builds one call from what its client knows of the blog
// (mixed_model_test.go), with the refusals its situation explains.

func nextAddComment(reply bool) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		in := AddCommentInput{}
		if reply {
			parent := c.topComment()
			if parent == nil {
				return nil
			}
			in.PostId, in.ParentId = parent.post, &parent.gid
		} else {
			p := c.post()
			if p == nil {
				return nil
			}
			in.PostId = p.gid
		}
		// The marker names the post, so that deleting it clears what is
		// expected of its comments.
		in.Body = fmt.Sprintf("comment on %s %s", in.PostId, c.tag())
		e := m.expect(in.Body)
		// NOT_FOUND: the post is not public or gone (or went from view
		// after the comment was written, when the payload reads it), or
		// the parent is held or gone; BAD_USER_INPUT: the parent was
		// deleted but holds replies.
		refusals := []string{graphpkg.CodeNotFound}
		if reply {
			refusals = append(refusals, graphpkg.CodeBadUserInput)
		}
		return &mixCall{refusals: refusals, unsure: []string{graphpkg.CodeNotFound}, send: func(ctx context.Context, key *string) (string, error) {
			in := in
			in.IdempotencyKey = key
			r, err := AddComment(ctx, c.user.client, in)
			if err != nil {
				return "", err
			}
			got := r.AddComment.Comment
			if got.Status != CommentStatusPublished {
				m.fail("an author's comment %s is %s", got.Id, got.Status)
			}
			m.addComment(&mixComment{gid: got.Id, post: in.PostId, author: c.user.id, marker: in.Body, topLevel: !reply})
			return got.Id + " " + got.Body, nil
		}, done: m.written(e)}
	}
}

// nextReaderComment has a reader comment or reply through the holding or
// the publishing server, with one of their tokens.
func nextReaderComment(reply bool, srv int) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		r := m.readers[c.rng.IntN(len(m.readers))]
		client := r.clients[srv][c.rng.IntN(3)]
		in := AddCommentInput{}
		if reply {
			parent := c.topComment()
			if parent == nil {
				return nil
			}
			in.PostId, in.ParentId = parent.post, &parent.gid
		} else {
			p := c.post()
			if p == nil {
				return nil
			}
			in.PostId = p.gid
		}
		in.Body = fmt.Sprintf("comment on %s %s", in.PostId, c.tag())
		e := m.expect(in.Body)
		refusals := []string{graphpkg.CodeNotFound, graphpkg.CodeRateLimited}
		if reply {
			refusals = append(refusals, graphpkg.CodeBadUserInput)
		}
		want := CommentStatusPublished
		if srv == holding {
			want = CommentStatusPending
		}
		return &mixCall{refusals: refusals, unsure: []string{graphpkg.CodeNotFound}, flips: []string{graphpkg.CodeRateLimited},
			send: func(ctx context.Context, key *string) (string, error) {
				in := in
				in.IdempotencyKey = key
				res, err := AddComment(ctx, client, in)
				if err != nil {
					if code(err) == graphpkg.CodeRateLimited {
						if after, ok := extension(err, "retryAfter").(float64); !ok || after < 1 || after > storage.RateWindow.Seconds() {
							m.fail("RATE_LIMITED with retryAfter %v", extension(err, "retryAfter"))
						}
					}
					return "", err
				}
				got := res.AddComment.Comment
				if got.Status != want {
					m.fail("a reader's comment %s through the %d server is %s, want %s", got.Id, srv, got.Status, want)
				}
				if got.Commenter == nil || got.Commenter.IsAuthor || got.Author != nil {
					m.fail("a reader's comment %s shows commenter %+v and author %+v", got.Id, got.Commenter, got.Author)
				}
				m.addComment(&mixComment{gid: got.Id, post: in.PostId, reader: r, marker: in.Body, topLevel: !reply, held: want == CommentStatusPending})
				in.IdempotencyKey = nil
				m.mu.Lock()
				c.sent = &mixSent{client: client, reader: r, in: in, createdAt: got.CreatedAt}
				m.mu.Unlock()
				return fmt.Sprintf("%s %s %s", got.Id, got.Status, got.Body), nil
			}, done: m.written(e)}
	}
}

// nextReaderAgain sends the client's last reader's comment again, as it
// was, with another idempotency key or none: within a minute of the first
// it is a duplicate (CONFLICT, DUPLICATE_COMMENT), later a comment of its
// own.
func nextReaderAgain(c *mixClient) *mixCall {
	m := c.m
	m.mu.Lock()
	sent := c.sent
	var e *effect
	if sent != nil {
		e = m.effects[sent.in.Body]
	}
	m.mu.Unlock()
	if sent == nil {
		return nil
	}
	refusals := []string{graphpkg.CodeNotFound, graphpkg.CodeRateLimited, "CONFLICT/DUPLICATE_COMMENT", graphpkg.CodeBadUserInput}
	return &mixCall{refusals: refusals, unsure: []string{graphpkg.CodeNotFound},
		flips: []string{graphpkg.CodeRateLimited, "CONFLICT/DUPLICATE_COMMENT"},
		send: func(ctx context.Context, key *string) (string, error) {
			in := sent.in
			in.IdempotencyKey = key
			res, err := AddComment(ctx, sent.client, in)
			now := m.servers[holding].clock.Now()
			if err != nil {
				return "", err
			}
			got := res.AddComment.Comment
			if now.Sub(sent.createdAt) < storage.RateWindow {
				m.fail("the same comment accepted again %s after the first (%s): %s", now.Sub(sent.createdAt), sent.createdAt, got.Id)
			}
			m.addComment(&mixComment{gid: got.Id, post: in.PostId, reader: sent.reader, marker: in.Body,
				topLevel: in.ParentId == nil, held: got.Status == CommentStatusPending})
			return fmt.Sprintf("%s %s %s", got.Id, got.Status, got.Body), nil
		}, done: func(result string, ok bool) {
			if !ok || e == nil {
				return
			}
			m.mu.Lock()
			defer m.mu.Unlock()
			if e.again == nil {
				e.again = map[string]bool{}
			}
			e.again[result] = true
		}}
}

// nextUpdateComment edits a comment as its writer, mostly, or as the
// client's user; the edit keeps the comment's marker.
func nextUpdateComment(c *mixClient) *mixCall {
	cm := c.comment(false)
	if cm == nil {
		return nil
	}
	client := c.user.client
	byWriter := c.rng.IntN(10) < 7
	if w := c.writerClient(cm); byWriter && w != nil {
		client = w
	}
	// NOT_FOUND: gone, or on a post its writer can no longer see (also
	// for a resend after the edit: a hidden comment is not theirs to
	// change); BAD_USER_INPUT: rejected, which an approval undoes.
	refusals := []string{graphpkg.CodeNotFound, graphpkg.CodeBadUserInput}
	if !byWriter && !c.user.admin && cm.author != c.user.id {
		refusals = append(refusals, graphpkg.CodeForbidden)
	}
	in := UpdateCommentInput{Id: cm.gid, Body: cm.marker + " | edited " + c.tag()}
	if cm.marker == "" {
		in.Body = "seed | edited " + c.tag()
	}
	return &mixCall{refusals: refusals, unsure: []string{graphpkg.CodeNotFound}, flips: []string{graphpkg.CodeBadUserInput},
		send: func(ctx context.Context, key *string) (string, error) {
			in := in
			in.IdempotencyKey = key
			r, err := UpdateComment(ctx, client, in)
			if err != nil {
				return "", err
			}
			got := r.UpdateComment.Comment
			return fmt.Sprintf("%s %s %s", got.Id, got.Body, got.Status), nil
		}}
}

// The moderators' decisions nextModerate makes.
const (
	rejectIt = iota
	approveIt
	// overturnIt approves with overturnRejection, mostly a comment known
	// to be rejected.
	overturnIt
)

// nextModerate approves or rejects a comment, mostly a held one, as the
// post's author, an admin or the client's user.
func nextModerate(decision int) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		approve := decision != rejectIt
		var cm *mixComment
		if decision == overturnIt && c.rng.IntN(10) < 7 {
			cm = c.rejectedComment()
		}
		if cm == nil {
			cm = c.comment(c.rng.IntN(10) < 7)
		}
		if cm == nil {
			return nil
		}
		owner := m.owner(cm.post)
		actor := c.user
		switch n := c.rng.IntN(4); {
		case n < 2 && m.user(owner) != nil:
			actor = m.user(owner)
		case n < 3:
			actor = m.users[len(m.users)-1]
			for _, u := range m.users {
				if u.admin {
					actor = u
				}
			}
		}
		// NOT_FOUND: the comment or its post is gone, or the actor may
		// see neither a held comment nor a hidden post.
		refusals := []string{graphpkg.CodeNotFound}
		if !actor.admin && actor.id != owner {
			refusals = append(refusals, graphpkg.CodeForbidden)
		}
		if approve {
			// The reply's parent was deleted meanwhile.
			refusals = append(refusals, graphpkg.CodeBadUserInput)
		}
		// NOT_PENDING: decided already, by another call or this one's
		// send without the key (an overturn: published already); a
		// reader's edit holds a published comment again, so it can change
		// back.
		refusals = append(refusals, "CONFLICT/NOT_PENDING")
		var overturning *bool
		if decision == overturnIt {
			overturning = ptr(true)
		}
		var unsure []string
		if approve {
			// The approval's payload shows the comment's post, which may
			// be deleted after the approval, before a resend replays it.
			unsure = []string{graphpkg.CodeNotFound + "@comment.post"}
		}
		return &mixCall{refusals: refusals, flips: []string{"CONFLICT/NOT_PENDING"}, unsure: unsure, send: func(ctx context.Context, key *string) (string, error) {
			if approve {
				r, err := ApproveComment(ctx, actor.client, ApproveCommentInput{Id: cm.gid, OverturnRejection: overturning, IdempotencyKey: key})
				if err != nil {
					return "", err
				}
				got := r.ApproveComment.Comment
				if got.Status != CommentStatusPublished {
					m.fail("approveComment of %s: status %s", cm.gid, got.Status)
				}
				m.published(cm.gid)
				return fmt.Sprintf("%s %s", got.Id, got.Status), nil
			}
			r, err := RejectComment(ctx, actor.client, RejectCommentInput{Id: cm.gid, IdempotencyKey: key})
			if err != nil {
				return "", err
			}
			got := r.RejectComment.Comment
			if got.Status != CommentStatusRejected {
				m.fail("rejectComment of %s: status %s", cm.gid, got.Status)
			}
			m.rejected(cm.gid)
			return fmt.Sprintf("%s %s", got.Id, got.Status), nil
		}}
	}
}

// nextDeleteComment deletes a comment as the client's user, its writer
// or its post's author.
func nextDeleteComment(c *mixClient) *mixCall {
	m := c.m
	cm := c.comment(false)
	if cm == nil {
		return nil
	}
	owner := m.owner(cm.post)
	client, allowed := c.user.client, c.user.admin || cm.author == c.user.id || owner == c.user.id
	switch n := c.rng.IntN(10); {
	case n < 3:
		if w := c.writerClient(cm); w != nil {
			client, allowed = w, true
		}
	case n < 6:
		if u := m.user(owner); u != nil {
			client, allowed = u.client, true
		}
	}
	refusals := []string{graphpkg.CodeNotFound}
	if !allowed {
		refusals = append(refusals, graphpkg.CodeForbidden)
	}
	return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
		r, err := DeleteComment(ctx, client, DeleteCommentInput{Id: cm.gid, IdempotencyKey: key})
		if err != nil {
			return "", err
		}
		// The comment is shown or not as its post is visible at the time
		// of each answer, which a concurrent publish or unpublish changes.
		return r.DeleteComment.DeletedCommentId + " deleted", nil
	}, done: func(string, bool) {
		// The comment may be gone, or a tombstone without its body.
		m.mu.Lock()
		defer m.mu.Unlock()
		if e := m.effects[cm.marker]; e != nil {
			e.gone = true
		}
	}}
}

// nextModerationQueue reads the first page of the client's user's
// moderation queue while comments are held, approved, rejected and
// deleted.
func nextModerationQueue(c *mixClient) *mixCall {
	return &mixCall{keyless: true, send: func(ctx context.Context, _ *string) (string, error) {
		_, err := ModerationQueue(ctx, c.user.client, ptr(20), nil)
		return "", err
	}}
}
