package demo

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// now is the clock of every test: scheduled posts lie after it.
var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// Expected shape of the demo blog.
var (
	wantAuthors    = len(authors)
	wantCategories = len(categories)
	wantPosts      = len(topics)
	wantPublished  = wantPosts - draftCount - scheduledCount
)

// testStore returns a store on a fresh table of the DynamoDB
// internal/dynamotest chooses: the embedded engine, or DynamoDB Local when
// DYNAMODB_ENDPOINT is set (REQUIRE_DYNAMODB=1 makes a missing endpoint a
// failure), and what counts its calls. The store and the engine share the
// clock that reads now.
func testStore(t *testing.T) (*storage.Store, *calls) {
	t.Helper()
	ctx := context.Background()
	clock := dynamotest.NewClock(now)
	cfg := dynamotest.ClientConfig(t, clock.Now)
	c := &calls{}
	cfg.Observe = c.observe
	client, err := storage.NewClient(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	store := storage.New(client, dynamotest.Table(t, client, "demo-test"), storage.WithClock(clock.Now))
	if err := store.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	return store, c
}

// calls counts DynamoDB calls, the writes among them apart.
type calls struct {
	mu            sync.Mutex
	total, writes int
}

func (c *calls) observe(call storage.Call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total++
	switch call.Operation {
	case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems":
		c.writes++
	}
}

// take returns the calls counted since the last take.
func (c *calls) take() (total, writes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	total, writes = c.total, c.writes
	c.total, c.writes = 0, 0
	return total, writes
}

func TestSeed(t *testing.T) {
	store, calls := testStore(t)
	ctx := context.Background()
	calls.take() // the table's creation
	start := time.Now()
	if err := Seed(ctx, store, now); err != nil {
		t.Fatalf("Seed: %v", err)
	}
	total, writes := calls.take()
	t.Logf("seeded in %v: %d requests, %d of them writes", time.Since(start), total, writes)

	first := snapshot(t, store)
	t.Run("counts", func(t *testing.T) {
		st := first.stats
		if st.AuthorCount != int64(wantAuthors) || st.CategoryCount != int64(wantCategories) ||
			st.PostCount != int64(wantPublished) {
			t.Errorf("Stats = %+v, want %d authors, %d categories, %d posts (the scheduled ones not yet)",
				*st, wantAuthors, wantCategories, wantPublished)
		}
		if len(first.authors) != wantAuthors || len(first.categories) != wantCategories {
			t.Errorf("listed %d authors and %d categories, want %d and %d",
				len(first.authors), len(first.categories), wantAuthors, wantCategories)
		}
		if len(first.feed) != wantPublished {
			t.Errorf("feed has %d posts, want %d", len(first.feed), wantPublished)
		}
		if len(first.drafts) != draftCount {
			t.Errorf("%d drafts, want %d", len(first.drafts), draftCount)
		}
		if len(first.scheduled) != scheduledCount {
			t.Errorf("%d scheduled posts, want %d", len(first.scheduled), scheduledCount)
		}
	})
	t.Run("fixed ids", func(t *testing.T) {
		a, err := store.GetAuthor(ctx, "ada-lovelace")
		if err != nil || a.Name != "Ada Lovelace" || !strings.HasPrefix(a.AvatarURL, "https://example.com/") || a.Bio == "" {
			t.Errorf("GetAuthor(ada-lovelace) = %+v, %v", a, err)
		}
		for _, a := range first.authors {
			if bySlug, err := store.GetAuthorBySlug(ctx, a.ID); err != nil || a.Slug != a.ID || bySlug.ID != a.ID {
				t.Errorf("author %s has slug %q; by its id as a slug: %v, %v", a.ID, a.Slug, bySlug, err)
			}
		}
		for _, c := range first.categories {
			if c.Description == "" || c.PostCount == 0 {
				t.Errorf("category %q has description %q and %d posts", c.Slug, c.Description, c.PostCount)
			}
		}
	})
	t.Run("feed", func(t *testing.T) {
		oldest := now.Add(-history - 24*time.Hour)
		for i, p := range first.feed {
			if !p.PublishedAt.Before(now) || p.PublishedAt.Before(oldest) {
				t.Errorf("post %q published at %v, want within the %v before %v", p.Slug, p.PublishedAt, history, now)
			}
			if i > 0 && p.PublishedAt.After(first.feed[i-1].PublishedAt) {
				t.Errorf("feed not newest first at %q", p.Slug)
			}
			if n := len(p.Categories); n < 1 || n > 3 {
				t.Errorf("post %q has %d categories, want 1 to 3", p.Slug, n)
			}
		}
	})
	t.Run("covers, tables of contents and the archive", func(t *testing.T) {
		covers, counted := 0, int64(0)
		for _, p := range first.feed {
			if p.CoverImage != nil {
				covers++
			}
			if len(p.TOC) < 3 || !strings.Contains(p.BodyHTML, `id="`+p.TOC[0].Anchor+`"`) || p.ReadingMinutes < 1 {
				t.Errorf("post %q: %d headings, %d minutes", p.Slug, len(p.TOC), p.ReadingMinutes)
			}
		}
		if covers < len(first.feed)/4 || covers == len(first.feed) {
			t.Errorf("%d of %d posts have a cover, want about a third", covers, len(first.feed))
		}
		for _, m := range first.stats.Archive {
			counted += m.PostCount
		}
		if counted != int64(wantPublished) || len(first.stats.Archive) < 12 {
			t.Errorf("archive counts %d posts in %d months, want %d over the history", counted, len(first.stats.Archive), wantPublished)
		}
	})
	t.Run("comments", func(t *testing.T) {
		var commented, replies int
		for i, p := range first.feed {
			if p.CommentCount > 0 {
				commented++
				if i >= commentedPosts {
					t.Errorf("post %q (number %d in the feed) has comments, want them on the newest %d only", p.Slug, i+1, commentedPosts)
				}
			}
			replies += int(p.CommentCount - p.ThreadCount)
		}
		if commented != commentedPosts {
			t.Errorf("%d posts have comments, want %d", commented, commentedPosts)
		}
		if replies == 0 {
			t.Error("no replies anywhere, want threads")
		}
		top, err := store.Comments(ctx, first.feed[0].ID, storage.PageArgs{Limit: 100})
		if err != nil || len(top.Items) == 0 {
			t.Fatalf("Comments of the newest post = %v, %v", top, err)
		}
	})
	t.Run("reader", func(t *testing.T) {
		got, errs := store.GetCommenters(ctx, []storage.Writer{{ReaderID: Reader.ID}})
		if errs[0] != nil || got[0].Reader.Name != Reader.Name || got[0].Reader.AvatarURL != Reader.AvatarURL {
			t.Fatalf("reader %s = %+v, %v", Reader.ID, got[0], errs[0])
		}
		newest := first.feed[0]
		top, err := store.Comments(ctx, newest.ID, storage.PageArgs{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var byReader []*storage.Comment
		for _, c := range top.Items {
			if c.ReaderID == Reader.ID {
				byReader = append(byReader, c)
			}
		}
		if len(byReader) != 1 || byReader[0].ReplyCount != 1 || byReader[0].Replies[0].AuthorID != newest.AuthorID {
			t.Errorf("the reader's published comments on %q = %+v, want one answered by the post's author", newest.Slug, byReader)
		}
		queue, err := store.ModerationQueue(ctx, "", storage.PageArgs{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(queue.Items) != 1 || queue.Items[0].ReaderID != Reader.ID || queue.Items[0].PostID != newest.ID ||
			queue.Items[0].Status != storage.CommentPending {
			t.Errorf("moderation queue = %+v, want the reader's pending comment on %q", queue.Items, newest.Slug)
		}
	})
	t.Run("tags", func(t *testing.T) {
		if len(first.tags) != len(tagNames()) {
			t.Errorf("%d tags listed, want %d", len(first.tags), len(tagNames()))
		}
		for _, p := range first.feed {
			if n := len(p.Tags); n < 1 || n > 4 {
				t.Errorf("post %q has %d tags, want 1 to 4", p.Slug, n)
			}
		}
		tag, err := store.GetTag(ctx, "dynamodb")
		if err != nil || tag.Name != "DynamoDB" || tag.PostCount < 5 {
			t.Fatalf("GetTag(dynamodb) = %+v, %v; want the tag with its posts", tag, err)
		}
		posts := all(t, func(p storage.PageArgs) (*storage.Result[*storage.Post], error) {
			return store.TagPosts(ctx, "dynamodb", p, storage.Period{})
		})
		if int64(len(posts)) != tag.PostCount {
			t.Errorf("tag dynamodb lists %d posts, counts %d", len(posts), tag.PostCount)
		}
	})
	t.Run("co-authors", func(t *testing.T) {
		var coWrittenPosts []*storage.Post
		for _, p := range first.feed {
			if len(p.CoAuthors) > 0 {
				coWrittenPosts = append(coWrittenPosts, p)
			}
		}
		if len(coWrittenPosts) < 3 {
			t.Fatalf("%d published posts have co-authors, want a few", len(coWrittenPosts))
		}
		for _, p := range coWrittenPosts {
			if n := 1 + len(p.CoAuthors); n > 3 {
				t.Errorf("post %q has %d authors, want 2 or 3", p.Slug, n)
			}
			for _, a := range p.CoAuthors {
				if a.Name == "" || a.Slug != a.ID {
					t.Errorf("post %q: co-author %+v has no byline", p.Slug, a)
				}
				theirs := all(t, func(pg storage.PageArgs) (*storage.Result[*storage.Post], error) {
					return store.AuthorPosts(ctx, a.ID, pg, storage.Period{}, false)
				})
				if !slices.ContainsFunc(theirs, func(q *storage.Post) bool { return q.ID == p.ID }) {
					t.Errorf("post %q is not on its co-author %s's page", p.Slug, a.ID)
				}
			}
		}
	})
	t.Run("featured", func(t *testing.T) {
		var want []string // the newest published posts with a cover
		for _, p := range first.feed {
			if p.CoverImage != nil && len(want) < featuredCount {
				want = append(want, p.ID)
			}
		}
		var got []string
		for _, p := range first.featured {
			got = append(got, p.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("featured posts %v, want the %d newest with a cover %v", got, featuredCount, want)
		}
	})
	t.Run("series", func(t *testing.T) {
		se := first.series
		if se == nil || se.Title == "" || se.Description == "" || se.OwnerID != "alan-turing" {
			t.Fatalf("series %q = %+v", demoSeries.Slug, se)
		}
		bySlug := map[string]*storage.Post{}
		for _, p := range first.feed {
			bySlug[p.Slug] = p
		}
		var want []string
		for i, title := range demoSeries.posts {
			p := bySlug[slugify(title)]
			if p == nil {
				t.Fatalf("series post %q is not published", title)
			}
			if p.Series != se.Slug {
				t.Errorf("post %q is in series %q, want %q", p.Slug, p.Series, se.Slug)
			}
			if i > 0 && p.PublishedAt.Before(bySlug[slugify(demoSeries.posts[i-1])].PublishedAt) {
				t.Errorf("part %d, %q, was published before the part before it", i+1, p.Slug)
			}
			want = append(want, p.ID)
		}
		if !slices.Equal(se.Posts, want) {
			t.Errorf("series posts %v, want %v in the plan's order", se.Posts, want)
		}
	})
	t.Run("consistent", func(t *testing.T) {
		problems, err := store.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Error(p)
		}
	})

	t.Run("second seed changes nothing", func(t *testing.T) {
		// A day later, so the dates Seed would choose differ too.
		calls.take() // the reads of the tests above
		start := time.Now()
		if err := Seed(ctx, store, now.Add(24*time.Hour)); err != nil {
			t.Fatalf("second Seed: %v", err)
		}
		total, writes := calls.take()
		t.Logf("second seed in %v: %d requests", time.Since(start), total)
		if writes > 0 {
			t.Errorf("second Seed made %d writes, want none", writes)
		}
		if second := snapshot(t, store); !reflect.DeepEqual(first, second) {
			t.Errorf("second Seed changed the blog:\nbefore %+v\nafter  %+v", first, second)
		}
	})
}

// TestSeedCompletesAnInterruptedRun seeds a table that holds part of the
// demo blog, as a run cut short would leave it.
func TestSeedCompletesAnInterruptedRun(t *testing.T) {
	store, _ := testStore(t)
	ctx := context.Background()
	p := newPlan(now)
	if _, err := store.CreateAuthor(ctx, p.authors[0]); err != nil {
		t.Fatal(err)
	}
	if err := seedCategories(ctx, store, p.categories); err != nil {
		t.Fatal(err)
	}
	// A post that should be published, left as a draft; and the series
	// with its third part alone, also a draft.
	pp := p.posts[len(p.posts)-scheduledCount-1]
	part := p.posts[slices.IndexFunc(p.posts, func(q plannedPost) bool { return q.Slug == p.inSeries[2] })]
	for _, a := range p.authors {
		if a.ID != p.authors[0].ID && (a.ID == pp.AuthorID || a.ID == part.AuthorID ||
			slices.Contains(pp.CoAuthors, a.ID) || slices.Contains(part.CoAuthors, a.ID)) {
			if _, err := store.CreateAuthor(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := store.CreatePost(ctx, pp.NewPost); err != nil {
		t.Fatal(err)
	}
	third, err := store.CreatePost(ctx, part.NewPost)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateSeries(ctx, p.series); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.AddSeriesPost(ctx, storage.SeriesPostChange{Slug: p.series.Slug, PostID: third.ID}); err != nil {
		t.Fatal(err)
	}

	if err := Seed(ctx, store, now); err != nil {
		t.Fatalf("Seed: %v", err)
	}
	got := snapshot(t, store)
	var order []string
	for _, id := range got.series.Posts {
		for _, q := range got.feed {
			if q.ID == id {
				order = append(order, q.Slug)
			}
		}
	}
	if !slices.Equal(order, p.inSeries) {
		t.Errorf("series after the second run = %v, want %v", order, p.inSeries)
	}
	if len(got.featured) != featuredCount {
		t.Errorf("%d featured posts, want %d", len(got.featured), featuredCount)
	}
	if len(got.authors) != wantAuthors || len(got.categories) != wantCategories || len(got.feed) != wantPublished ||
		len(got.drafts) != draftCount || len(got.scheduled) != scheduledCount {
		t.Errorf("got %d authors, %d categories, %d published, %d drafts, %d scheduled; want %d, %d, %d, %d, %d",
			len(got.authors), len(got.categories), len(got.feed), len(got.drafts), len(got.scheduled),
			wantAuthors, wantCategories, wantPublished, draftCount, scheduledCount)
	}
	if problems, err := store.Check(ctx); err != nil || len(problems) > 0 {
		t.Errorf("Check = %v, %v", problems, err)
	}
}

func TestPlan(t *testing.T) {
	p := newPlan(now)
	t.Run("same content at any time", func(t *testing.T) {
		q := newPlan(now.Add(100 * 24 * time.Hour))
		for i := range p.posts {
			a, b := p.posts[i], q.posts[i]
			if !reflect.DeepEqual(a.NewPost, b.NewPost) || !reflect.DeepEqual(a.threads, b.threads) || a.state != b.state {
				t.Fatalf("post %d differs between two times: %q vs %q", i, a.Slug, b.Slug)
			}
			if a.state != stateDraft && b.at.Sub(a.at) != 100*24*time.Hour {
				t.Errorf("post %q: dates moved by %v, want the clock's 100 days", a.Slug, b.at.Sub(a.at))
			}
		}
	})
	t.Run("posts", func(t *testing.T) {
		slugs := map[string]bool{}
		var smallest, largest, lists int
		for _, pp := range p.posts {
			if slugs[pp.Slug] {
				t.Errorf("duplicate slug %q", pp.Slug)
			}
			slugs[pp.Slug] = true
			n := len(pp.Body)
			if n < 1000 || n > 6144 {
				t.Errorf("post %q body is %d bytes, want 1 to 6 KB", pp.Slug, n)
			}
			if smallest == 0 || n < smallest {
				smallest = n
			}
			largest = max(largest, n)
			for _, want := range []string{"## ", "```"} {
				if !strings.Contains(pp.Body, want) {
					t.Errorf("post %q (%d bytes) has no %q", pp.Slug, n, want)
				}
			}
			if strings.Contains(pp.Body, "\n- ") || strings.Contains(pp.Body, "\n1. ") {
				lists++
			}
			switch {
			case pp.state == stateScheduled && !pp.at.After(now):
				t.Errorf("scheduled post %q at %v, want after %v", pp.Slug, pp.at, now)
			case pp.state == statePublished && !pp.at.Before(now):
				t.Errorf("published post %q at %v, want before %v", pp.Slug, pp.at, now)
			}
		}
		if lists < len(p.posts)*9/10 {
			t.Errorf("%d of %d posts have a list, want nearly all", lists, len(p.posts))
		}
		if smallest > 2000 || largest < 4500 {
			t.Errorf("bodies range from %d to %d bytes, want varied lengths between 1 and 6 KB", smallest, largest)
		}
	})
	t.Run("threads", func(t *testing.T) {
		for _, pp := range p.posts {
			if len(pp.threads) > 0 && pp.state != statePublished {
				t.Errorf("comments planned on %q, which readers cannot see", pp.Slug)
			}
			tops := map[string]bool{}
			for _, th := range pp.threads {
				if tops[th.body] {
					t.Errorf("post %q: comment %q planned twice; Seed could not tell them apart", pp.Slug, th.body)
				}
				tops[th.body] = true
				if th.authorID == pp.AuthorID || slices.Contains(pp.CoAuthors, th.authorID) {
					t.Errorf("post %q: one of its authors, %s, starts a thread", pp.Slug, th.authorID)
				}
				replies := map[string]bool{}
				for _, r := range th.replies {
					if replies[r.body] {
						t.Errorf("post %q: reply %q planned twice in a thread; Seed could not tell them apart", pp.Slug, r.body)
					}
					replies[r.body] = true
				}
			}
		}
	})
	t.Run("tags, co-authors, featured posts and the series", func(t *testing.T) {
		var coWrittenPosts, featured int
		at := map[string]time.Time{}
		for _, pp := range p.posts {
			if n := len(pp.Tags); n < 1 || n > 4 {
				t.Errorf("post %q has %d tags, want 1 to 4", pp.Slug, n)
			}
			if slices.Contains(coWritten, pp.Title) {
				coWrittenPosts++
				if n := len(pp.CoAuthors); n < 1 || n > maxCoAuthors || slices.Contains(pp.CoAuthors, pp.AuthorID) {
					t.Errorf("post %q by %s has co-authors %v, want 1 to %d others", pp.Slug, pp.AuthorID, pp.CoAuthors, maxCoAuthors)
				}
			}
			if pp.featured {
				featured++
				if pp.state != statePublished || pp.CoverImage == nil {
					t.Errorf("featured post %q is not published with a cover", pp.Slug)
				}
			}
			if pp.state == statePublished {
				at[pp.Slug] = pp.at
			}
		}
		if coWrittenPosts != len(coWritten) || featured != featuredCount {
			t.Errorf("%d posts co-written and %d featured, want %d and %d", coWrittenPosts, featured, len(coWritten), featuredCount)
		}
		if n := len(tagNames()); n < 6 || n > 16 {
			t.Errorf("%d tags, want a small set", n)
		}
		if n := len(p.inSeries); n < 3 || n > 5 {
			t.Errorf("the series has %d posts, want 3 to 5", n)
		}
		for i, slug := range p.inSeries {
			if at[slug].IsZero() {
				t.Errorf("series part %q is not published", slug)
			} else if i > 0 && at[slug].Before(at[p.inSeries[i-1]]) {
				t.Errorf("series part %q was published before the part before it", slug)
			}
		}
	})
}

// tagNames returns the names of the demo's tags.
func tagNames() []string {
	var names []string
	for _, t := range topics {
		names = append(names, t.tags...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func TestSlugify(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Error Wrapping in Go: errors.Is, errors.As and Friends", "error-wrapping-in-go-errors-is-errors-as-and-friends"},
		{"Generics in Go: Where They Pay Off and Where They Don't", "generics-in-go-where-they-pay-off-and-where-they-dont"},
		{"Structured Logging with log/slog in Practice", "structured-logging-with-log-slog-in-practice"},
		{"Container Images for Go in Under 20 MB", "container-images-for-go-in-under-20-mb"},
	}
	for _, tt := range tests {
		if got := slugify(tt.in); got != tt.want {
			t.Errorf("slugify(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// blog is what a reader and an editor can see of the whole blog.
type blog struct {
	stats      *storage.Stats
	authors    []*storage.Author
	categories []*storage.Category
	feed       []*storage.Post // visible posts, newest first
	scheduled  []*storage.Post // each once, whatever its authors
	drafts     []*storage.Post
	tags       []*storage.Tag
	featured   []*storage.Post
	series     *storage.Series
}

func snapshot(t *testing.T, store *storage.Store) blog {
	t.Helper()
	ctx := context.Background()
	var b blog
	var err error
	if b.stats, err = store.Stats(ctx); err != nil {
		t.Fatal(err)
	}
	b.authors = all(t, func(p storage.PageArgs) (*storage.Result[*storage.Author], error) { return store.Authors(ctx, p) })
	b.categories = all(t, func(p storage.PageArgs) (*storage.Result[*storage.Category], error) { return store.Categories(ctx, p) })
	b.feed = all(t, func(p storage.PageArgs) (*storage.Result[*storage.Post], error) {
		return store.LatestPosts(ctx, p, storage.Period{})
	})
	// The feed lists summaries: the posts with their bodies are read by id.
	ids := make([]string, len(b.feed))
	for i, p := range b.feed {
		ids[i] = p.ID
	}
	posts, errs := store.GetPosts(ctx, ids)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	b.feed = posts
	// A post with co-authors is on each of its authors' pages.
	seen := map[string]bool{}
	for _, a := range b.authors {
		for _, p := range all(t, func(p storage.PageArgs) (*storage.Result[*storage.Post], error) {
			return store.AuthorPosts(ctx, a.ID, p, storage.Period{}, true)
		}) {
			if !p.VisibleAt(store.Now()) && !seen[p.ID] {
				b.scheduled = append(b.scheduled, p)
				seen[p.ID] = true
			}
		}
		for _, p := range all(t, func(p storage.PageArgs) (*storage.Result[*storage.Post], error) {
			return store.AuthorDrafts(ctx, a.ID, p)
		}) {
			if !seen[p.ID] {
				b.drafts = append(b.drafts, p)
				seen[p.ID] = true
			}
		}
	}
	b.tags = all(t, func(p storage.PageArgs) (*storage.Result[*storage.Tag], error) { return store.Tags(ctx, p) })
	b.featured = all(t, func(p storage.PageArgs) (*storage.Result[*storage.Post], error) { return store.FeaturedPosts(ctx, p) })
	if b.series, err = store.GetSeries(ctx, demoSeries.Slug); err != nil {
		t.Fatal(err)
	}
	return b
}

// all reads every page of a list, 20 items at a time.
func all[T any](t *testing.T, list func(storage.PageArgs) (*storage.Result[T], error)) []T {
	t.Helper()
	var out []T
	p := storage.PageArgs{Limit: 20}
	for {
		res, err := list(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res.Items...)
		if !res.HasNext {
			return out
		}
		p.After = res.Cursors[len(res.Cursors)-1]
	}
}
