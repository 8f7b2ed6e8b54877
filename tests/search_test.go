package tests

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/changefeed"
	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/search"
	"github.com/blogql/blog/storage"
)

// searchServer is the GraphQL handler with its change feed and its search
// index on a table with a stream, as the server runs them: the index
// follows the feed's events.
type searchServer struct {
	t       testing.TB
	store   *storage.Store
	db      *dynamodb.Client
	cfg     storage.ClientConfig
	table   string
	dir     string
	url     string
	anon    graphql.Client
	admin   graphql.Client
	index   *search.Service
	stopped chan struct{}
	stop    func()
	// http is the handler's HTTP options; tap, when set, gets the feed's
	// events after the index.
	http gqlhttp.Options
	tap  func([]storage.LoggedEvent)

	mu   sync.Mutex
	last *storage.Counter
}

// newSearchServer starts a searchServer on a table of its own, with its
// index in a directory of its own.
func newSearchServer(t testing.TB) *searchServer {
	t.Helper()
	return newSearchServerWith(t, nil)
}

// newSearchServerWith starts a searchServer as newSearchServer does, with
// configure, when not nil, changing it before it starts.
func newSearchServerWith(t testing.TB, configure func(*searchServer)) *searchServer {
	t.Helper()
	ctx := context.Background()
	cfg := dynamotest.ClientConfig(t, nil)
	db, err := storage.NewClient(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	table := dynamotest.Table(t, db, "search")
	store := storage.New(db, table, storage.WithStream())
	if err := store.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	s := &searchServer{t: t, store: store, cfg: cfg, db: db, table: table, dir: filepath.Join(t.TempDir(), "search"),
		http: gqlhttp.Options{Introspection: true}}
	if configure != nil {
		configure(s)
	}
	s.start()
	return s
}

// start starts the feed, the index and the handler on s's table and
// index directory.
func (s *searchServer) start() { s.startWith(true) }

// startWith starts the feed and the handler, and the index when
// withIndex is set (else the feed logs the table's changes while no index
// follows them).
func (s *searchServer) startWith(withIndex bool) {
	t := s.t
	t.Helper()
	ctx := context.Background()
	streams, err := storage.NewStreamsClient(ctx, s.cfg)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(liveLogOutput(), nil))
	feedOpts := liveFeedOptions
	feedOpts.Logger = logger
	feed := changefeed.New(s.store, streams, feedOpts)
	// The answers the handler keeps follow the events, and the searches'
	// the index, as the server wires them.
	answers := s.http.Answers
	changed := func() {}
	if answers != nil {
		changed = func() { answers.Invalidate(frontend.TagSearch) }
		feed.Subscribe(graph.InvalidateAnswers(answers))
	}
	idx, err := search.New(s.store, search.Options{Dir: s.dir, Table: s.table, Logger: logger, Changed: changed})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	if withIndex {
		feed.Subscribe(idx.Events)
		wg.Go(func() { idx.Run(runCtx) })
	}
	if s.tap != nil {
		feed.Subscribe(s.tap)
	}
	// The page indexes of numbered pages follow the posts, as on the
	// server (feed.go).
	pages := s.store.NewPageSync()
	feed.AddWorker(changefeed.Worker{Name: "pages", Events: pages.Events, Tick: pages.Tick, Every: storage.CountSyncTick, Hold: pages.Hold})
	wg.Go(func() { _ = feed.Run(runCtx) })
	stopped := make(chan struct{})
	var once sync.Once
	s.index, s.stopped = idx, stopped
	s.stop = func() {
		once.Do(func() {
			stop()
			wg.Wait()
			idx.Close()
			close(stopped)
		})
	}
	t.Cleanup(s.stop)

	verifier, err := auth.NewVerifier(auth.Config{Secret: testSecret, Issuer: testIssuer, Audience: testAudience})
	if err != nil {
		t.Fatal(err)
	}
	h := graph.NewHandler(s.store, graph.HandlerOptions{
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		HTTP:     s.http,
		Verifier: verifier,
		Search:   idx,
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
	s.anon = graphql.NewClient(hs.URL, hs.Client())
	s.admin = s.as("admin", auth.RoleAdmin)
}

// requests returns the DynamoDB requests of the last GraphQL request.
func (s *searchServer) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last.Total()
}

func (s *searchServer) as(sub string, roles ...string) graphql.Client {
	now := time.Now()
	c := (&server{clock: dynamotest.NewClock(now)}).claims(sub, roles...)
	token, err := auth.Sign(testSecret, c)
	if err != nil {
		s.t.Fatal(err)
	}
	return graphql.NewClient(s.url, &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}})
}

