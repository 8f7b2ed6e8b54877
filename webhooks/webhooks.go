// Package webhooks delivers the change feed's public events to the
// blog's webhooks, as the Standard Webhooks specification says: a POST of
// {"type", "timestamp", "data"} with the headers webhook-id (the event's
// id, the same on every attempt), webhook-timestamp (unix seconds) and
// webhook-signature ("v1," and the base64 HMAC-SHA256 of
// "<id>.<timestamp>.<body>", keyed by the secret's bytes after whsec_;
// during a rotation one signature per secret, space-separated).
//
// The change feed's "webhooks" worker feeds it on the one server that
// holds the worker's lease: HandleEvents for every logged event of its
// publication, RetryDue when a delivery is due (Options.Pending tells
// when). Each delivery is an outbox item in the table
// (storage/outbox.go) written before the first attempt, so a restart or a
// crash loses none; attempts follow Schedule, 2xx is delivered, 410 Gone
// disables the webhook, 429 and 503 are retried no sooner than their
// Retry-After says, and a webhook whose endpoint failed every attempt at
// an event until it was given up (about three days) is disabled with the
// reason shown. Deliveries go to public addresses only, checked on the
// address dialed, unless Options.AllowPrivate (unsafe) says otherwise.
package webhooks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/blogql/blog/storage"
)

// Defaults of Options.
const (
	DefaultTimeout     = 15 * time.Second
	DefaultConcurrency = 4
	DefaultGrace       = 24 * time.Hour
	// maxRetryAfter bounds how long a Retry-After defers an attempt.
	maxRetryAfter = 10 * time.Hour
	// dueBatch is how many due deliveries RetryDue reads at a time.
	dueBatch = 100
)

// Bounds of what the webhooks' history and list show.
const (
	// MaxErrorBytes bounds what a delivery's error says.
	MaxErrorBytes = 300
	// MaxReasonBytes bounds why a webhook was disabled.
	MaxReasonBytes = 400
	// MaxEventTypeBytes bounds an event type's name.
	MaxEventTypeBytes = 32
)

// Schedule is the delay before each retry: the n-th entry follows the
// n-th failed attempt. The first attempt is at once; after the last
// entry's retry fails, the delivery is given up, about three days after
// it began.
var Schedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// MaxAttempts is how many attempts a delivery gets.
var MaxAttempts = len(Schedule) + 1

// Options configure a Service. The zero value is a production setup.
type Options struct {
	// AllowPrivate lets webhooks reach loopback, private and link-local
	// addresses. It is unsafe: anyone who may create a webhook reaches
	// the server's network and its cloud's metadata service.
	AllowPrivate bool
	// AllowHTTP lets webhook URLs be plain http://.
	AllowHTTP bool
	// PrivateHint, when set, ends the refusal of a URL that names a
	// loopback, private or link-local address: how to allow them.
	PrivateHint string
	// Timeout bounds each attempt; zero means DefaultTimeout.
	Timeout time.Duration
	// Concurrency bounds the attempts made at once to one webhook (each
	// webhook has a lane of its own, lanes.go); zero means
	// DefaultConcurrency.
	Concurrency int
	// Grace is how long a rotated secret still signs; zero means
	// DefaultGrace.
	Grace time.Duration
	// Now is the clock; nil means the store's.
	Now func() time.Time
	// Logger receives failed deliveries (never secrets); nil means
	// slog.Default().
	Logger *slog.Logger
	// Resolve, when set, resolves endpoint names in place of the
	// system's resolver (tests). The addresses it gives are guarded too.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Pending, when set, is told the time of the next attempt of each
	// pending delivery the Service writes (a first delivery, a claim, a
	// retry), once written: a worker that serves many publications
	// knows from it when to look at a publication's outbox again.
	Pending func(next time.Time)
	// Paused, when set, reports whether the publication's deliveries
	// wait (it is suspended): HandleEvents then writes them in the
	// outbox due at once and attempts none, and RetryDue claims none and
	// returns ErrPaused. It is asked once a call that has deliveries to
	// write or claim.
	Paused func(ctx context.Context) (bool, error)
}

// ErrPaused is RetryDue's error while Options.Paused says the
// deliveries wait: they stay in the outbox, due, for a call once they no
// longer wait.
var ErrPaused = errors.New("the publication's webhook deliveries wait while it is suspended")

// Service delivers events to webhooks and manages them.
type Service struct {
	store  *storage.Store
	opts   Options
	client *http.Client
	log    *slog.Logger
	seal   sealer
	lanes  *lanes
}

