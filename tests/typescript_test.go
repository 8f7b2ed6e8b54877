package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// The TypeScript client's pages (clients/typescript/src/pages.ts) send the
// documents of clients/typescript/src/operations.ts. CI type-checks the
// pages against the client generated from the schema; these tests send
// the same documents, with the variables the pages give them, to the
// server on each backend, and check what the pages read from the answers
// and what the answers cost.

var (
	tsDocument = regexp.MustCompile("graphql\\(`([^`]*)`\\)")
	tsOpName   = regexp.MustCompile(`^\s*(?:query|mutation|subscription)\s+(\w+)`)
	tsFragName = regexp.MustCompile(`^\s*fragment\s+(\w+)\s+on`)
	tsSpread   = regexp.MustCompile(`\.\.\.(\w+)`)
)

// tsOperations returns the operations of the TypeScript client by name,
// each with the fragments it uses, as the generated client sends them.
func tsOperations(t *testing.T) map[string]string {
	t.Helper()
	src, err := os.ReadFile("../clients/typescript/src/operations.ts")
	if err != nil {
		t.Fatal(err)
	}
	fragments, ops := map[string]string{}, map[string]string{}
	for _, m := range tsDocument.FindAllStringSubmatch(string(src), -1) {
		doc := m[1]
		if f := tsFragName.FindStringSubmatch(doc); f != nil {
			fragments[f[1]] = doc
		} else if o := tsOpName.FindStringSubmatch(doc); o != nil {
			ops[o[1]] = doc
		}
	}
	for name, doc := range ops {
		used := map[string]bool{}
		var add func(string)
		add = func(d string) {
			for _, s := range tsSpread.FindAllStringSubmatch(d, -1) {
				if f, ok := fragments[s[1]]; ok && !used[s[1]] {
					used[s[1]] = true
					doc += "\n" + f
					add(f)
				}
			}
		}
		add(doc)
		ops[name] = doc
	}
	if len(ops) < 7 {
		t.Fatalf("found %d operations in operations.ts", len(ops))
	}
	return ops
}

// answer is a decoded GraphQL answer, read by path ("post.toc.0.anchor").
type answer struct {
	t    *testing.T
	data any
}

func (a answer) get(path string) any {
	a.t.Helper()
	var v any = a.data
	for _, p := range strings.Split(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			v = c[p]
		case []any:
			i := 0
			for _, r := range p {
				i = i*10 + int(r-'0')
			}
			if i >= len(c) {
				a.t.Fatalf("%s: index %d of %d", path, i, len(c))
			}
			v = c[i]
		default:
			a.t.Fatalf("%s: no %q in %v", path, p, v)
		}
	}
	return v
}

func (a answer) str(path string) string {
	a.t.Helper()
	s, _ := a.get(path).(string)
	return s
}

func (a answer) num(path string) int {
	a.t.Helper()
	n, _ := a.get(path).(float64)
	return int(n)
}

func (a answer) len(path string) int {
	a.t.Helper()
	l, _ := a.get(path).([]any)
	return len(l)
}

// sendTS sends the operation as the TypeScript client's request does
// (clients/typescript/src/client.ts), as the signed-in user of token when
// it is not empty, and fails the test on any error in the answer. A
// mutation is a POST. A query is a GET with an automatic persisted query:
// its hash alone, then, when the server does not know it
// (PERSISTED_QUERY_NOT_FOUND, no-store), the query with its hash, which
// registers it. The harness then sends the hash alone once more, as the
// client's next visit does, so that the DynamoDB requests counted
// (s.requests) are the page's, once its query is known
// (TestPersistedQueriesAreKeptInTheTable counts a registration's). An
// anonymous query's answer must be public when the server sets a max age
// (but for a preview, which is the preview token's holder's only).
func (s *server) sendTS(t *testing.T, doc string, vars map[string]any, token string) answer {
	t.Helper()
	return s.sendTSCached(t, doc, vars, token, "public")
}

