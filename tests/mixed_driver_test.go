package tests

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/auth"
	graphpkg "github.com/blogql/blog/graph"
)

// The mixed workload's driver and its report: the run, its servers and
// clients, how a call is sent and its answer judged, and the tally, the
// failures and the effects checked in the table at the end.
// The test is in mixed_test.go.

// mix is one run: the servers, the users, and the blog as the clients
// know it, which is as stale as a real client's knowledge.
type mix struct {
	t       *testing.T
	servers [2]*server
	cfg     mixConfig

	statuses *statusCounter
	anon     [2]graphql.Client

	mu         sync.Mutex
	users      []*mixUser
	readers    []*mixReader
	authorSlug map[string]string   // by author id
	authorOld  map[string][]string // by author id
	cats       []string
	catVer     map[string]int
	authorVer  map[string]int
	posts      []*mixPost
	comments   []*mixComment
	previews   []mixPreview
	notFound   string             // the message of a preview that shows nothing
	effects    map[string]*effect // by marker
	postEffect map[string]*effect // by post global id: the post's createPost
	tally      map[string]map[string]int
	problems   int
	// Static pages and the site settings' version (mixed_pages_test.go).
	pages   []*mixPage
	siteVer int
}

// mixClient is one concurrent client, signed in as user.
type mixClient struct {
	m    *mix
	n    int
	user *mixUser
	rng  *rand.Rand
	seq  int
	// sent is the client's last reader's comment (guarded by m.mu).
	sent *mixSent
}

func newMix(t *testing.T, s *server, cfg mixConfig) *mix {
	t.Helper()
	ctx := context.Background()
	m := &mix{t: t, cfg: cfg, statuses: &statusCounter{next: http.DefaultTransport, n: map[int]int{}},
		authorSlug: map[string]string{}, authorOld: map[string][]string{},
		catVer: map[string]int{}, authorVer: map[string]int{}, effects: map[string]*effect{},
		postEffect: map[string]*effect{}, tally: map[string]map[string]int{}}
	m.servers[holding] = s
	m.servers[publishing] = s.with(func(o *graphpkg.HandlerOptions) { o.Comments.Moderation = graphpkg.PublishReaderComments })
	for i, srv := range m.servers {
		m.anon[i] = graphql.NewClient(srv.url, &http.Client{Transport: m.statuses})
	}
	for i := range cfg.clients {
		u := &mixUser{id: fmt.Sprintf("user-%d", i), admin: i%4 == 3}
		roles := []string{auth.RoleAuthor}
		if u.admin {
			roles = []string{auth.RoleAdmin}
		}
		u.client = m.client(holding, s.claims(u.id, roles...))
		a := ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: &u.id, Name: "User " + u.id}))
		u.gid = a.CreateAuthor.Author.Id
		m.authorVer[u.id] = a.CreateAuthor.Author.Version
		m.authorSlug[u.id] = a.CreateAuthor.Author.Slug
		m.users = append(m.users, u)
	}
	for i := range 3 {
		r := &mixReader{sub: fmt.Sprintf("oidc|reader-%d", i)}
		for srv := range m.servers {
			for j, claims := range [][2]string{
				{fmt.Sprintf("Reader %d", i), fmt.Sprintf("https://id.example.com/r%d.png", i)},
				{fmt.Sprintf("R. %d", i), ""},
				{"", ""},
			} {
				c := s.claims(r.sub, auth.RoleReader)
				c.Name, c.Picture = claims[0], claims[1]
				r.clients[srv][j] = m.client(srv, c)
			}
		}
		m.readers = append(m.readers, r)
	}
	for _, c := range []string{"go", "aws", "web", "data"} {
		ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: c, Name: strings.ToUpper(c)}))
		m.cats = append(m.cats, c)
		m.catVer[c] = 1
	}
	// Every user starts with a published post with a comment and a
	// reader's comment waiting for moderation, a draft and a scheduled
	// post.
	for i, u := range m.users {
		for j, at := range []*time.Time{ptr(start.Add(-time.Hour)), nil, ptr(start.Add(time.Hour))} {
			slug := fmt.Sprintf("seed-%d-%d", i, j)
			p := ok[*CreatePostResponse](t)(CreatePost(ctx, u.client, CreatePostInput{Title: slug, Slug: slug,
				Categories: []string{m.cats[(i+j)%len(m.cats)]}})).CreatePost.Post
			version := p.Version
			if at != nil {
				version = ok[*PublishPostResponse](t)(PublishPost(ctx, u.client, PublishPostInput{Id: p.Id, At: at})).PublishPost.Post.Version
			}
			m.posts = append(m.posts, &mixPost{gid: p.Id, owner: u.id, slug: slug, version: version})
			if j == 0 {
				other := m.users[(i+1)%len(m.users)]
				c := ok[*AddCommentResponse](t)(AddComment(ctx, other.client, AddCommentInput{PostId: p.Id, Body: "seed comment"}))
				m.comments = append(m.comments, &mixComment{gid: c.AddComment.Comment.Id, post: p.Id, author: other.id, topLevel: true})
				r := m.readers[i%len(m.readers)]
				held := ok[*AddCommentResponse](t)(AddComment(ctx, r.clients[holding][0], AddCommentInput{PostId: p.Id, Body: "seed reader comment"}))
				m.comments = append(m.comments, &mixComment{gid: held.AddComment.Comment.Id, post: p.Id, reader: r, topLevel: true, held: true})
				// Within the readers' rate limit.
				s.clock.Advance(time.Minute)
			}
		}
	}
	return m
}