// New returns the Service of store's webhooks.
func New(store *storage.Store, opts Options) *Service {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.Now == nil {
		opts.Now = store.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Service{store: store, opts: opts, client: newClient(opts.AllowPrivate, opts.Resolve), log: log}
	s.lanes = newLanes(opts.Concurrency, s.attempt)
	return s
}

// Policy is what the Service allows of a webhook's URL.
func (s *Service) Policy() storage.WebhookPolicy {
	return storage.WebhookPolicy{AllowPrivate: s.opts.AllowPrivate, AllowHTTP: s.opts.AllowHTTP, PrivateHint: s.opts.PrivateHint}
}

// claim is how long an attempt holds its delivery: past it, a delivery
// whose attempt never recorded its result (the server stopped) is due
// again.
func (s *Service) claim() time.Duration { return s.opts.Timeout + 15*time.Second }

// Hold is the webhooks worker's changefeed.Worker.Hold: the checkpoint
// stays before the events whose first attempts the lanes still owe.
func (s *Service) Hold(last int64) int64 { return s.lanes.hold(last) }

// Wait returns when every delivery handed to the webhooks' lanes by
// HandleEvents and RetryDue was attempted (or dropped as its context
// ended).
func (s *Service) Wait() { s.lanes.wait() }

// HandleEvents writes a delivery in the outbox for each public event and
// each enabled webhook subscribed to its type, hands each to its
// webhook's lane (lanes.go), which makes its first attempt as soon as the
// endpoint's earlier deliveries allow, and returns once they are written:
// a slow endpoint delays nobody's deliveries but its own. A delivery
// already in the outbox (the events handled before) is left to RetryDue,
// unless no attempt at it was recorded (see unattempted): each event
// reaches each webhook once per attempt. It fails only when the webhooks
// or the outbox cannot be read or written, or ctx ends; the events are
// then handled again, which writes what is missing and sends nothing
// twice. The lanes' attempts run with ctx: they end with it. Requests: 1
// Query of the webhooks when an event is public, Options.Paused's read when
// a delivery is to be written, 1 TransactWriteItems per
// delivery, and each attempt's (see attempt); a delivery already in the
// outbox, unattempted's.
func (s *Service) HandleEvents(ctx context.Context, events []storage.LoggedEvent) error {
	type message struct {
		event storage.LoggedEvent
		body  []byte
	}
	var msgs []message
	for _, le := range events {
		if !Public(le.Event) {
			continue
		}
		body, err := Body(le.Event)
		if err != nil {
			s.log.ErrorContext(ctx, "webhook event not sent", "event", le.ID, "err", err)
			continue
		}
		msgs = append(msgs, message{le, body})
	}
	if len(msgs) == 0 {
		return nil
	}
	hooks, err := s.store.Webhooks(ctx)
	if err != nil {
		return err
	}
	var (
		deliveries []storage.OutboxItem
		positions  = map[string]int64{}
	)
	for _, m := range msgs {
		positions[m.event.ID] = m.event.Position
		for _, h := range hooks {
			// A webhook gets the events logged since it was made: the
			// worker starts at the oldest event the log keeps.
			if h.Subscribed(m.event.Type) && h.Since(m.event) {
				deliveries = append(deliveries, storage.OutboxItem{WebhookID: h.ID, EventID: m.event.ID,
					EventType: m.event.Type, Body: m.body, State: storage.OutboxPending})
			}
		}
	}
	paused, err := s.paused(ctx, len(deliveries))
	if err != nil {
		return err
	}
	byID := map[string]*storage.Webhook{}
	for _, h := range hooks {
		byID[h.ID] = h
	}
	var (
		mu    sync.Mutex
		first error
	)
	// The outbox is written a chunk at a time, so each lane gets its
	// deliveries in the log's order.
	for chunk := range slices.Chunk(deliveries, writers) {
		var wg sync.WaitGroup
		written := make([]bool, len(chunk))
		for i, o := range chunk {
			wg.Go(func() {
				now := s.opts.Now()
				o.CreatedAt, o.NextAttemptAt = now, now.Add(s.claim())
				if paused {
					o.NextAttemptAt = now // for RetryDue once it no longer waits
				}
				added, err := s.store.AddOutbox(ctx, o)
				switch {
				case errors.Is(err, storage.ErrNotFound):
					return // the webhook was deleted since the list was read
				case err == nil && !added && !paused:
					// Not while paused: one the outbox has waits for
					// RetryDue.
					o, added, err = s.unattempted(ctx, o)
				}
				if err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
					return
				}
				chunk[i], written[i] = o, added && !paused
				if added && !paused {
					s.pending(o.NextAttemptAt)
				}
			})
		}
		wg.Wait()
		for i, o := range chunk {
			if written[i] {
				s.lanes.offer(job{ctx: ctx, hook: byID[o.WebhookID], o: o, pos: positions[o.EventID]})
			}
		}
	}
	if first != nil {
		return first
	}
	return ctx.Err()
}

