package tests

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/views"
)

// browser is the user agent of a reader's browser.
const browser = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"

// viewServer is the server with a view counter: recordView on its
// GraphQL endpoint, and the beacon on a loopback server of its own, with
// the DynamoDB requests of its last beacon.
type viewServer struct {
	*server
	views  *views.Counter
	beacon string

	mu         sync.Mutex
	lastBeacon *storage.Counter
}

func newViewServer(t *testing.T, opts views.Options, configure ...func(*storage.ClientConfig, *graph.HandlerOptions)) *viewServer {
	t.Helper()
	s := newServer(t, configure...)
	c := views.New(s.store, opts)
	s.opts.Views = c
	s.serve()
	v := &viewServer{server: s, views: c}
	mux := http.NewServeMux()
	mux.Handle(views.BeaconPath, views.Beacon(c))
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, counter := storage.WithRequestCounter(r.Context())
		v.mu.Lock()
		v.lastBeacon = counter
		v.mu.Unlock()
		mux.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(hs.Close)
	v.beacon = hs.URL + "/v/"
	return v
}

// send beacons a view of the post id (raw) with the user agent ua and the
// body, as navigator.sendBeacon sends text, and returns the status.
func (v *viewServer) send(t *testing.T, id, ua, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, v.beacon+id, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	req.Header.Set("User-Agent", ua)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// beaconRequests returns the DynamoDB requests of the last beacon.
func (v *viewServer) beaconRequests() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return total(v.lastBeacon.ByOperation())
}

// flush flushes the counter, every popular entry included, and returns
// its DynamoDB requests.
func (v *viewServer) flush(t *testing.T) map[string]int {
	t.Helper()
	ctx, counter := storage.WithRequestCounter(context.Background())
	if err := v.views.FlushAll(ctx); err != nil {
		t.Fatal(err)
	}
	return counter.ByOperation()
}

func (v *viewServer) viewCount(t *testing.T, gid string) int {
	t.Helper()
	return ok[*PostViewsResponse](t)(PostViews(context.Background(), v.client, gid)).Post.ViewCount
}

// TestViewBeaconsCountAVisitorOncePerPostPerDay: a reader's beacons count
// once a post a day, whatever their number; bots, headless browsers,
// drafts, scheduled and missing posts are answered 204 and not counted;
// an oversized body is 413. One read checks a post for all its beacons;
// a flush is one write for the post (and three for its popular entries),
// one more the first time a day, and viewCount one BatchGetItem more.
func TestViewBeaconsCountAVisitorOncePerPostPerDay(t *testing.T) {
	v := newViewServer(t, views.Options{})
	b := v.seedBlog(t)
	gid := b.published[3]
	id := rawID(t, gid, "Post")

	equal(t, "first beacon", v.send(t, id, browser, ""), http.StatusNoContent)
	equal(t, "requests of the first beacon of a post (its check)", v.beaconRequests(), 1)
	for range 3 {
		equal(t, "beacon again", v.send(t, id, browser, ""), http.StatusNoContent)
		equal(t, "requests of a beacon of a checked post", v.beaconRequests(), 0)
	}
	equal(t, "another reader", v.send(t, id, browser+" Edg/120.0", "https://news.example.com/a"), http.StatusNoContent)
	for _, ua := range []string{
		"", "Googlebot/2.1 (+http://www.google.com/bot.html)",
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0 Safari/537.36",
		"curl/8.0.1", "Mozilla/5.0 (compatible; bingbot/2.0)",
	} {
		equal(t, "bot "+ua, v.send(t, id, ua, ""), http.StatusNoContent)
	}
	for _, other := range []string{rawID(t, b.draft, "Post"), rawID(t, b.scheduled, "Post"), "no-such-post", "bad%20id"} {
		equal(t, "beacon of "+other, v.send(t, other, browser, ""), http.StatusNoContent)
	}
	equal(t, "oversized beacon", v.send(t, id, browser+" big", strings.Repeat("x", views.MaxBeaconBytes+1)), http.StatusRequestEntityTooLarge)

	equal(t, "viewCount before the flush", v.viewCount(t, gid), 0)
	flushed := v.flush(t)
	equal(t, "UpdateItems of a flush of one post with its popular entries", flushed["UpdateItem"], 1+3)
	equal(t, "requests of a flush (and the read of the post its popular entries carry)", total(flushed), 5)
	equal(t, "viewCount", v.viewCount(t, gid), 2)
	// The post page's read and one BatchGetItem of view counts.
	ok[*PostViewsResponse](t)(PostViews(context.Background(), v.client, gid))
	equal(t, "BatchGetItems of post with viewCount", v.requests()["BatchGetItem"], 1)
	equal(t, "hidden posts' viewCount", v.viewCount(t, b.published[4]), 0)

	// The next day the reader counts again.
	v.clock.Advance(24 * time.Hour)
	v.send(t, id, browser, "")
	v.send(t, id, browser, "")
	flushed = v.flush(t)
	equal(t, "UpdateItems of the first flush of the next day", flushed["UpdateItem"], 1+3)
	equal(t, "TransactWriteItems of the first flush of the next day (the move of the day before)", flushed["TransactWriteItems"], 1)
	equal(t, "viewCount the next day", v.viewCount(t, gid), 3)
	v.send(t, id, browser+" later", "")
	flushed = v.flush(t)
	equal(t, "writes of a later flush of the day", flushed["UpdateItem"]+flushed["TransactWriteItems"], 1+3)
	equal(t, "viewCount later the next day", v.viewCount(t, gid), 4)
	v.consistent()
}

