package tests

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/auth"
	graphpkg "github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// TestMixedWorkload runs a seeded random mix of every mutation from
// concurrent clients over HTTP, for a bounded time: authors acting on
// their own posts and on others' (which provokes FORBIDDEN and NOT_FOUND),
// admins acting on everything, renames, category moves, schedules, slug
// changes onto other posts' and authors' old slugs, body, cover and SEO
// edits, preview links and previews read while their posts are
// unpublished and deleted, comments and replies of authors and of readers
// (with and without name and picture claims) through two servers on one
// table, one holding readers' comments and one publishing them, edits,
// approvals, rejections and deletions of comments by their writers and
// moderators, readers over their rate limit and sending the same comment
// twice, and resends of the same idempotency key, one after another or at
// the same moment as the first. It asserts that no response is INTERNAL
// or a 5xx, that every mutation's refusals are ones its situation
// explains, that every resend has one effect, that a comment sent again
// within a minute is refused, and that the invariant checker finds
// nothing afterwards. It logs its seed and a tally of the outcomes of
// each mutation.
//
// MIX_DURATION (a Go duration, default 3s), MIX_CLIENTS (default 8) and
// MIX_SEED (default: from the time) set the run; for example
//
//	MIX_DURATION=60s MIX_CLIENTS=16 go test -run TestMixedWorkload -v ./tests
//
// The seed fixes every client's choices, though not how their requests
// interleave.
func TestMixedWorkload(t *testing.T) {
	cfg := mixSettings(t)
	t.Logf("seed %d (MIX_SEED=%d runs these choices again), %d clients, %s", cfg.seed, cfg.seed, cfg.clients, cfg.duration)
	s := newServer(t, func(_ *storage.ClientConfig, o *graphpkg.HandlerOptions) { o.CommentsPerMinute = mixRateLimit })
	m := newMix(t, s, cfg)
	m.run()
	m.report()
	m.checkEffects()
	s.consistent()
}

// mixRateLimit is the readers' comment limit per minute in the mix: low,
// so that readers, shared by the clients, meet it.
const mixRateLimit = 3

// mixConfig is one run's settings.
type mixConfig struct {
	duration time.Duration
	clients  int
	seed     uint64
}

func mixSettings(t *testing.T) mixConfig {
	cfg := mixConfig{duration: 3 * time.Second, clients: 8, seed: uint64(time.Now().UnixNano())}
	if v := os.Getenv("MIX_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("MIX_DURATION=%q: want a positive duration such as 60s", v)
		}
		cfg.duration = d
	}
	if v := os.Getenv("MIX_CLIENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 64 {
			t.Fatalf("MIX_CLIENTS=%q: want 1 to 64", v)
		}
		cfg.clients = n
	}
	if v := os.Getenv("MIX_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("MIX_SEED=%q: want an unsigned integer", v)
		}
		cfg.seed = n
	}
	return cfg
}

// mixMutations is the table of mutations the clients pick from, by
// weight. A new mutation takes one entry: a name for the tally, a weight,
// and next, which builds one call from what the client knows of the blog.
// Two reads that race writes are in it too: a preview and the queue.
var mixMutations = []mixMutation{
	{"createAuthor", 1, nextCreateAuthor},
	{"updateAuthor", 2, nextUpdateAuthor("bio")},
	{"updateAuthor rename", 2, nextUpdateAuthor("name")},
	{"updateAuthor slug", 3, nextUpdateAuthor("slug")},
	{"createCategory", 1, nextCreateCategory},
	{"updateCategory", 1, nextUpdateCategory(false)},
	{"updateCategory rename", 2, nextUpdateCategory(true)},
	{"createPost", 6, nextCreatePost},
	{"updatePost", 2, nextUpdatePost("title")},
	{"updatePost slug", 3, nextUpdatePost("slug")},
	{"updatePost categories", 3, nextUpdatePost("categories")},
	{"updatePost content", 3, nextUpdatePost("content")},
	{"updatePost remove cover", 1, nextRemoveCover},
	{"publishPost now", 3, nextPublishPost(0)},
	{"publishPost past", 2, nextPublishPost(-1)},
	{"publishPost future", 3, nextPublishPost(1)},
	{"unpublishPost", 2, nextUnpublishPost},
	{"deletePost", 1, nextDeletePost},
	{"createPreviewLink", 2, nextCreatePreviewLink},
	{"post(previewToken)", 3, nextPreview},
	{"addComment", 4, nextAddComment(false)},
	{"addComment reply", 3, nextAddComment(true)},
	{"addComment reader held", 3, nextReaderComment(false, holding)},
	{"addComment reader published", 3, nextReaderComment(false, publishing)},
	{"addComment reader reply held", 2, nextReaderComment(true, holding)},
	{"addComment reader reply published", 2, nextReaderComment(true, publishing)},
	{"addComment reader again", 2, nextReaderAgain},
	{"updateComment", 3, nextUpdateComment},
	{"approveComment", 3, nextModerate(true)},
	{"rejectComment", 2, nextModerate(false)},
	{"deleteComment", 3, nextDeleteComment},
	{"moderationQueue", 1, nextModerationQueue},
}

// mixMutation is one entry of mixMutations.
type mixMutation struct {
	name   string
	weight int
	// next returns the call client c makes next, or nil when nothing
	// fits yet (say, no comment to reply to).
	next func(c *mixClient) *mixCall
}