// sendTSCached is sendTS for an anonymous query whose answer is
// cacheControl ("public" or "private") when the server sets a max age.
func (s *server) sendTSCached(t *testing.T, doc string, vars map[string]any, token, cacheControl string) answer {
	t.Helper()
	headers := map[string]string{"Accept": "application/graphql-response+json, application/json"}
	if token != "" {
		headers["Authorization"] = "Bearer " + token
	}
	var r httpAnswer
	if strings.HasPrefix(strings.TrimSpace(doc), "query") {
		rawVars, _ := json.Marshal(vars)
		if vars == nil {
			rawVars = []byte("{}")
		}
		ext := `{"persistedQuery":{"version":1,"sha256Hash":"` + hashOf(doc) + `"}}`
		byHash := s.url + "?" + url.Values{"variables": {string(rawVars)}, "extensions": {ext}}.Encode()
		r = s.fetch(t, http.MethodGet, byHash, "", headers)
		if strings.Contains(r.body, `"PERSISTED_QUERY_NOT_FOUND"`) {
			equal(t, "an unknown hash's Cache-Control", r.header.Get("Cache-Control"), "no-store")
			withQuery := s.url + "?" + url.Values{"variables": {string(rawVars)}, "extensions": {ext}, "query": {doc}}.Encode()
			if reg := s.fetch(t, http.MethodGet, withQuery, "", headers); reg.status != http.StatusOK || strings.Contains(reg.body, `"errors"`) {
				t.Fatalf("registration: status %d, answer %s", reg.status, reg.body)
			}
			r = s.fetch(t, http.MethodGet, byHash, "", headers)
		}
		if s.opts.HTTP.CacheMaxAge > 0 {
			want := fmt.Sprintf("%s, max-age=%d", cacheControl, int(s.opts.HTTP.CacheMaxAge.Seconds()))
			if token != "" || vars["token"] != nil {
				want = "no-store"
			}
			equal(t, "Cache-Control", r.header.Get("Cache-Control"), want)
		}
	} else {
		body, _ := json.Marshal(map[string]any{"query": doc, "variables": vars})
		headers["Content-Type"] = "application/json"
		r = s.fetch(t, http.MethodPost, s.url, string(body), headers)
		equal(t, "a mutation's Cache-Control", r.header.Get("Cache-Control"), "no-store")
	}
	var out struct {
		Data   any
		Errors []struct{ Message string }
	}
	if err := json.Unmarshal([]byte(r.body), &out); err != nil || len(out.Errors) > 0 || r.status != http.StatusOK {
		t.Fatalf("status %d, answer %s", r.status, r.body)
	}
	return answer{t, out.Data}
}

// cacheable makes newServer's answers to anonymous GET queries public for a
// minute, as a production server's are.
func cacheable(_ *storage.ClientConfig, o *graph.HandlerOptions) { o.HTTP.CacheMaxAge = time.Minute }

