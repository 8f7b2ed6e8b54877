package tests

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/storage"
)

// What a CDN keeps: every public answer carries a tag that the event of
// each write changing it names (so that a purge by the event's tags
// reaches it), or no shared cache may keep it at all.

// TestPublicAnswersCarryTheTagsOfTheWritesThatChangeThem reads each kind
// of answer over GET, makes a write that changes it, and checks that the
// answer is either private or tagged with one of the write's event's
// cache tags.
func TestPublicAnswersCarryTheTagsOfTheWritesThatChangeThem(t *testing.T) {
	events := make(eventTap, 4096)
	s := newSearchServerWith(t, func(s *searchServer) {
		s.http.CacheMaxAge, s.http.CacheSMaxAge = time.Minute, time.Hour
		s.tap = events.tap
	})
	ada, _ := s.writer()
	s.publish(ada, "compost", "Making compost", "Compost heaps need greens, browns and air. Turn the compost heap.", "garden")
	bins := s.publish(ada, "compost-bins", "Compost bins compared", "Which compost bin turns greens into compost fastest.", "garden")
	s.waitFound(t, "compost", "compost", "compost-bins")
	ctx := context.Background()

	cases := []struct {
		name, query string
		write       func(t *testing.T)
		event       func(storage.LoggedEvent) bool
		shared      bool // whether CDNs may keep it: tagged
	}{
		{"the list of all categories", `{ categories { slug name } }`, func(t *testing.T) {
			ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: "shed", Name: "Shed"}))
		}, func(e storage.LoggedEvent) bool {
			return e.Type == storage.EventCategoryUpdated && e.Data.Slug == "shed"
		}, true},
		{"the list of all authors", `{ authors(first: 20) { edges { node { name } } } }`, func(t *testing.T) {
			ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("bob"), Name: "Bob", Slug: ptr("bob")}))
		}, func(e storage.LoggedEvent) bool { return e.Type == storage.EventAuthorUpdated && e.Data.Slug == "bob" }, true},
		{"the list of all tags", `{ tags(first: 20) { edges { node { slug postCount } } } }`, func(t *testing.T) {
			ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Shovels", Slug: "shovels", Tags: []string{"Tools"}}))
		}, func(e storage.LoggedEvent) bool { return e.Type == storage.EventTagUpdated && e.Data.Slug == "tools" }, true},
		{"a search", `{ search(query: "compost") { edges { node { title snippet } } } }`, func(t *testing.T) {
			ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, ada, UnpublishPostInput{Id: bins}))
		}, func(e storage.LoggedEvent) bool {
			return e.Type == storage.EventPostUnpublished && e.Data.PostID == rawID(t, bins, "Post")
		}, true},
		{"related posts", `{ post(slug: "compost") { title related { title } } }`, func(t *testing.T) {
			s.publish(ada, "compost-tea", "Compost tea", "Steep compost in water for the greens.", "garden")
		}, func(e storage.LoggedEvent) bool {
			return e.Type == storage.EventPostPublished && e.Data.Slug == "compost-tea"
		}, true},
		{"the live cursor", `{ liveCursor }`, func(t *testing.T) {
			s.publish(ada, "mulch", "Mulching beds", "Mulch keeps the garden beds moist.", "garden")
		}, func(e storage.LoggedEvent) bool {
			return e.Type == storage.EventPostPublished && e.Data.Slug == "mulch"
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := s.getAnswer(t, c.query)
			c.write(t)
			e := events.await(t, c.name, c.event)
			cc := before.Header.Get("Cache-Control")
			keys := strings.Fields(before.Header.Get(gqlhttp.SurrogateKeyHeader))
			tags := strings.Split(before.Header.Get(gqlhttp.CacheTagHeader), ",")
			if !strings.HasPrefix(cc, "public") {
				if !strings.HasPrefix(cc, "private") || strings.Contains(cc, "s-maxage") || c.shared {
					t.Errorf("Cache-Control %q, want it public and tagged: %t", cc, c.shared)
				}
				return
			}
			purged := slices.ContainsFunc(e.Data.CacheTags, func(tag string) bool {
				return slices.Contains(keys, tag) && slices.Contains(tags, tag)
			})
			if !purged {
				t.Errorf("Cache-Control %q with Surrogate-Key %q: %s names none (%q)", cc, keys, e.Type, e.Data.CacheTags)
			}
		})
	}
}