// paused returns Options.Paused's answer when there are n deliveries to
// write or claim, false when there are none or no Paused.
func (s *Service) paused(ctx context.Context, n int) (bool, error) {
	if n == 0 || s.opts.Paused == nil {
		return false, nil
	}
	paused, err := s.opts.Paused(ctx)
	if err != nil {
		return false, fmt.Errorf("webhooks: read whether deliveries wait: %w", err)
	}
	return paused, nil
}

// writers bounds the outbox items HandleEvents writes at once.
const writers = 16

// unattempted returns the delivery o as the outbox has it, claimed, and
// true when no attempt at it was recorded: the events were handled before
// by a server that stopped (a crash, a lost lease) between writing it and
// recording its first attempt. That attempt may never have been made, so
// it is made now, not when the claim lapses; at worst the endpoint gets
// the event twice with the same webhook-id, as delivery at least once
// allows. Requests: 1 GetItem, and 1 UpdateItem when it claims.
func (s *Service) unattempted(ctx context.Context, o storage.OutboxItem) (storage.OutboxItem, bool, error) {
	cur, err := s.store.GetOutbox(ctx, o.WebhookID, o.EventID)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return o, false, nil // given up and gone, or its webhook deleted
	case err != nil:
		return o, false, err
	case cur.State != storage.OutboxPending || cur.Attempts > 0:
		return o, false, nil // RetryDue's
	}
	claimed, err := s.store.ClaimOutbox(ctx, cur, s.opts.Now().Add(s.claim()))
	if errors.Is(err, storage.ErrVersionConflict) {
		return o, false, nil // attempted or claimed meanwhile
	}
	return claimed, err == nil, err
}

// RetryDue claims the deliveries that are due, up to 100 at a time, and
// hands them to their webhooks' lanes; it returns without waiting for
// the attempts. A delivery whose lane is full stays claimed, and is due
// again once the claim lapses: what is due moves on, so a slow
// endpoint's backlog never hides another's retries. Requests: 1 Query of
// the outbox, and when something is due 1 Query of the webhooks and, per
// delivery, 1 UpdateItem claiming it and the attempt's.
func (s *Service) RetryDue(ctx context.Context) error {
	due, err := s.store.DueOutbox(ctx, s.opts.Now(), dueBatch)
	if err != nil || len(due) == 0 {
		return err
	}
	switch paused, err := s.paused(ctx, len(due)); {
	case err != nil:
		return err
	case paused:
		return ErrPaused
	}
	hooks, err := s.store.Webhooks(ctx)
	if err != nil {
		return err
	}
	byID := map[string]*storage.Webhook{}
	for _, h := range hooks {
		byID[h.ID] = h
	}
	for _, o := range due {
		o, err := s.store.ClaimOutbox(ctx, o, s.opts.Now().Add(s.claim()))
		switch {
		case errors.Is(err, storage.ErrVersionConflict):
			continue // attempted meanwhile, or claimed by another
		case err != nil:
			s.log.WarnContext(ctx, "webhook delivery not claimed", "webhook", o.WebhookID, "event", o.EventID, "err", err)
			continue
		}
		s.pending(o.NextAttemptAt)
		s.lanes.offer(job{ctx: ctx, hook: byID[o.WebhookID], o: o})
	}
	return nil
}

// attempt makes the attempt of the job j, in its lane: it claims the
// delivery for the attempt, provided nothing else attempted or claimed it
// since it was offered and its webhook is not being deleted (whatever
// the list read with it said), and delivers it. Requests: 1
// TransactWriteItems, and deliver's.
func (s *Service) attempt(j job) {
	o, err := s.store.StartAttempt(j.ctx, j.o, s.opts.Now().Add(s.claim()))
	switch {
	case errors.Is(err, storage.ErrVersionConflict):
		return
	case errors.Is(err, storage.ErrNotFound):
		// Deleted, or being deleted: nothing is sent; the deletion
		// sweeps the rest.
		s.dropDelivery(j.ctx, o)
		return
	case err != nil:
		if j.ctx.Err() == nil {
			s.log.WarnContext(j.ctx, "webhook delivery not claimed", "webhook", o.WebhookID, "event", o.EventID, "err", err)
		}
		return
	}
	s.deliver(j.ctx, j.hook, o, false)
}

