package tests

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/webhooks"
)

// Every public answer is purgeable: it carries, in Surrogate-Key and
// Cache-Tag, a tag that the webhook delivery of each write changing it
// names in its cacheTags, so that a CDN purged by the deliveries never
// keeps it past such a write.

// eventTap holds the change feed's events as a searchServer's tap gets
// them.
type eventTap chan storage.LoggedEvent

func (c eventTap) tap(evs []storage.LoggedEvent) {
	for _, e := range evs {
		c <- e
	}
}

// await returns the first event from now on that match accepts. Every
// event it passes that names cache tags must name a section
// (frontend.EverySection), which the live cursor's answer carries.
func (c eventTap) await(t *testing.T, what string, match func(storage.LoggedEvent) bool) storage.LoggedEvent {
	t.Helper()
	deadline := time.After(time.Minute) // a guard against a hang, not a measure
	for {
		select {
		case e := <-c:
			tags := e.Data.CacheTags
			if len(tags) > 0 && !slices.ContainsFunc(tags, func(tag string) bool { return slices.Contains(frontend.EverySection, tag) }) {
				t.Errorf("%s names no section: %q", e.Type, tags)
			}
			if match(e) {
				return e
			}
		case <-deadline:
			t.Fatalf("no event of %s", what)
		}
	}
}