// TestViewsOfOneClientAreBounded: one address counts at most
// MaxPerClient views a day, whatever user agents it claims; the others
// are answered 204 all the same.
func TestViewsOfOneClientAreBounded(t *testing.T) {
	v := newViewServer(t, views.Options{MaxPerClient: 3})
	b := v.seedBlog(t)
	for i := range 10 {
		equal(t, "beacon", v.send(t, rawID(t, b.published[i], "Post"), fmt.Sprintf("%s #%d", browser, i), ""), http.StatusNoContent)
	}
	v.flush(t)
	n := 0
	for i := range 10 {
		n += v.viewCount(t, b.published[i])
	}
	equal(t, "views counted from one address", n, 3)
}

// TestViewCountsOfACardListCostOneBatchGet: the posts of a list show
// their views with one BatchGetItem for the page, more than the same
// list without them.
func TestViewCountsOfACardListCostOneBatchGet(t *testing.T) {
	v := newViewServer(t, views.Options{})
	b := v.seedBlog(t)
	ctx := context.Background()
	for r := range 3 {
		v.send(t, rawID(t, b.published[24], "Post"), fmt.Sprintf("%s r%d", browser, r), "")
	}
	v.flush(t)
	ok[*CategoryCardsResponse](t)(CategoryCards(ctx, v.client, "go"))
	without := v.requests()
	page := ok[*CategoryViewsResponse](t)(CategoryViews(ctx, v.client, "go")).Category.Posts.Edges
	with := v.requests()
	equal(t, "requests with viewCount", total(with), total(without)+1)
	equal(t, "BatchGetItems with viewCount", with["BatchGetItem"], without["BatchGetItem"]+1)
	equal(t, "cards", len(page), 20)
	equal(t, "newest card", page[0].Node.Slug, "post-24")
	equal(t, "its views", page[0].Node.ViewCount, 3)
	equal(t, "another's", page[1].Node.ViewCount, 0)
}

// TestViewsPastTheBoundOfVisitorsStillCount: a server that meets more
// visitors than it may remember forgets the oldest and counts the new.
func TestViewsPastTheBoundOfVisitorsStillCount(t *testing.T) {
	v := newViewServer(t, views.Options{MaxVisitors: 4})
	b := v.seedBlog(t)
	gid := b.published[11]
	for r := range 10 {
		v.send(t, rawID(t, gid, "Post"), fmt.Sprintf("%s reader-%d", browser, r), "")
	}
	v.flush(t)
	equal(t, "viewCount", v.viewCount(t, gid), 10)
}

// TestConcurrentBeaconsCountExactly: readers beaconing at once, each
// several times, are each counted once.
func TestConcurrentBeaconsCountExactly(t *testing.T) {
	v := newViewServer(t, views.Options{})
	b := v.seedBlog(t)
	gid := b.published[5]
	id := rawID(t, gid, "Post")
	const readers = 40
	var wg sync.WaitGroup
	for r := range readers {
		wg.Go(func() {
			for range 3 {
				v.send(t, id, fmt.Sprintf("%s reader-%d", browser, r), "")
			}
		})
	}
	wg.Wait()
	v.flush(t)
	equal(t, "viewCount", v.viewCount(t, gid), readers)
}