// mixCall is one mutation as a client means it: the same input every
// time it is sent.
type mixCall struct {
	// send sends the mutation with key (nil: none) and returns what its
	// result says that a resend must repeat: the ids, versions and values
	// the write set, not what changes with time (counts, status).
	send func(ctx context.Context, key *string) (string, error)
	// keyless calls take no idempotency key: they are sent once.
	keyless bool
	// refusals are the outcomes its situation explains, besides the
	// transient UNAVAILABLE and TIMEOUT: a code, or a code and the
	// reason its extensions give ("CONFLICT/DUPLICATE_COMMENT").
	refusals []string
	// done, when set, is told of every answer, ok for a success: what a
	// write may have done, as far as the effects checked at the end go.
	done func(result string, ok bool)
	// unsure lists codes that can come back although the write took
	// effect: addComment's payload reads the post, which may have gone
	// from view since.
	unsure []string
	// flips lists refusals for a state that can change back (a post
	// published, then unpublished): a send with the key that ran before
	// another one's success may have met it. Other refusals beside a
	// success mean a resend did not replay it.
	flips []string
}

// mixUser is a signed-in user of the blog: an author, or an admin (who
// is an author too).
type mixUser struct {
	id, gid string
	admin   bool
	client  graphql.Client
}

// mixReader is a reader, whom any client may sign in as, through either
// server, with a token that carries a name and a picture, another name,
// or no claims at all: clients[server][claims].
type mixReader struct {
	sub     string
	clients [2][3]graphql.Client
}

// The two servers of the mix: one holds readers' comments, one
// publishes them.
const (
	holding    = 0
	publishing = 1
)

type mixPost struct {
	gid, owner, slug string
	version          int
	marker           string   // its body when created, which edits keep
	old              []string // slugs it had before, as far as the client knows
}

type mixComment struct {
	gid, post string     // global ids of the comment and post
	author    string     // the author who wrote it, or
	reader    *mixReader // the reader who did
	marker    string     // its body when written, which edits keep
	topLevel  bool
	held      bool // written as pending, and not approved since, as far as known
}

// mixPreview is a preview link made during the run.
type mixPreview struct{ token, post string }

// mixSent is a reader's comment as it was sent, to send again.
type mixSent struct {
	client    graphql.Client
	reader    *mixReader
	in        AddCommentInput
	createdAt time.Time
}

// effect is what one logical write with a marker (a post's or a
// comment's body) is expected to leave in the table.
type effect struct {
	marker  string
	written bool            // a response said it was written
	gone    bool            // something may have removed it since
	again   map[string]bool // results of the same comment accepted again
}

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
	m.servers[publishing] = s.with(func(o *graphpkg.HandlerOptions) { o.Moderation = graphpkg.PublishReaderComments })
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
				s.clock.advance(time.Minute)
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
				m.servers[holding].clock.advance(time.Second)
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
		case !explained(call.refusals, a.err) && !slices.Contains(call.unsure, cd):
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
		case a.err == nil, slices.Contains(transientCodes, cd), slices.Contains(call.unsure, cd):
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
	for _, f := range []struct{ typ, attr string }{{"post", "body"}, {"comment", "body"}} {
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

// The client's view of the blog.

// tag names the client's current call, uniquely in the run.
func (c *mixClient) tag() string { return fmt.Sprintf("%d-%d", c.n, c.seq) }

// post returns a known post: mostly one of the client's own, else anyone's.
func (c *mixClient) post() *mixPost {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.posts) == 0 {
		return nil
	}
	if c.rng.IntN(10) < 7 {
		var own []*mixPost
		for _, p := range m.posts {
			if p.owner == c.user.id {
				own = append(own, p)
			}
		}
		if len(own) > 0 {
			return own[c.rng.IntN(len(own))].copy()
		}
	}
	return m.posts[c.rng.IntN(len(m.posts))].copy()
}

func (p *mixPost) copy() *mixPost {
	q := *p
	q.old = slices.Clone(p.old)
	return &q
}

// postRefusals are the codes a write to p by the client may get, the
// post's author or an admin aside: a draft or scheduled post of someone
// else is NOT_FOUND, a published one FORBIDDEN; any post may be gone.
func (c *mixClient) postRefusals(p *mixPost, more ...string) []string {
	out := append([]string{graphpkg.CodeNotFound}, more...)
	if !c.user.admin && p.owner != c.user.id {
		out = append(out, graphpkg.CodeForbidden)
	}
	return out
}

// setVersion records the version a post write returned, or that a
// CONFLICT said the post has.
func (m *mix) setVersion(gid string, version int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.posts {
		if p.gid == gid && version > p.version {
			p.version = version
		}
	}
}

// setPostSlug records the slug a post write returned, and the one it
// had before among its old ones.
func (m *mix) setPostSlug(gid, slug string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.posts {
		if p.gid == gid && p.slug != slug {
			p.old = lastOf(append(p.old, p.slug), 2*storage.MaxRedirects)
			p.slug = slug
		}
	}
}

// lastOf returns the last n of list.
func lastOf(list []string, n int) []string {
	return list[max(0, len(list)-n):]
}

// learn updates what the client knows from a refusal: a CONFLICT names
// the current version.
func (m *mix) learn(gid string, err error) {
	if v, ok := extension(err, "currentVersion").(float64); ok {
		m.setVersion(gid, int(v))
	}
}