func TestTypeScriptPages(t *testing.T) {
	s := newServer(t, cacheable)
	b := s.seedBlog(t)
	ctx := context.Background()
	ops := tsOperations(t)
	ada := s.signed(s.claims("ada", auth.RoleAuthor))
	cover := &ImageInput{Url: "https://img.example.com/tour.png", Alt: ptr("The tour"), Width: ptr(1200), Height: ptr(630)}
	body := "Welcome to the tour.\n\n## First stop\n\nText.\n\n## Second stop\n\nMore text."
	tour := ok[*CreatePostResponse](t)(CreatePost(ctx, b.writers[0], CreatePostInput{
		Title: "The tour", Slug: "the-tour", Body: &body, CoverImage: cover, Categories: []string{"go"},
	})).CreatePost.Post

	t.Run("publish", func(t *testing.T) {
		at := start.Add(-30 * time.Minute).Format(time.RFC3339)
		a := s.sendTS(t, ops["PublishPost"], map[string]any{"input": map[string]any{"id": tour.Id, "expectedVersion": 1, "at": at}}, ada)
		equal(t, "status", a.str("publishPost.post.status"), "PUBLISHED")
	})

	t.Run("category page, both ways", func(t *testing.T) {
		first := s.sendTS(t, ops["CategoryPage"], map[string]any{"slug": "go", "first": 20, "after": nil}, "")
		equal(t, "category page requests", total(s.requests()), 2)
		equal(t, "newest", first.str("category.posts.edges.0.node.slug"), "the-tour")
		equal(t, "cover in the listing", first.str("category.posts.edges.0.node.coverImage.url"), cover.Url)
		equal(t, "byline link", first.str("category.posts.edges.0.node.author.slug"), "ada-lovelace")
		older := s.sendTS(t, ops["CategoryPage"], map[string]any{"slug": "go", "first": 20, "after": first.str("category.posts.pageInfo.endCursor")}, "")
		equal(t, "older page", older.len("category.posts.edges"), 6)
		equal(t, "it has newer posts", older.get("category.posts.pageInfo.hasPreviousPage"), any(true))
		newer := s.sendTS(t, ops["CategoryPage"], map[string]any{"slug": "go", "last": 20, "before": older.str("category.posts.pageInfo.startCursor")}, "")
		equal(t, "back to the first page", newer.str("category.posts.edges.0.node.slug"), "the-tour")
		equal(t, "nothing newer", newer.get("category.posts.pageInfo.hasPreviousPage"), any(false))
		equal(t, "backward page requests", total(s.requests()), 2)
	})

	t.Run("post page: html, toc, cover, previous and next", func(t *testing.T) {
		a := s.sendTS(t, ops["PostPage"], map[string]any{"slug": "the-tour"}, "")
		// The post by its slug, its comments (none), previous and next.
		equal(t, "post page requests", total(s.requests()), 2+1+1+1)
		equal(t, "toc", a.str("post.toc.1.anchor"), "h-second-stop")
		if !strings.Contains(a.str("post.bodyHtml"), `<h2 id="h-second-stop">Second stop</h2>`) {
			t.Errorf("html %s", a.str("post.bodyHtml"))
		}
		equal(t, "og image from the cover", a.str("post.seo.ogImage"), cover.Url)
		equal(t, "previous", a.str("post.previous.slug"), "post-24")
		equal(t, "no next yet", a.get("post.next"), nil)
		equal(t, "reading time", a.num("post.readingTimeMinutes"), 1)
		ok[*UpdatePostResponse](t)(UpdatePost(ctx, b.writers[0], UpdatePostInput{Id: tour.Id, ExpectedVersion: 2, Slug: ptr("grand-tour")}))
		old := s.sendTS(t, ops["PostPage"], map[string]any{"slug": "the-tour"}, "")
		equal(t, "an old slug answers with the new one to redirect to", old.str("post.slug"), "grand-tour")
		commented := s.sendTS(t, ops["PostPage"], map[string]any{"slug": b.commented}, "")
		equal(t, "threads", commented.len("post.comments.edges"), 6)
		equal(t, "replies", commented.len("post.comments.edges.0.node.replyConnection.edges"), 1)
		// The post page with the first replies of each thread and who
		// wrote them (4: comments carry their first replies), previous
		// and next.
		equal(t, "commented post page requests", total(s.requests()), 4+1+1)
	})

	t.Run("static page with the navigation", func(t *testing.T) {
		about := ok[*CreatePageResponse](t)(CreatePage(ctx, s.admin, CreatePageInput{Title: "About", Slug: "about", Body: ptr("# About\n\n## Who\n\nUs.")})).CreatePage.Page
		ok[*PublishPageResponse](t)(PublishPage(ctx, s.admin, PublishPageInput{Id: about.Id}))
		team := ok[*CreatePageResponse](t)(CreatePage(ctx, s.admin, CreatePageInput{Title: "Team", Slug: "team", ParentId: &about.Id, Order: ptr(1)})).CreatePage.Page
		ok[*PublishPageResponse](t)(PublishPage(ctx, s.admin, PublishPageInput{Id: team.Id}))
		ok[*SiteResponse](t)(Site(ctx, s.client)) // the server holds the settings from here on
		a := s.sendTS(t, ops["StaticPage"], map[string]any{"slug": "about"}, "")
		// The page by slug (2) and the pages for the navigation (1); the
		// site's settings are held by the server.
		equal(t, "static page requests", total(s.requests()), 3)
		equal(t, "toc", a.str("page.toc.1.anchor"), "h-who")
		equal(t, "nav pages", a.len("pages.edges"), 2)
		equal(t, "team under about", a.str("pages.edges.1.node.parentId"), about.Id)
		equal(t, "no menu yet", a.len("site.menus"), 0)
		ok[*UpdateSiteResponse](t)(UpdateSite(ctx, s.admin, UpdateSiteInput{ExpectedVersion: 0, Title: ptr("Notes"), Menus: []MenuInput{{Name: "main", Items: []MenuItemInput{
			{Label: "About", Kind: MenuLinkKindPage, Slug: ptr("about")}, {Label: "Go", Kind: MenuLinkKindCategory, Slug: ptr("go")},
		}}}}))
		a = s.sendTS(t, ops["StaticPage"], map[string]any{"slug": "about"}, "")
		equal(t, "site title", a.str("site.title"), "Notes")
		equal(t, "menu path", a.str("site.menus.0.items.1.path"), "/categories/go")
		equal(t, "requests with a menu", total(s.requests()), 3)
	})

	t.Run("author page by slug", func(t *testing.T) {
		a := s.sendTS(t, ops["AuthorPage"], map[string]any{"slug": "ada-lovelace", "first": 20, "after": nil}, "")
		equal(t, "author page requests", total(s.requests()), 3)
		equal(t, "slug", a.str("author.slug"), "ada-lovelace")
		equal(t, "months", a.len("author.archive"), 2)
		equal(t, "march", a.num("author.archive.0.postCount"), 7)
		ok[*UpdateAuthorResponse](t)(UpdateAuthor(ctx, b.writers[0], UpdateAuthorInput{Id: b.authors[0], Slug: ptr("ada")}))
		// Found by an old slug, which another author may take over: no
		// event of this one's would purge a shared cache's copy.
		old := s.sendTSCached(t, ops["AuthorPage"], map[string]any{"slug": "ada-lovelace", "first": 20, "after": nil}, "", "private")
		equal(t, "old slug: redirect to", old.str("author.slug"), "ada")
	})

	t.Run("tag page with a co-authored byline", func(t *testing.T) {
		together := ok[*CreatePostResponse](t)(CreatePost(ctx, b.writers[1], CreatePostInput{
			Title: "Together", Slug: "together", CoAuthors: []string{b.authors[0], b.authors[2]}, Tags: []string{"Pair programming"},
		})).CreatePost.Post
		at := start.Add(-20 * time.Minute)
		ok[*PublishPostResponse](t)(PublishPost(ctx, b.writers[1], PublishPostInput{Id: together.Id, At: &at}))
		s.requests()
		a := s.sendTS(t, ops["TagPage"], map[string]any{"slug": "pair-programming", "first": 20, "after": nil}, "")
		equal(t, "tag page requests", total(s.requests()), 2)
		equal(t, "tag", a.str("tag.name"), "Pair programming")
		equal(t, "totalCount", a.num("tag.posts.totalCount"), 1)
		equal(t, "primary author", a.str("tag.posts.edges.0.node.authors.0.name"), "Grace Hopper")
		equal(t, "co-author, with the slug ada took above", a.str("tag.posts.edges.0.node.authors.1.slug"), "ada")
		equal(t, "authors", a.len("tag.posts.edges.0.node.authors"), 3)
		back := s.sendTS(t, ops["TagPage"], map[string]any{"slug": "pair-programming", "last": 20, "before": nil}, "")
		equal(t, "backward", back.str("tag.posts.edges.0.node.slug"), "together")
		equal(t, "backward tag page requests", total(s.requests()), 2)
		// The co-author's page lists it, byline and tags with it.
		alan := s.sendTS(t, ops["AuthorPage"], map[string]any{"slug": "alan-turing", "first": 20, "after": nil}, "")
		equal(t, "co-author's page", alan.str("author.posts.edges.0.node.slug"), "together")
		equal(t, "its tag there", alan.str("author.posts.edges.0.node.tags.0.slug"), "pair-programming")
		equal(t, "co-author's page requests", total(s.requests()), 3)
	})

	t.Run("month archive", func(t *testing.T) {
		a := s.sendTS(t, ops["MonthArchive"], map[string]any{
			"publishedAfter": "2026-02-01T00:00:00.000Z", "publishedBefore": "2026-03-01T00:00:00.000Z", "first": 20, "after": nil,
		}, "")
		equal(t, "month archive requests", total(s.requests()), 2)
		equal(t, "months", a.len("archive"), 2)
		equal(t, "february", a.num("posts.totalCount"), 13)
		equal(t, "page", a.len("posts.edges"), 13)
		equal(t, "oldest of february last", a.str("posts.edges.12.node.slug"), "post-0")
	})

	t.Run("preview page", func(t *testing.T) {
		link := s.sendTS(t, ops["CreatePreviewLink"], map[string]any{"input": map[string]any{"postId": b.draft, "expiresIn": 3 * 24 * 3600}}, ada)
		token := link.str("createPreviewLink.token")
		a := s.sendTS(t, ops["PreviewPage"], map[string]any{"token": token}, "")
		// The post, and a draft's categories, whose copied names only
		// published posts keep up to date.
		equal(t, "preview requests", total(s.requests()), 2)
		equal(t, "draft", a.str("post.status"), "DRAFT")
		equal(t, "title", a.str("post.title"), "Draft")
	})
	s.consistent()
}

