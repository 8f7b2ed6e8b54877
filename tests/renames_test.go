package tests

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// renameGate is a transport in front of DynamoDB that holds back the
// rewrites of posts' copied names (a TransactWriteItems of a post that
// carries the name it is set to) until it is opened, so that another
// server reads between a rename's own write and its posts'.
type renameGate struct {
	next http.RoundTripper

	mu      sync.Mutex
	name    string        // the name held back; empty: none
	open    chan struct{} // closed to let them through
	blocked chan struct{} // closed when the first one waits
	once    *sync.Once
}

// hold holds back the rewrites that write name until the function it
// returns is called, and returns a channel closed once one waits.
func (g *renameGate) hold(name string) (waiting <-chan struct{}, release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.name, g.open, g.blocked, g.once = name, make(chan struct{}), make(chan struct{}), new(sync.Once)
	open, once := g.open, new(sync.Once)
	return g.blocked, func() { once.Do(func() { close(open) }) }
}

func (g *renameGate) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.Header.Get(dynamoTargetHeader), ".TransactWriteItems") && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		g.mu.Lock()
		name, open, blocked, once := g.name, g.open, g.blocked, g.once
		g.mu.Unlock()
		if name != "" && bytes.Contains(body, []byte(`"`+name+`"`)) && bytes.Contains(body, []byte(`"POST#`)) {
			once.Do(func() { close(blocked) })
			<-open
		}
	}
	return g.next.RoundTrip(r)
}