// writer creates the author ada with the categories garden and kitchen,
// and returns ada's client and her global id.
func (s *searchServer) writer() (graphql.Client, string) {
	t := s.t
	t.Helper()
	ctx := context.Background()
	a := ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada Lovelace", Slug: ptr("ada")})).CreateAuthor.Author
	for _, c := range []string{"garden", "kitchen"} {
		ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: c, Name: strings.ToUpper(c[:1]) + c[1:]}))
	}
	return s.as("ada", auth.RoleAuthor), a.Id
}

// publish creates and publishes a post, and returns its global id.
func (s *searchServer) publish(c graphql.Client, slug, title, body string, cats ...string) string {
	s.t.Helper()
	ctx := context.Background()
	p := ok[*CreatePostResponse](s.t)(CreatePost(ctx, c, CreatePostInput{Title: title, Slug: slug, Body: ptr(body), Categories: cats})).CreatePost.Post
	ok[*PublishPostResponse](s.t)(PublishPost(ctx, c, PublishPostInput{Id: p.Id}))
	return p.Id
}

// find searches query (first 50) and returns the slugs found, best first,
// and the answer.
func (s *searchServer) find(t *testing.T, query string) ([]string, *SearchResponse) {
	t.Helper()
	r, err := Search(context.Background(), s.anon, query, ptr(50), nil, nil, nil)
	if err != nil {
		t.Fatalf("search %q: %v", query, err)
	}
	var slugs []string
	for _, e := range r.Search.Edges {
		slugs = append(slugs, e.Node.Post.Slug)
	}
	return slugs, r
}

