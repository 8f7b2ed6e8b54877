package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/changefeed"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// The comment burst (-burst): comments at a fixed rate on one post, from
// -burst-clients clients, through the real handler, with the change feed
// and its counts worker running as the server runs them. It reports
// whether every addComment was answered without error, the latency of
// the answers, and how long after the last answer every list showing the
// post (the feed, both authors' pages, both categories', the tag's and
// the featured list) shows the final comment count: the counts worker's
// convergence.

// burstResult is what a burst measured, as bench/burst-<backend>.json
// keeps it.
type burstResult struct {
	Backend string `json:"backend"`
	// Rate is the comments a second asked for, Clients the clients that
	// sent them, Seconds the burst's length.
	Rate    int     `json:"rate"`
	Clients int     `json:"clients"`
	Seconds float64 `json:"seconds"`
	// Acked counts the comments answered without error, Failed the
	// others (FirstError says why the first failed); PerSecond is the
	// rate acknowledged.
	Acked      int     `json:"acked"`
	Failed     int     `json:"failed"`
	FirstError string  `json:"firstError,omitempty"`
	PerSecond  float64 `json:"perSecond"`
	P50Millis  float64 `json:"p50Millis"`
	P99Millis  float64 `json:"p99Millis"`
	// ConvergeMillis is the time from the last answer until every list
	// showed the final count.
	ConvergeMillis float64 `json:"convergeMillis"`
	// SeenMillis is the time from the last answer until the counts
	// worker read the last comment's event (the change feed's latency),
	// SyncedMillis until a sync of the post that began after it ended:
	// when the copies have the final count even where the comment's
	// transaction did not write it.
	SeenMillis   float64 `json:"seenMillis"`
	SyncedMillis float64 `json:"syncedMillis"`
	// Syncs counts the counts worker's syncs of the post during the run
	// and Writes the items they updated; MaxSyncsPerSecond is the most
	// syncs of the post that began within one second (CountSyncEvery
	// makes it 1).
	Syncs             int `json:"syncs"`
	Writes            int `json:"writes"`
	MaxSyncsPerSecond int `json:"maxSyncsPerSecond"`
}

// burstPost is the post of a burst: by two authors, in two categories,
// with a tag, featured: six copies besides its item.
type burstPost struct {
	id, gid    string
	authors    []string
	categories []string
	tag        string
}

