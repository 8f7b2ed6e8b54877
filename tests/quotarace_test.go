package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/auth"
	graphpkg "github.com/blogql/blog/graph"
)

// A publication's posts' counter is one item that every create and
// delete of its posts writes in its transaction: concurrent writers in
// one publication meet on it. On AWS DynamoDB they cancel each other
// with TransactionConflict; neither DynamoDB Local nor the embedded
// engine ever answers it, so counterConflicts injects it.

// counterConflicts is an http.RoundTripper in front of DynamoDB that
// cancels transactions writing a publication's posts' counter with
// TransactionConflict on that action, as DynamoDB cancels one that meets
// another on the item: every every-th of them, and the next armed ones.
type counterConflicts struct {
	next http.RoundTripper

	mu    sync.Mutex
	every int // 0: none by rate
	armed int
	seen  int // counter transactions
	// injected are the bodies' slugs (racing-…, filling-…) or post ids
	// of the transactions cancelled, one entry a cancellation.
	injected []string
}

// set cancels every every-th counter transaction from now on (0: none).
func (c *counterConflicts) set(every int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.every = every
}

// arm cancels the next n counter transactions.
func (c *counterConflicts) arm(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = n
}

// counts returns the counter transactions seen and the cancellations
// injected.
func (c *counterConflicts) counts() (int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen, slices.Clone(c.injected)
}

var racingSlug = regexp.MustCompile(`(racing|filling|retried)-[0-9]+-?[0-9]*`)

func (c *counterConflicts) RoundTrip(r *http.Request) (*http.Response, error) {
	raw, n, at, err := counterAction(r)
	if err != nil || at < 0 {
		return c.next.RoundTrip(r)
	}
	c.mu.Lock()
	c.seen++
	cancel := c.armed > 0 || c.every > 0 && c.seen%c.every == 0
	if cancel {
		c.armed = max(c.armed-1, 0)
		c.injected = append(c.injected, string(racingSlug.Find(raw)))
	}
	c.mu.Unlock()
	if !cancel {
		return c.next.RoundTrip(r)
	}
	return conflictAt(r, n, at), nil
}

