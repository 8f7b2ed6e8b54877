package storage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// The suite runs on the DynamoDB internal/dynamotest chooses: the
// embedded engine, or DynamoDB Local when DYNAMODB_ENDPOINT is set
// (REQUIRE_DYNAMODB=1 makes a missing endpoint a failure).

type env struct {
	t      *testing.T
	store  *storage.Store
	clock  *dynamotest.Clock
	client *dynamodb.Client
	table  string
}

var start = dynamotest.Start

// newEnv returns a Store on a table of its own. Each configure function,
// when given, changes the DynamoDB client's configuration first.
func newEnv(t *testing.T, configure ...func(*storage.ClientConfig)) *env {
	t.Helper()
	ctx := context.Background()
	// The store and the embedded engine share the test's clock, so items
	// expire by the time the store wrote them with.
	c := dynamotest.NewClock(start)
	cfg := dynamotest.ClientConfig(t, c.Now)
	for _, f := range configure {
		f(&cfg)
	}
	client, err := storage.NewClient(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	table := dynamotest.Table(t, client, "test")
	s := storage.New(client, table, storage.WithClock(c.Now))
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, store: s, clock: c, client: client, table: table}
	return e
}

// consistent fails the test when the invariant checker finds anything.
// The scheduled posts whose time has passed go live first, as a server's
// sweep (GoLive, every second) makes them: the test's clock jumps ahead
// with nobody sweeping.
func (e *env) consistent() {
	e.t.Helper()
	if _, err := e.store.GoLive(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	// The counts worker, which no test store runs, syncs the comment
	// counts of the posts' summaries.
	if err := e.store.SyncAllCounts(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	bad, err := e.store.Check(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, b := range bad {
		e.t.Error("invariant: " + b)
	}
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// counted runs f with a request counter and returns the requests by
// operation.
func counted(f func(ctx context.Context)) map[string]int {
	ctx, c := storage.WithRequestCounter(context.Background())
	f(ctx)
	return c.ByOperation()
}

func (e *env) author(id, name string) *storage.Author {
	return must[*storage.Author](e.t)(e.store.CreateAuthor(context.Background(), storage.NewAuthor{ID: id, Name: name}))
}

func (e *env) category(slug, name string) *storage.Category {
	return must[*storage.Category](e.t)(e.store.CreateCategory(context.Background(), storage.NewCategory{Slug: slug, Name: name}))
}

func (e *env) post(author, slug string, cats ...string) *storage.Post {
	return must[*storage.Post](e.t)(e.store.CreatePost(context.Background(), storage.NewPost{
		AuthorID: author, Title: "Title " + slug, Slug: slug, Excerpt: "About " + slug, Body: "# " + slug, Categories: cats,
	}))
}

// posts creates n drafts of author in cats, with slugs prefix-0, prefix-1…
func (e *env) posts(n int, author, prefix string, cats ...string) []*storage.Post {
	out := make([]*storage.Post, n)
	for i := range out {
		out[i] = e.post(author, fmt.Sprintf("%s-%d", prefix, i), cats...)
	}
	return out
}

func (e *env) publish(p *storage.Post, at time.Time) *storage.Post {
	return must[*storage.Post](e.t)(e.store.Publish(context.Background(), storage.PublishPost{ID: p.ID, At: at}))
}

func ids(posts []*storage.Post) []string {
	out := make([]string, len(posts))
	for i, p := range posts {
		out[i] = p.ID
	}
	return out
}

func equal[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func equalSlices[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s = %v, want %v", what, got, want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s = %v, want %v", what, got, want)
			return
		}
	}
}

// TestSecretIsKeptByTheTable checks that a key is made once and then is the
// same for every Store on the table, while another name gets another key.
func TestSecretIsKeptByTheTable(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.store.KnownSecret(ctx, "cursor"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("KnownSecret before any: err = %v, want not found", err)
	}
	first, err := e.store.Secret(ctx, "cursor")
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != storage.SecretBytes {
		t.Fatalf("secret has %d bytes, want %d", len(first), storage.SecretBytes)
	}
	again, err := storage.New(e.client, e.table).Secret(ctx, "cursor")
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(first) {
		t.Error("a second store on the table got another key")
	}
	if known, err := e.store.KnownSecret(ctx, "cursor"); err != nil || string(known) != string(first) {
		t.Errorf("KnownSecret = %v, %v; want the key made", known, err)
	}
	other, err := e.store.Secret(ctx, "preview")
	if err != nil {
		t.Fatal(err)
	}
	if string(other) == string(first) {
		t.Error("two names share a key")
	}
	if _, err := e.store.Secret(ctx, "no spaces"); !errors.Is(err, storage.ErrInvalidInput) {
		t.Errorf("bad name: err = %v, want invalid input", err)
	}
	e.consistent()
}