func (c *mixClient) categories() []string {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for range c.rng.IntN(3) {
		if s := m.cats[c.rng.IntN(len(m.cats))]; !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// slugFlips: a slug another holds now may be free a moment later, when
// its holder moves on and keeps it only as a redirect.
var slugFlips = []string{"CONFLICT/SLUG_TAKEN"}

// postSlug returns a slug for a post write of the client's and whether
// another post may hold it now (SLUG_TAKEN): mostly a new one, else
// another post's old slug (a redirect the write takes from it), the
// post's own old one (self, when not nil) or another's current one.
func (c *mixClient) postSlug(self *mixPost) (string, bool) {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	other := m.posts[c.rng.IntN(len(m.posts))]
	switch n := c.rng.IntN(20); {
	case n < 5 && len(other.old) > 0:
		return other.old[c.rng.IntN(len(other.old))], true
	case n < 7 && self != nil && len(self.old) > 0:
		return self.old[c.rng.IntN(len(self.old))], true
	case n < 9:
		return other.slug, self == nil || other.gid != self.gid
	}
	return "s-" + c.tag(), false
}

// authorSlug returns a slug for target as postSlug does for posts.
func (c *mixClient) authorSlug(target *mixUser) (string, bool) {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	other := m.users[c.rng.IntN(len(m.users))]
	switch n := c.rng.IntN(10); {
	case n < 4 && len(m.authorOld[other.id]) > 0:
		old := m.authorOld[other.id]
		return old[c.rng.IntN(len(old))], true
	case n < 5:
		return m.authorSlug[other.id], other != target
	}
	return "w-" + c.tag(), false
}

// setAuthorSlug records the slug an author write returned.
func (m *mix) setAuthorSlug(id, slug string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur := m.authorSlug[id]; cur != slug {
		m.authorOld[id] = lastOf(append(m.authorOld[id], cur), 2*storage.MaxRedirects)
		m.authorSlug[id] = slug
	}
}

// expect adds the marker of a write whose effect is counted.
func (m *mix) expect(marker string) *effect {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := &effect{marker: marker}
	m.effects[marker] = e
	return e
}

// written returns the done function of a write of e.
func (m *mix) written(e *effect) func(string, bool) {
	return func(_ string, ok bool) {
		m.mu.Lock()
		e.written = e.written || ok
		m.mu.Unlock()
	}
}

// user returns the user with the author id.
func (m *mix) user(id string) *mixUser {
	for _, u := range m.users {
		if u.id == id {
			return u
		}
	}
	return nil
}

// owner returns the author of the post gid, as far as known.
func (m *mix) owner(gid string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.posts {
		if p.gid == gid {
			return p.owner
		}
	}
	return ""
}

// comment returns a known comment, a held one first when held, or nil.
func (c *mixClient) comment(held bool) *mixComment {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if held {
		var list []*mixComment
		for _, cm := range m.comments {
			if cm.held {
				list = append(list, cm)
			}
		}
		if len(list) > 0 {
			cm := *list[c.rng.IntN(len(list))]
			return &cm
		}
	}
	if len(m.comments) == 0 {
		return nil
	}
	cm := *m.comments[c.rng.IntN(len(m.comments))]
	return &cm
}

// topComment returns a known top-level comment to reply to, or nil.
func (c *mixClient) topComment() *mixComment {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	var tops []*mixComment
	for _, cm := range m.comments {
		if cm.topLevel {
			tops = append(tops, cm)
		}
	}
	if len(tops) == 0 {
		return nil
	}
	cm := *tops[c.rng.IntN(len(tops))]
	return &cm
}

// addComment records a comment a response returned.
func (m *mix) addComment(cm *mixComment) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !slices.ContainsFunc(m.comments, func(k *mixComment) bool { return k.gid == cm.gid }) {
		m.comments = append(m.comments, cm)
	}
}

// published records that the comment gid is published.
func (m *mix) published(gid string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, cm := range m.comments {
		if cm.gid == gid {
			cm.held = false
		}
	}
}

// writerClient returns a client that signs in as the writer of cm, on
// either server, or nil when the writer is unknown.
func (c *mixClient) writerClient(cm *mixComment) graphql.Client {
	if cm.reader != nil {
		return cm.reader.clients[c.rng.IntN(2)][c.rng.IntN(3)]
	}
	if u := c.m.user(cm.author); u != nil {
		return u.client
	}
	return nil
}

// The mutations.

func nextCreateAuthor(c *mixClient) *mixCall {
	m := c.m
	subject := "new-" + c.tag()
	in := CreateAuthorInput{Subject: &subject, Name: "Author " + subject}
	var refusals []string
	switch c.rng.IntN(10) {
	case 0, 1:
		subject = m.users[c.rng.IntN(len(m.users))].id
		refusals = append(refusals, "CONFLICT/ALREADY_EXISTS")
	case 2, 3:
		// Another author's slug, old or current.
		slug, taken := c.authorSlug(nil)
		in.Slug = &slug
		if taken {
			refusals = append(refusals, "CONFLICT/SLUG_TAKEN")
		}
	}
	if !c.user.admin {
		refusals = append(refusals, graphpkg.CodeForbidden)
	}
	return &mixCall{refusals: refusals, flips: slugFlips, send: func(ctx context.Context, key *string) (string, error) {
		in := in
		in.IdempotencyKey = key
		r, err := CreateAuthor(ctx, c.user.client, in)
		if err != nil {
			return "", err
		}
		a := r.CreateAuthor.Author
		return fmt.Sprintf("%s v%d %s", a.Id, a.Version, a.Slug), nil
	}}
}

func nextUpdateAuthor(what string) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		target := c.user
		if c.rng.IntN(10) < 3 {
			target = m.users[c.rng.IntN(len(m.users))]
		}
		in := UpdateAuthorInput{Id: target.gid}
		var refusals []string
		switch what {
		case "name":
			in.Name = ptr("Name " + c.tag())
		case "bio":
			in.Bio = ptr("Bio " + c.tag())
		case "slug":
			slug, taken := c.authorSlug(target)
			in.Slug = &slug
			if taken {
				refusals = append(refusals, "CONFLICT/SLUG_TAKEN")
			}
		}
		if c.rng.IntN(2) == 0 {
			m.mu.Lock()
			in.ExpectedVersion = ptr(m.authorVer[target.id])
			m.mu.Unlock()
			refusals = append(refusals, "CONFLICT/VERSION_CONFLICT")
		}
		if !c.user.admin && target != c.user {
			refusals = append(refusals, graphpkg.CodeForbidden)
		}
		return &mixCall{refusals: refusals, flips: slugFlips, send: func(ctx context.Context, key *string) (string, error) {
			in := in
			in.IdempotencyKey = key
			r, err := UpdateAuthor(ctx, c.user.client, in)
			if err != nil {
				if v, ok := extension(err, "currentVersion").(float64); ok {
					m.mu.Lock()
					m.authorVer[target.id] = max(m.authorVer[target.id], int(v))
					m.mu.Unlock()
				}
				return "", err
			}
			a := r.UpdateAuthor.Author
			m.mu.Lock()
			m.authorVer[target.id] = max(m.authorVer[target.id], a.Version)
			m.mu.Unlock()
			m.setAuthorSlug(target.id, a.Slug)
			return fmt.Sprintf("%s v%d %q %q %s", a.Id, a.Version, a.Name, a.Bio, a.Slug), nil
		}}
	}
}

