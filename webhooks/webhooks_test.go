package webhooks_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/webhooks"
)

// env is a store on a table of its own, the test clock, and a webhooks
// service on it that may reach loopback (the receivers are httptest
// servers).
type env struct {
	t     testing.TB
	store *storage.Store
	clock *dynamotest.Clock
	hooks *webhooks.Service
	// db and table reach the table past the store, to leave what a crash
	// or an older server could.
	db    *dynamodb.Client
	table string
}

func newEnv(t testing.TB, opts ...func(*webhooks.Options)) *env {
	t.Helper()
	ctx := context.Background()
	c := dynamotest.NewClock(dynamotest.Start)
	client, err := storage.NewClient(ctx, dynamotest.ClientConfig(t, c.Now))
	if err != nil {
		t.Fatal(err)
	}
	table := dynamotest.Table(t, client, "hooks")
	s := storage.New(client, table, storage.WithClock(c.Now))
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, store: s, clock: c, db: client, table: table}
	e.hooks = e.service(append([]func(*webhooks.Options){func(o *webhooks.Options) { o.AllowPrivate, o.AllowHTTP = true, true }}, opts...)...)
	return e
}

// service returns another Service on e's store, as a restarted server
// makes.
func (e *env) service(opts ...func(*webhooks.Options)) *webhooks.Service {
	o := webhooks.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, f := range opts {
		f(&o)
	}
	return webhooks.New(e.store, o)
}

// create makes a webhook of url for events and returns it with its secret.
func (e *env) create(url string, events ...storage.EventType) (*storage.Webhook, string) {
	e.t.Helper()
	w, secret, err := e.hooks.Create(context.Background(), storage.WebhookInput{URL: &url, Events: events})
	if err != nil {
		e.t.Fatal(err)
	}
	return w, secret
}

func (e *env) handle(events ...storage.Event) {
	e.t.Helper()
	logged := make([]storage.LoggedEvent, len(events))
	for i, ev := range events {
		logged[i] = storage.LoggedEvent{Position: int64(i + 1), Event: ev}
	}
	if err := e.hooks.HandleEvents(context.Background(), logged); err != nil {
		e.t.Fatal(err)
	}
	e.hooks.Wait()
}

func (e *env) retry(s *webhooks.Service) {
	e.t.Helper()
	if err := s.RetryDue(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	s.Wait()
}

func (e *env) consistent() {
	e.t.Helper()
	bad, err := e.store.Check(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, b := range bad {
		e.t.Error("invariant: " + b)
	}
}

// delivery is a request a receiver got.
type delivery struct {
	header http.Header
	body   []byte
}

// receiver is an endpoint that records what it gets and answers with
// answer (nil: 204).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []delivery
	answer func(w http.ResponseWriter)
}

func newReceiver(t testing.TB) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, delivery{req.Header.Clone(), b})
		answer := r.answer
		r.mu.Unlock()
		if answer == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		answer(w)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) answerWith(f func(w http.ResponseWriter)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer = f
}

func (r *receiver) status(code int, header ...string) {
	r.answerWith(func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
	})
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// published is a post.published event at the clock's time.
func (e *env) published(id string) storage.Event {
	return storage.Event{ID: "evt_" + strings.Repeat(id, 32)[:32], Type: storage.EventPostPublished, Time: e.clock.Now(),
		Data: storage.EventData{PostID: "p-" + id, Slug: "hello-" + id, AuthorID: "ada", Categories: []string{"go"},
			Paths:     []string{"/", "/posts/hello-" + id, "/authors/ada", "/categories/go", "/archive/2026/03"},
			CacheTags: []string{"post:p-" + id, "feed", "author:ada", "category:go", "archive:2026-03"}}}
}

// verify checks a delivery as a receiver does, by the specification:
// HMAC-SHA256 of id.timestamp.body keyed by the secret's bytes.
func verify(t *testing.T, d delivery, secret string) bool {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(d.header.Get("webhook-id") + "." + d.header.Get("webhook-timestamp") + "." + string(d.body)))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	return slices.Contains(strings.Fields(d.header.Get("webhook-signature")), want)
}

