package mailer

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"

	"github.com/blogql/blog/storage"
)

// Worker limits.
const (
	// attemptTimeout bounds one attempt; a claim lasts a little longer,
	// so no other server tries while it may still go.
	attemptTimeout = 30 * time.Second
	claimFor       = attemptTimeout + 15*time.Second
	// MaxAttempts is how many temporary failures an email takes before
	// it fails for good.
	MaxAttempts = 8
	// pollEvery is how often the worker looks for emails due when
	// nothing woke it: retries, and emails another server enqueued and
	// could not send.
	pollEvery = 5 * time.Second
	batch     = 25
)

// Local keeps emails in the table's outbox only, and logs them: the
// embedded default, which needs no mail server.
type Local struct {
	Logger *slog.Logger
}

// Transport returns "local".
func (Local) Transport() string { return "local" }

// Send logs e, its plain-text part included, marked as kept in the local
// outbox.
func (l Local) Send(ctx context.Context, e storage.Email) error {
	l.Logger.InfoContext(ctx, "email kept in the local outbox (no SMTP configured; admins read it with outboxEmails)",
		"to", e.To, "subject", e.Subject, "text", e.Text)
	return nil
}

// Worker sends the outbox's emails that are due, when woken (Wake) and
// every pollEvery, one at a time in each lane, at most at its rate
// (Limit). The urgent lane (sign-in emails) has a loop of its own, so a
// newsletter being sent delays a sign-in email by a turn of the rate at
// most, never by the newsletter's length.
type Worker struct {
	store   *storage.Store
	sender  Sender
	logger  *slog.Logger
	wake    [2]chan struct{} // by lane
	limiter *rate.Limiter    // nil: no limit
}

// lanes are the outbox's lanes, the urgent first.
var lanes = [2]storage.MailLane{storage.LaneUrgent, storage.LaneBulk}

// Limit makes the worker send at most perSecond emails a second, with
// bursts of up to a second's worth; zero or less is no limit. It returns
// w. A fleet of n servers sends up to n times as many. Both lanes share
// the limit: the urgent lane's emails take their turn beside the bulk
// lane's, at most a turn or two after the next.
func (w *Worker) Limit(perSecond float64) *Worker {
	w.limiter = nil
	if perSecond > 0 {
		w.limiter = rate.NewLimiter(rate.Limit(perSecond), max(1, int(perSecond)))
	}
	return w
}

// NewWorker returns the worker that sends store's outbox with sender.
func NewWorker(store *storage.Store, sender Sender, logger *slog.Logger) *Worker {
	return &Worker{store: store, sender: sender, logger: logger, wake: [2]chan struct{}{make(chan struct{}, 1), make(chan struct{}, 1)}}
}