// getAnswer sends query over GET, anonymously, and returns the answer,
// failing the test unless it answered without errors.
func (s *searchServer) getAnswer(t *testing.T, query string) *http.Response {
	t.Helper()
	resp, err := http.Get(s.url + "?query=" + url.QueryEscape(query))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || strings.Contains(string(body), `"errors"`) {
		t.Fatalf("%s: status %d, %s (%v)", query, resp.StatusCode, body, err)
	}
	return resp
}

// TestAnswerCacheFollowsTheSearchIndex checks that a search kept in
// memory is dropped once the index applied a write, not only when the
// write's event arrives: a search answered in between, from an index
// without the write, is not served again after.
func TestAnswerCacheFollowsTheSearchIndex(t *testing.T) {
	const query = `query Find($q: String!) { search(query: $q) { edges { node { title } } } }`
	var s *searchServer
	s = newSearchServerWith(t, func(c *searchServer) {
		c.http.Answers = gqlhttp.NewAnswerCache(0, nil)
		c.tap = func(evs []storage.LoggedEvent) {
			for _, e := range evs {
				if e.Type == storage.EventPostPublished && e.Data.Slug == "zucchini" {
					// After the event's invalidation, before the index
					// applied it, most likely: kept in memory.
					s.postAnswer(t, query, `{"q":"zucchini"}`)
				}
			}
		}
	})
	ada, _ := s.writer()
	s.publish(ada, "bread", "Sourdough bread", "Flour, water, salt and time.", "kitchen")
	s.waitFound(t, "bread", "bread")
	// The workers that follow the publish (counts, numbered pages) may
	// purge the search's tags a moment after the index has the post: a
	// repeated search is a HIT once they are done.
	empty := s.postAnswer(t, query, `{"q":"zucchini"}`)
	for deadline := time.Now().Add(waitLimit); ; {
		again := s.postAnswer(t, query, `{"q":"zucchini"}`)
		if again.Header.Get(gqlhttp.AnswerCacheHeader) == "HIT" {
			equal(t, "a repeated search", again.body, empty.body)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a repeated search is never a HIT (X-Cache %s)", again.Header.Get(gqlhttp.AnswerCacheHeader))
		}
		empty = again
		time.Sleep(10 * time.Millisecond)
	}
	s.publish(ada, "zucchini", "Zucchini glut", "What to do with zucchini.", "kitchen")
	deadline := time.Now().Add(waitLimit)
	for {
		a := s.postAnswer(t, query, `{"q":"zucchini"}`)
		if a.body != empty.body {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the search still answers %s (X-Cache %s)", a.body, a.Header.Get(gqlhttp.AnswerCacheHeader))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// searchAnswer is an answer and its body.
type searchAnswer struct {
	*http.Response
	body string
}

// postAnswer sends query with variables over POST, anonymously, and
// returns the answer, failing the test unless it answered without errors.
func (s *searchServer) postAnswer(t *testing.T, query, variables string) searchAnswer {
	t.Helper()
	resp, err := http.Post(s.url, "application/json", strings.NewReader(`{"query":`+jsonString(query)+`,"variables":`+variables+`}`))
	if err != nil {
		t.Error(err)
		return searchAnswer{Response: &http.Response{Header: http.Header{}}}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || strings.Contains(string(body), `"errors"`) {
		t.Errorf("%s: status %d, %s (%v)", query, resp.StatusCode, body, err)
	}
	return searchAnswer{resp, string(body)}
}
