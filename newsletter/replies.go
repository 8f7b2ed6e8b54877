package newsletter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/storage"
)

// KindReply is the kind of the reply notifications in the outbox.
const KindReply = "reply"

// RepliesUnsubscribePath is where UnsubscribeReplies is served.
const RepliesUnsubscribePath = "/notifications/replies/unsubscribe"

// maxQuoteBytes bounds how much of a reply its notification quotes.
const maxQuoteBytes = 2000

// HandleReplyEvents emails the member whose comment a reply answers, once
// a reply (storage's replynotify.go): the change feed's
// "reply-notifications" worker. It reads comment.added, and
// comment.approved for a reply held for moderation; every other event,
// and one of another publication, is passed over. It returns the first
// error, and the feed gives the events again: what was enqueued is not
// enqueued twice.
func (s *Service) HandleReplyEvents(ctx context.Context, events []storage.LoggedEvent) error {
	for _, e := range events {
		if e.Type != storage.EventCommentAdded && e.Type != storage.EventCommentApproved ||
			e.Data.ParentID == "" || e.Publication != s.store.Publication() {
			continue
		}
		// A log read anew long after the replies notifies nobody.
		if s.store.Now().Sub(e.Time) > MaxAge {
			continue
		}
		if err := s.NotifyReply(ctx, e.Data.PostID, e.Data.CommentID); err != nil {
			return fmt.Errorf("reply notification of event %s: %w", e.ID, err)
		}
	}
	return nil
}

// NotifyReply puts into the outbox the email that tells the writer of
// the comment the reply commentID answers of it, when the reply is
// published, the post too, and that writer is a member with reply
// notifications on who is not the reply's writer. It returns the error
// of a read or of the outbox.
func (s *Service) NotifyReply(ctx context.Context, postID, commentID string) error {
	reply, err := s.comment(ctx, postID, commentID)
	if reply == nil || err != nil || reply.ParentID == "" {
		return err
	}
	parent, err := s.comment(ctx, postID, reply.ParentID)
	if parent == nil || err != nil || parent.ReaderID == "" || parent.ReaderID == reply.ReaderID {
		return err
	}
	m, err := s.store.Member(ctx, parent.ReaderID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil || !m.ReplyNotifications || m.Email == "" {
		return err
	}
	p, err := s.store.GetPostWithoutBody(ctx, postID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil || p.Status != storage.StatusPublished {
		return err
	}
	e, err := s.replyEmail(ctx, p, reply, m)
	if err != nil {
		return err
	}
	made, err := s.store.EnqueueMail(ctx, e)
	if err != nil {
		return err
	}
	if made && s.opts.Enqueued != nil {
		s.opts.Enqueued()
	}
	return nil
}

// comment returns the published comment commentID of postID, or nil
// when it is not (gone, deleted, held or rejected).
func (s *Service) comment(ctx context.Context, postID, commentID string) (*storage.Comment, error) {
	cs, errs := s.store.GetComments(ctx, []storage.CommentKey{{PostID: postID, CommentID: commentID}})
	switch {
	case errors.Is(errs[0], storage.ErrNotFound):
		return nil, nil
	case errs[0] != nil:
		return nil, errs[0]
	case cs[0] == nil || cs[0].Deleted || cs[0].Status != storage.CommentPublished:
		return nil, nil
	}
	return cs[0], nil
}

var replyHTML = template.Must(template.New("reply").Parse(`<!doctype html>
<html><body style="font-family: sans-serif; max-width: 40em; margin: auto">
<p style="color: #666">{{.Site}}</p>
<p>Someone replied to your comment on <a href="{{.URL}}">{{.Title}}</a>:</p>
<blockquote style="white-space: pre-wrap">{{.Quote}}</blockquote>
<p><a href="{{.URL}}">See the reply on {{.Site}}</a></p>
<hr>
<p style="color: #666; font-size: small">You get this email because you commented on {{.Site}} as a member.
<a href="{{.Unsubscribe}}">Stop emails about replies</a>.</p>
</body></html>
`))

// replyEmail returns the notification to m of reply on the post p: a
// link to the reply on the post's page (#comment-<its GraphQL id>), a quote of it, and the link
// that turns reply notifications off.
func (s *Service) replyEmail(ctx context.Context, p *storage.Post, reply *storage.Comment, m *storage.Member) (storage.Email, error) {
	site, postURL, err := s.opts.Site(ctx, p)
	if err != nil {
		return storage.Email{}, fmt.Errorf("reply notification on post %q: %w", p.ID, err)
	}
	// The anchor is the reply's GraphQL id, which the frontend holds.
	link := postURL + "#comment-" + frontend.CommentGlobalID(p.ID, reply.ID)
	quote := reply.Body
	if len(quote) > maxQuoteBytes {
		quote = strings.ToValidUTF8(quote[:maxQuoteBytes], "") + "…"
	}
	unsub := s.link(RepliesUnsubscribePath, purposeReplies, m.AccountID)
	var html bytes.Buffer
	data := struct {
		Site, Title, URL, Quote string
		Unsubscribe             template.URL
	}{site, p.Title, link, quote, template.URL(unsub)}
	if err := replyHTML.Execute(&html, data); err != nil {
		return storage.Email{}, fmt.Errorf("reply notification on post %q: %w", p.ID, err)
	}
	text := fmt.Sprintf("Someone replied to your comment on %q:\n\n%s\n\nSee the reply on %s: %s\n\n--\n"+
		"You get this email because you commented on %s as a member.\nStop emails about replies: %s\n",
		p.Title, quote, site, link, site, unsub)
	return storage.Email{
		ID: s.store.ReplyMailID(p.ID, reply.ID), CreatedAt: reply.CreatedAt, To: m.Email, Kind: KindReply,
		Subject: "New reply to your comment on " + p.Title, Text: text, HTML: html.String(), ListUnsubscribe: unsub,
	}, nil
}

// UnsubscribeReplies returns the handler of the link every reply
// notification carries: GET and RFC 8058's one-click POST turn reply
// notifications off for the member the token names, without signing
// in, answering as Unsubscribe does.
func (s *Service) UnsubscribeReplies() http.Handler {
	return s.unsubscribe(purposeReplies, s.store.SetReplyNotifications, "reply notifications",
		"You will get no more emails about replies to your comments.", "You are no longer a member: you get no emails about replies.")
}