func TestDeliverySignedAsStandardWebhooks(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	w, secret := e.create(r.URL, storage.EventPostPublished)
	if stored, err := e.store.GetWebhook(context.Background(), w.ID); err != nil || strings.Contains(stored.Secret, strings.TrimPrefix(secret, "whsec_")) {
		t.Errorf("the table keeps the secret unsealed (%v)", err)
	}
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q does not start with whsec_", secret)
	}
	if key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_")); err != nil || len(key) < 24 {
		t.Fatalf("secret holds %d bytes (%v), want at least 24", len(key), err)
	}
	ev := e.published("a")
	ev.Data.ReaderID = "reader-sub"
	e.handle(ev)

	got := r.deliveries()
	if len(got) != 1 {
		t.Fatalf("%d deliveries, want 1", len(got))
	}
	d := got[0]
	if id := d.header.Get("webhook-id"); id != ev.ID {
		t.Errorf("webhook-id = %q, want the event's id %q", id, ev.ID)
	}
	if ts := d.header.Get("webhook-timestamp"); ts != strconv.FormatInt(e.clock.Now().Unix(), 10) {
		t.Errorf("webhook-timestamp = %q, want %d", ts, e.clock.Now().Unix())
	}
	if ct := d.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if !verify(t, d, secret) {
		t.Errorf("signature %q does not verify", d.header.Get("webhook-signature"))
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(d.body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body) != 3 || string(body["type"]) != `"post.published"` || string(body["timestamp"]) != `"2026-03-01T12:00:00Z"` {
		t.Errorf("body = %s, want type, timestamp and data", d.body)
	}
	var data storage.EventData
	if err := json.Unmarshal(body["data"], &data); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(data.Paths, ev.Data.Paths) || !slices.Equal(data.CacheTags, ev.Data.CacheTags) || data.Slug != "hello-a" {
		t.Errorf("data = %s, want the event's paths, cache tags and slug", body["data"])
	}
	if strings.Contains(string(d.body), "reader-sub") {
		t.Errorf("body %s shows the reader's id", d.body)
	}
	if len(d.body) > webhooks.MaxBodyBytes {
		t.Errorf("body of %d bytes", len(d.body))
	}
	e.consistent()
}

func TestOnlyPublicSubscribedEventsAreSent(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	e.create(r.URL, storage.EventPostPublished, storage.EventPostDeleted)
	other := newReceiver(t)
	e.create(other.URL, storage.EventCommentAdded)

	scheduled := e.published("b")
	scheduled.Type = storage.EventPostScheduled
	pending := e.published("c")
	pending.Type = storage.EventCommentPending
	deletedScheduled := e.published("d")
	deletedScheduled.Type = storage.EventPostDeleted
	deletedScheduled.Data.PublishedAt = e.clock.Now().Add(time.Hour)
	e.handle(scheduled, pending, deletedScheduled, e.published("e"))

	if got := r.deliveries(); len(got) != 1 || got[0].header.Get("webhook-id") != e.published("e").ID {
		t.Errorf("the post.published webhook got %d deliveries, want the one public event", len(got))
	}
	if got := other.deliveries(); len(got) != 0 {
		t.Errorf("the comment.added webhook got %d deliveries, want none", len(got))
	}
	e.consistent()
}

func TestHandlingEventsAgainDeliversThemOnce(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	e.create(r.URL, storage.EventPostPublished)
	r2 := newReceiver(t)
	e.create(r2.URL, storage.EventPostPublished)
	ev := e.published("f")
	e.handle(ev)
	e.handle(ev)
	e.clock.Advance(time.Hour)
	e.retry(e.hooks)
	for _, rc := range []*receiver{r, r2} {
		if got := rc.deliveries(); len(got) != 1 {
			t.Errorf("%d deliveries of one event handled twice, want 1", len(got))
		}
	}
	e.consistent()
}

