package demo

import "github.com/blogql/blog/storage"

// The demo blog's fixed content. Authors and categories have fixed ids so
// documentation can link to them (e.g. author "ada-lovelace", category
// "dynamodb"); posts are found again by their slugs, which are derived from
// the titles below.

// author is a demo author and the categories they mostly write about.
type author struct {
	storage.NewAuthor
	topics []string
}

var authors = []author{
	{storage.NewAuthor{
		ID:        "ada-lovelace",
		Slug:      "ada-lovelace",
		Name:      "Ada Lovelace",
		Bio:       "Writes about Go, performance and the art of making machines do exactly what you meant. Previously wrote the first published algorithm.",
		AvatarURL: "https://example.com/avatars/ada-lovelace.png",
	}, []string{"go", "performance", "testing"}},
	{storage.NewAuthor{
		ID:        "grace-hopper",
		Slug:      "grace-hopper",
		Name:      "Grace Hopper",
		Bio:       "Platform engineer who keeps services running at 3 a.m. so nobody else has to. Collector of nanoseconds and war stories about debugging.",
		AvatarURL: "https://example.com/avatars/grace-hopper.png",
	}, []string{"devops", "culture", "performance"}},
	{storage.NewAuthor{
		ID:        "alan-turing",
		Slug:      "alan-turing",
		Name:      "Alan Turing",
		Bio:       "Data modeler and distributed-systems generalist. Believes every access pattern deserves to be written down before the first table is created.",
		AvatarURL: "https://example.com/avatars/alan-turing.png",
	}, []string{"dynamodb", "architecture"}},
	{storage.NewAuthor{
		ID:        "margaret-hamilton",
		Slug:      "margaret-hamilton",
		Name:      "Margaret Hamilton",
		Bio:       "Reliability and testing lead. Thinks the best bug is the one a test caught in CI, and the second best is the one a design review caught.",
		AvatarURL: "https://example.com/avatars/margaret-hamilton.png",
	}, []string{"testing", "culture", "devops"}},
	{storage.NewAuthor{
		ID:        "barbara-liskov",
		Slug:      "barbara-liskov",
		Name:      "Barbara Liskov",
		Bio:       "API designer working on GraphQL schemas that frontend teams enjoy using. Strong opinions about abstractions, weakly held about naming.",
		AvatarURL: "https://example.com/avatars/barbara-liskov.png",
	}, []string{"graphql", "architecture", "go"}},
}

var categories = []storage.NewCategory{
	{Slug: "go", Name: "Go", Description: "The Go programming language: idioms, the standard library, tooling and the occasional deep dive into the runtime."},
	{Slug: "dynamodb", Name: "DynamoDB", Description: "Data modeling on Amazon DynamoDB: single-table design, indexes, transactions and keeping costs predictable."},
	{Slug: "graphql", Name: "GraphQL", Description: "Designing, serving and consuming GraphQL APIs: schemas, resolvers, dataloaders and generated clients."},
	{Slug: "architecture", Name: "Architecture", Description: "How systems are put together, the trade-offs behind the boxes and arrows, and how to write them down."},
	{Slug: "testing", Name: "Testing", Description: "Tests that catch bugs without slowing the team down: unit, end-to-end, fuzzing and performance budgets."},
	{Slug: "devops", Name: "DevOps", Description: "Shipping and running services: builds, deploys, health checks, observability and on-call."},
	{Slug: "performance", Name: "Performance", Description: "Making things fast and keeping them fast: profiling, benchmarking, caching and latency budgets."},
	{Slug: "culture", Name: "Engineering Culture", Description: "The human side of software: code review, design docs, onboarding and sustainable on-call."},
}

// topic is one demo post before it is written: its title, what it is about
// (used inside sentences, lower case), its category slugs, the primary
// one first, and the names of its tags.
type topic struct {
	title   string
	subject string
	cats    []string
	tags    []string // tag names, 1 to 4
}