// with returns a second server on s's table whose handler has s's
// options changed by f, as an instance of the service configured
// otherwise behind the same load balancer.
func (s *server) with(f func(*graphpkg.HandlerOptions)) *server {
	o := &server{t: s.t, db: s.db, table: s.table, store: s.store, clock: s.clock, opts: s.opts}
	f(&o.opts)
	o.serve()
	return o
}

// client returns a client of the server srv with a token of claims,
// whose answers m.statuses counts.
func (m *mix) client(srv int, claims auth.Claims) graphql.Client {
	token, err := auth.Sign(testSecret, claims)
	if err != nil {
		m.t.Fatal(err)
	}
	return graphql.NewClient(m.servers[srv].url, &http.Client{Transport: bearer{token: token, next: m.statuses}})
}

// run lets the clients loose for the configured time.
func (m *mix) run() {
	deadline := time.Now().Add(m.cfg.duration)
	total := 0
	for _, mu := range mixMutations {
		total += mu.weight
	}
	var wg sync.WaitGroup
	for i := range m.cfg.clients {
		c := &mixClient{m: m, n: i, user: m.users[i], rng: rand.New(rand.NewPCG(m.cfg.seed, uint64(i)))}
		wg.Go(func() {
			for time.Now().Before(deadline) {
				c.seq++
				pick := c.rng.IntN(total)
				for _, mu := range mixMutations {
					if pick -= mu.weight; pick < 0 {
						if call := mu.next(c); call != nil {
							c.do(mu.name, call)
						}
						break
					}
				}
				// Time passes for the blog: scheduled posts come due.
				m.servers[holding].clock.Advance(time.Second)
			}
		})
	}
	wg.Wait()
}

// transientCodes may be answered to any call; the call may be sent again
// as it was.
var transientCodes = []string{graphpkg.CodeUnavailable, graphpkg.CodeTimeout}

// do sends call as a client does: without an idempotency key, or with one
// and then perhaps again, after the first answer or at the same moment,
// and again with the same key after a transient error. It counts every
// answer and checks it is one the call expects.
func (c *mixClient) do(name string, call *mixCall) {
	m := c.m
	var key *string
	mode := c.rng.IntN(10)
	if call.keyless {
		mode = 0
	}
	if mode >= 3 {
		key = ptr("mix-" + c.tag())
	}
	type answer struct {
		result string
		err    error
	}
	var answers []answer
	send := func() answer {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, err := call.send(ctx, key)
		return answer{r, err}
	}
	switch {
	case mode >= 8: // two at once
		var wg sync.WaitGroup
		both := make([]answer, 2)
		for i := range both {
			wg.Go(func() { both[i] = send() })
		}
		wg.Wait()
		answers = append(answers, both...)
	case mode >= 6: // one after the other
		answers = append(answers, send(), send())
	default:
		answers = append(answers, send())
	}
	for retries := 0; key != nil && retries < 3 && slices.Contains(transientCodes, code(answers[len(answers)-1].err)); retries++ {
		answers = append(answers, send())
	}

	first := ""
	for _, a := range answers {
		cd := code(a.err)
		m.count(name, outcome(a.err))
		if call.done != nil {
			call.done(a.result, a.err == nil)
		}
		if a.err == nil && first == "" {
			first = a.result
		}
		switch {
		case a.err == nil, slices.Contains(transientCodes, cd):
		case cd == graphpkg.CodeInternal || status(a.err) >= 500:
			m.fail("%s: %s (HTTP %d): %v", name, cd, status(a.err), a.err)
		case !explained(call.refusals, a.err) && !unsure(call.unsure, a.err):
			m.fail("%s: unexpected %s: %v", name, outcome(a.err), a.err)
		}
	}
	if key == nil || first == "" {
		return
	}
	// Every answer with the key is the first success's, or transient, or
	// a refusal that the moment explains: one sent after a success must
	// replay it, one sent before or at the same time may have met the
	// post in a state that changes back and forth (flips).
	firstOK := slices.IndexFunc(answers, func(a answer) bool { return a.err == nil })
	for i, a := range answers {
		cd := code(a.err)
		together := mode >= 8 && i < 2 && firstOK < 2
		switch {
		case a.err == nil && a.result != first:
			m.fail("%s resent with key %s: returned %q, the first success returned %q", name, *key, a.result, first)
		case a.err == nil, slices.Contains(transientCodes, cd), unsure(call.unsure, a.err):
		case explained(call.flips, a.err) && (together || i < firstOK):
		default:
			var seq []string
			for _, a := range answers {
				seq = append(seq, fmt.Sprintf("%s %q", outcome(a.err), a.result))
			}
			m.fail("%s with key %s: %s beside a success: %v (answers in order: %v)", name, *key, outcome(a.err), a.err, seq)
		}
	}
}