func runBurst(ctx context.Context, cfg *config, log io.Writer) (*burstResult, error) {
	logf := func(format string, args ...any) { fmt.Fprintf(log, format+"\n", args...) }
	b, err := openBackend(ctx, cfg, "", "burst")
	if err != nil {
		return nil, err
	}
	defer b.close()
	streams, err := storage.NewStreamsClient(ctx, b.client)
	if err != nil {
		return nil, err
	}
	store := storage.New(b.db, b.table, storage.WithStream())
	if err := store.CreateTable(ctx); err != nil {
		return nil, err
	}
	post, err := seedBurstPost(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("seed the post: %w", err)
	}

	// The change feed with the counts worker, as server.go runs it.
	opts := changefeed.Options{Owner: "bench", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if cfg.backend == "embedded" {
		opts.ReadGap, opts.PollEvery = 25*time.Millisecond, 25*time.Millisecond
	}
	feed := changefeed.New(store, streams, opts)
	counts := store.NewCountSync()
	var (
		syncMu sync.Mutex
		syncs  []time.Time
		writes int
	)
	// seen is when the worker read each comment event of the post, in
	// order; synced when each sync of the post ended.
	var seen, synced []time.Time
	seenAt := map[int64]bool{} // positions: a batch may come again
	counts.OnSync = func(id string, did storage.CountSynced, err error) {
		if id != post.id || err != nil {
			return
		}
		syncMu.Lock()
		defer syncMu.Unlock()
		syncs, synced, writes = append(syncs, did.Began), append(synced, time.Now()), writes+did.Wrote
	}
	events := func(ctx context.Context, evs []storage.LoggedEvent) error {
		syncMu.Lock()
		for _, e := range evs {
			if e.Type == storage.EventCommentAdded && e.Data.PostID == post.id && !seenAt[e.Position] {
				seenAt[e.Position] = true
				seen = append(seen, time.Now())
			}
		}
		syncMu.Unlock()
		return counts.Events(ctx, evs)
	}
	feed.AddWorker(changefeed.Worker{Name: "counts", Events: events, Tick: counts.Tick, Every: storage.CountSyncTick, Hold: counts.Hold})
	feedCtx, stopFeed := context.WithCancel(ctx)
	fed := make(chan struct{})
	go func() { defer close(fed); _ = feed.Run(feedCtx) }()
	defer func() { stopFeed(); <-fed }()

	secret := make([]byte, auth.MinSecretBytes)
	_, _ = rand.Read(secret)
	verifier, err := auth.NewVerifier(auth.Config{Secret: secret})
	if err != nil {
		return nil, err
	}
	var tokens []string
	for _, a := range post.authors {
		tok, err := auth.Sign(secret, auth.Claims{
			RegisteredClaims: jwt.RegisteredClaims{Subject: a, ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour))},
			Roles:            []string{auth.RoleAuthor},
		})
		if err != nil {
			return nil, err
		}
		tokens = append(tokens, tok)
	}
	handler := graph.NewHandler(store, graph.HandlerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Verifier: verifier})
	srv := httptest.NewServer(handler)
	defer srv.Close()
	client := newClient(srv.URL, cfg.burstClients)
	// The post's global id, as a frontend finds it.
	body, err := client.query(ctx, "post", "", `{ post(slug: "a-busy-post") { id } }`, nil)
	if err != nil {
		return nil, err
	}
	found, err := decodeData[struct{ Post struct{ ID string } }](body)
	if err != nil {
		return nil, err
	}
	post.gid = found.Post.ID

	res := &burstResult{Backend: cfg.backend, Rate: cfg.burst, Clients: cfg.burstClients}
	logf("burst: %d comments/s on one post (6 copies) from %d clients for %s", cfg.burst, cfg.burstClients, cfg.burstFor)
	const mutation = `mutation AddComment($input: AddCommentInput!) { addComment(input: $input) { comment { id } } }`
	// One ticket a comment, handed out at the rate; a client takes the
	// next as soon as its last comment is answered.
	tickets := make(chan int)
	go func() {
		defer close(tickets)
		every := time.Second / time.Duration(cfg.burst)
		start := time.Now()
		for i := 0; ; i++ {
			// Clients that fall behind the rate get the tickets late;
			// none after the burst's end.
			at := start.Add(time.Duration(i) * every)
			if at.Sub(start) >= cfg.burstFor || time.Since(start) >= cfg.burstFor {
				return
			}
			time.Sleep(time.Until(at))
			select {
			case tickets <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var (
		mu        sync.Mutex
		latencies []time.Duration
		lastAck   time.Time
		failed    atomic.Int64
	)
	began := time.Now()
	var wg sync.WaitGroup
	for range cfg.burstClients {
		wg.Go(func() {
			for i := range tickets {
				sent := time.Now()
				body, err := client.query(ctx, "burst", tokens[i%len(tokens)], mutation, map[string]any{"input": map[string]any{
					"postId": post.gid, "body": commentBody(i),
				}})
				if err == nil {
					var d *struct {
						AddComment struct{ Comment struct{ ID string } }
					}
					if d, err = decodeData[struct {
						AddComment struct{ Comment struct{ ID string } }
					}](body); err == nil && d.AddComment.Comment.ID == "" {
						err = fmt.Errorf("no comment in %s", body)
					}
				}
				now := time.Now()
				mu.Lock()
				if err != nil {
					if failed.Add(1) == 1 {
						res.FirstError = err.Error()
					}
				} else {
					latencies = append(latencies, now.Sub(sent))
					lastAck = now
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	res.Seconds = lastAck.Sub(began).Seconds()
	res.Acked, res.Failed = len(latencies), int(failed.Load())
	res.PerSecond = float64(res.Acked) / res.Seconds
	slices.Sort(latencies)
	if n := len(latencies); n > 0 {
		res.P50Millis = millis(latencies[n/2])
		res.P99Millis = millis(latencies[min(n-1, n*99/100)])
	}
	logf("burst: %d comments answered (%.0f/s), %d failed, p50 %.1f ms, p99 %.1f ms", res.Acked, res.PerSecond, res.Failed, res.P50Millis, res.P99Millis)
	if res.FirstError != "" {
		logf("burst: first failure: %.300s", res.FirstError)
	}

	// Every list shows the final count: the post's own, which counts
	// every comment acknowledged.
	final, err := store.GetPost(ctx, post.id)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		shown, err := shownCounts(ctx, store, post)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(shown, func(n int64) bool { return n != final.CommentCount }) {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the lists show %v comments 30 s after the burst, the post %d", shown, final.CommentCount)
		}
		time.Sleep(10 * time.Millisecond)
	}
	res.ConvergeMillis = millis(time.Since(lastAck))
	// The worker's own path: the last comment's event read, and a sync
	// begun after it ended.
	for {
		syncMu.Lock()
		if len(seen) >= res.Acked {
			last := seen[res.Acked-1]
			res.SeenMillis = millis(last.Sub(lastAck))
			for i, b := range syncs {
				if !b.Before(last) {
					res.SyncedMillis = millis(synced[i].Sub(lastAck))
					break
				}
			}
		}
		syncMu.Unlock()
		if res.SyncedMillis != 0 {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the counts worker read %d of %d comment events 30 s after the burst, or synced none after", len(seen), res.Acked)
		}
		time.Sleep(10 * time.Millisecond)
	}
	syncMu.Lock()
	res.Syncs, res.Writes = len(syncs), writes
	for i := range syncs {
		n := 0
		for j := i; j < len(syncs) && syncs[j].Sub(syncs[i]) < time.Second; j++ {
			n++
		}
		res.MaxSyncsPerSecond = max(res.MaxSyncsPerSecond, n)
	}
	syncMu.Unlock()
	logf("burst: every list shows the %d comments %.0f ms after the last answer; the counts worker read the last comment's event after %.0f ms and ended a sync begun after it at %.0f ms; it synced the post %d times (at most %d within a second), updating %d items",
		final.CommentCount, res.ConvergeMillis, res.SeenMillis, res.SyncedMillis, res.Syncs, res.MaxSyncsPerSecond, res.Writes)
	return res, nil
}

// seedBurstPost makes two authors, two categories, and the post by both,
// in both, with a tag, published and featured.
func seedBurstPost(ctx context.Context, store *storage.Store) (*burstPost, error) {
	p := &burstPost{authors: []string{"burst-ada", "burst-bob"}, categories: []string{"burst-go", "burst-aws"}, tag: "burst"}
	for _, a := range p.authors {
		if _, err := store.CreateAuthor(ctx, storage.NewAuthor{ID: a, Slug: a, Name: a}); err != nil {
			return nil, err
		}
	}
	for _, c := range p.categories {
		if _, err := store.CreateCategory(ctx, storage.NewCategory{Slug: c, Name: c}); err != nil {
			return nil, err
		}
	}
	created, err := store.CreatePost(ctx, storage.NewPost{AuthorID: p.authors[0], CoAuthors: p.authors[1:], Title: "A busy post", Slug: "a-busy-post",
		Body: "Everyone has something to say.", Categories: p.categories, Tags: []string{p.tag}})
	if err != nil {
		return nil, err
	}
	if _, err := store.Publish(ctx, storage.PublishPost{ID: created.ID}); err != nil {
		return nil, err
	}
	if _, err := store.SetFeatured(ctx, storage.FeaturePost{ID: created.ID, Featured: true}); err != nil {
		return nil, err
	}
	p.id = created.ID
	return p, nil
}

// shownCounts returns the post's comment count as each list shows it:
// the feed, its authors', categories' and tag's posts, the featured
// list.
func shownCounts(ctx context.Context, store *storage.Store, p *burstPost) ([]int64, error) {
	page := storage.PageArgs{Limit: 1}
	var lists []func() (*storage.Result[*storage.Post], error)
	lists = append(lists,
		func() (*storage.Result[*storage.Post], error) { return store.LatestPosts(ctx, page, storage.Period{}) },
		func() (*storage.Result[*storage.Post], error) { return store.FeaturedPosts(ctx, page) },
		func() (*storage.Result[*storage.Post], error) {
			return store.TagPosts(ctx, p.tag, page, storage.Period{})
		})
	for _, a := range p.authors {
		lists = append(lists, func() (*storage.Result[*storage.Post], error) {
			return store.AuthorPosts(ctx, a, page, storage.Period{}, false)
		})
	}
	for _, c := range p.categories {
		lists = append(lists, func() (*storage.Result[*storage.Post], error) {
			return store.CategoryPosts(ctx, c, page, storage.Period{})
		})
	}
	var out []int64
	for _, list := range lists {
		res, err := list()
		if err != nil {
			return nil, err
		}
		if len(res.Items) != 1 || res.Items[0].ID != p.id {
			return nil, fmt.Errorf("a list of the post shows %d posts, not the post", len(res.Items))
		}
		out = append(out, res.Items[0].CommentCount)
	}
	return out, nil
}

// write writes r to cfg.out as JSON.
func (r *burstResult) write(cfg *config) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(cfg.out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(cfg.out, append(b, '\n'), 0o644)
}