var topics = []topic{
	{"Structured Logging with log/slog in Practice", "structured logging", []string{"go", "devops"}, []string{"Go", "Observability"}},
	{"Context Cancellation Patterns Every Go Service Needs", "context cancellation", []string{"go", "architecture"}, []string{"Go", "Concurrency", "HTTP"}},
	{"Table-Driven Tests Without the Boilerplate", "table-driven tests", []string{"testing", "go"}, []string{"Go", "Testing"}},
	{"Error Wrapping in Go: errors.Is, errors.As and Friends", "error wrapping", []string{"go"}, []string{"Go"}},
	{"Generics in Go: Where They Pay Off and Where They Don't", "generics", []string{"go"}, []string{"Go"}},
	{"Graceful Shutdown for Go HTTP Servers", "graceful shutdown", []string{"go", "devops"}, []string{"Go", "HTTP", "Concurrency"}},
	{"Profiling a Go Service with pprof", "profiling with pprof", []string{"performance", "go"}, []string{"Go", "Performance", "Observability"}},
	{"Reducing Allocations in Hot Paths", "allocation reduction", []string{"performance", "go"}, []string{"Go", "Performance"}},
	{"Iterators in Go: range-over-func Explained", "range-over-func iterators", []string{"go"}, []string{"Go"}},
	{"Designing Small Interfaces", "small interfaces", []string{"go", "architecture"}, []string{"Go", "API Design"}},
	{"Single-Table Design Without the Headaches", "single-table design", []string{"dynamodb", "architecture"}, []string{"DynamoDB", "AWS", "Data Modeling"}},
	{"Modeling One-to-Many Relationships in DynamoDB", "one-to-many modeling", []string{"dynamodb"}, []string{"DynamoDB", "Data Modeling"}},
	{"Transactions in DynamoDB: a TransactWriteItems Deep Dive", "DynamoDB transactions", []string{"dynamodb"}, []string{"DynamoDB", "AWS", "Data Modeling"}},
	{"Avoiding Hot Partitions with Write Sharding", "write sharding", []string{"dynamodb", "performance"}, []string{"DynamoDB", "AWS", "Performance"}},
	{"Optimistic Locking with Version Attributes", "optimistic locking", []string{"dynamodb", "architecture"}, []string{"DynamoDB", "Concurrency"}},
	{"Pagination with LastEvaluatedKey and Opaque Cursors", "cursor pagination", []string{"dynamodb", "graphql"}, []string{"DynamoDB", "GraphQL", "Data Modeling", "API Design"}},
	{"GSI Overloading: One Index, Many Access Patterns", "GSI overloading", []string{"dynamodb"}, []string{"DynamoDB", "Data Modeling"}},
	{"Testing Against DynamoDB Local", "testing against DynamoDB Local", []string{"dynamodb", "testing"}, []string{"DynamoDB", "Testing", "AWS"}},
	{"Idempotent Writes with ClientRequestToken", "idempotent writes", []string{"dynamodb", "architecture"}, []string{"DynamoDB", "AWS", "API Design"}},
	{"Counting Things in DynamoDB Without Scans", "transactional counters", []string{"dynamodb", "performance"}, []string{"DynamoDB", "Performance"}},
	{"Schema-First GraphQL with gqlgen", "schema-first GraphQL", []string{"graphql", "go"}, []string{"GraphQL", "Go", "gqlgen"}},
	{"Solving N+1 with Dataloaders", "dataloaders", []string{"graphql", "performance"}, []string{"GraphQL", "Performance", "gqlgen"}},
	{"Relay Connections: a Practical Guide", "Relay connections", []string{"graphql"}, []string{"GraphQL", "API Design"}},
	{"Error Codes in GraphQL Responses", "GraphQL error codes", []string{"graphql", "architecture"}, []string{"GraphQL", "API Design"}},
	{"Query Complexity Limits That Actually Protect You", "query complexity limits", []string{"graphql", "performance"}, []string{"GraphQL", "Performance", "Security"}},
	{"Generating Typed Clients with genqlient", "generated GraphQL clients", []string{"graphql", "go", "testing"}, []string{"GraphQL", "Go", "Testing"}},
	{"Global Object Identification and the Node Interface", "global object identification", []string{"graphql"}, []string{"GraphQL", "API Design"}},
	{"Persisted Queries for Faster Clients", "persisted queries", []string{"graphql", "performance"}, []string{"GraphQL", "Performance", "Security"}},
	{"Designing Mutations: Inputs and Payloads", "mutation design", []string{"graphql", "architecture"}, []string{"GraphQL", "API Design"}},
	{"The Case for Boring Technology", "boring technology", []string{"architecture", "culture"}, []string{"Architecture"}},
	{"Denormalization Is a Contract", "denormalization", []string{"architecture", "dynamodb"}, []string{"DynamoDB", "Data Modeling"}},
	{"Stateless Services and Where the State Went", "stateless services", []string{"architecture", "devops"}, []string{"Architecture", "AWS"}},
	{"Feature Flags Without Regret", "feature flags", []string{"architecture", "devops"}, []string{"Architecture"}},
	{"Writing Design Docs People Actually Read", "design docs", []string{"culture", "architecture"}, []string{"Architecture"}},
	{"End-to-End Tests That Don't Flake", "end-to-end testing", []string{"testing"}, []string{"Testing"}},
	{"Injecting Clocks for Deterministic Tests", "clock injection", []string{"testing", "go"}, []string{"Testing", "Go"}},
	{"Counting Requests: Performance Budgets as Tests", "request budgets", []string{"testing", "performance", "dynamodb"}, []string{"Testing", "Performance", "DynamoDB"}},
	{"Fuzzing Parsers with Go's Native Fuzzer", "fuzzing", []string{"testing", "go"}, []string{"Testing", "Go", "Security"}},
	{"Golden Files for Complex Output", "golden files", []string{"testing"}, []string{"Testing"}},
	{"Health Checks: Liveness vs Readiness", "health checks", []string{"devops"}, []string{"Observability", "HTTP"}},
	{"Container Images for Go in Under 20 MB", "small container images", []string{"devops", "go"}, []string{"Go", "Security"}},
	{"Zero-Downtime Deploys on a Budget", "zero-downtime deploys", []string{"devops"}, []string{"AWS", "HTTP"}},
	{"Timeouts Everywhere: Hardening HTTP Servers", "server timeouts", []string{"devops", "performance", "go"}, []string{"Go", "HTTP", "Security", "Performance"}},
	{"Observability on a Shoestring", "observability", []string{"devops"}, []string{"Observability"}},
	{"Benchmarking Honestly", "benchmarking", []string{"performance", "testing"}, []string{"Performance", "Testing", "Go"}},
	{"Caching at the Edge of a GraphQL API", "GraphQL caching", []string{"performance", "graphql"}, []string{"GraphQL", "Performance", "HTTP"}},
	{"Latency Budgets for Every Request", "latency budgets", []string{"performance", "architecture"}, []string{"Performance", "Observability"}},
	{"Code Review as a Teaching Tool", "code review", []string{"culture"}, []string{"Code Review"}},
	{"On-Call Without Burnout", "sustainable on-call", []string{"culture", "devops"}, []string{"Observability"}},
	{"Onboarding Engineers in Their First Week", "onboarding", []string{"culture"}, []string{"Code Review"}},
}