func nextCreateCategory(c *mixClient) *mixCall {
	m := c.m
	slug := "cat-" + c.tag()
	var refusals []string
	if c.rng.IntN(5) == 0 {
		m.mu.Lock()
		slug = m.cats[c.rng.IntN(len(m.cats))]
		m.mu.Unlock()
		refusals = append(refusals, graphpkg.CodeConflict)
	}
	if !c.user.admin {
		refusals = append(refusals, graphpkg.CodeForbidden)
	}
	return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
		r, err := CreateCategory(ctx, c.user.client, CreateCategoryInput{Slug: slug, Name: "Category " + slug, IdempotencyKey: key})
		if err != nil {
			return "", err
		}
		cat := r.CreateCategory.Category
		m.mu.Lock()
		if !slices.Contains(m.cats, cat.Slug) {
			m.cats = append(m.cats, cat.Slug)
			m.catVer[cat.Slug] = cat.Version
		}
		m.mu.Unlock()
		return fmt.Sprintf("%s v%d", cat.Slug, cat.Version), nil
	}}
}

func nextUpdateCategory(rename bool) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		m.mu.Lock()
		slug := m.cats[c.rng.IntN(len(m.cats))]
		in := UpdateCategoryInput{Slug: slug}
		var refusals []string
		if c.rng.IntN(2) == 0 {
			in.ExpectedVersion = ptr(m.catVer[slug])
			refusals = append(refusals, graphpkg.CodeConflict)
		}
		m.mu.Unlock()
		if rename {
			in.Name = ptr("Name " + c.tag())
		} else {
			in.Description = ptr("About " + c.tag())
		}
		if !c.user.admin {
			refusals = append(refusals, graphpkg.CodeForbidden)
		}
		return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
			in := in
			in.IdempotencyKey = key
			r, err := UpdateCategory(ctx, c.user.client, in)
			if err != nil {
				if v, ok := extension(err, "currentVersion").(float64); ok {
					m.mu.Lock()
					m.catVer[slug] = max(m.catVer[slug], int(v))
					m.mu.Unlock()
				}
				return "", err
			}
			cat := r.UpdateCategory.Category
			m.mu.Lock()
			m.catVer[slug] = max(m.catVer[slug], cat.Version)
			m.mu.Unlock()
			return fmt.Sprintf("%s v%d %q %q", cat.Slug, cat.Version, cat.Name, cat.Description), nil
		}}
	}
}

func nextCreatePost(c *mixClient) *mixCall {
	m := c.m
	// The body is the marker: edits keep it before " | ".
	body := "post " + c.tag()
	in := CreatePostInput{Title: "Title " + body, Slug: "p-" + c.tag(), Categories: c.categories(),
		Excerpt: ptr("Excerpt"), Body: &body}
	var refusals []string
	switch c.rng.IntN(10) {
	case 0, 1:
		// Another post's slug, current (SLUG_TAKEN) or old (a redirect
		// the new post takes).
		var taken bool
		if in.Slug, taken = c.postSlug(nil); taken {
			refusals = append(refusals, "CONFLICT/SLUG_TAKEN")
		}
	case 2:
		in.Categories = append(in.Categories, "no-such-category")
		refusals = append(refusals, graphpkg.CodeBadUserInput)
	}
	e := m.expect(body)
	return &mixCall{refusals: refusals, flips: slugFlips, send: func(ctx context.Context, key *string) (string, error) {
		in := in
		in.IdempotencyKey = key
		r, err := CreatePost(ctx, c.user.client, in)
		if err != nil {
			return "", err
		}
		p := r.CreatePost.Post
		m.mu.Lock()
		if m.postEffect[p.Id] == nil {
			m.postEffect[p.Id] = e
			m.posts = append(m.posts, &mixPost{gid: p.Id, owner: c.user.id, slug: p.Slug, version: p.Version, marker: body})
		}
		m.mu.Unlock()
		return fmt.Sprintf("%s v%d %s", p.Id, p.Version, p.Slug), nil
	}, done: m.written(e)}
}