// outcome names an answer for the tally: OK, or its code, with the
// reason its extensions give when they give one.
func outcome(err error) string {
	switch cd := code(err); {
	case err == nil:
		return "OK"
	case cd == "":
		return "error without code"
	default:
		if r, ok := extension(err, "reason").(string); ok {
			return cd + "/" + r
		}
		return cd
	}
}

// unsure reports whether err is one of list, answers that may come back
// although the write took effect: its code, or its code and the end of
// the path of the field that failed ("NOT_FOUND@comment.post").
func unsure(list []string, err error) bool {
	cd := code(err)
	if slices.Contains(list, cd) {
		return true
	}
	var errs gqlerror.List
	if !errors.As(err, &errs) || len(errs) == 0 {
		return false
	}
	path := errs[0].Path.String()
	return slices.ContainsFunc(list, func(u string) bool {
		c, suffix, ok := strings.Cut(u, "@")
		return ok && c == cd && strings.HasSuffix(path, "."+suffix)
	})
}

// explained reports whether the refusal err is one of list: its code, or
// its code and reason.
func explained(list []string, err error) bool {
	return slices.Contains(list, code(err)) || slices.Contains(list, outcome(err))
}

func (m *mix) count(name, outcome string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tally[name] == nil {
		m.tally[name] = map[string]int{}
	}
	m.tally[name][outcome]++
}

// fail reports a problem, the first 20 of them in full.
func (m *mix) fail(format string, args ...any) {
	m.mu.Lock()
	m.problems++
	n := m.problems
	m.mu.Unlock()
	if n <= 20 {
		m.t.Errorf(format, args...)
	} else if n == 21 {
		m.t.Error("more problems follow; not shown")
	}
}

// report logs the tally of outcomes and the HTTP statuses, and fails the
// run on an INTERNAL answer or a 5xx.
func (m *mix) report() {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	totals := map[string]int{}
	calls := 0
	for _, name := range slices.Sorted(maps.Keys(m.tally)) {
		fmt.Fprintf(&b, "\n  %-34s", name)
		for _, cd := range slices.Sorted(maps.Keys(m.tally[name])) {
			fmt.Fprintf(&b, " %s %d", cd, m.tally[name][cd])
			totals[cd] += m.tally[name][cd]
			calls += m.tally[name][cd]
		}
	}
	m.statuses.mu.Lock()
	statuses := maps.Clone(m.statuses.n)
	m.statuses.mu.Unlock()
	m.t.Logf("%d responses in %s (%.0f/s); by outcome %v; HTTP statuses %v; by operation:%s",
		calls, m.cfg.duration, float64(calls)/m.cfg.duration.Seconds(), totals, statuses, b.String())
	if totals[graphpkg.CodeInternal] > 0 {
		m.t.Errorf("%d INTERNAL answers", totals[graphpkg.CodeInternal])
	}
	for st, n := range statuses {
		if st >= 500 {
			m.t.Errorf("%d responses with HTTP status %d", n, st)
		}
	}
	if totals["OK"] == 0 {
		m.t.Error("no mutation succeeded")
	}
}

// checkEffects counts, in the table, the posts and comments each logical
// write left by its marker (the body it was written with, which edits
// keep before " | "): never more than one, but for a comment accepted
// again, and one when a response said it was written and nothing removed
// it since.
func (m *mix) checkEffects() {
	found := map[string]int{}
	for _, f := range []struct{ typ, attr string }{{"postBody", "body"}, {"comment", "body"}} {
		for v, n := range m.scan(f.typ, f.attr) {
			marker, _, _ := strings.Cut(v, " | ")
			found[marker] += n
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for marker, e := range m.effects {
		switch n := found[marker]; {
		case n > 1+len(e.again):
			m.t.Errorf("%s written %d times", marker, n)
		case n == 0 && e.written && !e.gone:
			m.t.Errorf("%s answered as written, but it is not in the table", marker)
		}
	}
}

// scan returns how many items of type typ have each value of attr.
func (m *mix) scan(typ, attr string) map[string]int {
	s := m.servers[holding]
	expr, err := expression.NewBuilder().
		WithFilter(expression.Name("type").Equal(expression.Value(typ))).
		WithProjection(expression.NamesList(expression.Name(attr))).Build()
	if err != nil {
		m.t.Fatal(err)
	}
	out := map[string]int{}
	pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{
		TableName: aws.String(s.table), ConsistentRead: aws.Bool(true),
		FilterExpression: expr.Filter(), ProjectionExpression: expr.Projection(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			m.t.Fatal(err)
		}
		var rows []map[string]string
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &rows); err != nil {
			m.t.Fatal(err)
		}
		for _, r := range rows {
			out[r[attr]]++
		}
	}
	return out
}