// getWith sends query with variables over GET, anonymously, and returns
// the answer and its body, failing the test unless it answered without
// errors.
func (s *searchServer) getWith(t *testing.T, query string, vars map[string]any) (*http.Response, string) {
	t.Helper()
	v, _ := json.Marshal(vars)
	if vars == nil {
		v = []byte("{}")
	}
	resp, err := http.Get(s.url + "?" + url.Values{"query": {query}, "variables": {string(v)}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || strings.Contains(string(body), `"errors"`) {
		t.Fatalf("%s: status %d, %s (%v)", query, resp.StatusCode, body, err)
	}
	return resp, string(body)
}

// deliveredTags returns the cacheTags of e's webhook delivery, failing
// the test when webhooks do not send e.
func deliveredTags(t *testing.T, e storage.LoggedEvent) []string {
	t.Helper()
	if !webhooks.Public(e.Event) {
		t.Fatalf("%s is not sent to webhooks", e.Type)
	}
	b, err := webhooks.Body(e.Event)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Data struct {
			CacheTags []string `json:"cacheTags"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return p.Data.CacheTags
}

// purgeCase is a query with its variables, a write that changes its
// answer, and what the write's event is.
type purgeCase struct {
	name, query string
	vars        map[string]any
	write       func(t *testing.T)
	event       func(storage.LoggedEvent) bool
}

// TestEveryPublicAnswerIsPurgedByTheWritesThatChangeIt sends each query
// of the TypeScript client, and the queries a frontend adds to them
// (liveCursor with a page, related posts, the lists of all of a kind),
// over GET as a CDN sees them, makes a write that changes the answer, and
// checks that the answer was public, for shared caches, with tags in its
// headers of which the write's webhook delivery names one, and that the
// answer did change. A preview, for its token's holder alone, is kept by
// no cache.
func TestEveryPublicAnswerIsPurgedByTheWritesThatChangeIt(t *testing.T) {
	events := make(eventTap, 4096)
	s := newSearchServerWith(t, func(s *searchServer) {
		s.http.CacheMaxAge, s.http.CacheSMaxAge = time.Minute, time.Hour
		s.tap = events.tap
	})
	ctx := context.Background()
	ops := tsOperations(t)
	ada, adaID := s.writer()
	compost := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{
		Title: "Making compost", Slug: "compost", Body: ptr("Compost heaps need greens, browns and air."),
		Categories: []string{"garden"}, Tags: []string{"Soil"},
	})).CreatePost.Post.Id
	ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: compost}))
	bins := s.publish(ada, "compost-bins", "Compost bins compared", "Which compost bin turns greens into compost fastest.", "garden")
	ok[*CreateSeriesResponse](t)(CreateSeries(ctx, ada, CreateSeriesInput{Slug: "composting", Title: "Composting"}))
	for _, p := range []string{compost, bins} {
		ok[*AddPostToSeriesResponse](t)(AddPostToSeries(ctx, ada, AddPostToSeriesInput{SeriesSlug: "composting", PostId: p}))
	}
	about := ok[*CreatePageResponse](t)(CreatePage(ctx, s.admin, CreatePageInput{Title: "About", Slug: "about", Body: ptr("Us.")})).CreatePage.Page
	aboutVersion := ok[*PublishPageResponse](t)(PublishPage(ctx, s.admin, PublishPageInput{Id: about.Id})).PublishPage.Page.Version
	draft := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Draft", Slug: "draft"})).CreatePost.Post.Id
	preview := ok[*CreatePreviewLinkResponse](t)(CreatePreviewLink(ctx, ada, CreatePreviewLinkInput{PostId: draft, ExpiresIn: ptr(3600)})).CreatePreviewLink.Token
	s.waitFound(t, "compost", "compost", "compost-bins")
	month := time.Now().UTC()
	monthStart := time.Date(month.Year(), month.Month(), 1, 0, 0, 0, 0, time.UTC)

	published := func(slug string) func(storage.LoggedEvent) bool {
		return func(e storage.LoggedEvent) bool { return e.Type == storage.EventPostPublished && e.Data.Slug == slug }
	}
	publishes := func(slug, title string, cats ...string) func(t *testing.T) {
		return func(t *testing.T) { s.publish(ada, slug, title, "Greens and browns for the compost heap.", cats...) }
	}
	comments := func(t *testing.T) {
		ok[*AddCommentResponse](t)(AddComment(ctx, ada, AddCommentInput{PostId: compost, Body: "Turn it weekly."}))
	}
	commented := func(e storage.LoggedEvent) bool {
		return e.Type == storage.EventCommentAdded && e.Data.PostID == rawID(t, compost, "Post")
	}
	seriesChanged := func(e storage.LoggedEvent) bool {
		return e.Type == storage.EventSeriesUpdated && e.Data.Slug == "composting"
	}
	const postWithLiveCursor = `query PostWithComments($slug: String!) {
  liveCursor
  post(slug: $slug) { id title comments(first: 50) { edges { node { id body } } } }
}`
	cases := []purgeCase{
		{"CategoryPage", ops["CategoryPage"], map[string]any{"slug": "garden", "first": 20}, publishes("leaves", "Leaf mould", "garden"), published("leaves")},
		{"SearchPage", ops["SearchPage"], map[string]any{"query": "compost", "first": 10}, publishes("compost-tea", "Compost tea", "kitchen"), published("compost-tea")},
		{"PostPage", ops["PostPage"], map[string]any{"slug": "compost"}, comments, commented},
		{"AuthorPage", ops["AuthorPage"], map[string]any{"slug": "ada", "first": 20}, func(t *testing.T) {
			ok[*UpdateAuthorResponse](t)(UpdateAuthor(ctx, s.admin, UpdateAuthorInput{Id: adaID, Bio: ptr("Gardens.")}))
		}, func(e storage.LoggedEvent) bool { return e.Type == storage.EventAuthorUpdated }},
		{"MonthArchive", ops["MonthArchive"], map[string]any{
			"publishedAfter": monthStart.Format(time.RFC3339), "publishedBefore": monthStart.AddDate(0, 1, 0).Format(time.RFC3339), "first": 20,
		}, publishes("mulch", "Mulching beds"), published("mulch")},
		{"LiveCursor", ops["LiveCursor"], nil, comments, commented},
		{"HomePage", ops["HomePage"], map[string]any{"featured": 3, "first": 20}, func(t *testing.T) {
			ok[*SetPostFeaturedResponse](t)(SetPostFeatured(ctx, ada, SetPostFeaturedInput{Id: bins, Featured: true}))
		}, func(e storage.LoggedEvent) bool {
			return e.Type == storage.EventPostEdited && e.Data.Slug == "compost-bins"
		}},
		{"StaticPage", ops["StaticPage"], map[string]any{"slug": "about"}, func(t *testing.T) {
			ok[*UpdatePageResponse](t)(UpdatePage(ctx, s.admin, UpdatePageInput{Id: about.Id, ExpectedVersion: aboutVersion, Title: ptr("About us")}))
		}, func(e storage.LoggedEvent) bool { return e.Type == storage.EventPageEdited && e.Data.Slug == "about" }},
		{"TagPage", ops["TagPage"], map[string]any{"slug": "soil", "first": 20}, func(t *testing.T) {
			p := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Loam", Slug: "loam", Tags: []string{"Soil"}})).CreatePost.Post.Id
			ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: p}))
		}, published("loam")},
		{"SeriesPage", ops["SeriesPage"], map[string]any{"slug": "composting", "first": 20}, func(t *testing.T) {
			ok[*MoveSeriesPostResponse](t)(MoveSeriesPost(ctx, ada, MoveSeriesPostInput{SeriesSlug: "composting", PostId: bins, Position: 1}))
		}, seriesChanged},
		{"PostSeries", ops["PostSeries"], map[string]any{"slug": "compost"}, func(t *testing.T) {
			ok[*MoveSeriesPostResponse](t)(MoveSeriesPost(ctx, ada, MoveSeriesPostInput{SeriesSlug: "composting", PostId: bins, Position: 2}))
		}, seriesChanged},
		{"NumberedCategoryPage", ops["NumberedCategoryPage"], map[string]any{"slug": "garden", "number": 1}, publishes("humus", "Humus", "garden"), published("humus")},
		{"NumberedAuthorPage", ops["NumberedAuthorPage"], map[string]any{"slug": "ada", "number": 1}, publishes("bark", "Bark chips"), published("bark")},
		{"NumberedMonthPage", ops["NumberedMonthPage"], map[string]any{"month": monthStart.Format("2006-01"), "number": 1}, publishes("straw", "Straw"), published("straw")},
		{"NumberedSeriesPage", ops["NumberedSeriesPage"], map[string]any{"slug": "composting", "number": 1}, func(t *testing.T) {
			ok[*MoveSeriesPostResponse](t)(MoveSeriesPost(ctx, ada, MoveSeriesPostInput{SeriesSlug: "composting", PostId: bins, Position: 1}))
		}, seriesChanged},
		{"a post page with the live cursor", postWithLiveCursor, map[string]any{"slug": "compost"}, comments, commented},
		{"related posts", `{ post(slug: "compost") { title related { title } } }`, nil, publishes("compost-heap", "Compost heap", "garden"), published("compost-heap")},
		{"the list of all categories", `{ categories { slug name } }`, nil, func(t *testing.T) {
			ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: "shed", Name: "Shed"}))
		}, func(e storage.LoggedEvent) bool {
			return e.Type == storage.EventCategoryUpdated && e.Data.Slug == "shed"
		}},
		{"the list of all authors", `{ authors(first: 20) { edges { node { name } } } }`, nil, func(t *testing.T) {
			ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("bob"), Name: "Bob", Slug: ptr("bob")}))
		}, func(e storage.LoggedEvent) bool { return e.Type == storage.EventAuthorUpdated && e.Data.Slug == "bob" }},
		{"the list of all tags", `{ tags(first: 20) { edges { node { slug postCount } } } }`, nil, func(t *testing.T) {
			p := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Shovels", Slug: "shovels", Tags: []string{"Tools"}})).CreatePost.Post.Id
			ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: p}))
		}, published("shovels")},
		{"the list of all series", `{ allSeries(first: 20) { edges { node { slug title } } } }`, nil, func(t *testing.T) {
			ok[*CreateSeriesResponse](t)(CreateSeries(ctx, ada, CreateSeriesInput{Slug: "pruning", Title: "Pruning"}))
		}, func(e storage.LoggedEvent) bool {
			return e.Type == storage.EventSeriesUpdated && e.Data.Slug == "pruning"
		}},
		{"the list of all pages", `{ pages(first: 20) { edges { node { slug title } } } }`, nil, func(t *testing.T) {
			p := ok[*CreatePageResponse](t)(CreatePage(ctx, s.admin, CreatePageInput{Title: "Contact", Slug: "contact"})).CreatePage.Page
			ok[*PublishPageResponse](t)(PublishPage(ctx, s.admin, PublishPageInput{Id: p.Id}))
		}, func(e storage.LoggedEvent) bool {
			return e.Type == storage.EventPagePublished && e.Data.Slug == "contact"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.query == "" {
				t.Fatalf("no operation %s in the TypeScript client", c.name)
			}
			before, body := s.getWith(t, c.query, c.vars)
			c.write(t)
			e := events.await(t, c.name, c.event)
			cc := before.Header.Get("Cache-Control")
			keys := strings.Fields(before.Header.Get(gqlhttp.SurrogateKeyHeader))
			if !strings.HasPrefix(cc, "public") || !strings.Contains(cc, "s-maxage") || len(keys) == 0 {
				t.Fatalf("Cache-Control %q with Surrogate-Key %q: want it public, for shared caches, and tagged", cc, keys)
			}
			equal(t, "Cache-Tag", before.Header.Get(gqlhttp.CacheTagHeader), strings.Join(keys, ","))
			purged := deliveredTags(t, e)
			if !slices.ContainsFunc(purged, func(tag string) bool { return slices.Contains(keys, tag) }) {
				t.Errorf("Surrogate-Key %q: the delivery of %s names none of them (%q)", keys, e.Type, purged)
			}
			// The write changed the answer (a search's once the index
			// applied it).
			deadline := time.Now().Add(waitLimit)
			for {
				if _, now := s.getWith(t, c.query, c.vars); now != body {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the answer did not change after %s: %s", e.Type, body)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
	t.Run("PreviewPage is kept by no cache", func(t *testing.T) {
		a, _ := s.getWith(t, ops["PreviewPage"], map[string]any{"token": preview})
		equal(t, "Cache-Control", a.Header.Get("Cache-Control"), "no-store")
		equal(t, "Surrogate-Key", a.Header.Get(gqlhttp.SurrogateKeyHeader), "")
	})
	for name := range ops {
		if !strings.HasPrefix(strings.TrimSpace(ops[name]), "query") {
			continue
		}
		if name != "PreviewPage" && !slices.ContainsFunc(cases, func(c purgeCase) bool { return c.name == name }) {
			t.Errorf("the TypeScript client's %s has no case", name)
		}
	}
}

// TestLiveCursorWithAPageIsKeptInMemoryUntilTheNextEvent reads a post
// page with liveCursor, as docs/live.md asks, from a server that keeps
// answers in memory: the answer is kept (X-Cache HIT, its cursor with
// it), and dropped at the next event, here a comment on another post,
// which names none of the page's tags, so that no server answers a
// cursor older than the last event it applied.
func TestLiveCursorWithAPageIsKeptInMemoryUntilTheNextEvent(t *testing.T) {
	events := make(eventTap, 4096)
	s := newSearchServerWith(t, func(s *searchServer) {
		s.http.Answers = gqlhttp.NewAnswerCache(0, nil)
		s.tap = events.tap
	})
	ctx := context.Background()
	ada, _ := s.writer()
	s.publish(ada, "compost", "Making compost", "Greens and browns.", "garden")
	other := s.publish(ada, "mulch", "Mulching beds", "Mulch keeps beds moist.", "garden")
	events.await(t, "the last publication", func(e storage.LoggedEvent) bool {
		return e.Type == storage.EventPostPublished && e.Data.Slug == "mulch"
	})
	const query = `query PostWithComments($slug: String!) { liveCursor post(slug: $slug) { id title } }`
	// The workers that follow a publication (counts, numbered pages)
	// log events of their own a moment later, each a new cursor: the
	// page is a HIT once they are done.
	first := s.postAnswer(t, query, `{"slug":"compost"}`)
	for deadline := time.Now().Add(waitLimit); ; {
		again := s.postAnswer(t, query, `{"slug":"compost"}`)
		if again.Header.Get(gqlhttp.AnswerCacheHeader) == "HIT" {
			equal(t, "body", again.body, first.body)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page with its cursor is never a HIT (X-Cache %s)", again.Header.Get(gqlhttp.AnswerCacheHeader))
		}
		first = again
		time.Sleep(10 * time.Millisecond)
	}

	ok[*AddCommentResponse](t)(AddComment(ctx, ada, AddCommentInput{PostId: other, Body: "Nice."}))
	events.await(t, "the comment", func(e storage.LoggedEvent) bool { return e.Type == storage.EventCommentAdded })
	// The tap and the answer cache get the event in either order: wait
	// for the cache's.
	deadline := time.Now().Add(waitLimit)
	for {
		a := s.postAnswer(t, query, `{"slug":"compost"}`)
		if a.body != first.body {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page still answers the cursor before the comment (X-Cache %s)", a.Header.Get(gqlhttp.AnswerCacheHeader))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
