package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/blogql/blog/storage"
)

// The benchmark's dataset: 20 authors, 8 categories, 2,000 published posts
// (-posts) with 1–3 categories each and ~3 KB Markdown bodies, published
// over two years, and ~10 comments on each of the newest tenth of the posts.
// A fixed random seed and fixed dates make every run write the same blog
// (only generated ids differ).
const (
	numAuthors       = 20
	defaultPosts     = 2000
	seedConcurrency  = 16
	datasetSeed      = 20260101
	firstPublication = "2024-01-01T00:00:00Z"
)

var categorySlugs = []string{"go", "dynamodb", "graphql", "aws", "testing", "performance", "architecture", "frontend"}

var firstNames = []string{"Ada", "Grace", "Alan", "Margaret", "Barbara", "Edsger", "Donald", "Frances", "John", "Radia"}
var lastNames = []string{"Lovelace", "Hopper", "Turing", "Hamilton", "Liskov", "Dijkstra", "Knuth", "Allen", "Backus", "Perlman"}

var subjects = []string{
	"single-table design", "dataloaders", "cursor pagination", "connection pooling", "graceful shutdown",
	"structured logging", "context cancellation", "error wrapping", "table-driven tests", "fuzzing",
	"profiling with pprof", "allocation budgets", "GraphQL schemas", "persisted queries", "CDN caching",
	"idempotency keys", "optimistic locking", "secondary indexes", "hot partitions", "load testing",
}

// dataset is the blog the benchmark writes, before it is written.
type dataset struct {
	authors    []storage.NewAuthor
	categories []storage.NewCategory
	posts      []plannedPost // oldest first
	// commented is how many of the newest posts have comments.
	commented int
}

type plannedPost struct {
	storage.NewPost
	publishedAt time.Time
	comments    []plannedComment
}

type plannedComment struct {
	authorID string
	body     string
	at       time.Time
}

// newDataset returns the benchmark's blog with numPosts posts.
func newDataset(numPosts int) *dataset {
	rng := rand.New(rand.NewPCG(datasetSeed, datasetSeed))
	d := &dataset{commented: numPosts / 10}
	for i := range numAuthors {
		d.authors = append(d.authors, storage.NewAuthor{
			ID:   fmt.Sprintf("author-%02d", i+1),
			Name: firstNames[i%len(firstNames)] + " " + lastNames[(i+i/len(lastNames))%len(lastNames)],
			Bio:  "Writes about " + subjects[i%len(subjects)] + " and " + subjects[(i+7)%len(subjects)] + ".",
		})
	}
	for _, slug := range categorySlugs {
		d.categories = append(d.categories, storage.NewCategory{
			Slug: slug, Name: strings.ToUpper(slug[:1]) + slug[1:],
			Description: "Posts about " + slug + ".",
		})
	}
	start, _ := time.Parse(time.RFC3339, firstPublication)
	step := 2 * 365 * 24 * time.Hour / time.Duration(numPosts)
	for i := range numPosts {
		subject := subjects[rng.IntN(len(subjects))]
		cats := rng.Perm(len(categorySlugs))[:1+rng.IntN(3)]
		slugs := make([]string, len(cats))
		for j, c := range cats {
			slugs[j] = categorySlugs[c]
		}
		p := plannedPost{
			NewPost: storage.NewPost{
				AuthorID:   d.authors[rng.IntN(numAuthors)].ID,
				Title:      fmt.Sprintf("Notes on %s, part %d", subject, i+1),
				Slug:       fmt.Sprintf("notes-on-%s-%d", strings.ReplaceAll(strings.ToLower(subject), " ", "-"), i+1),
				Excerpt:    fmt.Sprintf("What %d weeks of %s taught us, and what we would do differently.", 1+rng.IntN(50), subject),
				Body:       markdownBody(rng, subject),
				Categories: slugs,
			},
			publishedAt: start.Add(time.Duration(i) * step),
		}
		if i >= numPosts-d.commented {
			for j := range 8 + rng.IntN(5) {
				p.comments = append(p.comments, plannedComment{
					authorID: d.authors[rng.IntN(numAuthors)].ID,
					body:     fmt.Sprintf("Comment %d: the part about %s matches what we saw in production.", j+1, subjects[rng.IntN(len(subjects))]),
					at:       p.publishedAt.Add(time.Duration(j+1) * time.Hour),
				})
			}
		}
		d.posts = append(d.posts, p)
	}
	return d
}

// markdownBody returns a post body of about 3 KB: headings, paragraphs, a
// list and a code block.
func markdownBody(rng *rand.Rand, subject string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", strings.ToUpper(subject[:1])+subject[1:])
	for b.Len() < 3000 {
		switch rng.IntN(4) {
		case 0:
			fmt.Fprintf(&b, "## On %s\n\n", subjects[rng.IntN(len(subjects))])
		case 1:
			fmt.Fprintf(&b, "- measure %s first\n- change one thing\n- measure again\n\n", subject)
		case 2:
			fmt.Fprintf(&b, "```go\nfor i := range %d {\n\tstep(ctx, i)\n}\n```\n\n", 1+rng.IntN(100))
		default:
			fmt.Fprintf(&b, "When we first tried %s, the numbers surprised us: %d requests per second at p99 %d ms. "+
				"Most of the time went into work that could have happened once per page instead of once per item, "+
				"and the fix was smaller than the measurement.\n\n", subject, 100*(1+rng.IntN(50)), 1+rng.IntN(40))
		}
	}
	return b.String()
}

// seed writes d through the store's public write methods, with at most
// seedConcurrency writes in flight. Every write is stamped with the time
// the dataset gives it.
func (d *dataset) seed(ctx context.Context, store *storage.Store) error {
	// Authors and categories exist a month before the first post.
	before := store.At(fixed(d.posts[0].publishedAt.Add(-30 * 24 * time.Hour)))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(seedConcurrency)
	for _, a := range d.authors {
		g.Go(func() error {
			_, err := before.CreateAuthor(gctx, a)
			return err
		})
	}
	for _, c := range d.categories {
		g.Go(func() error {
			_, err := before.CreateCategory(gctx, c)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("seed authors and categories: %w", err)
	}
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(seedConcurrency)
	for i := range d.posts {
		p := &d.posts[i]
		g.Go(func() error {
			if err := p.seed(gctx, store); err != nil {
				return fmt.Errorf("seed post %q: %w", p.Slug, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// seed creates the post a day before it is published, publishes it, and
// adds its comments one after another.
func (p *plannedPost) seed(ctx context.Context, store *storage.Store) error {
	post, err := store.At(fixed(p.publishedAt.Add(-24*time.Hour))).CreatePost(ctx, p.NewPost)
	if err != nil {
		return err
	}
	if _, err := store.At(fixed(p.publishedAt)).Publish(ctx, storage.PublishPost{ID: post.ID, At: p.publishedAt}); err != nil {
		return err
	}
	for _, c := range p.comments {
		if _, err := store.At(fixed(c.at)).AddComment(ctx, storage.NewComment{PostID: post.ID, AuthorID: c.authorID, Body: c.body}); err != nil {
			return err
		}
	}
	return nil
}

func fixed(t time.Time) func() time.Time { return func() time.Time { return t } }
