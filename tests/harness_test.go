package tests

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// The tests run on the embedded engine, or on DynamoDB Local when
// DYNAMODB_ENDPOINT is set; REQUIRE_DYNAMODB=1 makes its absence a failure.

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// server is the real GraphQL handler on loopback, with a typed client and
// the DynamoDB request count of the last GraphQL request.
type server struct {
	t      *testing.T
	store  *storage.Store
	clock  *clock
	client graphql.Client
	url    string

	mu   sync.Mutex
	last *storage.Counter
}

func newServer(t *testing.T) *server {
	t.Helper()
	ctx := context.Background()
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	if endpoint == "" && os.Getenv("REQUIRE_DYNAMODB") == "1" {
		t.Fatal("REQUIRE_DYNAMODB=1 but DYNAMODB_ENDPOINT is not set: start DynamoDB Local with scripts/dynamodb-local.sh")
	}
	db, err := storage.NewClient(ctx, storage.ClientConfig{Embedded: endpoint == "", Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	table := "e2e-" + hex.EncodeToString(b)
	c := &clock{}
	c.ns.Store(start.UnixNano())
	store := storage.New(db, table, storage.WithClock(c.now))
	if err := store.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if endpoint != "" {
		t.Cleanup(func() {
			_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
		})
	}
	s := &server{t: t, store: store, clock: c}
	h := graph.NewHandler(store, graph.HandlerOptions{
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		Introspection: true,
	})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, counter := storage.WithRequestCounter(r.Context())
		s.mu.Lock()
		s.last = counter
		s.mu.Unlock()
		h.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(hs.Close)
	s.url = hs.URL
	s.client = graphql.NewClient(hs.URL, hs.Client())
	return s
}

// requests returns the DynamoDB requests of the last GraphQL request.
func (s *server) requests() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last.ByOperation()
}

func total(byOp map[string]int) int {
	n := 0
	for _, v := range byOp {
		n += v
	}
	return n
}

// consistent fails the test when the invariant checker finds anything.
func (s *server) consistent() {
	s.t.Helper()
	bad, err := s.store.Check(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	for _, b := range bad {
		s.t.Error("invariant: " + b)
	}
}

// code returns the extensions.code of the first GraphQL error in err.
func code(err error) string {
	var list gqlerror.List
	if errors.As(err, &list) && len(list) > 0 {
		if c, ok := list[0].Extensions["code"].(string); ok {
			return c
		}
	}
	return ""
}

func ok[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func equal[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func ptr[T any](v T) *T { return &v }