func postResult(p PostSummary, version int) string {
	at, cover := "", ""
	if p.PublishedAt != nil {
		at = p.PublishedAt.Format(time.RFC3339Nano)
	}
	if p.CoverImage != nil {
		cover = p.CoverImage.Url
	}
	return fmt.Sprintf("%s v%d %s %q %s %s %d", p.Id, version, p.Slug, p.Title, at, cover, p.WordCount)
}

func nextUpdatePost(what string) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		p := c.post()
		if p == nil {
			return nil
		}
		in := UpdatePostInput{Id: p.gid, ExpectedVersion: p.version}
		refusals := c.postRefusals(p, graphpkg.CodeConflict)
		tag := c.tag()
		switch what {
		case "title":
			in.Title = ptr("Edited " + tag)
		case "slug":
			slug, _ := c.postSlug(p)
			in.Slug = &slug
		case "categories":
			in.Categories = c.categories()
			if in.Categories == nil {
				in.Categories = []string{}
			}
		case "content":
			marker := p.marker
			if marker == "" {
				marker = p.slug
			}
			in.Body = ptr(marker + " | edited " + tag + "\n\n## Part " + tag + "\n\nSome *words* of " + tag + ".\n\n### More\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
			switch c.rng.IntN(3) {
			case 0:
				in.CoverImage = &ImageInput{Url: "https://img.example.com/" + tag + ".png", Alt: ptr("Cover " + tag), Width: ptr(1200), Height: ptr(630)}
			case 1:
				in.Seo = &SeoInput{Title: ptr("SEO " + tag), Description: ptr("About " + tag),
					CanonicalUrl: ptr("https://blog.example.com/" + tag), OgImage: ptr("https://img.example.com/og-" + tag + ".png")}
			default:
				in.CoverImage = &ImageInput{Url: "https://img.example.com/" + tag + ".jpg"}
				in.Seo = &SeoInput{Description: ptr("")}
			}
		}
		return &mixCall{refusals: refusals, flips: slugFlips, send: func(ctx context.Context, key *string) (string, error) {
			in := in
			in.IdempotencyKey = key
			r, err := UpdatePost(ctx, c.user.client, in)
			if err != nil {
				m.learn(p.gid, err)
				return "", err
			}
			got := r.UpdatePost.Post
			m.setVersion(p.gid, got.Version)
			m.setPostSlug(p.gid, got.Slug)
			cats := make([]string, len(got.Categories))
			for i, cat := range got.Categories {
				cats[i] = cat.Slug
			}
			return postResult(got.PostSummary, got.Version) + " " + strings.Join(cats, ","), nil
		}}
	}
}

func nextRemoveCover(c *mixClient) *mixCall {
	m := c.m
	p := c.post()
	if p == nil {
		return nil
	}
	return &mixCall{refusals: c.postRefusals(p, graphpkg.CodeConflict), send: func(ctx context.Context, key *string) (string, error) {
		r, err := RemoveCoverImage(ctx, c.user.client, p.gid, p.version, key)
		if err != nil {
			m.learn(p.gid, err)
			return "", err
		}
		got := r.UpdatePost.Post
		m.setVersion(p.gid, got.Version)
		if got.CoverImage != nil {
			m.fail("removeCoverImage of %s: the post still has the cover %s", p.gid, got.CoverImage.Url)
		}
		return fmt.Sprintf("%s v%d", got.Id, got.Version), nil
	}}
}

// nextPublishPost publishes now (when 0), in the past (-1) or in the
// future (1).
func nextPublishPost(when int) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		p := c.post()
		if p == nil {
			return nil
		}
		in := PublishPostInput{Id: p.gid}
		switch now := m.servers[holding].clock.now(); when {
		case -1:
			in.At = ptr(now.Add(-time.Duration(1+c.rng.IntN(48)) * time.Hour))
		case 1:
			in.At = ptr(now.Add(time.Duration(1+c.rng.IntN(10)) * time.Minute))
		}
		refusals := c.postRefusals(p)
		if c.rng.IntN(3) == 0 {
			in.ExpectedVersion = ptr(p.version)
			refusals = append(refusals, graphpkg.CodeConflict)
		}
		return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
			in := in
			in.IdempotencyKey = key
			r, err := PublishPost(ctx, c.user.client, in)
			if err != nil {
				m.learn(p.gid, err)
				return "", err
			}
			got := r.PublishPost.Post
			m.setVersion(p.gid, got.Version)
			return postResult(got.PostSummary, got.Version), nil
		}}
	}
}