// waitFound waits until searching query finds exactly the posts slugs
// (in any order).
func (s *searchServer) waitFound(t *testing.T, query string, slugs ...string) *SearchResponse {
	t.Helper()
	want := slices.Sorted(slices.Values(slugs))
	var got []string
	var r *SearchResponse
	deadline := time.Now().Add(waitLimit)
	for {
		r0, err := Search(context.Background(), s.anon, query, ptr(50), nil, nil, nil)
		if err == nil {
			r, got = r0, nil
			for _, e := range r.Search.Edges {
				got = append(got, e.Node.Post.Slug)
			}
			slices.Sort(got)
			if slices.Equal(got, want) {
				return r
			}
		} else if code(err) != graph.CodeIndexBuilding {
			t.Fatalf("search %q: %v", query, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("search %q finds %v, want %v", query, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSearchFindsPublishedPostsByWordsTyposPhrasesAndFacets(t *testing.T) {
	s := newSearchServer(t)
	ada, _ := s.writer()
	ctx := context.Background()
	s.publish(ada, "roses", "Pruning roses in winter", "Cut the canes back by a third & feed them if 2 < 3.", "garden")
	s.publish(ada, "tomatoes", "Growing tomatoes", "Tomatoes want sun, water and a warm garden wall.", "garden", "kitchen")
	s.publish(ada, "soup", "A winter soup", "Roast the tomatoes first; the soup tastes of summer.", "kitchen")
	// A draft and a scheduled post never enter the index.
	ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Secret zucchini draft", Slug: "draft", Body: ptr("Zucchini tomatoes.")}))
	sched := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Zucchini later", Slug: "later", Body: ptr("Zucchini tomatoes soon.")})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: sched.Id, At: ptr(time.Now().Add(time.Hour))}))
	// The last write: once it is found, the index has every event before.
	s.publish(ada, "barrier", "Barrier", "The last post written.")
	s.waitFound(t, "barrier", "barrier")

	for _, c := range []struct {
		name, query string
		want        []string
	}{
		{"a word", "tomatoes", []string{"tomatoes", "soup"}},
		{"a stem", "prune", []string{"roses"}},
		{"one typo in a word of 4 letters or more", "wintr", []string{"roses", "soup"}},
		{"two typos in a word of 8 or more", "tomatooes", []string{"tomatoes", "soup"}},
		{"every word must match", "winter soup", []string{"soup"}},
		{"a phrase in order", `"warm garden wall"`, []string{"tomatoes"}},
		{"a phrase out of order matches nothing", `"wall garden warm"`, nil},
		{"a prefix", "tomat*", []string{"tomatoes", "soup"}},
		{"the author's name", "lovelace", []string{"roses", "tomatoes", "soup", "barrier"}},
		{"no draft or scheduled post", "zucchini", nil},
		{"only stop words", "the of", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, _ := s.find(t, c.query)
			slices.Sort(got)
			want := slices.Sorted(slices.Values(c.want))
			if !slices.Equal(got, want) {
				t.Errorf("search %q finds %v, want %v", c.query, got, want)
			}
		})
	}

	t.Run("highlights are escaped text with marks, facets count the whole result", func(t *testing.T) {
		r, err := Search(ctx, s.anon, "winter", ptr(1), nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "totalCount", r.Search.TotalCount, 2)
		equal(t, "edges", len(r.Search.Edges), 1)
		equal(t, "hasNextPage", r.Search.PageInfo.HasNextPage, true)
		facets := map[string]int{}
		for _, f := range r.Search.Categories {
			facets[f.Slug] = f.Count
			equal(t, "facet's category name", f.Category.Name, strings.ToUpper(f.Slug[:1])+f.Slug[1:])
		}
		equal(t, "facets", fmt.Sprint(facets), fmt.Sprint(map[string]int{"garden": 1, "kitchen": 1}))
		r, err = Search(ctx, s.anon, "canes", nil, nil, nil, nil)
		if err != nil || len(r.Search.Edges) != 1 {
			t.Fatal(r, err)
		}
		n := r.Search.Edges[0].Node
		equal(t, "title", n.Title, "Pruning roses in winter")
		if !strings.Contains(n.Snippet, "Cut the <mark>canes</mark> back by a third &amp; feed them if 2 &lt; 3.") {
			t.Errorf("snippet %q: want the body escaped with <mark> around canes", n.Snippet)
		}
		r, err = Search(ctx, s.anon, "pruning", nil, nil, nil, nil)
		if err != nil || len(r.Search.Edges) != 1 {
			t.Fatal(r, err)
		}
		equal(t, "title", r.Search.Edges[0].Node.Title, "<mark>Pruning</mark> roses in winter")
	})

	t.Run("filters by category and author", func(t *testing.T) {
		r, err := Search(ctx, s.anon, "tomatoes", nil, nil, ptr("garden"), nil)
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "results in garden", len(r.Search.Edges), 1)
		equal(t, "totalCount in garden", r.Search.TotalCount, 1)
	})

	t.Run("a page of results reads its posts in one request", func(t *testing.T) {
		if _, err := Search(ctx, s.anon, "tomatoes", nil, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		// One BatchGetItem of the posts and one of the facets' categories.
		equal(t, "DynamoDB requests", s.requests(), 2)
		if _, err := SearchTitles(ctx, s.anon, "tomatoes", nil, nil); err != nil {
			t.Fatal(err)
		}
		equal(t, "DynamoDB requests without posts", s.requests(), 0)
	})
}

func TestSearchPagingWhileWritingNeverSkipsNorRepeats(t *testing.T) {
	s := newSearchServer(t)
	ada, _ := s.writer()
	ctx := context.Background()
	var want []string
	for i := range 24 {
		slug := fmt.Sprintf("orchard-%02d", i)
		// Scores vary: more apples, more relevant.
		s.publish(ada, slug, fmt.Sprintf("Orchard notes %d", i), strings.Repeat("apple ", i+1)+"orchard trees.")
		want = append(want, slug)
	}
	s.waitFound(t, "apple", want...)

	seen := map[string]int{}
	var after *string
	for page := 0; ; page++ {
		r, err := Search(ctx, s.anon, "apple", ptr(5), after, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range r.Search.Edges {
			seen[e.Node.Post.Slug]++
		}
		// Between pages, writes that change every score: new posts
		// about apples, more relevant than any.
		s.publish(ada, fmt.Sprintf("new-%d", page), "Apple apple apple", "apple apple apple apple apple apple apple")
		if !r.Search.PageInfo.HasNextPage {
			break
		}
		after = r.Search.PageInfo.EndCursor
	}
	for _, slug := range want {
		if seen[slug] != 1 {
			t.Errorf("%s seen %d times while paging, want once", slug, seen[slug])
		}
	}
	for slug, n := range seen {
		if !strings.HasPrefix(slug, "orchard-") {
			t.Errorf("%s (published while paging) seen %d times: the pages follow the first page's ranking", slug, n)
		}
	}
}

func TestSearchUnpublishAndDeleteRemovePosts(t *testing.T) {
	s := newSearchServer(t)
	ada, _ := s.writer()
	ctx := context.Background()
	a := s.publish(ada, "pears", "Pears", "Pears in autumn.")
	b := s.publish(ada, "plums", "Plums", "Plums in autumn.")
	s.publish(ada, "quinces", "Quinces", "Quinces in autumn.")
	s.waitFound(t, "autumn", "pears", "plums", "quinces")
	ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, ada, UnpublishPostInput{Id: a}))
	ok[*DeletePostResponse](t)(DeletePost(ctx, ada, DeletePostInput{Id: b}))
	s.waitFound(t, "autumn", "quinces")
}

func TestSearchFollowsRenamesOfAuthorsAndCategories(t *testing.T) {
	s := newSearchServer(t)
	ada, adaID := s.writer()
	ctx := context.Background()
	s.publish(ada, "beans", "Beans", "Runner beans climb.", "garden")
	s.waitFound(t, "lovelace", "beans")
	ok[*UpdateAuthorResponse](t)(UpdateAuthor(ctx, s.admin, UpdateAuthorInput{Id: adaID, ExpectedVersion: ptr(1), Name: ptr("Augusta King")}))
	s.waitFound(t, "augusta", "beans")
	s.waitFound(t, "lovelace")
	ok[*UpdateCategoryResponse](t)(UpdateCategory(ctx, s.admin, UpdateCategoryInput{Slug: ptr("garden"), ExpectedVersion: ptr(1), Name: ptr("Allotment")}))
	s.waitFound(t, "allotment", "beans")
}

func TestSearchRebuildsAMissingIndexFromTheTable(t *testing.T) {
	s := newSearchServer(t)
	ada, _ := s.writer()
	s.publish(ada, "figs", "Figs", "Figs ripen late.")
	s.waitFound(t, "figs", "figs")
	s.stop()
	// Written while no server indexes, then the index is lost.
	s.publish(ada, "dates", "Dates", "Dates and figs.")
	if err := os.RemoveAll(s.dir); err != nil {
		t.Fatal(err)
	}
	s.start()
	s.waitFound(t, "figs", "figs", "dates")
	// It goes on from the log's head it was built at.
	s.publish(ada, "olives", "Olives", "Olives, figs.")
	s.waitFound(t, "figs", "figs", "dates", "olives")
}

func TestSearchRebuildsAnIndexOlderThanTheLogsRetention(t *testing.T) {
	s := newSearchServer(t)
	ada, _ := s.writer()
	s.publish(ada, "chard", "Chard", "Chard in the rain.")
	s.waitFound(t, "rain", "chard")
	pos, _ := s.index.Position()
	s.stop()
	// The feed logs a publication while no index follows; then the log's
	// retention removes the events after the index's position.
	s.startWith(false)
	s.publish(ada, "sorrel", "Sorrel", "Sorrel in the rain.")
	ctx := context.Background()
	var head int64
	waitFor(t, func() bool {
		h, err := s.store.Feed().EventLogHead(ctx)
		if err != nil {
			t.Fatal(err)
		}
		head = h
		return h > pos
	})
	s.stop()
	for p := pos + 1; p <= head; p++ {
		_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.table, Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "EVENTLOG"},
			"SK": &types.AttributeValueMemberS{Value: fmt.Sprintf("EVENT#%020d", p)},
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Another post, whose event the log holds, after the gap.
	s.start()
	s.publish(ada, "rhubarb", "Rhubarb", "Rhubarb in the rain.")
	s.waitFound(t, "rain", "chard", "sorrel", "rhubarb")
}

func TestSearchCatchesUpWithWhatWasWrittenWhileAway(t *testing.T) {
	s := newSearchServer(t)
	ada, _ := s.writer()
	s.publish(ada, "kale", "Kale", "Kale in the frost.")
	s.waitFound(t, "frost", "kale")
	s.stop()
	s.publish(ada, "leeks", "Leeks", "Leeks in the frost.")
	s.start()
	s.waitFound(t, "frost", "kale", "leeks")
}

func TestSearchRefusesBadCursorsAndWhatIsTooLongOrSlow(t *testing.T) {
	s := newSearchServer(t)
	ada, _ := s.writer()
	ctx := context.Background()
	for i := range 3 {
		s.publish(ada, fmt.Sprintf("herb-%d", i), "Herbs", "Basil and thyme.")
	}
	s.waitFound(t, "basil", "herb-0", "herb-1", "herb-2")
	r := ok[*SearchResponse](t)(Search(ctx, s.anon, "basil", ptr(1), nil, nil, nil))
	cursor := *r.Search.PageInfo.EndCursor
	// One character of the cursor changed, in its middle: its last two
	// are "AA" one time in 4,096, and would stay as they were.
	altered := []byte(cursor)
	if i := len(altered) / 2; altered[i] == 'A' {
		altered[i] = 'B'
	} else {
		altered[i] = 'A'
	}
	feed := ok[*FeedResponse](t)(Feed(ctx, s.anon, ptr(1), nil))
	for _, c := range []struct {
		name  string
		query string
		first *int
		after *string
		code  string
	}{
		{"an altered cursor", "basil", nil, ptr(string(altered)), graph.CodeBadUserInput},
		{"a cursor of another search", "thyme", nil, &cursor, graph.CodeBadUserInput},
		{"a cursor of another list", "basil", nil, feed.Posts.PageInfo.EndCursor, graph.CodeBadUserInput},
		{"an empty cursor", "basil", nil, ptr(""), graph.CodeBadUserInput},
		{"first over 50", "basil", ptr(51), nil, graph.CodeBadUserInput},
		{"first 0", "basil", ptr(0), nil, graph.CodeBadUserInput},
		{"an empty query", " ", nil, nil, graph.CodeBadUserInput},
		{"a query over 200 characters", strings.Repeat("b", 201), nil, nil, graph.CodeBadUserInput},
		{"a query of 11 words", strings.Repeat("basil ", 11), nil, nil, graph.CodeBadUserInput},
		{"a leading wildcard", "*sil", nil, nil, graph.CodeSlowQuery},
		{"a wildcard inside a word", "ba?il", nil, nil, graph.CodeSlowQuery},
		{"a prefix of 2 letters", "ba*", nil, nil, graph.CodeSlowQuery},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Search(ctx, s.anon, c.query, c.first, c.after, nil, nil)
			equal(t, "code", code(err), c.code)
		})
	}
	ok[*SearchResponse](t)(Search(ctx, s.anon, "basil", nil, &cursor, nil, nil))
}

func TestRelatedPostsShareCategoriesAndWords(t *testing.T) {
	s := newSearchServer(t)
	ada, _ := s.writer()
	ctx := context.Background()
	s.publish(ada, "compost", "Making compost", "Compost heaps need greens, browns and air. Turn the compost heap.", "garden")
	s.publish(ada, "compost-bins", "Compost bins compared", "Which compost bin turns greens into compost fastest.", "garden")
	s.publish(ada, "mulch", "Mulching beds", "Mulch keeps the garden beds moist.", "garden")
	s.publish(ada, "bread", "Sourdough bread", "Flour, water, salt and time.", "kitchen")
	s.waitFound(t, "lovelace", "compost", "compost-bins", "mulch", "bread")
	r := ok[*RelatedPostsResponse](t)(RelatedPosts(ctx, s.anon, "compost", ptr(2)))
	var got []string
	for _, p := range r.Post.Related {
		got = append(got, p.Slug)
	}
	equal(t, "related", fmt.Sprint(got), "[compost-bins mulch]")
	// The post by its slug (2), and the related posts in one BatchGetItem.
	equal(t, "DynamoDB requests", s.requests(), 3)
	// Up to 3 by default: a post that shares nothing is not related.
	r = ok[*RelatedPostsResponse](t)(RelatedPosts(ctx, s.anon, "compost", nil))
	got = nil
	for _, p := range r.Post.Related {
		got = append(got, p.Slug)
	}
	equal(t, "related by default", fmt.Sprint(got), "[compost-bins mulch]")
	_, err := RelatedPosts(ctx, s.anon, "compost", ptr(21))
	equal(t, "code of first 21", code(err), graph.CodeBadUserInput)
}

// TestTypeScriptSearchPage sends the TypeScript client's search results
// page (clients/typescript/src/pages.ts, searchPage) as it does, and
// checks what the page reads and what it costs.
func TestTypeScriptSearchPage(t *testing.T) {
	s := newSearchServer(t)
	ada, _ := s.writer()
	for i := range 12 {
		cat := "garden"
		if i%3 == 0 {
			cat = "kitchen"
		}
		s.publish(ada, fmt.Sprintf("basil-%02d", i), fmt.Sprintf("Basil, part %d", i), "Sweet basil & pesto, if 2 < 3.", cat)
	}
	var all []string
	for i := range 12 {
		all = append(all, fmt.Sprintf("basil-%02d", i))
	}
	s.waitFound(t, "basil", all...)
	doc := tsOperations(t)["SearchPage"]
	ts := &server{t: t, url: s.url}
	first := ts.sendTS(t, doc, map[string]any{"query": "basil", "first": 10, "after": nil, "category": nil}, "")
	// One BatchGetItem of the posts (their authors and categories are
	// copies on them) and one of the facets' categories.
	equal(t, "search page requests", s.requests(), 2)
	equal(t, "results", first.len("search.edges"), 10)
	equal(t, "total", first.num("search.totalCount"), 12)
	equal(t, "title", strings.HasPrefix(first.str("search.edges.0.node.title"), "<mark>Basil</mark>, part "), true)
	equal(t, "snippet", first.str("search.edges.0.node.snippet"), "Sweet <mark>basil</mark> &amp; pesto, if 2 &lt; 3.")
	equal(t, "card's author", first.str("search.edges.0.node.post.author.slug"), "ada")
	equal(t, "facet", first.str("search.categories.0.slug"), "garden")
	equal(t, "facet count", first.num("search.categories.0.count"), 8)
	equal(t, "facet name", first.str("search.categories.0.category.name"), "Garden")
	more := ts.sendTS(t, doc, map[string]any{"query": "basil", "first": 10, "after": first.str("search.pageInfo.endCursor"), "category": nil}, "")
	equal(t, "more results", more.len("search.edges"), 2)
	equal(t, "no more after", more.get("search.pageInfo.hasNextPage"), any(false))
	narrowed := ts.sendTS(t, doc, map[string]any{"query": "basil", "first": 10, "after": nil, "category": "kitchen"}, "")
	equal(t, "in kitchen", narrowed.num("search.totalCount"), 4)
}