// TestPostStatsAreTheAuthorsOnly: the post's author sees its views per
// day and its referrers' domains, forged and invalid referrers left out;
// a reader gets FORBIDDEN, an anonymous caller UNAUTHENTICATED, and a
// number of days out of range BAD_USER_INPUT. One Query.
func TestPostStatsAreTheAuthorsOnly(t *testing.T) {
	v := newViewServer(t, views.Options{})
	b := v.seedBlog(t)
	gid := b.published[2] // by ada (writers[0])
	id := rawID(t, gid, "Post")
	ctx := context.Background()
	refs := []string{
		"https://news.ycombinator.com/item?id=1", "https://www.news.ycombinator.com/", "https://google.com/search?q=x",
		"not a url", "javascript:alert(1)", "https://bad..example/", "https://user:pw@example.com/", "http://127.0.0.1/", "",
	}
	for i, ref := range refs {
		v.send(t, id, fmt.Sprintf("%s r%d", browser, i), ref)
	}
	v.flush(t)
	v.clock.Advance(nextDay(v.clock.Now()))
	v.send(t, id, browser+" day2", "")
	v.flush(t)

	// Tokens issued now: the clock moved.
	ada, grace, admin := v.as("ada", auth.RoleAuthor), v.as("grace", auth.RoleAuthor), v.as("admin", auth.RoleAdmin)
	st := ok[*PostViewStatsResponse](t)(PostViewStats(ctx, ada, gid, ptr(3))).Post.Stats
	equal(t, "Queries of stats (the post and its days)", v.requests()["Query"], 2)
	equal(t, "GetItems of stats (the views not moved yet)", v.requests()["GetItem"], 1)
	equal(t, "views", st.Views, len(refs)+1)
	equal(t, "days", len(st.Days), 3)
	equal(t, "yesterday", st.Days[1].Views, len(refs))
	equal(t, "today", st.Days[2].Views, 1)
	equal(t, "today's date", st.Days[2].Date, v.clock.Now().UTC().Format(time.DateOnly))
	var got []string
	for _, r := range st.TopReferrers {
		got = append(got, fmt.Sprintf("%s=%d", r.Domain, r.Views))
	}
	equal(t, "top referrers", strings.Join(got, ","), "news.ycombinator.com=2,google.com=1")

	// A day later, before any flush: the day before is still on the
	// views item, counted once all the same, and moves at the next flush.
	v.clock.Advance(24 * time.Hour)
	st = ok[*PostViewStatsResponse](t)(PostViewStats(ctx, ada, gid, ptr(3))).Post.Stats
	equal(t, "views a day later", st.Views, len(refs)+1)
	equal(t, "the day before yesterday", st.Days[0].Views, len(refs))
	equal(t, "yesterday, not moved", st.Days[1].Views, 1)
	equal(t, "today", st.Days[2].Views, 0)
	v.send(t, id, browser+" day3", "")
	flushed := v.flush(t)
	equal(t, "TransactWriteItems of the flush that moves yesterday", flushed["TransactWriteItems"], 1)
	st = ok[*PostViewStatsResponse](t)(PostViewStats(ctx, ada, gid, ptr(3))).Post.Stats
	equal(t, "views after the move", st.Views, len(refs)+2)
	equal(t, "yesterday, moved", st.Days[1].Views, 1)
	equal(t, "today after the flush", st.Days[2].Views, 1)

	reader := v.reader("someone", "Some One", "")
	_, err := PostViewStats(ctx, reader, gid, nil)
	equal(t, "a reader's stats", code(err), "FORBIDDEN")
	_, err = PostViewStats(ctx, grace, gid, nil)
	equal(t, "another author's stats", code(err), "FORBIDDEN")
	_, err = PostViewStats(ctx, v.client, gid, nil)
	equal(t, "anonymous stats", code(err), "UNAUTHENTICATED")
	_, err = PostViewStats(ctx, admin, gid, ptr(91))
	equal(t, "91 days", code(err), "BAD_USER_INPUT")
	_, err = PostViewStats(ctx, admin, gid, ptr(0))
	equal(t, "0 days", code(err), "BAD_USER_INPUT")
}