func nextUnpublishPost(c *mixClient) *mixCall {
	m := c.m
	p := c.post()
	if p == nil {
		return nil
	}
	in := UnpublishPostInput{Id: p.gid}
	// A draft is not published: BAD_USER_INPUT.
	refusals := c.postRefusals(p, graphpkg.CodeBadUserInput)
	if c.rng.IntN(3) == 0 {
		in.ExpectedVersion = ptr(p.version)
		refusals = append(refusals, graphpkg.CodeConflict)
	}
	return &mixCall{refusals: refusals, flips: []string{graphpkg.CodeBadUserInput}, send: func(ctx context.Context, key *string) (string, error) {
		in := in
		in.IdempotencyKey = key
		r, err := UnpublishPost(ctx, c.user.client, in)
		if err != nil {
			m.learn(p.gid, err)
			return "", err
		}
		got := r.UnpublishPost.Post
		m.setVersion(p.gid, got.Version)
		return postResult(got.PostSummary, got.Version), nil
	}}
}

func nextDeletePost(c *mixClient) *mixCall {
	m := c.m
	p := c.post()
	if p == nil {
		return nil
	}
	in := DeletePostInput{Id: p.gid}
	refusals := c.postRefusals(p)
	if c.rng.IntN(3) == 0 {
		in.ExpectedVersion = ptr(p.version)
		refusals = append(refusals, graphpkg.CodeConflict)
	}
	return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
		in := in
		in.IdempotencyKey = key
		r, err := DeletePost(ctx, c.user.client, in)
		if err != nil {
			m.learn(p.gid, err)
			return "", err
		}
		return r.DeletePost.Post.Id + " " + r.DeletePost.Post.Slug, nil
	}, done: func(string, bool) {
		// The post and its comments may be gone: nothing of them is
		// expected in the table any more.
		m.mu.Lock()
		defer m.mu.Unlock()
		if e := m.postEffect[p.gid]; e != nil {
			e.gone = true
		}
		for _, e := range m.effects {
			if strings.HasPrefix(e.marker, "comment on "+p.gid+" ") {
				e.gone = true
			}
		}
	}}
}

// nextCreatePreviewLink makes a preview link of a post, sometimes one
// that expires within minutes of the blog's time.
func nextCreatePreviewLink(c *mixClient) *mixCall {
	m := c.m
	p := c.post()
	if p == nil {
		return nil
	}
	in := CreatePreviewLinkInput{PostId: p.gid}
	if c.rng.IntN(3) == 0 {
		in.ExpiresIn = ptr(60 + c.rng.IntN(600))
	}
	return &mixCall{keyless: true, refusals: c.postRefusals(p), send: func(ctx context.Context, _ *string) (string, error) {
		r, err := CreatePreviewLink(ctx, c.user.client, in)
		if err != nil {
			return "", err
		}
		l := r.CreatePreviewLink
		if l.Post.Id != p.gid {
			m.fail("createPreviewLink of %s returned post %s", p.gid, l.Post.Id)
		}
		m.mu.Lock()
		m.previews = append(m.previews, mixPreview{token: l.Token, post: p.gid})
		m.mu.Unlock()
		return l.Token, nil
	}}
}

// nextPreview reads a post by one of the last preview tokens made,
// anonymously, while posts are unpublished, deleted and edited: it shows
// the token's post, or NOT_FOUND (deleted, or the token expired) with the
// one message of a preview that shows nothing.
func nextPreview(c *mixClient) *mixCall {
	m := c.m
	m.mu.Lock()
	n := len(m.previews)
	if n == 0 {
		m.mu.Unlock()
		return nil
	}
	pv := m.previews[n-1-c.rng.IntN(min(n, 20))]
	m.mu.Unlock()
	anon := m.anon[c.rng.IntN(2)]
	return &mixCall{keyless: true, refusals: []string{graphpkg.CodeNotFound}, send: func(ctx context.Context, _ *string) (string, error) {
		r, err := Preview(ctx, anon, pv.token)
		if err != nil {
			if code(err) == graphpkg.CodeNotFound {
				msg, _, _, _ := errInfo(err)
				m.mu.Lock()
				if m.notFound == "" {
					m.notFound = msg
				}
				first := m.notFound
				m.mu.Unlock()
				if msg != first {
					m.fail("a preview that shows nothing says %q, another %q", msg, first)
				}
			}
			return "", err
		}
		if r.Post.Id != pv.post {
			m.fail("the preview token of post %s showed post %s", pv.post, r.Post.Id)
		}
		return r.Post.Id, nil
	}}
}

func nextAddComment(reply bool) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		in := AddCommentInput{}
		if reply {
			parent := c.topComment()
			if parent == nil {
				return nil
			}
			in.PostId, in.ParentId = parent.post, &parent.gid
		} else {
			p := c.post()
			if p == nil {
				return nil
			}
			in.PostId = p.gid
		}
		// The marker names the post, so that deleting it clears what is
		// expected of its comments.
		in.Body = fmt.Sprintf("comment on %s %s", in.PostId, c.tag())
		e := m.expect(in.Body)
		// NOT_FOUND: the post is not public or gone (or went from view
		// after the comment was written, when the payload reads it), or
		// the parent is held or gone; BAD_USER_INPUT: the parent was
		// deleted but holds replies.
		refusals := []string{graphpkg.CodeNotFound}
		if reply {
			refusals = append(refusals, graphpkg.CodeBadUserInput)
		}
		return &mixCall{refusals: refusals, unsure: []string{graphpkg.CodeNotFound}, send: func(ctx context.Context, key *string) (string, error) {
			in := in
			in.IdempotencyKey = key
			r, err := AddComment(ctx, c.user.client, in)
			if err != nil {
				return "", err
			}
			got := r.AddComment.Comment
			if got.Status != CommentStatusPublished {
				m.fail("an author's comment %s is %s", got.Id, got.Status)
			}
			m.addComment(&mixComment{gid: got.Id, post: in.PostId, author: c.user.id, marker: in.Body, topLevel: !reply})
			return got.Id + " " + got.Body, nil
		}, done: m.written(e)}
	}
}