// deliver makes one attempt at o, claimed, to hook and records its
// outcome; a delivery to a deleted webhook (nil) is deleted. A manual
// attempt (a redelivery) disables nothing but on 410, and is retried only
// when the delivery was pending anyway. It returns the attempt as
// recorded. Requests: 1 TransactWriteItems, and 1 UpdateItem of the
// webhook on a success or when it is disabled.
func (s *Service) deliver(ctx context.Context, hook *storage.Webhook, o storage.OutboxItem, manual bool) storage.DeliveryAttempt {
	before, wasPending := o.Attempts, o.State == storage.OutboxPending
	now := s.opts.Now()
	if hook == nil {
		// Its webhook was deleted since the delivery was written.
		s.dropDelivery(ctx, o)
		return storage.DeliveryAttempt{WebhookID: o.WebhookID, EventID: o.EventID, EventType: o.EventType, At: now, Error: "the webhook was deleted"}
	}
	d := storage.DeliveryAttempt{WebhookID: o.WebhookID, EventID: o.EventID, EventType: o.EventType, At: now}
	var a answer
	switch {
	case !hook.Enabled && !manual:
		a.err = "not sent: the webhook is disabled"
	default:
		secrets, err := s.secretsOf(ctx, hook, now)
		if err != nil {
			// The claim lapses and the attempt is made then.
			s.log.ErrorContext(ctx, "webhook delivery not signed", "webhook", o.WebhookID, "event", o.EventID, "err", err)
			return storage.DeliveryAttempt{WebhookID: o.WebhookID, EventID: o.EventID, EventType: o.EventType, At: now, Error: "not signed"}
		}
		o.Attempts++
		a = s.post(ctx, hook.URL, o.EventID, secrets, now, o.Body)
	}
	a.err = truncate(a.err, MaxErrorBytes)
	d.Attempt, d.StatusCode, d.Duration, d.Error = o.Attempts, a.status, a.duration, a.err
	o.LastStatus, o.LastError = a.status, a.err
	var disable string
	switch {
	case a.status >= 200 && a.status < 300:
		o.State, o.NextAttemptAt = storage.OutboxDelivered, time.Time{}
	case a.status == 410:
		o.State, o.NextAttemptAt = storage.OutboxFailed, time.Time{}
		disable = "the endpoint answered 410 Gone"
	case (!hook.Enabled && !manual) || (manual && !wasPending) || o.Attempts >= MaxAttempts:
		o.State, o.NextAttemptAt = storage.OutboxFailed, time.Time{}
		if !manual && hook.Enabled && hook.LastSuccessAt.Before(o.CreatedAt) {
			disable = truncate(fmt.Sprintf("every attempt at event %s failed for %s (last: %s)", o.EventID, now.Sub(o.CreatedAt).Round(time.Minute), a.err), MaxReasonBytes)
		}
	default:
		o.NextAttemptAt = now.Add(max(Schedule[o.Attempts-1], a.retryAfter))
		o.State = storage.OutboxPending
		d.NextAttemptAt = o.NextAttemptAt
	}
	switch err := s.store.RecordAttempt(ctx, o, before, d); {
	case errors.Is(err, storage.ErrNotFound):
		// The webhook is being deleted: its deletion waits for this
		// attempt to leave the outbox.
		s.dropDelivery(ctx, o)
		return d
	case err != nil && !errors.Is(err, storage.ErrVersionConflict):
		s.log.ErrorContext(ctx, "webhook delivery not recorded", "webhook", o.WebhookID, "event", o.EventID, "err", err)
	case err == nil && o.State == storage.OutboxPending:
		s.pending(o.NextAttemptAt)
	}
	if a.err != "" {
		s.log.WarnContext(ctx, "webhook delivery failed", "webhook", o.WebhookID, "event", o.EventID,
			"attempt", o.Attempts, "status", a.status, "err", a.err, "next", o.NextAttemptAt)
	}
	switch {
	case o.State == storage.OutboxDelivered:
		if err := s.store.WebhookSucceeded(ctx, o.WebhookID, now); err != nil {
			s.log.WarnContext(ctx, "webhook success not recorded", "webhook", o.WebhookID, "err", err)
		}
	case disable != "":
		s.log.WarnContext(ctx, "webhook disabled", "webhook", o.WebhookID, "reason", disable)
		if err := s.store.DisableWebhook(ctx, o.WebhookID, disable); err != nil {
			s.log.ErrorContext(ctx, "webhook not disabled", "webhook", o.WebhookID, "err", err)
		}
	}
	return d
}

// pending tells Options.Pending of a pending delivery next due at next.
func (s *Service) pending(next time.Time) {
	if s.opts.Pending != nil {
		s.opts.Pending(next)
	}
}

// dropDelivery deletes the delivery o of a webhook that is gone or being
// deleted: nothing to send it to, nothing to record.
func (s *Service) dropDelivery(ctx context.Context, o storage.OutboxItem) {
	if err := s.store.DeleteOutbox(ctx, o.WebhookID, o.EventID); err != nil {
		s.log.ErrorContext(ctx, "webhook delivery of a deleted webhook not removed", "webhook", o.WebhookID, "event", o.EventID, "err", err)
	}
}

// truncate returns s cut to at most n bytes, on a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