// TestPopularPostsRankByViews: the posts of the day, week and month,
// most viewed first, with what a card shows, in one Query.
func TestPopularPostsRankByViews(t *testing.T) {
	v := newViewServer(t, views.Options{})
	b := v.seedBlog(t)
	ctx := context.Background()
	for i, n := range map[int]int{7: 2, 8: 5, 9: 3, 10: 1} {
		for r := range n {
			v.send(t, rawID(t, b.published[i], "Post"), fmt.Sprintf("%s r%d", browser, r), "")
		}
	}
	v.flush(t)
	for _, period := range []PopularPeriod{PopularPeriodDay, PopularPeriodWeek, PopularPeriodMonth} {
		list := ok[*PopularResponse](t)(Popular(ctx, v.client, period, ptr(3))).PopularPosts
		equal(t, string(period)+" requests", total(v.requests()), 1)
		equal(t, string(period)+" Query", v.requests()["Query"], 1)
		var got []string
		for _, p := range list {
			got = append(got, fmt.Sprintf("%s=%d", p.Post.Slug, p.Views))
		}
		equal(t, string(period), strings.Join(got, ","), "post-8=5,post-9=3,post-7=2")
		card := list[2].Post
		equal(t, "card", fmt.Sprintf("%s|%s|%s|%s|%d", card.Title, card.Excerpt, card.Author.Name, card.Categories[0].Name, card.ReadingTimeMinutes),
			"Post 7|Excerpt|Grace Hopper|Go|1")
	}
	_, err := Popular(ctx, v.client, PopularPeriodDay, ptr(101))
	equal(t, "first 101", code(err), "BAD_USER_INPUT")
}

// TestPopularPostsFollowEditsAndHiding: an edited post shows its new
// title from its next popular write; an unpublished or deleted post
// leaves every list at once, and views counted before it was hidden do
// not bring it back.
func TestPopularPostsFollowEditsAndHiding(t *testing.T) {
	v := newViewServer(t, views.Options{})
	b := v.seedBlog(t)
	ctx := context.Background()
	for i, n := range map[int]int{7: 2, 8: 5, 9: 3} {
		for r := range n {
			v.send(t, rawID(t, b.published[i], "Post"), fmt.Sprintf("%s r%d", browser, r), "")
		}
	}
	v.flush(t)
	slugs := func(period PopularPeriod) string {
		t.Helper()
		var got []string
		for _, p := range ok[*PopularResponse](t)(Popular(ctx, v.client, period, nil)).PopularPosts {
			got = append(got, p.Post.Slug+"="+p.Post.Title)
		}
		return strings.Join(got, ",")
	}

	p9, err := v.store.GetPostWithoutBody(ctx, rawID(t, b.published[9], "Post"))
	if err != nil {
		t.Fatal(err)
	}
	ok[*UpdatePostResponse](t)(UpdatePost(ctx, b.writers[1], UpdatePostInput{Id: b.published[9], ExpectedVersion: int(p9.Version), Title: ptr("Post 9, edited")}))
	v.send(t, rawID(t, b.published[9], "Post"), browser+" after the edit", "")
	v.flush(t)
	equal(t, "after an edit", slugs(PopularPeriodDay), "post-8=Post 8,post-9=Post 9, edited,post-7=Post 7")

	// A view of post-8 counted while it was public, flushed after.
	v.send(t, rawID(t, b.published[8], "Post"), browser+" before unpublishing", "")
	ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, b.writers[0], UnpublishPostInput{Id: b.published[8]}))
	for _, period := range []PopularPeriod{PopularPeriodDay, PopularPeriodWeek, PopularPeriodMonth} {
		equal(t, string(period)+" after unpublishing", slugs(period), "post-9=Post 9, edited,post-7=Post 7")
	}
	v.flush(t)
	equal(t, "after unpublishing and a flush", slugs(PopularPeriodDay), "post-9=Post 9, edited,post-7=Post 7")

	ok[*DeletePostResponse](t)(DeletePost(ctx, b.writers[1], DeletePostInput{Id: b.published[9]}))
	equal(t, "after deleting", slugs(PopularPeriodWeek), "post-7=Post 7")
}

// TestRecordViewCountsTheCaller: recordView counts the request's client
// as a beacon does: once a day, not a bot, not a hidden post.
func TestRecordViewCountsTheCaller(t *testing.T) {
	v := newViewServer(t, views.Options{})
	b := v.seedBlog(t)
	ctx := context.Background()
	as := func(ua string) graphql.Client {
		return graphql.NewClient(v.url, &http.Client{Transport: userAgent{ua: ua, next: http.DefaultTransport}})
	}
	reader := as(browser)
	in := RecordViewInput{PostId: b.published[1], Referrer: ptr("https://example.org/x")}
	equal(t, "first", ok[*RecordViewResponse](t)(RecordView(ctx, reader, in)).RecordView.Counted, true)
	equal(t, "again", ok[*RecordViewResponse](t)(RecordView(ctx, reader, in)).RecordView.Counted, false)
	equal(t, "bot", ok[*RecordViewResponse](t)(RecordView(ctx, as("Googlebot/2.1"), in)).RecordView.Counted, false)
	draft := RecordViewInput{PostId: b.draft}
	equal(t, "draft", ok[*RecordViewResponse](t)(RecordView(ctx, reader, draft)).RecordView.Counted, false)
	v.flush(t)
	equal(t, "viewCount", v.viewCount(t, b.published[1]), 1)
}

