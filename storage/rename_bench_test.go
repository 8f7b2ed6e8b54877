package storage_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// BenchmarkRenameCategoryWithWriters renames a category of 500 published
// posts while four writers create drafts in it, and reports what the
// rename costs and what the writers see meanwhile: ns/op is one rename,
// create-p50-ms, create-p99-ms and create-max-ms the latency of a
// createPost during it, creates/op how many went through and busy/op how
// many ended in ErrBusy (UNAVAILABLE for a client). On DynamoDB Local:
//
//	scripts/dynamodb-local.sh run 8765 -- go test -run '^$' -bench RenameCategory -benchtime 3x ./storage
func BenchmarkRenameCategoryWithWriters(b *testing.B) {
	const (
		posts   = 500
		writers = 4
	)
	ctx := context.Background()
	s := benchStore(b)
	if _, err := s.CreateAuthor(ctx, storage.NewAuthor{ID: "ada", Name: "Ada"}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.CreateCategory(ctx, storage.NewCategory{Slug: "big", Name: "Big"}); err != nil {
		b.Fatal(err)
	}
	var g errgroup.Group
	g.SetLimit(8)
	for i := range posts {
		g.Go(func() error {
			slug := fmt.Sprintf("post-%d", i)
			p, err := s.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: slug, Slug: slug, Categories: []string{"big"}})
			if err == nil {
				_, err = s.Publish(ctx, storage.PublishPost{ID: p.ID, At: time.Now().Add(-time.Hour)})
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}

	// Writers alone first, for the latency a createPost has without a
	// rename, then one rename per iteration with the writers beside it.
	alone := createsDuring(ctx, s, writers, "alone", func() { time.Sleep(2 * time.Second) })
	var (
		during  creates
		renames time.Duration
	)
	b.ResetTimer()
	for i := range b.N {
		name := fmt.Sprintf("Big %d", i)
		var err error
		c := createsDuring(ctx, s, writers, fmt.Sprintf("during-%d", i), func() {
			began := time.Now()
			_, err = s.UpdateCategory(ctx, storage.CategoryPatch{Slug: "big", Name: &name})
			renames += time.Since(began)
		})
		if err != nil {
			b.Fatal(err)
		}
		during.add(c)
	}
	b.StopTimer()
	b.ReportMetric(float64(during.outcomes["ok"])/float64(b.N), "creates/op")
	b.ReportMetric(float64(during.outcomes["busy"])/float64(b.N), "busy/op")
	b.ReportMetric(during.ms(0.5), "create-p50-ms")
	b.ReportMetric(during.ms(0.99), "create-p99-ms")
	b.ReportMetric(during.ms(1), "create-max-ms")
	b.Logf("createPost alone: %v, latency p50 %.0f ms, p99 %.0f ms, max %.0f ms",
		alone.outcomes, alone.ms(0.5), alone.ms(0.99), alone.ms(1))
	b.Logf("%d renames of %d posts, %.1f s each; createPost meanwhile: %v, latency p50 %.0f ms, p99 %.0f ms, max %.0f ms",
		b.N, posts, renames.Seconds()/float64(b.N), during.outcomes, during.ms(0.5), during.ms(0.99), during.ms(1))
	for _, c := range []creates{alone, during} {
		for o, n := range c.outcomes {
			if o != "ok" && o != "busy" {
				b.Errorf("%d createPost calls failed: %s", n, o)
			}
		}
	}
}

// creates is what the writers of createsDuring saw: the latency of each
// createPost, and their outcomes ("ok", "busy" for ErrBusy, or the error).
type creates struct {
	latencies []time.Duration
	outcomes  map[string]int
}

func (c *creates) add(o creates) {
	c.latencies = append(c.latencies, o.latencies...)
	if c.outcomes == nil {
		c.outcomes = map[string]int{}
	}
	for k, v := range o.outcomes {
		c.outcomes[k] += v
	}
}

// ms returns the q-quantile of the latencies in milliseconds.
func (c *creates) ms(q float64) float64 {
	if len(c.latencies) == 0 {
		return 0
	}
	l := slices.Sorted(slices.Values(c.latencies))
	return float64(l[int(q*float64(len(l)-1))]) / float64(time.Millisecond)
}

// createsDuring runs f while writers create drafts in category big, one
// after another each, and returns what they saw.
func createsDuring(ctx context.Context, s *storage.Store, writers int, prefix string, f func()) creates {
	var (
		mu  sync.Mutex
		out = creates{outcomes: map[string]int{}}
		wg  sync.WaitGroup
	)
	done := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				slug := fmt.Sprintf("%s-%d-%d", prefix, w, n)
				began := time.Now()
				_, err := s.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: slug, Slug: slug, Categories: []string{"big"}})
				took := time.Since(began)
				outcome := "ok"
				switch {
				case errors.Is(err, storage.ErrBusy):
					outcome = "busy"
				case err != nil:
					outcome = err.Error()
				}
				mu.Lock()
				out.latencies = append(out.latencies, took)
				out.outcomes[outcome]++
				mu.Unlock()
			}
		})
	}
	f()
	close(done)
	wg.Wait()
	return out
}

// benchStore returns a Store on a fresh table of the test backend.
func benchStore(b *testing.B) *storage.Store {
	b.Helper()
	ctx := context.Background()
	client, err := storage.NewClient(ctx, dynamotest.ClientConfig(b, nil))
	if err != nil {
		b.Fatal(err)
	}
	s := storage.New(client, dynamotest.Table(b, client, "bench"))
	if err := s.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	return s
}
