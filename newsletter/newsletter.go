// Package newsletter sends a publication's posts to its members by email:
// the change feed's "newsletter" worker enqueues, when a post is first
// published, one email per member who gets the newsletter into the
// table's mail outbox (storage's newsletter.go), which package mailer
// sends; its "reply-notifications" worker emails a member when someone
// replies to their comment (replies.go); and it serves the unsubscribe
// links these emails carry.
package newsletter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/blogql/blog/storage"
)

// Defaults and limits.
const (
	// DefaultPageSize is how many members one Query of a sending reads:
	// what the worker holds at once, whatever the count of members.
	DefaultPageSize = 500
	// MaxAge is how old a post's publication may be when the worker
	// reaches its post.published and still send it: a backdated import,
	// or a log read anew by a first deployment, sends nothing.
	MaxAge = 24 * time.Hour
	// putsAtOnce is how many emails of a page are put at once: each put
	// is a round trip, and the mail worker's sends, woken by the first
	// page, share the table with them; at 8, 10,000 members took 34 s
	// to enqueue on DynamoDB Local beside a busy machine.
	putsAtOnce = 32
)

// Options configure a Service.
type Options struct {
	// Key signs the unsubscribe links (at least 32 bytes).
	Key []byte
	// Site returns the publication's name and the public URL of a post;
	// an error leaves the sending to a retry.
	Site func(ctx context.Context, p *storage.Post) (name, postURL string, err error)
	// UnsubscribeBase returns the API's public URL, before UnsubscribePath.
	UnsubscribeBase func() string
	// Enqueued, when set, is called after a page was enqueued: the mail
	// worker's Wake.
	Enqueued func()
	// PageSize is how many members a page reads; zero is DefaultPageSize.
	PageSize int
	Logger   *slog.Logger
}

// Service is the newsletter of a store's publication.
type Service struct {
	store *storage.Store
	opts  Options
}

// New returns the newsletter of store's publication.
func New(store *storage.Store, opts Options) *Service {
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Service{store: store, opts: opts}
}

// In returns the newsletter of the publication of store, on s's key,
// mail worker, page size and logger: site and unsubscribeBase are that
// publication's (Options.Site and Options.UnsubscribeBase).
func (s *Service) In(store *storage.Store, site func(ctx context.Context, p *storage.Post) (string, string, error), unsubscribeBase func() string) *Service {
	opts := s.opts
	opts.Site, opts.UnsubscribeBase = site, unsubscribeBase
	return &Service{store: store, opts: opts}
}

// HandleEvents sends the posts that events publish to the members, each
// once: the change feed's "newsletter" worker. Every other event, and a
// post.published of another publication, is passed over. It returns the
// first error, and the feed gives the events again: what was enqueued is
// not enqueued twice.
func (s *Service) HandleEvents(ctx context.Context, events []storage.LoggedEvent) error {
	for _, e := range events {
		if e.Type != storage.EventPostPublished || e.Publication != s.store.Publication() {
			continue
		}
		if err := s.Send(ctx, e.Data.PostID); err != nil {
			return fmt.Errorf("newsletter of event %s: %w", e.ID, err)
		}
	}
	return nil
}

// Send sends the post postID to the members who get the newsletter,
// unless it was sent before, is no longer published, was published with
// the choice not to send it (storage.Post.NoNewsletter), or was
// published more than MaxAge ago. A sending another server took over ends with no
// error; any other failure is returned, and a call again resumes after
// the last page enqueued.
func (s *Service) Send(ctx context.Context, postID string) error {
	p, err := s.store.GetPost(ctx, postID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if p.Status != storage.StatusPublished || p.NoNewsletter || s.store.Now().Sub(p.PublishedAt) > MaxAge {
		return nil
	}
	send, err := s.store.StartNewsletter(ctx, postID)
	if err != nil || send.Sent {
		return err
	}
	msg, err := s.compose(ctx, p)
	if err != nil {
		return err
	}
	for !send.Sent {
		members, last, err := s.store.NewsletterSubscribers(ctx, send.After, s.opts.PageSize)
		if err != nil {
			return err
		}
		if err := s.enqueue(ctx, send, msg, members); err != nil {
			return err
		}
		send, err = s.store.NewsletterProgress(ctx, send, last, len(members), last == "")
		if errors.Is(err, storage.ErrNewsletterMoved) {
			s.opts.Logger.InfoContext(ctx, "newsletter sent by another server", "post", postID)
			return nil
		}
		if err != nil {
			return err
		}
		if s.opts.Enqueued != nil && len(members) > 0 {
			s.opts.Enqueued()
		}
	}
	s.opts.Logger.InfoContext(ctx, "newsletter enqueued", "post", postID, "emails", send.Enqueued, "pages", send.Pages)
	return nil
}

// enqueue puts the emails of msg to members into the outbox, a few at
// once, each under its own id.
func (s *Service) enqueue(ctx context.Context, send *storage.NewsletterSend, msg *message, members []*storage.Member) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(putsAtOnce)
	for _, m := range members {
		g.Go(func() error {
			link := s.UnsubscribeURL(m.AccountID)
			e := msg.to(m.Email, link)
			e.ID, e.CreatedAt = s.store.NewsletterMailID(send.PostID, m.AccountID), send.StartedAt
			_, err := s.store.EnqueueMail(gctx, e)
			return err
		})
	}
	return g.Wait()
}