// TestViewsAndReactionsAreNeverStaleInTheAnswerCache: an answer that
// shows views or reactions is never kept (they change with no event to
// drop it by), and recording a view or a reaction drops no kept answer
// (anyone may send them, as often as they like).
func TestViewsAndReactionsAreNeverStaleInTheAnswerCache(t *testing.T) {
	v := newViewServer(t, views.Options{}, withAnswers(0))
	ids := v.seedAnswers(t)
	id := rawID(t, ids[0], "Post")
	const counts = `query($id: ID!) { post(id: $id) { title viewCount reactions { kind count } } }`
	vars := `{"id":` + jsonString(ids[0]) + `}`
	before := v.post(t, counts, vars, nil)
	v.send(t, id, browser, "")
	v.flush(t)
	ok[*ReactResponse](t)(React(context.Background(), v.reader("ann", "Ann", ""), ReactionInput{SubjectId: ids[0], Kind: ReactionKindLike}))
	after := v.post(t, counts, vars, nil)
	equal(t, "X-Cache of views and reactions", after.header.Get(gqlhttp.AnswerCacheHeader), "MISS")
	if !strings.Contains(after.body, `"viewCount":1`) || !strings.Contains(after.body, `"count":1`) || after.body == before.body {
		t.Errorf("answer after a view and a reaction: %s", after.body)
	}

	v.post(t, answersCategoryPage, `{"slug":"go"}`, nil)
	v.hit(t, v.post(t, answersCategoryPage, `{"slug":"go"}`, nil))
	asBrowser := graphql.NewClient(v.url, &http.Client{Transport: userAgent{ua: browser + " other", next: http.DefaultTransport}})
	ok[*RecordViewResponse](t)(RecordView(context.Background(), asBrowser, RecordViewInput{PostId: ids[1]}))
	ok[*ReactResponse](t)(React(context.Background(), v.reader("bob", "Bob", ""), ReactionInput{SubjectId: ids[1], Kind: ReactionKindClap}))
	ok[*UnreactResponse](t)(Unreact(context.Background(), v.reader("bob", "Bob", ""), ReactionInput{SubjectId: ids[1], Kind: ReactionKindClap}))
	v.hit(t, v.post(t, answersCategoryPage, `{"slug":"go"}`, nil))
}

// nextDay returns how long from now to a minute into the next UTC day.
func nextDay(now time.Time) time.Duration {
	return now.UTC().Truncate(24 * time.Hour).Add(24*time.Hour + time.Minute).Sub(now)
}

// userAgent sets the User-Agent of every request.
type userAgent struct {
	ua   string
	next http.RoundTripper
}

func (u userAgent) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("User-Agent", u.ua)
	return u.next.RoundTrip(r)
}

// TestADeletedPostTakesItsViewsAndReactions: deleting a post removes its
// view counts, popular entries and reactions with its comments: nothing
// of it is left in its partition.
func TestADeletedPostTakesItsViewsAndReactions(t *testing.T) {
	v := newViewServer(t, views.Options{})
	b := v.seedBlog(t)
	ctx := context.Background()
	gid := b.published[12] // ada's
	v.send(t, rawID(t, gid, "Post"), browser, "https://example.org/")
	v.flush(t)
	ok[*ReactResponse](t)(React(ctx, v.reader("ann", "Ann", ""), ReactionInput{SubjectId: gid, Kind: ReactionKindLove}))
	ok[*DeletePostResponse](t)(DeletePost(ctx, b.writers[0], DeletePostInput{Id: gid}))
	expr, err := expression.NewBuilder().WithKeyCondition(expression.Key("PK").Equal(expression.Value("POST#" + rawID(t, gid, "Post")))).Build()
	if err != nil {
		t.Fatal(err)
	}
	out, err := v.db.Query(ctx, &dynamodb.QueryInput{
		TableName: &v.table, KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: ptr(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range out.Items {
		var k struct{ SK string }
		_ = attributevalue.UnmarshalMap(it, &k)
		t.Errorf("left after the post was deleted: %s", k.SK)
	}
}