// nextReaderComment has a reader comment or reply through the holding or
// the publishing server, with one of their tokens.
func nextReaderComment(reply bool, srv int) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		r := m.readers[c.rng.IntN(len(m.readers))]
		client := r.clients[srv][c.rng.IntN(3)]
		in := AddCommentInput{}
		if reply {
			parent := c.topComment()
			if parent == nil {
				return nil
			}
			in.PostId, in.ParentId = parent.post, &parent.gid
		} else {
			p := c.post()
			if p == nil {
				return nil
			}
			in.PostId = p.gid
		}
		in.Body = fmt.Sprintf("comment on %s %s", in.PostId, c.tag())
		e := m.expect(in.Body)
		refusals := []string{graphpkg.CodeNotFound, graphpkg.CodeRateLimited}
		if reply {
			refusals = append(refusals, graphpkg.CodeBadUserInput)
		}
		want := CommentStatusPublished
		if srv == holding {
			want = CommentStatusPending
		}
		return &mixCall{refusals: refusals, unsure: []string{graphpkg.CodeNotFound}, flips: []string{graphpkg.CodeRateLimited},
			send: func(ctx context.Context, key *string) (string, error) {
				in := in
				in.IdempotencyKey = key
				res, err := AddComment(ctx, client, in)
				if err != nil {
					if code(err) == graphpkg.CodeRateLimited {
						if after, ok := extension(err, "retryAfter").(float64); !ok || after < 1 || after > storage.RateWindow.Seconds() {
							m.fail("RATE_LIMITED with retryAfter %v", extension(err, "retryAfter"))
						}
					}
					return "", err
				}
				got := res.AddComment.Comment
				if got.Status != want {
					m.fail("a reader's comment %s through the %d server is %s, want %s", got.Id, srv, got.Status, want)
				}
				if got.Commenter == nil || got.Commenter.IsAuthor || got.Author != nil {
					m.fail("a reader's comment %s shows commenter %+v and author %+v", got.Id, got.Commenter, got.Author)
				}
				m.addComment(&mixComment{gid: got.Id, post: in.PostId, reader: r, marker: in.Body, topLevel: !reply, held: want == CommentStatusPending})
				in.IdempotencyKey = nil
				m.mu.Lock()
				c.sent = &mixSent{client: client, reader: r, in: in, createdAt: got.CreatedAt}
				m.mu.Unlock()
				return fmt.Sprintf("%s %s %s", got.Id, got.Status, got.Body), nil
			}, done: m.written(e)}
	}
}

// nextReaderAgain sends the client's last reader's comment again, as it
// was, with another idempotency key or none: within a minute of the first
// it is a duplicate (CONFLICT, DUPLICATE_COMMENT), later a comment of its
// own.
func nextReaderAgain(c *mixClient) *mixCall {
	m := c.m
	m.mu.Lock()
	sent := c.sent
	var e *effect
	if sent != nil {
		e = m.effects[sent.in.Body]
	}
	m.mu.Unlock()
	if sent == nil {
		return nil
	}
	refusals := []string{graphpkg.CodeNotFound, graphpkg.CodeRateLimited, "CONFLICT/DUPLICATE_COMMENT", graphpkg.CodeBadUserInput}
	return &mixCall{refusals: refusals, unsure: []string{graphpkg.CodeNotFound},
		flips: []string{graphpkg.CodeRateLimited, "CONFLICT/DUPLICATE_COMMENT"},
		send: func(ctx context.Context, key *string) (string, error) {
			in := sent.in
			in.IdempotencyKey = key
			res, err := AddComment(ctx, sent.client, in)
			now := m.servers[holding].clock.now()
			if err != nil {
				return "", err
			}
			got := res.AddComment.Comment
			if now.Sub(sent.createdAt) < storage.RateWindow {
				m.fail("the same comment accepted again %s after the first (%s): %s", now.Sub(sent.createdAt), sent.createdAt, got.Id)
			}
			m.addComment(&mixComment{gid: got.Id, post: in.PostId, reader: sent.reader, marker: in.Body,
				topLevel: in.ParentId == nil, held: got.Status == CommentStatusPending})
			return fmt.Sprintf("%s %s %s", got.Id, got.Status, got.Body), nil
		}, done: func(result string, ok bool) {
			if !ok || e == nil {
				return
			}
			m.mu.Lock()
			defer m.mu.Unlock()
			if e.again == nil {
				e.again = map[string]bool{}
			}
			e.again[result] = true
		}}
}

