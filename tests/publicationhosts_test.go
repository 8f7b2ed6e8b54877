package tests

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/Khan/genqlient/graphql"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/routing"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/syndication"
)

// Which publication a request is for: its Host. The server's hosts serve
// the default publication; a host a publication claims serves that
// publication's GraphQL and feeds, on its own Store; any other host is 404.

// hosted is s behind the router of the publications' hosts, composed as
// the server composes it: the default site on s's store, each other
// publication's on its Store, their GraphQL answers in s's answer cache
// under the publication's scope.
type hosted struct {
	s   *server
	url string
	rt  *routing.Router

	mu   sync.Mutex
	last *storage.Counter
}

// route returns s behind the router; the default publication is served at
// blog.test (and loopback).
func (s *server) route(t *testing.T) *hosted {
	t.Helper()
	return s.routeWith(t, nil)
}

// routeWith returns s behind a router of the options configure changes
// (nil: none), whose feeds are titled with their publication's title.
func (s *server) routeWith(t *testing.T, configure func(*routing.Options)) *hosted {
	t.Helper()
	site := func(store *storage.Store, scope, siteURL, title string) (http.Handler, error) {
		opts := s.opts
		opts.HTTP.AnswerScope = scope
		mux := http.NewServeMux()
		mux.Handle("/graphql", graph.NewHandler(store, opts))
		feeds, err := syndication.New(store, syndication.Options{SiteURL: siteURL, Title: title, Paths: frontend.DefaultPaths, Logger: s.opts.Logger})
		if err != nil {
			return nil, err
		}
		feeds.Register(mux)
		return mux, nil
	}
	def, err := site(s.store, "", "http://blog.test", "Blog")
	if err != nil {
		t.Fatal(err)
	}
	opts := routing.Options{
		Default: def, DefaultID: s.store.Publication(), DefaultHosts: []string{"localhost", "blog.test"},
		Lookup: func(ctx context.Context, host string) (string, error) {
			id, err := s.store.PublicationIDByHost(ctx, host)
			if errors.Is(err, storage.ErrNotFound) {
				return "", nil
			}
			return id, err
		},
		Build: func(ctx context.Context, id string) (http.Handler, error) {
			pub, err := s.store.GetPublication(ctx, id)
			if err != nil {
				return nil, err
			}
			store, err := s.store.In(id)
			if err != nil {
				return nil, err
			}
			siteURL := "http://blog.test"
			if len(pub.Hosts) > 0 {
				siteURL = "http://" + pub.Hosts[0]
			}
			return site(store, id, siteURL, pub.Title)
		},
	}
	if configure != nil {
		configure(&opts)
	}
	rt := routing.New(opts)
	h := &hosted{s: s, rt: rt}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, counter := storage.WithRequestCounter(r.Context())
		h.mu.Lock()
		h.last = counter
		h.mu.Unlock()
		rt.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(hs.Close)
	h.url = hs.URL
	return h
}

// requests returns the DynamoDB requests of the last request.
func (h *hosted) requests() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last.ByOperation()
}

// client returns a GraphQL client whose requests are addressed to host
// ("" for the URL's), signed in as sub with roles (none: anonymous).
func (h *hosted) client(host, sub string, roles ...string) graphql.Client {
	var rt http.RoundTripper = http.DefaultTransport
	if sub != "" {
		token, err := auth.Sign(testSecret, h.s.claims(sub, roles...))
		if err != nil {
			h.s.t.Fatal(err)
		}
		rt = bearer{token: token, next: rt}
	}
	return graphql.NewClient(h.url+"/graphql", &http.Client{Transport: toHost{host: host, next: rt}})
}

// send sends a GET of path (or a POST of body to it) to host.
func (h *hosted) send(t *testing.T, host, path, body string) httpAnswer {
	t.Helper()
	method := http.MethodGet
	if body != "" {
		method = http.MethodPost
	}
	req, err := http.NewRequest(method, h.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return roundTrip(t, req)
}

// toHost addresses every request to host.
type toHost struct {
	host string
	next http.RoundTripper
}

func (h toHost) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if h.host != "" {
		r.Host = h.host
	}
	return h.next.RoundTrip(r)
}

// publishOn creates the author sub and a published post titled title
// through host, and returns the post's id. On the publication pub (an
// id; empty for the default publication) its staff are added first
// (admin an owner, sub an author) and tokens bound to it are used.
func publishOn(t *testing.T, h *hosted, pub, host, sub, title, slug string) string {
	t.Helper()
	ctx := context.Background()
	admin, author := h.client(host, "admin", auth.RoleAdmin), h.client(host, sub, auth.RoleAuthor)
	if pub != "" {
		platform := h.client("", "ops", auth.RolePlatform)
		for account, role := range map[string]string{"admin": "OWNER", sub: "AUTHOR"} {
			in := map[string]any{"publication": pub, "account": account, "role": role}
			if err := gql(platform, addMemberMutation, map[string]any{"in": in}, &struct{}{}); err != nil {
				t.Fatal(err)
			}
		}
		admin, author = h.scoped(host, pub, "admin", auth.PubOwner), h.scoped(host, pub, sub, auth.PubAuthor)
	}
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, admin, CreateAuthorInput{Subject: ptr(sub), Name: sub}))
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, author, CreatePostInput{Title: title, Slug: slug, Body: ptr("Body.")})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, author, PublishPostInput{Id: p.Id}))
	return p.Id
}