// coWritten are the titles of the posts written by more than one author:
// their primary author and up to two others who write about their
// categories (see plan.go).
var coWritten = []string{
	"Pagination with LastEvaluatedKey and Opaque Cursors",
	"Solving N+1 with Dataloaders",
	"Counting Requests: Performance Budgets as Tests",
	"Generating Typed Clients with genqlient",
	"Timeouts Everywhere: Hardening HTTP Servers",
}

// demoSeries is the demo's series, a tutorial in parts; its posts are
// the titles in the series' order, published in that order.
var demoSeries = struct {
	storage.NewSeries
	posts []string
}{
	NewSeries: storage.NewSeries{
		Slug:        "dynamodb-single-table-design",
		Title:       "DynamoDB single-table design",
		Description: "A tutorial in five parts: the table, one-to-many relationships, counters without scans, transactions and idempotent writes.",
		OwnerID:     "alan-turing",
	},
	posts: []string{
		"Single-Table Design Without the Headaches",
		"Modeling One-to-Many Relationships in DynamoDB",
		"Counting Things in DynamoDB Without Scans",
		"Transactions in DynamoDB: a TransactWriteItems Deep Dive",
		"Idempotent Writes with ClientRequestToken",
	},
}

// snippet is a code block a post about a category can show.
type snippet struct {
	lang, intro, code string
}

