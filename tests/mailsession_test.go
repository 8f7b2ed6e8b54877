package tests

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/mailer"
	"github.com/blogql/blog/storage"
)

// TestMailWorkerSendsManyEmailsInOneSession sends more than a batch of
// emails by SMTP, with STARTTLS and AUTH: they all go in one session,
// each once, for 3 requests an email and a Query a batch, and a session
// the server closed while idle is opened again for the next email.
func TestMailWorkerSendsManyEmailsInOneSession(t *testing.T) {
	ctx := context.Background()
	db, err := storage.NewClient(ctx, dynamotest.EmbeddedConfig(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	store := storage.New(db, "sessions")
	if err := store.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	ss := newSMTPServer(t)
	sender, err := mailer.NewSMTP(mailer.SMTPConfig{
		Host: "127.0.0.1", Port: ss.port, Username: ss.user, Password: ss.password,
		From: "Test Blog <no-reply@blog.test>", TLS: mailer.TLSStartTLS,
		TLSConfig: &tls.Config{RootCAs: ss.rootCAs, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12},
	})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	worker := mailer.NewWorker(store, sender, quiet)
	email := func(i int) storage.Email {
		return storage.Email{ID: fmt.Sprintf("e%02d", i), To: fmt.Sprintf("member%02d@example.com", i), Kind: "newsletter",
			Subject: "A post", Text: "A post, as written.", HTML: "<p>A post, as written.</p>", CreatedAt: time.Now()}
	}
	const n = 30 // a batch of 25 and 5 more
	for i := range n {
		if _, err := store.EnqueueMail(ctx, email(i)); err != nil {
			t.Fatal(err)
		}
	}
	rctx, requests := storage.WithRequestCounter(ctx)
	if err := worker.SendDue(rctx); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, m := range ss.messages() {
		if !m.tls {
			t.Errorf("the email to %s went in clear", m.to)
		}
		got[strings.ToLower(m.to)]++
	}
	for i := range n {
		if to := email(i).To; got[to] != 1 {
			t.Errorf("%s received %d emails, want 1", to, got[to])
		}
	}
	equal(t, "sessions", ss.sessions(), 1)
	// Each email a claim, a commit before its dot and its outcome; a
	// Query of the bulk lane for each batch, and one of the urgent lane.
	equal(t, "DynamoDB requests", requests.Total(), 3*n+2+1)

	// A session kept open between emails, and closed by the server
	// meanwhile, is opened again.
	sent := 0
	commit := func() error { sent++; return nil }
	if err := sender.SendCommitted(ctx, email(n), commit); err != nil {
		t.Fatal(err)
	}
	ss.dropSessions()
	if err := sender.SendCommitted(ctx, email(n+1), commit); err != nil {
		t.Fatalf("an email after the server closed the idle session: %v", err)
	}
	sender.CloseIdle()
	equal(t, "commits", sent, 2)
	equal(t, "emails received", len(ss.messages()), n+2)
	equal(t, "sessions", ss.sessions(), 3)
}