func TestHostsServeTheirOwnPublication(t *testing.T) {
	s := newServer(t, withAnswers(0))
	h := s.route(t)
	var created struct {
		CreatePublication struct{ Publication publicationAnswer } `json:"createPublication"`
	}
	in := map[string]any{"slug": "bee", "title": "Bee", "hosts": []string{"b.example"}}
	if err := gql(h.client("blog.test", "ops", auth.RolePlatform), createPublicationMutation, map[string]any{"in": in}, &created); err != nil {
		t.Fatal(err)
	}
	onA := publishOn(t, h, "", "blog.test", "ada", "Default post", "default-post")
	onB := publishOn(t, h, created.CreatePublication.Publication.ID, "b.example", "bob", "Bee post", "bee-post")

	type titled struct {
		Post *struct{ Title string } `json:"post"`
	}
	postByID := `query($id: ID!) { post(id: $id) { title } }`
	for _, c := range []struct {
		name, host, id, want string
	}{
		{"B's post through B's host", "b.example:80", onB, "Bee post"},
		{"B's post through the default host", "blog.test", onB, ""},
		{"the default's post through B's host", "b.example", onA, ""},
		{"the default's post through the default host", "blog.test", onA, "Default post"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got titled
			err := gql(h.client(c.host, ""), postByID, map[string]any{"id": c.id}, &got)
			switch {
			case c.want == "" && (got.Post != nil || code(err) != "NOT_FOUND"):
				t.Errorf("post: %+v, %v; want none, NOT_FOUND", got.Post, err)
			case c.want != "" && (err != nil || got.Post == nil || got.Post.Title != c.want):
				t.Errorf("post: %+v, %v; want %q", got.Post, err, c.want)
			}
		})
	}

	feed := `{ posts(first: 20) { edges { node { title } } } }`
	t.Run("each host lists its own posts", func(t *testing.T) {
		for host, want := range map[string]string{"b.example": "Bee post", "blog.test": "Default post"} {
			a := h.send(t, host, "/graphql", `{"query":`+jsonString(feed)+`}`)
			if a.status != 200 || !strings.Contains(a.body, want) || strings.Count(a.body, `"title"`) != 1 {
				t.Errorf("%s: %d %s, want only %q", host, a.status, a.body, want)
			}
		}
	})
	t.Run("each host's feed shows its own posts", func(t *testing.T) {
		for host, want := range map[string][2]string{"b.example": {"Bee post", "Default post"}, "blog.test": {"Default post", "Bee post"}} {
			a := h.send(t, host, "/feed.xml", "")
			if a.status != 200 || !strings.Contains(a.body, want[0]) || strings.Contains(a.body, want[1]) {
				t.Errorf("%s/feed.xml: %d, has %q: %v, has %q: %v", host, a.status, want[0], strings.Contains(a.body, want[0]), want[1], strings.Contains(a.body, want[1]))
			}
		}
	})
	t.Run("an unknown host is 404 on every route", func(t *testing.T) {
		for _, path := range []string{"/graphql", "/feed.xml", "/sitemap.xml", "/"} {
			for _, host := range []string{"nobody.example", "b.example."} {
				a := h.send(t, host, path, "")
				if a.status != http.StatusNotFound || strings.Contains(a.body, "post") {
					t.Errorf("%s%s: %d %q, want 404", host, path, a.status, a.body)
				}
			}
		}
	})
	t.Run("a held host costs no DynamoDB request", func(t *testing.T) {
		// A staff token keeps the read from the answer cache.
		var out map[string]any
		if err := gql(h.client("blog.test", "admin", auth.RoleAdmin), feed, nil, &out); err != nil {
			t.Fatal(err)
		}
		onDefault := h.requests()
		if err := gql(h.scoped("b.example", created.CreatePublication.Publication.ID, "admin", auth.PubOwner), feed, nil, &out); err != nil {
			t.Fatal(err)
		}
		onB := h.requests()
		if !maps.Equal(onB, onDefault) {
			t.Errorf("B's host made %v, the default host %v: want the same", onB, onDefault)
		}
	})
	t.Run("the answer cache keeps the hosts' answers apart", func(t *testing.T) {
		body := `{"query":` + jsonString(`query Feed `+feed) + `}`
		first := map[string]string{}
		for _, host := range []string{"blog.test", "b.example"} {
			h.send(t, host, "/graphql", body) // kept
			a := h.send(t, host, "/graphql", body)
			if got := a.header.Get(gqlhttp.AnswerCacheHeader); got != "HIT" || total(h.requests()) != 0 {
				t.Errorf("%s again: X-Cache %q, %v requests; want HIT, none", host, got, h.requests())
			}
			first[host] = a.body
		}
		if first["blog.test"] == first["b.example"] || !strings.Contains(first["b.example"], "Bee post") {
			t.Errorf("the hosts' answers: %q and %q", first["blog.test"], first["b.example"])
		}
	})
}
