package demo

import (
	"context"
	"reflect"
	"strings"
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
// failure). The store and the engine share the clock that reads now.
func testStore(t *testing.T) *storage.Store {
	t.Helper()
	ctx := context.Background()
	clock := dynamotest.NewClock(now)
	client, err := storage.NewClient(ctx, dynamotest.ClientConfig(t, clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	store := storage.New(client, dynamotest.Table(t, client, "demo-test"), storage.WithClock(clock.Now))
	if err := store.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	return store
}

func TestSeed(t *testing.T) {
	store := testStore(t)
	ctx := context.Background()
	start := time.Now()
	if err := Seed(ctx, store, now); err != nil {
		t.Fatalf("Seed: %v", err)
	}
	t.Logf("seeded in %v", time.Since(start))

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
		top, err := store.Comments(ctx, first.feed[0].ID, storage.Page{Limit: 100})
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
		top, err := store.Comments(ctx, newest.ID, storage.Page{Limit: 100})
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
		queue, err := store.ModerationQueue(ctx, "", storage.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(queue.Items) != 1 || queue.Items[0].ReaderID != Reader.ID || queue.Items[0].PostID != newest.ID ||
			queue.Items[0].Status != storage.CommentPending {
			t.Errorf("moderation queue = %+v, want the reader's pending comment on %q", queue.Items, newest.Slug)
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
		start := time.Now()
		if err := Seed(ctx, store, now.Add(24*time.Hour)); err != nil {
			t.Fatalf("second Seed: %v", err)
		}
		t.Logf("second seed in %v", time.Since(start))
		if second := snapshot(t, store); !reflect.DeepEqual(first, second) {
			t.Errorf("second Seed changed the blog:\nbefore %+v\nafter  %+v", first, second)
		}
	})
}

// TestSeedCompletesAnInterruptedRun seeds a table that holds part of the
// demo blog, as a run cut short would leave it.
func TestSeedCompletesAnInterruptedRun(t *testing.T) {
	store := testStore(t)
	ctx := context.Background()
	p := newPlan(now)
	if _, err := store.CreateAuthor(ctx, p.authors[0]); err != nil {
		t.Fatal(err)
	}
	if err := seedCategories(ctx, store, p.categories); err != nil {
		t.Fatal(err)
	}
	// A post that should be published, left as a draft.
	pp := p.posts[len(p.posts)-scheduledCount-1]
	for _, a := range p.authors {
		if a.ID == pp.AuthorID && a.ID != p.authors[0].ID {
			if _, err := store.CreateAuthor(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := store.CreatePost(ctx, pp.NewPost); err != nil {
		t.Fatal(err)
	}

	if err := Seed(ctx, store, now); err != nil {
		t.Fatalf("Seed: %v", err)
	}
	got := snapshot(t, store)
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
				if th.authorID == pp.AuthorID {
					t.Errorf("post %q: its author starts a thread", pp.Slug)
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
	scheduled  []*storage.Post
	drafts     []*storage.Post
}

func snapshot(t *testing.T, store *storage.Store) blog {
	t.Helper()
	ctx := context.Background()
	var b blog
	var err error
	if b.stats, err = store.Stats(ctx); err != nil {
		t.Fatal(err)
	}
	b.authors = all(t, func(p storage.Page) (*storage.Result[*storage.Author], error) { return store.Authors(ctx, p) })
	b.categories = all(t, func(p storage.Page) (*storage.Result[*storage.Category], error) { return store.Categories(ctx, p) })
	b.feed = all(t, func(p storage.Page) (*storage.Result[*storage.Post], error) {
		return store.LatestPosts(ctx, p, storage.Period{})
	})
	for _, a := range b.authors {
		for _, p := range all(t, func(p storage.Page) (*storage.Result[*storage.Post], error) {
			return store.AuthorPosts(ctx, a.ID, p, storage.Period{}, true)
		}) {
			if !p.VisibleAt(store.Now()) {
				b.scheduled = append(b.scheduled, p)
			}
		}
		b.drafts = append(b.drafts, all(t, func(p storage.Page) (*storage.Result[*storage.Post], error) {
			return store.AuthorDrafts(ctx, a.ID, p)
		})...)
	}
	return b
}

// all reads every page of a list, 20 items at a time.
func all[T any](t *testing.T, list func(storage.Page) (*storage.Result[T], error)) []T {
	t.Helper()
	var out []T
	p := storage.Page{Limit: 20}
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