// TestRenamesReachAnswersKeptByOtherServers: a server that reads an
// author's, a category's or a tag's posts while a rename on another server
// has written the new name but not yet the posts' copies of it keeps an
// answer that shows the old names; once the rename is acknowledged and the
// change feed has handed over what followed it, neither server shows the
// old name any more, and an event after that read names a tag of that
// answer's Cache-Tag, by which a CDN purges it.
func TestRenamesReachAnswersKeptByOtherServers(t *testing.T) {
	gate := &renameGate{}
	s := newServerOn(t, []storage.Option{storage.WithStream()}, nil, withAnswers(0), inFront(func(next http.RoundTripper) http.RoundTripper {
		gate.next = next
		return gate
	}), func(_ *storage.ClientConfig, o *graph.HandlerOptions) {
		// Answers a CDN may keep, with the tags it purges them by.
		o.HTTP.CacheMaxAge, o.HTTP.CacheSMaxAge = time.Minute, 10*time.Minute
		// The rename is held while the other server awaits its event and
		// reads, which on a loaded DynamoDB Local takes longer than the
		// default deadline.
		o.HTTP.RequestTimeout = 2 * time.Minute
	})
	ctx := context.Background()
	authorGID := ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada Lovelace"})).CreateAuthor.Author.Id
	for _, c := range [][2]string{{"go", "Go"}, {"misc", "Misc"}} {
		ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: c[0], Name: c[1]}))
	}
	ada := s.as("ada", auth.RoleAuthor)
	const posts = 40
	var last string
	for i := range posts {
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{
			Title: fmt.Sprintf("Post %d", i), Slug: fmt.Sprintf("post-%d", i), Body: ptr("Body."),
			Categories: []string{"go"}, Tags: []string{"Databases"},
		})).CreatePost.Post
		at := start.Add(-time.Duration(posts-i) * time.Hour)
		ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: p.Id, At: &at}))
		last = p.Id
	}
	b := s.answerFollower(t)
	// The seed's events first, so that none of them drops what follows.
	b.await(t, storage.EventPostPublished, postIDOf(t, last))
	authorID := rawID(t, authorGID, "Author")

	const postPage = `query($slug: String!) { post(slug: $slug) { title authors { name } categories { name } tags { name } } }`
	description := 0
	cases := []struct {
		name, old, new string
		page, vars     string
		rename         func() error
		// first is the rename's own event, which a server handles before
		// the posts hold the new name.
		first func(storage.LoggedEvent) bool
	}{{
		name: "an author", old: "Ada Lovelace", new: "Ada King",
		page: `query($id: ID!) { author(id: $id) { name posts(first: 50) { edges { node { title authors { name } } } } } }`,
		vars: `{"id":"` + authorGID + `"}`,
		rename: func() error {
			_, err := UpdateAuthor(ctx, s.admin, UpdateAuthorInput{Id: authorGID, Name: ptr("Ada King")})
			return err
		},
		first: func(e storage.LoggedEvent) bool {
			return e.Type == storage.EventAuthorUpdated && e.Data.AuthorID == authorID
		},
	}, {
		name: "a category", old: `"name":"Go"`, new: "Golang",
		page: `query($slug: String!) { category(slug: $slug) { name posts(first: 50) { edges { node { title categories { name } } } } } }`,
		vars: `{"slug":"go"}`,
		rename: func() error {
			_, err := UpdateCategory(ctx, s.admin, UpdateCategoryInput{Slug: ptr("go"), Name: ptr("Golang")})
			return err
		},
		first: func(e storage.LoggedEvent) bool {
			return e.Type == storage.EventCategoryUpdated && e.Data.Slug == "go"
		},
	}, {
		name: "a tag", old: `"name":"Databases"`, new: "Data stores",
		page: `query($slug: String!) { tag(slug: $slug) { name posts(first: 50) { edges { node { title tags { name } } } } } }`,
		vars: `{"slug":"databases"}`,
		rename: func() error {
			_, err := RenameTag(ctx, s.admin, RenameTagInput{Slug: "databases", Name: "Data stores"})
			return err
		},
		first: func(e storage.LoggedEvent) bool {
			return e.Type == storage.EventTagUpdated && e.Data.Slug == "databases"
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pages := []string{b.getQueryURL(c.page, c.vars, ""), b.getQueryURL(postPage, `{"slug":"post-7"}`, "")}
			waiting, release := gate.hold(c.new)
			renamed := make(chan error, 1)
			go func() { renamed <- c.rename() }()
			defer release()
			<-waiting
			b.awaitEvent(t, c.first)

			// The second server reads while the posts hold the old name,
			// and keeps what it read.
			var tags []string
			for i, u := range pages {
				a := b.fetch(t, http.MethodGet, u, "", nil)
				if i == 0 && !strings.Contains(a.body, c.old) {
					t.Fatalf("read during the rename shows no %s: %s", c.old, a.body)
				}
				tags = append(tags, strings.Fields(a.header.Get(gqlhttp.SurrogateKeyHeader))...)
				b.hit(t, b.fetch(t, http.MethodGet, u, "", nil))
			}
			release()
			if err := <-renamed; err != nil {
				t.Fatalf("rename: %v", err)
			}
			// A write after the rename: once its event is handed over,
			// so is every event of the rename.
			description++
			ok[*UpdateCategoryResponse](t)(UpdateCategory(ctx, s.admin, UpdateCategoryInput{Slug: ptr("misc"), Description: ptr(fmt.Sprint("After ", description))}))
			after := b.eventsUntil(t, func(e storage.LoggedEvent) bool {
				return e.Type == storage.EventCategoryUpdated && e.Data.Slug == "misc"
			})

			for _, srv := range []*server{s, b.server} {
				for _, u := range []string{srv.getQueryURL(c.page, c.vars, ""), srv.getQueryURL(postPage, `{"slug":"post-7"}`, "")} {
					a := srv.fetch(t, http.MethodGet, u, "", nil)
					if strings.Contains(a.body, c.old) || !strings.Contains(a.body, c.new) {
						t.Errorf("after the rename (X-Cache %s): %s", a.header.Get(gqlhttp.AnswerCacheHeader), a.body)
					}
				}
			}
			purged := false
			for _, e := range after {
				for _, tag := range e.Data.CacheTags {
					purged = purged || slices.Contains(tags, tag)
				}
			}
			if !purged {
				t.Errorf("no event after the read names a tag of what it kept (%q): %+v", tags, after)
			}
		})
	}
}

// awaitEvent returns once the follower's feed handed over an event match
// accepts.
func (f *answerFollower) awaitEvent(t *testing.T, match func(storage.LoggedEvent) bool) {
	t.Helper()
	f.eventsUntil(t, match)
}

// eventsUntil returns the events the follower's feed hands over up to the
// first that match accepts, that one included: every answer they name is
// invalidated by then.
func (f *answerFollower) eventsUntil(t *testing.T, match func(storage.LoggedEvent) bool) []storage.LoggedEvent {
	t.Helper()
	var seen []storage.LoggedEvent
	deadline := time.After(time.Minute) // a guard against a hang, not a measure
	for {
		select {
		case e := <-f.events:
			seen = append(seen, e)
			if match(e) {
				return seen
			}
		case <-deadline:
			t.Fatalf("no such event among %+v", seen)
		}
	}
}