// counterAction returns the body of r, the number of its actions and the
// index of the one that updates a posts' counter, -1 when r is no
// TransactWriteItems or has none.
func counterAction(r *http.Request) (raw []byte, n, at int, err error) {
	if !strings.HasSuffix(r.Header.Get(dynamoTargetHeader), ".TransactWriteItems") {
		return nil, 0, -1, nil
	}
	raw, err = io.ReadAll(r.Body)
	if err != nil {
		return nil, 0, -1, err
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	var in struct{ TransactItems []json.RawMessage }
	if err := json.Unmarshal(raw, &in); err != nil {
		return raw, 0, -1, nil
	}
	at = slices.IndexFunc(in.TransactItems, func(a json.RawMessage) bool {
		return bytes.Contains(a, []byte(`"POSTUSAGE"`)) && bytes.Contains(a, []byte(`"Update"`))
	})
	return raw, len(in.TransactItems), at, nil
}

// conflictAt is DynamoDB's answer to a transaction of n actions
// cancelled by a conflict on action at.
func conflictAt(r *http.Request, n, at int) *http.Response {
	codes := make([]string, n)
	reasons := make([]string, n)
	for i := range codes {
		codes[i], reasons[i] = "None", `{"Code":"None"}`
	}
	codes[at], reasons[at] = "TransactionConflict", `{"Code":"TransactionConflict","Message":"Transaction is ongoing for the item"}`
	return dynamoError(r, 400, "TransactionCanceledException", fmt.Sprintf(
		`"Message":"Transaction cancelled, please refer cancellation reasons for specific reasons [%s]","CancellationReasons":[%s]`,
		strings.Join(codes, ", "), strings.Join(reasons, ",")))
}

// TestPostCounterUnderContention: 16 clients create posts in one
// publication at once, some deleting one first, 4 places under its quota
// of 12, while every third transaction that writes its posts' counter is
// cancelled by a conflict. Each create succeeds or is QUOTA_EXCEEDED or
// UNAVAILABLE (conflicts on every attempt), each delete succeeds or is
// UNAVAILABLE, never anything else; at most 12 posts exist, the counter
// that usage shows is the posts that exist, and the places left are
// exactly as many as the creates that follow can fill. A conflict is
// retried by the store: a create whose transaction was cancelled twice is
// created, one past the quota is QUOTA_EXCEEDED after two.
func TestPostCounterUnderContention(t *testing.T) {
	const (
		quota   = 12
		before  = 8 // "first" and 7 drafts
		clients = 16
		deletes = 4
	)
	conflicts := &counterConflicts{}
	r := newQuotaRig(t, inFront(func(backend http.RoundTripper) http.RoundTripper {
		conflicts.next = backend
		return conflicts
	}))
	ctx := context.Background()
	if err := r.setLimits(r.platform, map[string]any{"posts": quota}); err != nil {
		t.Fatal(err)
	}
	drafts := createPosts(t, r.author, "before", before-2)
	// A create whose counter transaction is cancelled twice is retried
	// by the store, and created.
	conflicts.arm(2)
	ok[*CreatePostResponse](t)(CreatePost(ctx, r.author, CreatePostInput{Title: "Retried", Slug: "retried-0"}))
	if _, injected := conflicts.counts(); !slices.Equal(injected, []string{"retried-0", "retried-0"}) {
		t.Fatalf("conflicts injected on %q, want two on retried-0", injected)
	}

	conflicts.set(3)
	var (
		wg              sync.WaitGroup
		mu              sync.Mutex
		created, gone   int
		createCodes     = map[string]int{}
		deleteCodes     = map[string]int{}
		allowedToCreate = []string{"OK", graphpkg.CodeQuotaExceeded, graphpkg.CodeUnavailable}
		allowedToDelete = []string{"OK", graphpkg.CodeUnavailable}
	)
	for i := range clients {
		// Each client its own, as concurrent frontends.
		c := r.h.scoped("alpha.localhost", r.alpha, "ann", auth.PubAuthor)
		wg.Go(func() {
			if i < deletes {
				_, err := DeletePost(ctx, c, DeletePostInput{Id: drafts[i]})
				mu.Lock()
				deleteCodes[outcome(err)]++
				if err == nil {
					gone++
				}
				mu.Unlock()
			}
			for j := range 2 {
				_, err := CreatePost(ctx, c, CreatePostInput{Title: "Racing", Slug: fmt.Sprintf("racing-%d-%d", i, j)})
				mu.Lock()
				createCodes[outcome(err)]++
				if err == nil {
					created++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	conflicts.set(0)
	t.Logf("creates: %v; deletes: %v", createCodes, deleteCodes)
	for c, n := range createCodes {
		if !slices.Contains(allowedToCreate, c) {
			t.Errorf("%d creates answered %s, want one of %v", n, c, allowedToCreate)
		}
	}
	for c, n := range deleteCodes {
		if !slices.Contains(allowedToDelete, c) {
			t.Errorf("%d deletes answered %s, want one of %v", n, c, allowedToDelete)
		}
	}
	exist := before - gone + created
	if exist > quota {
		t.Fatalf("%d posts exist after the race, the quota is %d", exist, quota)
	}
	u, err := r.usage(t, r.owner)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "usage after the race", u.Posts, exist)

	// The places left (none, unless conflicts outlasted the retries) fill
	// one by one, each create's counter transaction cancelled twice
	// first; the last is refused for the quota after two
	// conflicts.
	for i := 0; ; i++ {
		conflicts.arm(2)
		_, err := CreatePost(ctx, r.author, CreatePostInput{Title: "Filling", Slug: fmt.Sprintf("filling-%d", i)})
		if code(err) == graphpkg.CodeQuotaExceeded {
			break
		}
		if err != nil {
			t.Fatalf("filling create %d: %v", i, err)
		}
		exist++
	}
	conflicts.arm(0)
	equal(t, "posts when the quota is reached", exist, quota)
	u, err = r.usage(t, r.owner)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "usage when the quota is reached", u.String(), "12 posts of 12, 0 webhooks of none")

	seen, injected := conflicts.counts()
	if !slices.Contains(injected, "filling-0") {
		t.Errorf("no conflict was injected on the first filling create: %v", injected)
	}
	t.Logf("%d transactions wrote the counter, %d cancelled by an injected conflict", seen, len(injected))
	alpha, err := r.s.store.In(r.alpha)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := alpha.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error("invariant: " + b)
	}
}

// TestOneServerNeverConflictsOnItsCounter: 16 clients create posts at once
// in one publication of one server, in front of a DynamoDB that cancels a
// transaction writing the posts' counter while another one writing it is
// in flight, as DynamoDB does. The server lets one of its writes at a time
// past the counter, so none is cancelled and every create succeeds; without
// it most are cancelled and some answered UNAVAILABLE after every retry.
func TestOneServerNeverConflictsOnItsCounter(t *testing.T) {
	const clients, each = 16, 2
	traffic := &counterTraffic{conflict: true}
	r := newQuotaRig(t, inFront(func(backend http.RoundTripper) http.RoundTripper {
		traffic.next = backend
		return traffic
	}))
	ctx := context.Background()
	if err := r.setLimits(r.platform, map[string]any{"posts": 0}); err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		codes = map[string]int{}
	)
	for i := range clients {
		c := r.h.scoped("alpha.localhost", r.alpha, "ann", auth.PubAuthor)
		wg.Go(func() {
			for j := range each {
				_, err := CreatePost(ctx, c, CreatePostInput{Title: "Racing", Slug: fmt.Sprintf("racing-%d-%d", i, j)})
				mu.Lock()
				codes[outcome(err)]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	attempts, conflicts := traffic.counts()
	t.Logf("creates: %v; %d transactions wrote the counter, %d cancelled by a conflict", codes, attempts, conflicts)
	equal(t, "creates answered", fmt.Sprint(codes), fmt.Sprint(map[string]int{"OK": clients * each}))
	equal(t, "transactions cancelled by a conflict", conflicts, 0)
	u, err := r.usage(t, r.owner)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "usage", u.Posts, 1+clients*each)
}

// TestDeleteWhileAnotherServerCountsTheCounter: a publication without a
// posts' counter (written before it existed) at its quota; a delete's
// transaction is refused for the missing counter, and another server
// puts the counter, at the quota, before this one reads it. The delete
// is written again, not refused for the quota: a delete never needs room.
func TestDeleteWhileAnotherServerCountsTheCounter(t *testing.T) {
	var (
		r     *quotaRig
		once  sync.Once
		armed atomic.Bool
	)
	counter := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{}, "SK": &types.AttributeValueMemberS{Value: "POSTUSAGE"},
	}
	r = newQuotaRig(t, inFront(func(backend http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			_, _, at, err := counterAction(req)
			resp, rerr := backend.RoundTrip(req)
			if err != nil || at < 0 || rerr != nil || resp.StatusCode != http.StatusBadRequest || !armed.Load() {
				return resp, rerr
			}
			// Another server counts the publication's posts: 2.
			once.Do(func() {
				item := maps.Clone(counter)
				item["type"] = &types.AttributeValueMemberS{Value: "postUsage"}
				item["posts"] = &types.AttributeValueMemberN{Value: "2"}
				if _, err := r.s.db.PutItem(req.Context(), &dynamodb.PutItemInput{TableName: aws.String(r.s.table), Item: item}); err != nil {
					t.Error(err)
				}
			})
			return resp, rerr
		})
	}))
	ctx := context.Background()
	counter["PK"] = &types.AttributeValueMemberS{Value: "PUB#" + r.alpha + "#POSTUSAGE"}
	draft := createPosts(t, r.author, "draft", 1)[0]
	if _, err := r.s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(r.s.table), Key: counter}); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	_, err := DeletePost(ctx, r.author, DeletePostInput{Id: draft})
	if err != nil {
		t.Fatalf("delete at the quota while another server counts: %v (%s)", err, code(err))
	}
	u, err := r.usage(t, r.owner)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "usage after the delete", u.String(), "1 posts of 2, 0 webhooks of none")
}