var snippets = map[string][]snippet{
	"go": {
		{"go", "Here is the shape we keep coming back to:", `func fetch(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	return io.ReadAll(io.LimitReader(resp.Body, 1<<20))
}`},
		{"go", "Wrapping keeps the cause while adding context a human can act on:", `var ErrNotFound = errors.New("not found")

func (s *Store) Post(ctx context.Context, id string) (*Post, error) {
	p, err := s.get(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("post %q: %w", id, err)
	}
	return p, nil
}

// Callers branch on the sentinel, not on the message.
if errors.Is(err, ErrNotFound) {
	http.Error(w, "no such post", http.StatusNotFound)
	return
}`},
		{"go", "A logger configured once at startup and passed down explicitly:", `logger := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{
	Level: slog.LevelInfo,
}))
logger.Info("request",
	"method", r.Method,
	"path", r.URL.Path,
	"status", rec.status,
	"duration", time.Since(start),
)`},
		{"go", "A generic helper that earns its keep:", `// Chunk splits s into slices of at most n elements.
func Chunk[T any](s []T, n int) [][]T {
	var out [][]T
	for n < len(s) {
		s, out = s[n:], append(out, s[:n:n])
	}
	return append(out, s)
}`},
	},
	"dynamodb": {
		{"go", "The query for an author's newest posts, built with the expression package:", `keyCond := expression.Key("PK").Equal(expression.Value("AUTHOR#" + authorID)).
	And(expression.Key("SK").BeginsWith("POST#"))
expr, err := expression.NewBuilder().WithKeyCondition(keyCond).Build()
if err != nil {
	return nil, err
}
out, err := db.Query(ctx, &dynamodb.QueryInput{
	TableName:                 aws.String(table),
	KeyConditionExpression:    expr.KeyCondition(),
	ExpressionAttributeNames:  expr.Names(),
	ExpressionAttributeValues: expr.Values(),
	ScanIndexForward:          aws.Bool(false), // newest first
	Limit:                     aws.Int32(20),
})`},
		{"json", "This is what the items look like side by side:", `[
  {"PK": "POST#01HZX", "SK": "POST#01HZX", "title": "Hello", "version": 3},
  {"PK": "AUTHOR#ada", "SK": "POST#2024-05-01T09:00:00.000Z#01HZX", "title": "Hello"},
  {"PK": "POST#01HZX", "SK": "CAT#go", "GSI1PK": "CAT#go",
   "GSI1SK": "POST#2024-05-01T09:00:00.000Z#01HZX", "title": "Hello"}
]`},
		{"go", "A conditional update that only succeeds if nobody got there first:", `cond := expression.Name("version").Equal(expression.Value(expected))
upd := expression.Set(expression.Name("title"), expression.Value(title)).
	Add(expression.Name("version"), expression.Value(1))
expr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(upd).Build()
if err != nil {
	return err
}
_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
	TableName:                 aws.String(table),
	Key:                       key,
	ConditionExpression:       expr.Condition(),
	UpdateExpression:          expr.Update(),
	ExpressionAttributeNames:  expr.Names(),
	ExpressionAttributeValues: expr.Values(),
})`},
	},
	"graphql": {
		{"graphql", "The schema is the contract, so it is where we start:", `"""A blog post."""
type Post implements Node {
  id: ID!
  slug: String!
  title: String!
  "Markdown source of the post."
  body: String!
  author: Author!
  categories: [Category!]!
  comments(first: Int = 20, after: String): CommentConnection!
}`},
		{"graphql", "A category page is a single query:", `query CategoryPage($slug: String!) {
  category(slug: $slug) {
    name
    posts(first: 20) {
      edges {
        cursor
        node { title slug excerpt publishedAt author { name } commentCount }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}`},
		{"json", "And an error a client can branch on looks like this:", `{
  "errors": [{
    "message": "post \"hello-world\" not found",
    "path": ["post"],
    "extensions": {"code": "NOT_FOUND"}
  }],
  "data": {"post": null}
}`},
	},
	"architecture": {
		{"go", "Depend on the smallest interface that does the job:", `// PostReader is all the handler needs; the store has twenty more methods.
type PostReader interface {
	Post(ctx context.Context, id string) (*Post, error)
}

func NewHandler(posts PostReader, logger *slog.Logger) http.Handler {
	return &handler{posts: posts, logger: logger}
}`},
		{"text", "The decision record we attach to every design doc:", `Decision:    one DynamoDB table for posts, authors, comments and categories
Status:      accepted
Context:     every page must render with at most four requests
Consequence: copies of post summaries are written in the same transaction
Revisit:     when a new access pattern does not fit GSI1`},
	},
	"testing": {
		{"go", "A table-driven test reads like a specification:", `func TestSlug(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"lower-cases", "Hello World", "hello-world"},
		{"drops punctuation", "Go: 1.26!", "go-1-26"},
		{"trims hyphens", "--x--", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Slug(tt.in); got != tt.want {
				t.Errorf("Slug(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}`},
		{"go", "Inject the clock instead of sleeping:", `type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) Advance(d time.Duration) { c.now = c.now.Add(d) }

clock := &fakeClock{now: time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)}
store := storage.New(db, "blog", storage.WithClock(clock.Now))
clock.Advance(48 * time.Hour) // the scheduled post is now visible`},
		{"go", "A fuzz target is a test with an open mind:", `func FuzzParseCursor(f *testing.F) {
	f.Add("eyJQSyI6IlBPU1QjMSJ9")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCursor(s)
		if err != nil {
			return // rejecting garbage is fine; panicking is not
		}
		if got := c.String(); got != s {
			t.Fatalf("round trip: %q became %q", s, got)
		}
	})
}`},
	},
	"devops": {
		{"dockerfile", "A multi-stage build keeps the final image tiny:", `FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /server .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /server /server
EXPOSE 8080
ENTRYPOINT ["/server"]`},
		{"yaml", "Liveness and readiness probes point at different endpoints on purpose:", `livenessProbe:
  httpGet: {path: /healthz, port: 8080}
  periodSeconds: 10
readinessProbe:
  httpGet: {path: /readyz, port: 8080}
  periodSeconds: 5
  failureThreshold: 3`},
		{"bash", "Checking a deploy by hand is one line each:", `curl -fsS http://localhost:8080/healthz
curl -fsS http://localhost:8080/readyz
curl -s http://localhost:8080/graphql \
  -H 'content-type: application/json' \
  -d '{"query":"{ __typename }"}'`},
	},
	"performance": {
		{"go", "A benchmark that measures the thing you care about:", `func BenchmarkRenderPost(b *testing.B) {
	post := loadFixture(b, "long-post.md")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(post); err != nil {
			b.Fatal(err)
		}
	}
}`},
		{"text", "Before and after, compared with benchstat:", `name          old time/op    new time/op    delta
RenderPost-8    412µs ± 2%     158µs ± 1%   -61.65%  (p=0.000 n=10+10)

name          old alloc/op   new alloc/op   delta
RenderPost-8    188kB ± 0%      41kB ± 0%   -78.19%  (p=0.000 n=10+10)`},
		{"bash", "Grabbing a CPU profile from a running service:", `go tool pprof -http=:6060 \
  'http://localhost:8080/debug/pprof/profile?seconds=30'`},
	},
	"culture": {
		{"markdown", "The checklist we paste into every pull request template:", `- [ ] The description says *why*, not just *what*
- [ ] Tests cover the behaviour a user sees
- [ ] Errors carry enough context to debug from the log alone
- [ ] Docs and the changelog are updated
- [ ] Nothing in this change needs a feature flag (or it has one)`},
		{"text", "Our on-call hand-off note, every Monday:", `Week:        2024-W19
Pages:       3 (1 actionable)
Open issues: slow readiness checks after deploys (#412)
Runbooks:    updated "table throttled" with the new alarm name
Shout-out:   thanks to everyone who reviewed the rollback script`},
	},
}

