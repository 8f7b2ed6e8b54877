package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/internal/longtest"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/feedstore"
)

// TestFleetTakesOverTheFeedOfAKilledServer runs two server processes on
// one table, with a webhook to a receiver here, and writes comments
// through both. The server holding the change feed's leases is killed
// with SIGKILL in the middle of the writes, which go on through the
// other: every shard and worker lease is held by the survivor within
// a minute of the kill (the killed server's heartbeat lasts 30 s, and its
// leases are taken when it expires), every acknowledged comment's comment.added is delivered
// (again only under the same webhook-id), and the invariant checker
// finds the event log dense, without an event twice.
//
// Two processes share a table only on a DynamoDB both reach: the
// embedded engine's data file is one process's, so the test runs in the
// DynamoDB Local pass of the long runs (scripts/test.sh -long).
func TestFleetTakesOverTheFeedOfAKilledServer(t *testing.T) {
	endpoint := dynamotest.Endpoint(t)
	longtest.Skip(t, "two server processes, one killed with SIGKILL under a write load")
	if endpoint == "" {
		t.Skip("two servers share a table on DynamoDB Local only (the embedded engine's data file is one process's): run with DYNAMODB_ENDPOINT, as scripts/test.sh -long's DynamoDB Local pass does")
	}
	ctx := context.Background()
	db, err := storage.NewClient(ctx, dynamotest.ClientConfig(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	table := dynamotest.Table(t, db, "fleet")
	store := storage.New(db, table)
	hooks := newDeliveryLog(t)

	flags := []string{"-dynamodb-endpoint", endpoint, "-table", table,
		"-jwt-secret", string(testSecret), "-jwt-issuer", testIssuer, "-jwt-audience", testAudience,
		"-webhooks-allow-private-unsafe", "-webhooks-allow-http=true", "-log-format", "json"}
	servers := []*binaryServer{startBinary(t, t.TempDir(), flags...)}
	servers = append(servers, startBinary(t, t.TempDir(), flags...))
	admin := "Bearer " + fleetToken(t)

	var created struct {
		CreateWebhook struct{ Secret string }
	}
	servers[1].graphql(t, admin, fmt.Sprintf(`mutation { createWebhook(input: {url: %q, events: ["comment.added"]}) { secret } }`, hooks.URL), &created)
	var author struct {
		CreateAuthor struct{ Author struct{ ID string } }
	}
	servers[0].graphql(t, admin, `mutation { createAuthor(input: {subject: "ada-lovelace", name: "Ada Lovelace"}) { author { id } } }`, &author)
	var posts []string
	for i := range 2 {
		var out struct {
			CreatePost struct{ Post struct{ ID string } }
		}
		servers[i%2].graphql(t, admin, fmt.Sprintf(`mutation { createPost(input: {title: "Fleet %d", slug: "fleet-%d"}) { post { id } } }`, i, i), &out)
		servers[i%2].graphql(t, admin, fmt.Sprintf(`mutation { publishPost(input: {id: %q}) { post { id } } }`, out.CreatePost.Post.ID), &out)
		posts = append(posts, out.CreatePost.Post.ID)
	}

	// Writers add comments, half through each server; once a server is
	// killed, through the survivor.
	var (
		mu     sync.Mutex
		acked  []string // comment ids acknowledged
		target = []int{0, 1}
	)
	ackedNow := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	wctx, stopWriters := context.WithCancel(ctx)
	defer stopWriters()
	var wg sync.WaitGroup
	for w := range target {
		wg.Go(func() {
			for i := 0; wctx.Err() == nil; i++ {
				mu.Lock()
				srv := servers[target[w]]
				mu.Unlock()
				var out struct {
					AddComment struct{ Comment struct{ ID string } }
				}
				q := fmt.Sprintf(`mutation { addComment(input: {postId: %q, body: "fleet %d-%d"}) { comment { id } } }`, posts[w], w, i)
				if srv.try(admin, q, &out) != nil {
					continue // not acknowledged: its server died under it
				}
				mu.Lock()
				acked = append(acked, commentIDOf(t, out.AddComment.Comment.ID))
				mu.Unlock()
			}
		})
	}

	// Once the feed delivers, kill the server holding the open shards'
	// and the webhooks' leases (the first server to start takes every
	// lease it finds free, so one server usually holds them all).
	var leases []feedstore.Lease
	within(t, 30*time.Second, "comments acknowledged and delivered, every lease held", func() bool {
		leases, err = store.Feed().Leases(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ackedNow() >= 10 && hooks.count() >= 5 && allHeld(leases, "")
	}, func() string {
		return fmt.Sprintf("%d acknowledged, %d delivered, leases %+v", ackedNow(), hooks.count(), leases)
	})
	held := map[string]int{}
	for _, l := range leases {
		if _, shard := l.ShardID(); l.Name == feedstore.WorkerLease("webhooks") || (shard && !l.Finished) {
			held[l.Owner]++
		}
	}
	victim := 0
	if held[servers[1].feedOwner(t)] > held[servers[0].feedOwner(t)] {
		victim = 1
	}
	survivor := servers[1-victim]
	t.Logf("killing server %d, holder of %d of the open shards' and webhooks' leases; %d comments acknowledged, %d delivered",
		victim, held[servers[victim].feedOwner(t)], ackedNow(), hooks.count())
	if err := servers[victim].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	<-servers[victim].exited
	mu.Lock()
	target = []int{1 - victim, 1 - victim}
	mu.Unlock()
	before := ackedNow()

	// The survivor holds every lease again: every shard's not finished,
	// and both workers'. A heartbeat lasts 30 s from its last renewal.
	within(t, time.Minute, "every lease held by the survivor", func() bool {
		leases, err = store.Feed().Leases(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return allHeld(leases, survivor.feedOwner(t))
	}, func() string {
		return fmt.Sprintf("leases %+v; the survivor's feed logged:\n%s", leases, survivor.feedLogs())
	})
	t.Logf("every lease held by the survivor %.1f s after the kill (%s)", time.Since(killed).Seconds(), survivor.takeovers(killed))
	within(t, 30*time.Second, "comments acknowledged by the survivor", func() bool { return ackedNow() >= before+10 }, nil)
	stopWriters()
	wg.Wait()

	// Every acknowledged comment's event is delivered; a redelivery has
	// its first delivery's webhook-id. A delivery the killed server
	// wrote in the outbox but did not make waits for its claim to lapse
	// (30 s). How many comments the writers got acknowledged, and so how
	// long their deliveries take, is the machine's pace: the wait lasts
	// while deliveries arrive, and fails after 45 s without one.
	mu.Lock()
	want := append([]string(nil), acked...)
	mu.Unlock()
	whileProgressing(t, 45*time.Second, fmt.Sprintf("the comment.added of each of %d acknowledged comments delivered", len(want)), func() int {
		return len(hooks.missing(want))
	}, func() string { return fmt.Sprintf("missing %v", hooks.missing(want)) })
	t.Logf("every acknowledged comment delivered %.1f s after the kill", time.Since(killed).Seconds())
	ids, deliveries := hooks.byComment()
	for c, ids := range ids {
		if len(ids) > 1 {
			t.Errorf("comment %s delivered under several webhook-ids: %v", c, ids)
		}
	}
	t.Logf("%d comments acknowledged (%d after the kill), %d deliveries (%d of them again)", len(want), len(want)-before, deliveries, deliveries-len(ids))

	if err := survivor.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-survivor.exited; err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
	bad, err := store.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error("invariant: " + b)
	}
}

// fleetToken returns a token of the demo admin, signed with the tests'
// secret.
func fleetToken(t testing.TB) string {
	now := time.Now()
	tok, err := auth.Sign(testSecret, auth.Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject: "ada-lovelace", Issuer: testIssuer, Audience: jwt.ClaimStrings{testAudience},
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)),
		},
		Roles: []string{auth.RoleAdmin},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// commentIDOf returns the comment id in a comment's global id.
func commentIDOf(t *testing.T, gid string) string {
	b, err := base64.RawURLEncoding.DecodeString(gid)
	parts := strings.Split(string(b), ":")
	if err != nil || len(parts) != 3 || parts[0] != "Comment" {
		t.Errorf("comment id %q: %v", gid, err)
		return gid
	}
	return parts[2]
}

// fleetWorkers are the change feed's workers each server runs (feed.go),
// whose leases a fleet holds.
var fleetWorkers = []string{"schedule", "rerender", "webhooks", "counts", "pages", "newsletter", "reply-notifications"}

// allHeld reports whether the feed's work is all leased: the leases of
// the fleetWorkers and of at least one shard exist, and every lease but
// a finished shard's is held, by owner when owner is not "".
func allHeld(leases []feedstore.Lease, owner string) bool {
	now := time.Now()
	workers, shards := 0, 0
	for _, l := range leases {
		_, shard := l.ShardID()
		switch {
		case shard && l.Finished:
			continue
		case !l.HeldAt(now) || (owner != "" && l.Owner != owner):
			return false
		case shard:
			shards++
		default:
			workers++
		}
	}
	return workers == len(fleetWorkers) && shards > 0
}

// within polls cond until it holds, and fails the test when it does not
// within d, with what and what state says (when not nil).
func within(t testing.TB, d time.Duration, what string, cond func() bool, state func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			if state != nil {
				what += ": " + state()
			}
			t.Fatalf("not within %s: %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// whileProgressing polls left until it returns 0, and fails the test,
// with what and what state says, when left has not gone down for idle:
// a run on a busy machine takes as long as it needs while it makes
// progress, a stuck one fails.
func whileProgressing(t testing.TB, idle time.Duration, what string, left func() int, state func() string) {
	t.Helper()
	least, since := left(), time.Now()
	for least > 0 {
		if time.Since(since) > idle {
			t.Fatalf("no progress in %s, %d left: %s: %s", idle, least, what, state())
		}
		time.Sleep(50 * time.Millisecond)
		if n := left(); n < least {
			least, since = n, time.Now()
		}
	}
}

// takeovers returns when, after since, the server took each lease it
// took over, as it logged.
func (s *binaryServer) takeovers(since time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, line := range s.logs {
		var rec struct {
			Time       time.Time
			Msg, Lease string
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "change feed: lease taken" && rec.Time.After(since) {
			out = append(out, fmt.Sprintf("%s at %.1f s", rec.Lease, rec.Time.Sub(since).Seconds()))
		}
	}
	return strings.Join(out, ", ")
}

// feedLogs returns what the server's change feed logged, but for
// records it skipped.
func (s *binaryServer) feedLogs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, line := range s.logs {
		if strings.Contains(line, "change feed") && !strings.Contains(line, "record skipped") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// feedOwner returns the name the server holds the change feed's leases
// under, from its log.
func (s *binaryServer) feedOwner(t *testing.T) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, line := range s.logs {
		var rec struct{ Msg, Owner string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "change feed" && rec.Owner != "" {
			return rec.Owner
		}
	}
	t.Fatal("the server logged no change feed owner")
	return ""
}

// deliveryLog is a webhook receiver that records each delivery's
// webhook-id and the comment its event is about.
type deliveryLog struct {
	*httptest.Server
	mu   sync.Mutex
	seen map[string][]string // comment id → webhook-ids, one per delivery
}

func newDeliveryLog(t *testing.T) *deliveryLog {
	d := &deliveryLog{seen: map[string][]string{}}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Type string
			Data struct{ CommentID string }
		}
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &body); err != nil || body.Data.CommentID == "" {
			t.Errorf("delivery %s: %v", raw, err)
		}
		d.mu.Lock()
		d.seen[body.Data.CommentID] = append(d.seen[body.Data.CommentID], r.Header.Get("webhook-id"))
		d.mu.Unlock()
	}))
	t.Cleanup(d.Close)
	return d
}

func (d *deliveryLog) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.seen)
}

// missing returns the comments of comments not delivered yet.
func (d *deliveryLog) missing(comments []string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, c := range comments {
		if len(d.seen[c]) == 0 {
			out = append(out, c)
		}
	}
	return out
}

// byComment returns each delivered comment's distinct webhook-ids, and
// how many deliveries there were.
func (d *deliveryLog) byComment() (map[string][]string, int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string][]string{}
	n := 0
	for c, ids := range d.seen {
		n += len(ids)
		for _, id := range ids {
			if !slices.Contains(out[c], id) {
				out[c] = append(out[c], id)
			}
		}
	}
	return out, n
}