// Wake makes the worker look for due emails now: an email was enqueued.
func (w *Worker) Wake() {
	for _, c := range w.wake {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// Run sends due emails, each lane in a loop of its own, until ctx is
// done.
func (w *Worker) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i, lane := range lanes {
		wg.Go(func() { w.run(ctx, lane, w.wake[i]) })
	}
	wg.Wait()
}

func (w *Worker) run(ctx context.Context, lane storage.MailLane, wake <-chan struct{}) {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if err := w.sendLane(ctx, lane); err != nil && ctx.Err() == nil {
			w.logger.Warn("mail outbox", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-tick.C:
		}
	}
}

// SendDue sends the emails due now, the urgent lane's first, each after
// claiming it, and records each outcome. It returns the first error of
// the table.
func (w *Worker) SendDue(ctx context.Context) error {
	for _, lane := range lanes {
		if err := w.sendLane(ctx, lane); err != nil {
			return err
		}
	}
	return nil
}

// sendLane sends the emails of lane due now, a batch at a time: the
// batch's claims are made at once, its emails sent one after another,
// each recorded as sent before its final dot, and the outcomes recorded
// while the next emails go. A server stopped mid-batch leaves the emails
// it claimed and did not send to be sent once their claims lapse.
func (w *Worker) sendLane(ctx context.Context, lane storage.MailLane) error {
	if ci, ok := w.sender.(idleCloser); ok {
		defer ci.CloseIdle()
	}
	n := batch
	if w.limiter != nil {
		// A second's worth: no claim lapses while its email waits its
		// turn of the rate.
		n = min(batch, max(1, int(w.limiter.Limit())))
	}
	for {
		due, err := w.store.DueMail(ctx, lane, w.store.Now(), n)
		if err != nil || len(due) == 0 {
			return err
		}
		claimed, err := w.claim(ctx, due)
		if err != nil {
			return err
		}
		var finishing errgroup.Group
		for _, e := range claimed {
			if err = w.send(ctx, e, &finishing); err != nil {
				break
			}
		}
		if ferr := finishing.Wait(); err == nil {
			err = ferr
		}
		if err != nil || len(due) < n {
			return err
		}
	}
}

// claim claims the emails due, all at once, and returns those it could
// claim, in their order.
func (w *Worker) claim(ctx context.Context, due []storage.Email) ([]storage.Email, error) {
	ok := make([]bool, len(due))
	until := w.store.Now().Add(claimFor)
	var g errgroup.Group
	for i, e := range due {
		g.Go(func() (err error) {
			ok[i], err = w.store.ClaimMail(ctx, e, until)
			return err
		})
	}
	err := g.Wait()
	claimed := due[:0]
	for i, e := range due {
		if ok[i] {
			claimed = append(claimed, e)
		}
	}
	return claimed, err
}

// send sends e, which it claimed, and records the outcome in finishing.
func (w *Worker) send(ctx context.Context, e storage.Email, finishing *errgroup.Group) error {
	if w.limiter != nil {
		if err := w.limiter.Wait(ctx); err != nil {
			return err
		}
	}
	e.Attempts++
	sctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	var commitErr error
	var err error
	if cs, ok := w.sender.(committer); ok {
		err = cs.SendCommitted(sctx, e, func() error {
			commitErr = w.store.CommitMail(context.WithoutCancel(ctx), e, w.sender.Transport())
			return commitErr
		})
	} else {
		err = w.sender.Send(sctx, e)
	}
	cancel()
	switch {
	case errors.Is(commitErr, storage.ErrVersionConflict):
		return nil // the claim lapsed and another server took the email
	case commitErr != nil:
		return commitErr // the claim lapses and the email is tried again
	}
	r := storage.MailResult{Sent: err == nil, Transport: w.sender.Transport()}
	switch {
	case err == nil:
	case errors.Is(err, ErrPermanent) || e.Attempts >= MaxAttempts:
		r.Err = err.Error()
		w.logger.Warn("email failed for good", "id", e.ID, "kind", e.Kind, "attempts", e.Attempts, "err", err)
	default:
		r.Err, r.RetryAt = err.Error(), w.store.Now().Add(backoff(e.Attempts))
		w.logger.Info("email not sent, tried again later", "id", e.ID, "attempts", e.Attempts, "retry_at", r.RetryAt, "err", err)
	}
	// The outcome is recorded even when ctx ends: the email went.
	finishing.Go(func() error { return w.store.FinishMail(context.WithoutCancel(ctx), e, r) })
	return nil
}

// idleCloser is a Sender that keeps sessions open between emails:
// *SMTP.
type idleCloser interface {
	CloseIdle()
}

// committer is a Sender that records an email as sent at the last moment
// before its server takes it for good (SMTP's final dot): *SMTP.
type committer interface {
	SendCommitted(ctx context.Context, e storage.Email, commit func() error) error
}

// backoff is the wait after the attempt-th failure: 30 s doubling, at
// most an hour.
func backoff(attempt int) time.Duration {
	return min(30*time.Second<<min(attempt-1, 7), time.Hour)
}
