package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
)

// TestSignInEmailIsNotQueuedBehindANewsletter: with a newsletter's emails
// queued before it, and the SMTP server holding the one being sent (a
// slow relay, or a long newsletter), a reader's sign-in email still
// arrives: sign-in emails wait in a lane of their own, which the mail
// worker sends beside the newsletter's.
func TestSignInEmailIsNotQueuedBehindANewsletter(t *testing.T) {
	r := newSignInRig(t, 10)
	ctx := context.Background()
	r.enqueueNewsletter(t, 20)
	// The relay holds every newsletter email until the test ends.
	var held atomic.Int32
	release := make(chan struct{})
	r.smtp.gate = func(to string, _ []byte) error {
		if strings.HasPrefix(to, "member") {
			held.Add(1)
			<-release
		}
		return nil
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); r.worker.Limit(20).Run(wctx) }()
	t.Cleanup(func() { stop(); <-done })
	t.Cleanup(func() { close(release) }) // first: the worker waits for the relay

	within(t, 30*time.Second, "a newsletter email being sent", func() bool { return held.Load() > 0 }, nil)
	if a := r.request(t, "reader@example.com", "https://blog.test/welcome"); a.code() != "" {
		t.Fatalf("requestSignInLink = %s", a.body)
	}
	within(t, 30*time.Second, "the sign-in email delivered while a newsletter is being sent", func() bool {
		for _, m := range r.smtp.messages() {
			if m.to == "reader@example.com" {
				return true
			}
		}
		return false
	}, func() string {
		return fmt.Sprintf("%d newsletter emails held, %d emails delivered", held.Load(), len(r.smtp.messages()))
	})
}

// TestEmailRefusedAtItsFinalDotIsTriedAgain: the mail worker records an
// email sent by SMTP as sent before the final dot; when the server
// refuses it there (451), the email is pending again, in its lane, its
// bodies kept for the next attempt and the reason shown to admins.
func TestEmailRefusedAtItsFinalDotIsTriedAgain(t *testing.T) {
	r := newSignInRig(t, 10)
	r.smtp.gate = func(string, []byte) error {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	if a := r.request(t, "reader@example.com", "https://blog.test/welcome"); a.code() != "" {
		t.Fatalf("requestSignInLink = %s", a.body)
	}
	if err := r.worker.SendDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	var out struct {
		OutboxEmails []struct {
			To, State, LastError string
			Text                 *string
			Attempts             int
		}
	}
	if a := r.gql(t, r.token(auth.RoleAdmin), `{ outboxEmails { to state lastError text attempts } }`, nil, "", nil); a.code() != "" {
		t.Fatalf("outboxEmails = %s", a.body)
	} else if err := json.Unmarshal(a.Data["outboxEmails"], &out.OutboxEmails); err != nil {
		t.Fatal(err)
	}
	if len(out.OutboxEmails) != 1 {
		t.Fatalf("outboxEmails = %+v, want the sign-in email", out.OutboxEmails)
	}
	e := out.OutboxEmails[0]
	equal(t, "state", e.State, storage.MailPending)
	equal(t, "attempts", e.Attempts, 1)
	if !strings.Contains(e.LastError, "451") || e.Text == nil || *e.Text == "" {
		t.Errorf("the refused email = %+v, want the 451 as its error and its text kept", e)
	}
	due, err := r.store.DueMail(context.Background(), storage.LaneUrgent, time.Now().Add(time.Hour), 10)
	if err != nil || len(due) != 1 {
		t.Errorf("due in the urgent lane within an hour: %+v, %v; want the refused email", due, err)
	}
}

// enqueueNewsletter puts n newsletter emails into the outbox, to
// member00@example.com and on.
func (r *signInRig) enqueueNewsletter(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		e := storage.Email{ID: fmt.Sprintf("letter-%02d", i), To: fmt.Sprintf("member%02d@example.com", i), Kind: "newsletter",
			Subject: "A post", Text: "A post, as written.", HTML: "<p>A post, as written.</p>", CreatedAt: time.Now()}
		if _, err := r.store.EnqueueMail(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
}