// TestRestartLosesNoDelivery stops a server between writing a delivery and
// attempting it, and another mid-retry: a new Service on the table
// delivers both, with the same webhook-id.
func TestRestartLosesNoDelivery(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	w, secret := e.create(r.URL, storage.EventPostPublished)
	ctx := context.Background()

	// Written, never attempted: what HandleEvents leaves when the server
	// stops before its first attempt.
	body, err := webhooks.Body(e.published("g"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.AddOutbox(ctx, storage.OutboxItem{WebhookID: w.ID, EventID: e.published("g").ID,
		EventType: storage.EventPostPublished, Body: body, State: storage.OutboxPending,
		NextAttemptAt: e.clock.Now().Add(30 * time.Second), CreatedAt: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	// Attempted once and failed: due again in 5 s.
	r.status(http.StatusInternalServerError)
	e.handle(e.published("h"))

	restarted := e.service(func(o *webhooks.Options) { o.AllowPrivate, o.AllowHTTP = true, true })
	r.status(http.StatusOK)
	e.clock.Advance(5 * time.Second)
	e.retry(restarted)
	e.clock.Advance(30 * time.Second)
	e.retry(restarted)

	ids := map[string]int{}
	for _, d := range r.deliveries() {
		ids[d.header.Get("webhook-id")]++
		if !verify(t, d, secret) {
			t.Error("a delivery after the restart does not verify")
		}
	}
	if ids[e.published("g").ID] != 1 || ids[e.published("h").ID] != 2 || len(ids) != 2 {
		t.Errorf("deliveries by webhook-id = %v, want g once and h twice (failed, then delivered)", ids)
	}
	for _, id := range []string{e.published("g").ID, e.published("h").ID} {
		o, err := e.store.GetOutbox(ctx, w.ID, id)
		if err != nil || o.State != storage.OutboxDelivered {
			t.Errorf("outbox %s = %+v, %v; want DELIVERED", id, o.State, err)
		}
	}
	e.consistent()
}

// TestHandlingAgainAttemptsWhatACrashLeftUnattempted: a server that
// crashed between writing a delivery and recording its first attempt
// leaves it claimed for 30 s; the server that handles the events again
// after it (the worker resumes from its checkpoint) attempts it at once,
// and once.
func TestHandlingAgainAttemptsWhatACrashLeftUnattempted(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	w, secret := e.create(r.URL, storage.EventPostPublished)
	ctx := context.Background()
	ev := e.published("k")
	body, err := webhooks.Body(ev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.AddOutbox(ctx, storage.OutboxItem{WebhookID: w.ID, EventID: ev.ID,
		EventType: ev.Type, Body: body, State: storage.OutboxPending,
		NextAttemptAt: e.clock.Now().Add(30 * time.Second), CreatedAt: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	e.hooks = e.service(func(o *webhooks.Options) { o.AllowPrivate, o.AllowHTTP = true, true })
	e.handle(ev)
	got := r.deliveries()
	if len(got) != 1 || got[0].header.Get("webhook-id") != ev.ID || !verify(t, got[0], secret) {
		t.Fatalf("deliveries when the events are handled again: %d, want the one left unattempted", len(got))
	}
	e.handle(ev)
	e.clock.Advance(time.Minute)
	e.retry(e.hooks)
	if got := r.deliveries(); len(got) != 1 {
		t.Errorf("%d deliveries after handling again and retrying, want 1", len(got))
	}
	if o, err := e.store.GetOutbox(ctx, w.ID, ev.ID); err != nil || o.State != storage.OutboxDelivered {
		t.Errorf("outbox = %+v, %v; want DELIVERED", o.State, err)
	}
	e.consistent()
}

// TestAWebhookGetsTheEventsLoggedAfterItWasMade: what tells the events
// before a webhook from those after is the log's position, not the time,
// which DynamoDB Local rounds down to the minute: an event logged before
// it is not sent, one logged after it is, whatever its time says.
func TestAWebhookGetsTheEventsLoggedAfterItWasMade(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	ctx := context.Background()
	e.clock.Advance(30 * time.Second)
	before := e.published("m")
	logged, err := e.store.AppendEvents(ctx, storage.Append{Records: []storage.RecordEvents{{Sequence: "1", Events: []storage.Event{before}}}})
	if err != nil || len(logged) != 1 {
		t.Fatal(logged, err)
	}
	e.create(r.URL, storage.EventPostPublished)
	after := e.published("n")
	after.Time = e.clock.Now().Truncate(time.Minute) // as DynamoDB Local gives it
	if err := e.hooks.HandleEvents(ctx, []storage.LoggedEvent{logged[0], {Position: logged[0].Position + 1, Event: after}}); err != nil {
		t.Fatal(err)
	}
	e.hooks.Wait()
	got := r.deliveries()
	if len(got) != 1 || got[0].header.Get("webhook-id") != after.ID {
		t.Errorf("%d deliveries, want the event logged after the webhook was made only", len(got))
	}
}

// TestCheckFindsOrphansAndStuckDeliveries leaves what a crash or a bug
// could: a delivery whose webhook is gone, and one due long ago that
// nothing attempts.
func TestCheckFindsOrphansAndStuckDeliveries(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	w, _ := e.create("https://hooks.example.com/in", storage.EventPostPublished)
	o := storage.OutboxItem{WebhookID: w.ID, EventID: "evt_stuck", EventType: storage.EventPostPublished, Body: []byte("{}"),
		State: storage.OutboxPending, CreatedAt: e.clock.Now(), NextAttemptAt: e.clock.Now()}
	if _, err := e.store.AddOutbox(ctx, o); err != nil {
		t.Fatal(err)
	}
	// AddOutbox refuses a delivery to a webhook that is not there: the
	// orphan is written as a server before deletions were marked could.
	due := e.clock.Now().Format("2006-01-02T15:04:05.000Z")
	orphan, err := attributevalue.MarshalMap(map[string]any{"PK": "PUB#" + storage.DefaultPublication + "#WEBHOOK#gone", "SK": "OUTBOX#evt_orphan",
		"GSI1PK": "PUB#" + storage.DefaultPublication + "#OUTBOX", "GSI1SK": due + "#gone#evt_orphan", "type": "outbox", "webhookId": "gone", "eventId": "evt_orphan",
		"eventType": "post.published", "body": []byte("{}"), "attempts": 0, "nextAttemptAt": due, "createdAt": due, "state": "PENDING"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &e.table, Item: orphan}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(storage.StuckAfter + time.Minute)
	bad, err := e.store.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(bad, "\n")
	if len(bad) != 2 || !strings.Contains(got, "gone/evt_orphan is an orphan") || !strings.Contains(got, "evt_stuck is stuck") {
		t.Errorf("Check = %q, want the orphan and the stuck delivery", bad)
	}

	// The worker removes the orphan and attempts the other.
	e.hooks = e.service(func(o *webhooks.Options) {
		o.Resolve = func(context.Context, string) ([]netip.Addr, error) { return nil, errors.New("no such host") }
	})
	e.retry(e.hooks)
	if _, err := e.store.GetOutbox(ctx, "gone", "evt_orphan"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the orphan: %v, want it deleted", err)
	}
	ds, err := e.store.RecentDeliveries(ctx, w.ID, 10)
	if err != nil || len(ds) != 1 || ds[0].EventID != "evt_stuck" || ds[0].NextAttemptAt.IsZero() {
		t.Errorf("history = %+v, %v; want the attempt, retried later", ds, err)
	}
	e.consistent()
}

// TestDeliveriesKeepTheirRequestBudget counts the DynamoDB requests of an
// event delivered to two webhooks, of a retry, and of a second with
// nothing due (storage/outbox.go lists the budgets).
func TestDeliveriesKeepTheirRequestBudget(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	failing := newReceiver(t)
	failing.status(http.StatusInternalServerError)
	e.create(r.URL, storage.EventPostPublished)
	e.create(failing.URL, storage.EventPostPublished)

	ctx, c := storage.WithRequestCounter(context.Background())
	if err := e.hooks.HandleEvents(ctx, []storage.LoggedEvent{{Position: 1, Event: e.published("a")}}); err != nil {
		t.Fatal(err)
	}
	e.hooks.Wait()
	want := map[string]int{"Query": 1, "TransactWriteItems": 6, "UpdateItem": 1}
	if got := c.ByOperation(); !maps.Equal(got, want) {
		t.Errorf("an event to 2 webhooks, one failing: %v, want %v (the webhooks; per webhook the outbox item, the attempt's claim, the attempt; the success)", got, want)
	}

	e.clock.Advance(webhooks.Schedule[0])
	ctx, c = storage.WithRequestCounter(context.Background())
	e.retryIn(ctx)
	want = map[string]int{"Query": 2, "UpdateItem": 1, "TransactWriteItems": 2}
	if got := c.ByOperation(); !maps.Equal(got, want) {
		t.Errorf("a retry: %v, want %v (what is due, the webhooks, the claims for the lane and the attempt, the attempt)", got, want)
	}

	ctx, c = storage.WithRequestCounter(context.Background())
	e.retryIn(ctx)
	if got := c.ByOperation(); !maps.Equal(got, map[string]int{"Query": 1}) {
		t.Errorf("nothing due: %v, want 1 Query", got)
	}
}

// retryIn runs e's RetryDue with ctx.
func (e *env) retryIn(ctx context.Context) {
	e.t.Helper()
	if err := e.hooks.RetryDue(ctx); err != nil {
		e.t.Fatal(err)
	}
	e.hooks.Wait()
}