// Sentence pools. {subject} becomes the topic's subject, {Subject} the same
// with a capital first letter, {title} the post title.

var intros = []string{
	"Every team eventually has an opinion about {subject}. Ours changed twice in the last year, and this post is what we wish we had read before the first change.",
	"{Subject} is one of those topics that looks simple in a conference talk and turns subtle the moment it meets production traffic.",
	"A reader asked how we approach {subject}, and the honest answer was longer than a reply box allows, so here it is as a post.",
	"This started as an internal wiki page about {subject}. It got linked from enough pull requests that it deserved a proper home.",
	"We spent a sprint paying down debt around {subject}. Here is what we learned, including the parts we got wrong first.",
	"If you only remember one thing about {subject}, make it this: the defaults are a starting point, not a decision.",
}

var secondParagraphs = []string{
	"The examples below come from the code that serves this blog, trimmed to the essentials. None of it is clever, which is rather the point.",
	"We will look at the problem first, then a minimal working version, then the sharp edges we hit once real users showed up.",
	"Nothing here needs a new dependency. Most of it is the standard library and a few lines of discipline.",
	"There is no silver bullet, but there is a small set of habits that makes the whole thing boring in the best way.",
}

var backgrounds = []string{
	"A few years ago {subject} was something only large companies worried about. Today the tooling is good enough that a team of three can do it properly, and the excuses have mostly run out.",
	"Most of the advice about {subject} you will find online was written for a different scale. Some of it transfers; a surprising amount of it does not, and knowing which is which is most of the work.",
	"Our first attempt at {subject} was a weekend project that quietly became critical infrastructure. It worked, right up to the day it did not, and the postmortem is where this post really began.",
	"The standard library covers more of {subject} than people expect. Before reaching for a framework it is worth reading the package documentation end to end; it is shorter than most READMEs.",
}