// TestTypeScriptHomeAndSeriesPages sends the TypeScript client's home
// page (featured posts on top of the latest), series page and a post's
// place in its series as the client does, and checks what the pages show
// and what they cost.
func TestTypeScriptHomeAndSeriesPages(t *testing.T) {
	s := newServer(t, cacheable)
	b := s.seedBlog(t)
	ctx := context.Background()
	ops := tsOperations(t)
	for _, i := range []int{4, 10, 16} {
		ok[*SetPostFeaturedResponse](t)(SetPostFeatured(ctx, s.admin, SetPostFeaturedInput{Id: b.published[i], Featured: true}))
	}
	ok[*CreateSeriesResponse](t)(CreateSeries(ctx, b.writers[0], CreateSeriesInput{Slug: "learn-go", Title: "Learn Go"}))
	for _, i := range []int{8, 2, 6} {
		ok[*AddPostToSeriesResponse](t)(AddPostToSeries(ctx, b.writers[0], AddPostToSeriesInput{SeriesSlug: "learn-go", PostId: b.published[i]}))
	}

	t.Run("home page", func(t *testing.T) {
		a := s.sendTS(t, ops["HomePage"], map[string]any{"featured": 3, "first": 20, "after": nil, "last": nil, "before": nil}, "")
		// The featured list and the feed with its count.
		equal(t, "home page requests", total(s.requests()), 1+2)
		equal(t, "featured on top", a.str("featuredPosts.edges.0.node.slug"), "post-16")
		equal(t, "featured", a.len("featuredPosts.edges"), 3)
		equal(t, "latest", a.len("posts.edges"), 20)
	})

	t.Run("series page, both ways", func(t *testing.T) {
		a := s.sendTS(t, ops["SeriesPage"], map[string]any{"slug": "learn-go", "first": 2, "after": nil, "last": nil, "before": nil}, "")
		// The series, its page of posts, its owner.
		equal(t, "series page requests", total(s.requests()), 3)
		equal(t, "first part", a.str("series.posts.edges.0.node.slug"), "post-8")
		equal(t, "second part", a.str("series.posts.edges.1.node.slug"), "post-2")
		equal(t, "owner", a.str("series.owner.slug"), "ada-lovelace")
		next := s.sendTS(t, ops["SeriesPage"], map[string]any{"slug": "learn-go", "first": 2, "after": a.str("series.posts.pageInfo.endCursor"), "last": nil, "before": nil}, "")
		equal(t, "third part", next.str("series.posts.edges.0.node.slug"), "post-6")
		back := s.sendTS(t, ops["SeriesPage"], map[string]any{"slug": "learn-go", "first": nil, "after": nil, "last": 2, "before": next.str("series.posts.pageInfo.startCursor")}, "")
		equal(t, "back to the start", back.str("series.posts.edges.0.node.slug"), "post-8")
	})

	t.Run("post's place in its series", func(t *testing.T) {
		a := s.sendTS(t, ops["PostSeries"], map[string]any{"slug": "post-2"}, "")
		// The post by slug, its series, its neighbours.
		equal(t, "series box requests", total(s.requests()), 2+1+1)
		equal(t, "position", a.num("post.series.position"), 2)
		equal(t, "previous", a.str("post.series.previous.slug"), "post-8")
		equal(t, "next", a.str("post.series.next.slug"), "post-6")
	})
	s.consistent()
}

