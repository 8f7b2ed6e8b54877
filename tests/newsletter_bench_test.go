package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// BenchmarkNewsletterToMembers measures a post's newsletter from end to
// end: 10,000 members of the publication (imported, with the items a
// first sign-in makes) who get the newsletter, the server binary with its
// change feed and mail worker sending by SMTP to a relay of the test on
// loopback (no TLS), and a post published over HTTP with sendNewsletter.
// From publishPost's answer it times the first email received (the
// change feed's delay and the first page), the newsletter worker's last
// email put into the outbox (its "newsletter enqueued" log) and the last
// email received, and reports the emails a second between the first and the
// last received and the server's DynamoDB requests an email (its
// metrics, from the publish to the last email), with MAIL_RATE off and at
// 100. Every member receives exactly one email. The embedded engine by
// default, DynamoDB Local when DYNAMODB_ENDPOINT is set. Run with
// go test -run ^$ -bench NewsletterToMembers -benchtime 1x ./tests.
func BenchmarkNewsletterToMembers(b *testing.B) {
	for _, rate := range []int{0, 100} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			for range b.N {
				benchNewsletterToMembers(b, rate)
			}
		})
	}
}

func benchNewsletterToMembers(b *testing.B, rate int) {
	b.StopTimer()
	ctx := context.Background()
	endpoint := dynamotest.Endpoint(b)
	ss := newSMTPServer(b)
	ss.open = true // a relay on loopback
	metricsAddr := freeAddr(b)
	flags := []string{"-jwt-secret", string(testSecret), "-jwt-issuer", testIssuer, "-jwt-audience", testAudience,
		"-smtp-url", fmt.Sprintf("smtp://127.0.0.1:%d?tls=none&from=letters@blog.test", ss.port),
		"-mail-rate", strconv.Itoa(rate), "-metrics-addr", metricsAddr, "-log-format", "json", "-log-level", "info"}
	data := b.TempDir()
	var db *storage.Store
	if endpoint != "" {
		client, err := storage.NewClient(ctx, dynamotest.ClientConfig(b, nil))
		if err != nil {
			b.Fatal(err)
		}
		table := dynamotest.Table(b, client, "letters")
		db = storage.New(client, table)
		flags = append(flags, "-dynamodb-endpoint", endpoint, "-table", table)
	}
	// The first start makes the table; the members are imported while no
	// server runs (the embedded engine's file is one process's).
	srv := startBinary(b, data, flags...)
	stopBinary(b, srv)
	emails := make([]string, benchEmails)
	for i := range emails {
		emails[i] = fmt.Sprintf("member%05d@example.com", i)
	}
	importMembers := func(s *storage.Store) {
		made, err := s.ImportMembers(ctx, emails)
		if err != nil || len(made) != len(emails) {
			b.Fatalf("import members: %d of %d made: %v", len(made), len(emails), err)
		}
	}
	if endpoint != "" {
		importMembers(db)
	} else {
		withEmbeddedStore(b, data, importMembers)
	}
	srv = startBinary(b, data, flags...)
	defer stopBinary(b, srv)

	admin := "Bearer " + fleetToken(b)
	var none struct{}
	_ = srv.try(admin, `mutation { createAuthor(input: {subject: "ada-lovelace", name: "Ada Lovelace"}) { author { id } } }`, &none) // the demo blog has her
	var post struct {
		CreatePost struct{ Post struct{ ID string } }
	}
	srv.graphql(b, admin, `mutation { createPost(input: {title: "To every member", slug: "to-every-member", body: "A post for 10,000 members, once each."}) { post { id } } }`, &post)
	before := scrapeDynamoRequests(b, metricsAddr)
	b.StartTimer()
	srv.graphql(b, admin, fmt.Sprintf(`mutation { publishPost(input: {id: %q, sendNewsletter: true}) { post { id } } }`, post.CreatePost.Post.ID), &none)
	published := time.Now()

	delivered := func() int { return len(ss.messages()) }
	whileProgressing(b, 2*time.Minute, "every member's email delivered", func() int { return benchEmails - delivered() },
		func() string { return fmt.Sprintf("%d delivered", delivered()) })
	b.StopTimer()
	after := scrapeDynamoRequests(b, metricsAddr)

	msgs := ss.messages()
	perAddress := map[string]int{}
	for _, m := range msgs {
		perAddress[strings.ToLower(m.to)]++
	}
	for _, e := range emails {
		if n := perAddress[e]; n != 1 {
			b.Errorf("%s received %d emails, want 1", e, n)
		}
	}
	if len(msgs) != benchEmails {
		b.Errorf("%d emails received, want %d", len(msgs), benchEmails)
	}
	enqueued := srv.loggedAt(b, "newsletter enqueued")
	first, last := msgs[0].at, msgs[len(msgs)-1].at
	b.ReportMetric(first.Sub(published).Seconds(), "s-to-first")
	b.ReportMetric(enqueued.Sub(published).Seconds(), "s-to-enqueued")
	b.ReportMetric(last.Sub(published).Seconds(), "s-to-received")
	b.ReportMetric(float64(len(msgs)-1)/last.Sub(first).Seconds(), "sent/s")
	reqs := 0
	var ops []string
	for op, n := range after {
		if d := n - before[op]; d > 0 {
			reqs += d
			ops = append(ops, fmt.Sprintf("%s %.3f", op, float64(d)/benchEmails))
		}
	}
	b.ReportMetric(float64(reqs)/benchEmails, "reqs/email")
	b.Logf("DynamoDB requests an email, by operation: %s", strings.Join(ops, ", "))
}

// freeAddr returns an address on loopback that no one listens on.
func freeAddr(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// scrapeDynamoRequests returns the server's DynamoDB requests so far by
// operation, from blog_dynamodb_requests_total at addr.
func scrapeDynamoRequests(b *testing.B, addr string) map[string]int {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(name, "blog_dynamodb_requests_total{") {
			continue
		}
		_, op, _ := strings.Cut(name, `operation="`)
		op, _, _ = strings.Cut(op, `"`)
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			b.Fatalf("metrics line %q: %v", sc.Text(), err)
		}
		out[op] += int(n)
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

// loggedAt returns the time of the server's last log record of message
// msg, and fails t when it logged none.
func (s *binaryServer) loggedAt(t testing.TB, msg string) time.Time {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var at time.Time
	for _, line := range s.logs {
		var rec struct {
			Time time.Time
			Msg  string
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == msg {
			at = rec.Time
		}
	}
	if at.IsZero() {
		t.Fatalf("the server logged no %q", msg)
	}
	return at
}
