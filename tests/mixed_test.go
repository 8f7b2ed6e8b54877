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
)

// TestMixedWorkload runs a seeded random mix of every mutation from
// concurrent clients over HTTP, for a bounded time: authors acting on
// their own posts and on others' (which provokes FORBIDDEN and NOT_FOUND),
// admins acting on everything, renames, category moves, schedules,
// comments and their deletion, and resends of the same idempotency key,
// one after another or at the same moment as the first. It asserts that
// no response is INTERNAL or a 5xx, that every mutation's refusals are
// ones its situation explains, that every resend has one effect, and that
// the invariant checker finds nothing afterwards. It logs its seed and a
// tally of the outcomes of each mutation.
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
	s := newServer(t)
	m := newMix(t, s, cfg)
	m.run()
	m.report()
	m.checkEffects()
	s.consistent()
}

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
var mixMutations = []mixMutation{
	{"createAuthor", 1, nextCreateAuthor},
	{"updateAuthor", 2, nextUpdateAuthor(false)},
	{"updateAuthor rename", 2, nextUpdateAuthor(true)},
	{"createCategory", 1, nextCreateCategory},
	{"updateCategory", 1, nextUpdateCategory(false)},
	{"updateCategory rename", 2, nextUpdateCategory(true)},
	{"createPost", 6, nextCreatePost},
	{"updatePost", 3, nextUpdatePost("title")},
	{"updatePost slug", 2, nextUpdatePost("slug")},
	{"updatePost categories", 3, nextUpdatePost("categories")},
	{"publishPost now", 3, nextPublishPost(0)},
	{"publishPost past", 2, nextPublishPost(-1)},
	{"publishPost future", 3, nextPublishPost(1)},
	{"unpublishPost", 2, nextUnpublishPost},
	{"deletePost", 1, nextDeletePost},
	{"addComment", 6, nextAddComment(false)},
	{"addComment reply", 4, nextAddComment(true)},
	{"deleteComment", 3, nextDeleteComment},
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
	// refusals are the error codes its situation explains, besides the
	// transient UNAVAILABLE and TIMEOUT.
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

type mixPost struct {
	gid, owner, slug string
	version          int
}

type mixComment struct {
	gid, post, author string // global ids of the comment and post, author's id
	marker            string // its body
	topLevel          bool
}

// effect is what one logical write with a marker (a post's or a
// comment's body) is expected to leave in the table.
type effect struct {
	marker  string
	written bool // a response said it was written
	gone    bool // something may have removed it since
}

// mix is one run: the server, the users, and the blog as the clients
// know it, which is as stale as a real client's knowledge.
type mix struct {
	t   *testing.T
	s   *server
	cfg mixConfig

	statuses *statusCounter

	mu         sync.Mutex
	users      []*mixUser
	cats       []string
	catVer     map[string]int
	authorVer  map[string]int
	posts      []*mixPost
	comments   []*mixComment
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
}

func newMix(t *testing.T, s *server, cfg mixConfig) *mix {
	t.Helper()
	ctx := context.Background()
	m := &mix{t: t, s: s, cfg: cfg, statuses: &statusCounter{next: http.DefaultTransport, n: map[int]int{}},
		catVer: map[string]int{}, authorVer: map[string]int{}, effects: map[string]*effect{},
		postEffect: map[string]*effect{}, tally: map[string]map[string]int{}}
	for i := range cfg.clients {
		u := &mixUser{id: fmt.Sprintf("user-%d", i), admin: i%4 == 3}
		roles := []string{auth.RoleAuthor}
		if u.admin {
			roles = []string{auth.RoleAdmin}
		}
		token, err := auth.Sign(testSecret, s.claims(u.id, roles...))
		if err != nil {
			t.Fatal(err)
		}
		u.client = graphql.NewClient(s.url, &http.Client{Transport: bearer{token: token, next: m.statuses}})
		a := ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: &u.id, Name: "User " + u.id}))
		u.gid = a.CreateAuthor.Author.Id
		m.authorVer[u.id] = a.CreateAuthor.Author.Version
		m.users = append(m.users, u)
	}
	for _, c := range []string{"go", "aws", "web", "data"} {
		ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: c, Name: strings.ToUpper(c)}))
		m.cats = append(m.cats, c)
		m.catVer[c] = 1
	}
	// Every user starts with a published post with comments, a draft and
	// a scheduled post.
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
				c := ok[*AddCommentResponse](t)(AddComment(ctx, m.users[(i+1)%len(m.users)].client, AddCommentInput{PostId: p.Id, Body: "seed comment"}))
				m.comments = append(m.comments, &mixComment{gid: c.AddComment.Comment.Id, post: p.Id, author: m.users[(i+1)%len(m.users)].id, topLevel: true})
			}
		}
	}
	return m
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
				m.s.clock.advance(time.Second)
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
		m.count(name, cd, a.err)
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
		case !slices.Contains(call.refusals, cd) && !slices.Contains(call.unsure, cd):
			m.fail("%s: unexpected %s: %v", name, cd, a.err)
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
		case slices.Contains(call.flips, cd) && (together || i < firstOK):
		default:
			var seq []string
			for _, a := range answers {
				seq = append(seq, fmt.Sprintf("%s %q", code(a.err), a.result))
			}
			m.fail("%s with key %s: %s beside a success: %v (answers in order: %v)", name, *key, cd, a.err, seq)
		}
	}
}