// nextUpdateComment edits a comment as its writer, mostly, or as the
// client's user; the edit keeps the comment's marker.
func nextUpdateComment(c *mixClient) *mixCall {
	cm := c.comment(false)
	if cm == nil {
		return nil
	}
	client := c.user.client
	byWriter := c.rng.IntN(10) < 7
	if w := c.writerClient(cm); byWriter && w != nil {
		client = w
	}
	// NOT_FOUND: gone, or on a post its writer can no longer see (also
	// for a resend after the edit: a hidden comment is not theirs to
	// change); BAD_USER_INPUT: rejected, which an approval undoes.
	refusals := []string{graphpkg.CodeNotFound, graphpkg.CodeBadUserInput}
	if !byWriter && !c.user.admin && cm.author != c.user.id {
		refusals = append(refusals, graphpkg.CodeForbidden)
	}
	in := UpdateCommentInput{Id: cm.gid, Body: cm.marker + " | edited " + c.tag()}
	if cm.marker == "" {
		in.Body = "seed | edited " + c.tag()
	}
	return &mixCall{refusals: refusals, unsure: []string{graphpkg.CodeNotFound}, flips: []string{graphpkg.CodeBadUserInput},
		send: func(ctx context.Context, key *string) (string, error) {
			in := in
			in.IdempotencyKey = key
			r, err := UpdateComment(ctx, client, in)
			if err != nil {
				return "", err
			}
			got := r.UpdateComment.Comment
			return fmt.Sprintf("%s %s %s", got.Id, got.Body, got.Status), nil
		}}
}

// nextModerate approves or rejects a comment, mostly a held one, as the
// post's author, an admin or the client's user.
func nextModerate(approve bool) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		cm := c.comment(c.rng.IntN(10) < 7)
		if cm == nil {
			return nil
		}
		owner := m.owner(cm.post)
		actor := c.user
		switch n := c.rng.IntN(4); {
		case n < 2 && m.user(owner) != nil:
			actor = m.user(owner)
		case n < 3:
			actor = m.users[len(m.users)-1]
			for _, u := range m.users {
				if u.admin {
					actor = u
				}
			}
		}
		// NOT_FOUND: the comment or its post is gone, or the actor may
		// see neither a held comment nor a hidden post.
		refusals := []string{graphpkg.CodeNotFound}
		if !actor.admin && actor.id != owner {
			refusals = append(refusals, graphpkg.CodeForbidden)
		}
		if approve {
			// The reply's parent was deleted meanwhile.
			refusals = append(refusals, graphpkg.CodeBadUserInput)
		}
		// NOT_PENDING: decided already, by another call or this one's
		// send without the key; a reader's edit holds a published comment
		// again, so it can change back.
		refusals = append(refusals, "CONFLICT/NOT_PENDING")
		return &mixCall{refusals: refusals, flips: []string{"CONFLICT/NOT_PENDING"}, send: func(ctx context.Context, key *string) (string, error) {
			if approve {
				r, err := ApproveComment(ctx, actor.client, ApproveCommentInput{Id: cm.gid, IdempotencyKey: key})
				if err != nil {
					return "", err
				}
				got := r.ApproveComment.Comment
				if got.Status != CommentStatusPublished {
					m.fail("approveComment of %s: status %s", cm.gid, got.Status)
				}
				m.published(cm.gid)
				return fmt.Sprintf("%s %s", got.Id, got.Status), nil
			}
			r, err := RejectComment(ctx, actor.client, RejectCommentInput{Id: cm.gid, IdempotencyKey: key})
			if err != nil {
				return "", err
			}
			got := r.RejectComment.Comment
			if got.Status != CommentStatusRejected {
				m.fail("rejectComment of %s: status %s", cm.gid, got.Status)
			}
			return fmt.Sprintf("%s %s", got.Id, got.Status), nil
		}}
	}
}

// nextDeleteComment deletes a comment as the client's user, its writer
// or its post's author.
func nextDeleteComment(c *mixClient) *mixCall {
	m := c.m
	cm := c.comment(false)
	if cm == nil {
		return nil
	}
	owner := m.owner(cm.post)
	client, allowed := c.user.client, c.user.admin || cm.author == c.user.id || owner == c.user.id
	switch n := c.rng.IntN(10); {
	case n < 3:
		if w := c.writerClient(cm); w != nil {
			client, allowed = w, true
		}
	case n < 6:
		if u := m.user(owner); u != nil {
			client, allowed = u.client, true
		}
	}
	refusals := []string{graphpkg.CodeNotFound}
	if !allowed {
		refusals = append(refusals, graphpkg.CodeForbidden)
	}
	return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
		r, err := DeleteComment(ctx, client, DeleteCommentInput{Id: cm.gid, IdempotencyKey: key})
		if err != nil {
			return "", err
		}
		// The comment is shown or not as its post is visible at the time
		// of each answer, which a concurrent publish or unpublish changes.
		return r.DeleteComment.DeletedCommentId + " deleted", nil
	}, done: func(string, bool) {
		// The comment may be gone, or a tombstone without its body.
		m.mu.Lock()
		defer m.mu.Unlock()
		if e := m.effects[cm.marker]; e != nil {
			e.gone = true
		}
	}}
}

// nextModerationQueue reads the first page of the client's user's
// moderation queue while comments are held, approved, rejected and
// deleted.
func nextModerationQueue(c *mixClient) *mixCall {
	return &mixCall{keyless: true, send: func(ctx context.Context, _ *string) (string, error) {
		_, err := ModerationQueue(ctx, c.user.client, ptr(20), nil)
		return "", err
	}}
}
