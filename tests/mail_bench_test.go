package tests

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/mailer"
	"github.com/blogql/blog/storage"
)

// benchEmails is how many emails BenchmarkMailOutbox sends an operation:
// a post to 10,000 members.
const benchEmails = 10000

// BenchmarkMailOutbox puts 10,000 newsletter-sized emails into the
// outbox, as the newsletter worker does for a post and 10,000 members,
// then sends them with one server's mail worker to an SMTP server in
// process (STARTTLS and AUTH, one session an email, as to a relay), with
// MAIL_RATE off and at 1000 a second. It reports the emails a second of
// each phase and the DynamoDB requests an email of each. Run with
// go test -run ^$ -bench MailOutbox -benchtime 1x ./tests.
func BenchmarkMailOutbox(b *testing.B) {
	for _, rate := range []float64{0, 1000} {
		b.Run(fmt.Sprintf("rate=%g", rate), func(b *testing.B) { benchMailOutbox(b, rate) })
	}
}

func benchMailOutbox(b *testing.B, rate float64) {
	ctx := context.Background()
	db, err := storage.NewClient(ctx, dynamotest.EmbeddedConfig(b, nil))
	if err != nil {
		b.Fatal(err)
	}
	store := storage.New(db, "bench")
	if err := store.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	ss := newSMTPServer(b)
	sender, err := mailer.NewSMTP(mailer.SMTPConfig{
		Host: "127.0.0.1", Port: ss.port, Username: ss.user, Password: ss.password,
		From: "Test Blog <no-reply@blog.test>", TLS: mailer.TLSStartTLS,
		TLSConfig: &tls.Config{RootCAs: ss.rootCAs, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12},
	})
	if err != nil {
		b.Fatal(err)
	}
	worker := mailer.NewWorker(store, sender, slog.New(slog.NewTextHandler(io.Discard, nil))).Limit(rate)
	html := "<p>A post of a few paragraphs, about four kilobytes as a newsletter's HTML part.</p>"
	for len(html) < 4<<10 {
		html += html
	}
	var enqueue, send time.Duration
	var enqueueReqs, sendReqs int
	for i := range b.N {
		start := time.Now()
		ectx, ec := storage.WithRequestCounter(ctx)
		for m := range benchEmails {
			e := storage.Email{ID: fmt.Sprintf("%d-%05d", i, m), To: fmt.Sprintf("member%05d@example.com", m), Kind: "newsletter",
				Subject: "A post", Text: "A post, as written.", HTML: html, CreatedAt: start,
				ListUnsubscribe: "https://api.blog.test/newsletter/unsubscribe?token=t"}
			if _, err := store.EnqueueMail(ectx, e); err != nil {
				b.Fatal(err)
			}
		}
		enqueue += time.Since(start)
		enqueueReqs += ec.Total()

		before := len(ss.messages())
		start = time.Now()
		sctx, sc := storage.WithRequestCounter(ctx)
		if err := worker.SendDue(sctx); err != nil {
			b.Fatal(err)
		}
		send += time.Since(start)
		sendReqs += sc.Total()
		if got := len(ss.messages()) - before; got != benchEmails {
			b.Fatalf("%d emails arrived, want %d", got, benchEmails)
		}
	}
	n := float64(b.N * benchEmails)
	b.ReportMetric(n/enqueue.Seconds(), "enqueued/s")
	b.ReportMetric(n/send.Seconds(), "sent/s")
	b.ReportMetric(float64(enqueueReqs)/n, "enqueue-reqs/email")
	b.ReportMetric(float64(sendReqs)/n, "send-reqs/email")
}