var faqs = [][2]string{
	{"Is this overkill for a small project?", "Sometimes. If the service has one user and no on-call rotation, the simplest version is fine. The moment a second team depends on it, the extra structure pays for itself."},
	{"Does {subject} slow things down?", "Not measurably in our case. The overhead we did find came from doing it inconsistently, not from doing it at all."},
	{"What about existing code?", "Apply it at the edges first: new endpoints, new tables, new jobs. Old code gets converted when someone touches it for another reason."},
	{"How do you keep people from skipping it?", "Make the right way the easy way: a helper, a template and a test that fails when someone forgets. Review comments alone do not scale."},
	{"Would you do it the same way again?", "Mostly. We would start with the tests earlier, and we would write the documentation before the second team asked for it."},
}

var checklist = []string{
	"the behaviour is covered by a test that a user would recognise",
	"every external call has a timeout and a clear error",
	"the dashboard shows the new path next to the old one",
	"the runbook says what to do when it breaks",
	"the limits are documented, and enforced",
	"someone other than the author has read the code",
}

var whyParagraphs = []string{
	"Getting {subject} wrong rarely fails loudly. It shows up as a slow page, a confusing error or a page at 3 a.m. that takes an hour to explain.",
	"The cost of {subject} done badly is paid by the next person to touch the code, which is usually you, six months later.",
	"Teams that treat {subject} as a first-class concern ship faster, because they spend less time on surprises.",
}

var bullets = []string{
	"It makes failures visible where they happen, not three layers later.",
	"It keeps the happy path short and the error path explicit.",
	"It lets tests describe behaviour instead of implementation details.",
	"It gives operators something to grep for when things go wrong.",
	"It turns a tribal-knowledge rule into something a linter or a test can check.",
	"It bounds the work a single request can trigger.",
	"It keeps the cost predictable as traffic grows.",
	"It makes the next change smaller than the last one.",
}

var steps = []string{
	"Write down the behaviour you want in one sentence before touching code.",
	"Start with the smallest version that works end to end.",
	"Add a test that fails for the reason you expect.",
	"Measure before optimising, and keep the numbers in the pull request.",
	"Roll it out behind a flag, or to one environment first.",
	"Delete the old path once the new one has carried real traffic for a week.",
	"Write the runbook entry while the details are still fresh.",
}

var pitfalls = []string{
	"**Doing it implicitly.** Magic that saves three lines costs an afternoon of debugging later.",
	"**Skipping the error path.** The happy path gets reviewed; the error path gets paged.",
	"**Optimising the wrong layer.** Profile first; the slow part is rarely where you guessed.",
	"**Testing the mock.** If the test passes with the real dependency removed, it is not testing much.",
	"**One giant change.** Small, reversible steps beat a heroic rewrite every time.",
	"**Forgetting the limits.** Every list needs a maximum size and every call needs a timeout.",
	"**Copying without ownership.** Denormalized data needs one place that keeps it in sync.",
}

var tableRows = [][3]string{
	{"Do nothing", "No work today", "Surprises later"},
	{"Ad hoc fixes", "Fast to start", "Inconsistent, hard to review"},
	{"Shared helper", "One place to change", "Needs an owner"},
	{"Framework", "Batteries included", "Hard to leave, hides details"},
	{"Convention plus tests", "Cheap and explicit", "Needs discipline"},
}

var quotes = []string{
	"Make it work, make it right, make it fast, in that order.",
	"The best time to add a limit is before someone needs it.",
	"If it is not measured, it is an opinion.",
	"Boring is a feature.",
	"A test that never fails is documentation that can rot.",
}

var measureParagraphs = []string{
	"We compared the old and new versions on the same hardware, ten runs each, and kept the raw numbers next to the change. The improvement was real, but smaller than the first quick run suggested, which is exactly why we measure.",
	"Numbers from a laptop are a hint, not a promise. We confirmed the trend in staging with production-shaped data before calling it done.",
}