// TestTypeScriptReadsAreCacheableGETs follows the TypeScript client's
// read of a category page as its request function sends it: a GET of the
// query's hash alone, which a server that does not know it answers
// PERSISTED_QUERY_NOT_FOUND (no-store, after one GetItem), then a GET of
// the query with its hash, answered public with an ETag, which registers
// the query in the table; the same hash-only URL, on another server of the
// fleet, is then answered public with the same body, and a matching
// If-None-Match is 304. (The client posted its queries, and got no-store.)
func TestTypeScriptReadsAreCacheableGETs(t *testing.T) {
	s := newServer(t, cacheable)
	s.seedBlog(t)
	doc := tsOperations(t)["CategoryPage"]
	vars := `{"slug":"go","first":20,"after":null}`
	ext := `{"persistedQuery":{"version":1,"sha256Hash":"` + hashOf(doc) + `"}}`
	byHash := s.getQueryURL("", vars, ext)

	unknown := s.fetch(t, http.MethodGet, byHash, "", nil)
	if !strings.Contains(unknown.body, `"PERSISTED_QUERY_NOT_FOUND"`) {
		t.Fatalf("unknown hash: %s", unknown.body)
	}
	equal(t, "unknown hash's Cache-Control", unknown.header.Get("Cache-Control"), "no-store")
	if got := s.requests(); !maps.Equal(got, map[string]int{"GetItem": 1}) {
		t.Errorf("unknown hash: requests %v, want one GetItem", got)
	}

	registered := s.fetch(t, http.MethodGet, s.getQueryURL(doc, vars, ext), "", nil)
	equal(t, "registration status", registered.status, http.StatusOK)
	equal(t, "registration Cache-Control", registered.header.Get("Cache-Control"), "public, max-age=60")
	// The page (2) and the registration.
	equal(t, "registration requests", total(s.requests()), 2+1)
	equal(t, "registration PutItem", s.requests()["PutItem"], 1)

	other := s.another()
	known := other.fetch(t, http.MethodGet, strings.Replace(byHash, s.url, other.url, 1), "", nil)
	equal(t, "status", known.status, http.StatusOK)
	equal(t, "Cache-Control", known.header.Get("Cache-Control"), "public, max-age=60")
	equal(t, "ETag", known.header.Get("ETag"), registered.header.Get("ETag"))
	equal(t, "body", known.body, registered.body)
	// The page (2) and the query's item.
	equal(t, "requests on another server", total(other.requests()), 2+1)
	notModified := other.fetch(t, http.MethodGet, strings.Replace(byHash, s.url, other.url, 1), "", map[string]string{"If-None-Match": known.header.Get("ETag")})
	equal(t, "If-None-Match", notModified.status, http.StatusNotModified)
}