func (m *mix) count(name, cd string, err error) {
	if cd == "" && err != nil {
		cd = "error without code"
	}
	if cd == "" {
		cd = "OK"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tally[name] == nil {
		m.tally[name] = map[string]int{}
	}
	m.tally[name][cd]++
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
		fmt.Fprintf(&b, "\n  %-24s", name)
		for _, cd := range slices.Sorted(maps.Keys(m.tally[name])) {
			fmt.Fprintf(&b, " %s %d", cd, m.tally[name][cd])
			totals[cd] += m.tally[name][cd]
			calls += m.tally[name][cd]
		}
	}
	m.statuses.mu.Lock()
	statuses := maps.Clone(m.statuses.n)
	m.statuses.mu.Unlock()
	m.t.Logf("%d responses in %s (%.0f/s); by code %v; HTTP statuses %v; by mutation:%s",
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
// write left by its marker: never more than one, and one when a response
// said it was written and nothing removed it since.
func (m *mix) checkEffects() {
	found := map[string]int{}
	for _, f := range []struct{ typ, attr string }{{"post", "body"}, {"comment", "body"}} {
		for v, n := range m.scan(f.typ, f.attr) {
			found[v] += n
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for marker, e := range m.effects {
		switch n := found[marker]; {
		case n > 1:
			m.t.Errorf("%s written %d times", marker, n)
		case n == 0 && e.written && !e.gone:
			m.t.Errorf("%s answered as written, but it is not in the table", marker)
		}
	}
}

// scan returns how many items of type typ have each value of attr.
func (m *mix) scan(typ, attr string) map[string]int {
	expr, err := expression.NewBuilder().
		WithFilter(expression.Name("type").Equal(expression.Value(typ))).
		WithProjection(expression.NamesList(expression.Name(attr))).Build()
	if err != nil {
		m.t.Fatal(err)
	}
	out := map[string]int{}
	pages := dynamodb.NewScanPaginator(m.s.db, &dynamodb.ScanInput{
		TableName: aws.String(m.s.table), ConsistentRead: aws.Bool(true),
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
			p := *own[c.rng.IntN(len(own))]
			return &p
		}
	}
	p := *m.posts[c.rng.IntN(len(m.posts))]
	return &p
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

// expect adds the marker of a write whose effect is counted.
func (m *mix) expect(marker string) *effect {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := &effect{marker: marker}
	m.effects[marker] = e
	return e
}

// The mutations.

func nextCreateAuthor(c *mixClient) *mixCall {
	m := c.m
	subject := "new-" + c.tag()
	var refusals []string
	if c.rng.IntN(5) == 0 {
		subject = m.users[c.rng.IntN(len(m.users))].id
		refusals = append(refusals, graphpkg.CodeConflict)
	}
	if !c.user.admin {
		refusals = append(refusals, graphpkg.CodeForbidden)
	}
	return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
		r, err := CreateAuthor(ctx, c.user.client, CreateAuthorInput{Subject: &subject, Name: "Author " + subject, IdempotencyKey: key})
		if err != nil {
			return "", err
		}
		a := r.CreateAuthor.Author
		return fmt.Sprintf("%s v%d", a.Id, a.Version), nil
	}}
}

func nextUpdateAuthor(rename bool) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		target := c.user
		if c.rng.IntN(10) < 3 {
			target = m.users[c.rng.IntN(len(m.users))]
		}
		in := UpdateAuthorInput{Id: target.gid}
		if rename {
			in.Name = ptr("Name " + c.tag())
		} else {
			in.Bio = ptr("Bio " + c.tag())
		}
		var refusals []string
		if c.rng.IntN(2) == 0 {
			m.mu.Lock()
			in.ExpectedVersion = ptr(m.authorVer[target.id])
			m.mu.Unlock()
			refusals = append(refusals, graphpkg.CodeConflict)
		}
		if !c.user.admin && target != c.user {
			refusals = append(refusals, graphpkg.CodeForbidden)
		}
		return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
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
			return fmt.Sprintf("%s v%d %q %q", a.Id, a.Version, a.Name, a.Bio), nil
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
	// The body is the marker: no edit of the mix changes it.
	body := "post " + c.tag()
	in := CreatePostInput{Title: "Title " + body, Slug: "p-" + c.tag(), Categories: c.categories(),
		Excerpt: ptr("Excerpt"), Body: &body}
	var refusals []string
	switch c.rng.IntN(20) {
	case 0:
		if p := c.post(); p != nil {
			in.Slug = p.slug
			refusals = append(refusals, graphpkg.CodeConflict)
		}
	case 1:
		in.Categories = append(in.Categories, "no-such-category")
		refusals = append(refusals, graphpkg.CodeBadUserInput)
	}
	e := m.expect(body)
	return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
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
			m.posts = append(m.posts, &mixPost{gid: p.Id, owner: c.user.id, slug: p.Slug, version: p.Version})
		}
		m.mu.Unlock()
		return fmt.Sprintf("%s v%d %s", p.Id, p.Version, p.Slug), nil
	}, done: func(_ string, ok bool) {
		m.mu.Lock()
		e.written = e.written || ok
		m.mu.Unlock()
	}}
}