var conclusions = []string{
	"None of this is revolutionary, and that is fine. {Subject} rewards consistency far more than cleverness.",
	"Start small: pick the one idea here that would have prevented your last incident, and apply it this week.",
	"If you try any of this, we would love to hear how it went. Leave a comment below, especially if you disagree.",
	"That is the whole trick. The hard part is not the code; it is agreeing to do it the same way every time.",
}

var excerpts = []string{
	"A practical look at {subject}: what works, what to avoid, and the code to get started.",
	"What we learned about {subject} after a year in production, with examples you can copy.",
	"{Subject} without the hype: the trade-offs, the pitfalls and a minimal working version.",
	"Our field notes on {subject}, from the first prototype to the rules we follow today.",
}

// Reader is the demo blog's reader: a signed-in person who is not an
// author, as their token's name and picture claims show them. The server
// logs a development token for them in the embedded mode.
var Reader = storage.ReaderProfile{
	ID:        "jamie-rivera",
	Name:      "Jamie Rivera",
	AvatarURL: "https://example.com/avatars/jamie-rivera.png",
}

// readerThread is the reader's published comment on the newest post, with
// its author's answer; readerPending is the reader's comment there that
// waits for moderation.
var (
	readerThread = conversation{
		"First time commenting here: the part about {subject} answered a question our team argued about for a week.",
		[]string{"Welcome, and thanks! Which side of the argument won?"},
	}
	readerPending = "Could you share the benchmark setup? I would like to run it on our own data."
)

// conversation is a top-level comment with the answers the post's author
// might give it.
type conversation struct {
	comment string
	answers []string
}

var conversations = []conversation{
	{"Great write-up on {subject}. We hit exactly the problem from the pitfalls section last quarter.", []string{
		"Thanks! Which one bit you? The first one in the list is by far the most common in our reviews.",
		"Sorry to hear it, and glad the post rings true. Did you end up with a test that guards against it?",
	}},
	{"How does this approach to {subject} hold up under heavy write load? Did you measure it?", []string{
		"We did, with production-shaped data in staging: no measurable difference at our peak, which is about 2,000 writes a second.",
		"Good question. The overhead is per request, not per item, so it stays flat as load grows. The numbers are in the linked pull request.",
	}},
	{"Bookmarking this. The step-by-step list is going straight into our team wiki.", []string{
		"Glad it helped! Let me know which steps you end up changing; I am curious what other teams do differently.",
	}},
	{"I'd push back a little: for small teams the simplest option in your table might be good enough.", []string{
		"Fair point, and for a long time it was good enough for us too. We moved on when a second team started depending on the service.",
		"Agreed for a prototype. The trouble is that prototypes have a way of becoming production.",
	}},
	{"Thanks for including the code. Most posts about {subject} stop at the diagram.", []string{
		"That was the post I wanted to read when we started, so I wrote it.",
	}},
	{"We tried something similar and ended up reverting it. Curious whether you ran into the same issue with retries.", []string{
		"We did! Adding jitter to the backoff fixed most of it; capping the number of attempts fixed the rest.",
		"Could you share what went wrong? Always interested in the failure stories.",
	}},
	{"Is there a reason you did not use a library for this? Genuinely asking, not criticising.", []string{
		"We looked at a couple, but the code is short enough that owning it was cheaper than keeping up with a dependency.",
	}},
	{"This finally made {subject} click for me. The comparison table helped a lot.", []string{
		"That is great to hear. The table took the longest to write, so I am glad it earned its place.",
	}},
	{"Small nit: the first example is missing a timeout. Otherwise spot on.", []string{
		"Good catch, fixed. Thanks for reading closely!",
		"Ha, guilty. It is in the real code, I trimmed one line too many for the post.",
	}},
	{"Would love a follow-up post on how you test this end to end.", []string{
		"It is in the drafts folder, stay tuned.",
		"Noted! Short version: the same test suite runs against the embedded engine and DynamoDB Local in CI.",
	}},
}

// chimeIns are replies from other readers, which fit any thread.
var chimeIns = []string{
	"+1 to this. It is the part most tutorials skip.",
	"Seconded. We adopted this last month and the on-call load went down noticeably.",
	"Interesting, we saw the opposite. Probably depends a lot on traffic shape.",
	"Same question here, following this thread.",
	"We ran into exactly this. Writing the test first made the fix obvious.",
	"The trick for us was making it the default so nobody had to remember it.",
}
