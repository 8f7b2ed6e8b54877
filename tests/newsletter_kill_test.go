package tests

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/mail"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/blogql/blog/embedded"
	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/internal/longtest"
	"github.com/blogql/blog/mailer"
	"github.com/blogql/blog/storage"
)

// killMembers is how many members TestNewsletterKilledMidSendReachesEveryMemberOnce
// sends a post to: each joins by signing in, and on a DynamoDB Local
// loaded by the long tests before it that costs seconds a member.
const killMembers = 100

// TestNewsletterKilledMidSendReachesEveryMemberOnce publishes a post to
// killMembers members, its emails sent by SMTP to a server of the test at 20 a
// second a server, and kills the sending server with SIGKILL once some
// of them arrived: on DynamoDB Local a second server on the same table
// goes on; on the embedded engine, whose data file is one process's, the
// killed server starts again on it. Every member receives the post, and
// once the outbox has nothing left to send, exactly one copy of it.
func TestNewsletterKilledMidSendReachesEveryMemberOnce(t *testing.T) {
	endpoint := dynamotest.Endpoint(t)
	longtest.Skip(t, "a newsletter's sending server killed with SIGKILL, waiting out its claims")
	ctx := context.Background()
	ss := newSMTPServer(t)
	ss.open = true // a relay on loopback: no TLS, no AUTH
	// Once a third of the emails arrived, the relay holds each email it
	// is given, after its last byte, before its answer: the kill comes
	// when an email went but its server has not heard so, the worst
	// moment of an SMTP session.
	var passed, held atomic.Int32
	release := make(chan struct{})
	ss.gate = func(_ string, data []byte) error {
		if bytes.Contains(data, []byte("Subject: Once each")) && passed.Add(1) > killMembers/3 {
			held.Add(1)
			<-release
		}
		return nil
	}
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	flags := []string{"-jwt-secret", string(testSecret), "-jwt-issuer", testIssuer, "-jwt-audience", testAudience,
		"-smtp-url", fmt.Sprintf("smtp://127.0.0.1:%d?tls=none&from=letters@blog.test", ss.port),
		"-mail-rate", "20", "-log-format", "json", "-log-level", "warn"}
	data := t.TempDir()
	var db *storage.Store
	if endpoint != "" {
		client, err := storage.NewClient(ctx, dynamotest.ClientConfig(t, nil))
		if err != nil {
			t.Fatal(err)
		}
		table := dynamotest.Table(t, client, "letters")
		db = storage.New(client, table)
		flags = append(flags, "-dynamodb-endpoint", endpoint, "-table", table)
	}
	// The first server makes the table; the members join it while no
	// server runs, so the servers start together and each has emails to
	// send when the post goes out.
	servers := []*binaryServer{startBinary(t, data, flags...)}
	stopBinary(t, servers[0])
	var members []string
	if endpoint != "" {
		members = seedMembers(t, db, killMembers)
		servers[0] = startBinary(t, data, flags...)
		servers = append(servers, startBinary(t, t.TempDir(), flags...))
	} else {
		withEmbeddedStore(t, data, func(s *storage.Store) { members = seedMembers(t, s, killMembers) })
		servers[0] = startBinary(t, data, flags...)
	}

	admin := "Bearer " + fleetToken(t)
	var none struct{}
	_ = servers[0].try(admin, `mutation { createAuthor(input: {subject: "ada-lovelace", name: "Ada Lovelace"}) { author { id } } }`, &none) // the demo blog has her
	var post struct {
		CreatePost struct{ Post struct{ ID string } }
	}
	servers[0].graphql(t, admin, `mutation { createPost(input: {title: "Once each", slug: "once-each", body: "A post for every member, once."}) { post { id } } }`, &post)
	servers[0].graphql(t, admin, fmt.Sprintf(`mutation { publishPost(input: {id: %q}) { post { id } } }`, post.CreatePost.Post.ID), &none)

	copies := func() map[string][]string { return newsletterCopies(t, ss, "Once each") }
	within(t, 5*time.Minute, "an email of each server held by the relay", func() bool { return int(held.Load()) >= len(servers) }, nil)
	if err := servers[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-servers[0].exited
	t.Logf("SIGKILL with %d of %d members' emails delivered and %d held by the relay", len(copies()), killMembers, held.Load())
	releaseOnce.Do(func() { close(release) })
	if endpoint != "" {
		servers = servers[1:]
	} else {
		servers[0] = startBinary(t, data, flags...)
	}

	// The killed server's claim on the email it was sending lasts 45 s;
	// the wait lasts while emails arrive.
	whileProgressing(t, 90*time.Second, "every member's email delivered", func() int {
		return killMembers - len(copies())
	}, func() string { return fmt.Sprintf("%d delivered", len(copies())) })

	// What the outbox still has pending goes too, later: a copy the
	// killed server sent but could not record is sent again once its
	// claim lapses. Stopped, the servers leave the outbox as it is.
	for _, s := range servers {
		stopBinary(t, s)
	}
	var pending []storage.Email
	read := func(s *storage.Store) {
		var err error
		if pending, err = s.DueMail(ctx, storage.LaneBulk, time.Now().Add(24*time.Hour), 1000); err != nil {
			t.Fatal(err)
		}
	}
	if endpoint != "" {
		read(db)
	} else {
		withEmbeddedStore(t, data, read)
	}
	if len(pending) > 0 {
		t.Logf("%d emails still pending after every member got one: a server sends them", len(pending))
		dir := data
		if endpoint != "" {
			dir = t.TempDir()
		}
		last := startBinary(t, dir, flags...)
		total := func() int {
			n := 0
			for _, c := range copies() {
				n += len(c)
			}
			return n
		}
		want := total() + len(pending)
		whileProgressing(t, 90*time.Second, "the pending emails delivered", func() int { return want - total() }, func() string {
			return fmt.Sprintf("%d copies delivered, want %d", total(), want)
		})
		stopBinary(t, last)
	}

	got := copies()
	dups := 0
	for _, m := range members {
		switch ids := got[m]; {
		case len(ids) == 0:
			t.Errorf("%s got no copy", m)
		case len(ids) > 1:
			dups++
			distinct := slices.Compact(slices.Sorted(slices.Values(ids)))
			t.Errorf("%s got %d copies, of %d Message-IDs %v", m, len(ids), len(distinct), distinct)
		}
	}
	t.Logf("%d members, %d got more than one copy", len(members), dups)
}

// seedMembers makes n readers members of store's publication who get
// its newsletter, each by signing in (their sign-in emails are kept in
// the local outbox, not sent), and returns their addresses.
func seedMembers(t *testing.T, store *storage.Store, n int) []string {
	t.Helper()
	ctx := context.Background()
	emails := make([]string, n)
	var g errgroup.Group
	g.SetLimit(8)
	for i := range n {
		emails[i] = fmt.Sprintf("member%03d@example.com", i)
		g.Go(func() error {
			var token string
			err := store.RequestSignIn(ctx, storage.SignInRequest{Email: emails[i], RedirectTo: "https://blog.test/",
				Client: fmt.Sprintf("192.0.2.%d", i), Compose: func(tok, code string) (storage.Email, error) {
					token = tok
					return mailer.SignIn("Test Blog", "https://blog.test/", tok, code, time.Hour)
				}})
			if err != nil {
				return err
			}
			_, err = store.CompleteSignIn(ctx, storage.SignInCredentials{Token: token, UserAgent: testUserAgent})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := mailer.NewWorker(store, mailer.Local{Logger: quiet}, quiet).SendDue(ctx); err != nil {
		t.Fatal(err)
	}
	return emails
}

// withEmbeddedStore calls f with the store of the embedded engine's data
// file in dir, which no server holds then, and closes it after.
func withEmbeddedStore(t testing.TB, dir string, f func(*storage.Store)) {
	t.Helper()
	e, err := embedded.Open(embedded.Options{Path: filepath.Join(dir, "blog.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db, err := storage.NewClient(context.Background(), storage.ClientConfig{Embedded: true, HTTPClient: &http.Client{Transport: e}})
	if err != nil {
		t.Fatal(err)
	}
	f(storage.New(db, "blog"))
}

// stopBinary stops the server with SIGTERM and waits until it exits.
func stopBinary(t testing.TB, s *binaryServer) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-s.exited; err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
}

// newsletterCopies returns, by recipient, the Message-ID of each copy of
// the email of subject that the SMTP server received.
func newsletterCopies(t *testing.T, ss *smtpServer, subject string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, m := range ss.messages() {
		msg, err := mail.ReadMessage(bytes.NewReader(m.data))
		if err != nil {
			t.Fatal(err)
		}
		if msg.Header.Get("Subject") == subject {
			out[strings.ToLower(m.to)] = append(out[strings.ToLower(m.to)], msg.Header.Get("Message-Id"))
		}
	}
	return out
}