func postResult(p PostSummary, version int) string {
	at := ""
	if p.PublishedAt != nil {
		at = p.PublishedAt.Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%s v%d %s %q %s", p.Id, version, p.Slug, p.Title, at)
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
		switch what {
		case "title":
			in.Title = ptr("Edited " + c.tag())
		case "slug":
			in.Slug = ptr("s-" + c.tag())
			if other := c.post(); other != nil && c.rng.IntN(10) == 0 {
				in.Slug = &other.slug
			}
		case "categories":
			in.Categories = c.categories()
			if in.Categories == nil {
				in.Categories = []string{}
			}
		}
		return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
			in := in
			in.IdempotencyKey = key
			r, err := UpdatePost(ctx, c.user.client, in)
			if err != nil {
				m.learn(p.gid, err)
				return "", err
			}
			got := r.UpdatePost.Post
			m.setVersion(p.gid, got.Version)
			cats := make([]string, len(got.Categories))
			for i, cat := range got.Categories {
				cats[i] = cat.Slug
			}
			return postResult(got.PostSummary, got.Version) + " " + strings.Join(cats, ","), nil
		}}
	}
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
		switch now := m.s.clock.now(); when {
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

func nextAddComment(reply bool) func(c *mixClient) *mixCall {
	return func(c *mixClient) *mixCall {
		m := c.m
		in := AddCommentInput{}
		if reply {
			m.mu.Lock()
			var tops []*mixComment
			for _, cm := range m.comments {
				if cm.topLevel {
					tops = append(tops, cm)
				}
			}
			if len(tops) == 0 {
				m.mu.Unlock()
				return nil
			}
			parent := tops[c.rng.IntN(len(tops))]
			m.mu.Unlock()
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
		// after the comment was written, when the payload reads it);
		// BAD_USER_INPUT: the parent was deleted but holds replies.
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
			m.mu.Lock()
			if !slices.ContainsFunc(m.comments, func(cm *mixComment) bool { return cm.gid == got.Id }) {
				m.comments = append(m.comments, &mixComment{gid: got.Id, post: in.PostId, author: c.user.id, marker: in.Body, topLevel: !reply})
			}
			m.mu.Unlock()
			return got.Id + " " + got.Body, nil
		}, done: func(_ string, ok bool) {
			m.mu.Lock()
			e.written = e.written || ok
			m.mu.Unlock()
		}}
	}
}

func nextDeleteComment(c *mixClient) *mixCall {
	m := c.m
	m.mu.Lock()
	if len(m.comments) == 0 {
		m.mu.Unlock()
		return nil
	}
	cm := *m.comments[c.rng.IntN(len(m.comments))]
	var owner string
	for _, p := range m.posts {
		if p.gid == cm.post {
			owner = p.owner
		}
	}
	m.mu.Unlock()
	refusals := []string{graphpkg.CodeNotFound}
	if !c.user.admin && cm.author != c.user.id && owner != c.user.id {
		refusals = append(refusals, graphpkg.CodeForbidden)
	}
	return &mixCall{refusals: refusals, send: func(ctx context.Context, key *string) (string, error) {
		r, err := DeleteComment(ctx, c.user.client, DeleteCommentInput{Id: cm.gid, IdempotencyKey: key})
		if err != nil {
			return "", err
		}
		if got := r.DeleteComment.Comment; got != nil {
			return fmt.Sprintf("%s deleted=%v", got.Id, got.Deleted), nil
		}
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
