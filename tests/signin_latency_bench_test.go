package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// signInLatencyRequests is how many sign-in emails
// BenchmarkSignInEmailLatency asks for in each case, one after another.
const signInLatencyRequests = 200

// BenchmarkSignInEmailLatency measures how long a reader waits for a
// sign-in email: from requestSignInLink over HTTP to the email at an
// SMTP server on loopback, 200 times one after another, with the server
// binary (embedded engine) otherwise idle, and while it sends a
// newsletter of 10,000 emails at MAIL_RATE=100 through the same mail
// worker and SMTP server. It reports the 50th and 99th percentiles and
// the slowest, and the newsletter's emails a second meanwhile. Run with
// go test -run ^$ -bench SignInEmailLatency -benchtime 1x ./tests.
func BenchmarkSignInEmailLatency(b *testing.B) {
	for _, letter := range []int{0, benchEmails} {
		b.Run(fmt.Sprintf("newsletter=%d", letter), func(b *testing.B) {
			for range b.N {
				benchSignInLatency(b, letter)
			}
		})
	}
}

func benchSignInLatency(b *testing.B, letter int) {
	ss := newSMTPServer(b)
	ss.open = true
	data := b.TempDir()
	flags := []string{"-smtp-url", fmt.Sprintf("smtp://127.0.0.1:%d?tls=none&from=letters@blog.test", ss.port),
		"-mail-rate", "100", "-sign-in-client-addresses", "1000", "-cors-origins", "https://blog.test",
		"-log-format", "json", "-log-level", "warn"}
	srv := startBinary(b, data, flags...)
	if letter > 0 {
		// The newsletter's emails, as its worker enqueues them, wait in
		// the outbox when the server starts again.
		stopBinary(b, srv)
		withEmbeddedStore(b, data, func(s *storage.Store) { enqueueLetter(b, s, letter) })
		srv = startBinary(b, data, flags...)
	}
	// The newsletter is being sent before the first request.
	within(b, time.Minute, "the newsletter being sent", func() bool { return len(ss.messages()) >= min(letter, 100) }, nil)

	b.ResetTimer()
	start, before := time.Now(), len(ss.messages())
	var waits []time.Duration
	for i := range signInLatencyRequests {
		to := fmt.Sprintf("reader%03d@example.com", i)
		sent := time.Now()
		requestSignInOver(b, srv.base, to)
		var at time.Time
		within(b, time.Minute, "the sign-in email of "+to, func() bool {
			for _, m := range slices.Backward(ss.messages()) {
				if m.to == to {
					at = m.at
					return true
				}
			}
			return false
		}, nil)
		waits = append(waits, at.Sub(sent))
	}
	elapsed := time.Since(start)
	b.StopTimer()
	letters := len(ss.messages()) - before - signInLatencyRequests
	if letter > 0 && before+letters >= letter {
		b.Fatalf("the newsletter ended before the sign-in emails did: %d of %d sent", before+letters, letter)
	}
	slices.Sort(waits)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(waits[len(waits)/2]), "p50-ms")
	b.ReportMetric(ms(waits[len(waits)*99/100]), "p99-ms")
	b.ReportMetric(ms(waits[len(waits)-1]), "max-ms")
	b.ReportMetric(float64(letters)/elapsed.Seconds(), "newsletter-emails/s")
	stopBinary(b, srv)
}

// enqueueLetter puts n newsletter-sized emails into store's outbox, as
// the newsletter worker does for a post and n members.
func enqueueLetter(b *testing.B, store *storage.Store, n int) {
	html := "<p>A post of a few paragraphs, about four kilobytes as a newsletter's HTML part.</p>"
	for len(html) < 4<<10 {
		html += html
	}
	now := time.Now()
	for m := range n {
		e := storage.Email{ID: fmt.Sprintf("letter-%05d", m), To: fmt.Sprintf("member%05d@example.com", m), Kind: "newsletter",
			Subject: "A post", Text: "A post, as written.", HTML: html, CreatedAt: now,
			ListUnsubscribe: "https://api.blog.test/newsletter/unsubscribe?token=t"}
		if _, err := store.EnqueueMail(context.Background(), e); err != nil {
			b.Fatal(err)
		}
	}
}

// requestSignInOver asks the server at base for a sign-in email to to,
// and fails b unless it says it is sent.
func requestSignInOver(b *testing.B, base, to string) {
	body, _ := json.Marshal(map[string]any{"query": requestSignInQuery, "variables": map[string]any{"email": to, "to": "https://blog.test/"}})
	resp, err := http.Post(base+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			RequestSignInLink struct{ Sent bool }
		}
		Errors []any
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Errors) > 0 || !out.Data.RequestSignInLink.Sent {
		b.Fatalf("requestSignInLink: %d %+v %v", resp.StatusCode, out, err)
	}
}
