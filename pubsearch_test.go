package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// pubWait bounds the waits of the publications' search and
// subscriptions' tests for what the change feed brings.
const pubWait = 60 * time.Second

// pubPost is a post a publication's test writes: the host it is written
// at, and its slug, category and body.
type pubPost struct{ host, slug, category, body string }

// The publications' tests: on the demo platform, the default publication
// (localhost) and Field Notes (notes.localhost) each get two posts,
// written in turns, the first of each with the same word (pubPosts).
var pubPosts = []pubPost{
	{"localhost", "quokkas-at-home", "go", "Quokkas on the island, and a goroutine."},
	{"notes.localhost", "quokkas-on-the-trail", "trails", "Quokkas by the path, and a ridge."},
	{"localhost", "wombats-at-home", "go", "Wombats dig, and so does the runtime."},
	{"notes.localhost", "wombats-on-the-trail", "trails", "Wombats by the hut at dusk."},
}

// pubOwn are the slugs of pubPosts of each host, in the order written;
// pubOther names the other publication's host.
var (
	pubOwn = map[string][]string{
		"localhost":       {"quokkas-at-home", "wombats-at-home"},
		"notes.localhost": {"quokkas-on-the-trail", "wombats-on-the-trail"},
	}
	pubOther = map[string]string{"localhost": "notes.localhost", "notes.localhost": "localhost"}
)

// startPublications starts the demo platform and returns its base URL
// and the Authorization header of a writer of each host: on the
// embedded engine, or on DynamoDB Local in a table of its own when
// the tests run there (platformBackend).
func startPublications(t *testing.T) (string, map[string]string) {
	t.Helper()
	args, env, _ := platformBackend(t)
	base, _, stop := startServer(t, args, env)
	t.Cleanup(stop)
	return base, map[string]string{"localhost": platformToken(t, "admin", "ada-lovelace"), "notes.localhost": publicationToken(t, "owner", "mae-jemison", "field-notes")}
}

// TestPublicationsSearchTheirOwnPosts: each host's search finds its own
// posts and never the other publication's, with the same words.
func TestPublicationsSearchTheirOwnPosts(t *testing.T) {
	base, writers := startPublications(t)
	for _, p := range pubPosts {
		publishAt(t, base, writers[p.host], p)
	}
	for host, own := range pubOwn {
		// Once its second post is found, its index has applied every
		// event before, the other publication's first post's included.
		waitSearchFinds(t, base, host, "wombats", own[1])
		if got := searchSlugs(t, base, host, "quokkas"); !slices.Equal(got, own[:1]) {
			t.Errorf("%s: search quokkas finds %q, want %q", host, got, own[:1])
		}
	}
}

// TestPublicationsSubscribeToTheirOwnEvents: each host's postPublished
// subscription, from a cursor taken before, gets its own two posts, in
// order, and none of the other publication's posts.
func TestPublicationsSubscribeToTheirOwnEvents(t *testing.T) {
	base, writers := startPublications(t)
	streams := map[string]*pubStream{}
	for host := range writers {
		_, body := graphQLAt(t, base, host, `{ liveCursor }`)
		var resp struct{ Data struct{ LiveCursor string } }
		if json.Unmarshal([]byte(body), &resp) != nil || resp.Data.LiveCursor == "" {
			t.Fatalf("%s: liveCursor = %s", host, body)
		}
		streams[host] = subscribePosts(t, base, host, resp.Data.LiveCursor)
	}
	for _, p := range pubPosts {
		publishAt(t, base, writers[p.host], p)
	}
	for host, own := range pubOwn {
		// The stream may begin with the demo's posts, published as the
		// server started; none is the other publication's.
		theirs := postSlugs(t, base, pubOther[host])
		var got []string
		for !slices.Contains(got, own[1]) {
			slug := streams[host].nextSlug(t)
			if slices.Contains(theirs, slug) {
				t.Errorf("%s: postPublished gives %s's post %s", host, pubOther[host], slug)
			}
			if slices.Contains(own, slug) {
				got = append(got, slug)
			}
		}
		if !slices.Equal(got, own) {
			t.Errorf("%s: postPublished gives %q, want %q", host, got, own)
		}
	}
}

// publicationToken returns the Authorization header of a token of role
// in the publication pub (its slug) for sub, signed with platformSecret.
func publicationToken(t *testing.T, role, sub, pub string) string {
	t.Helper()
	var out, errs bytes.Buffer
	if err := runToken(context.Background(), []string{"-role", role, "-sub", sub, "-publication", pub}, func(k string) string {
		return map[string]string{"JWT_SECRET": platformSecret}[k]
	}, &out, &errs); err != nil {
		t.Fatalf("token: %v %s", err, errs.String())
	}
	return "Authorization: Bearer " + strings.TrimSpace(out.String())
}

// publishAt creates p at its host with the token header auth and
// publishes it.
func publishAt(t *testing.T, base, auth string, p pubPost) {
	t.Helper()
	_, body := graphQLAt(t, base, p.host, `mutation { createPost(input: {title: "`+p.slug+`", slug: "`+p.slug+`", body: "`+p.body+`", categories: ["`+p.category+`"]}) { post { id } } }`, auth)
	var created struct {
		Data struct {
			CreatePost struct{ Post struct{ ID string } }
		}
	}
	if json.Unmarshal([]byte(body), &created) != nil || created.Data.CreatePost.Post.ID == "" {
		t.Fatalf("%s: createPost %s = %s", p.host, p.slug, body)
	}
	if _, body := graphQLAt(t, base, p.host, `mutation { publishPost(input: {id: "`+created.Data.CreatePost.Post.ID+`"}) { post { slug } } }`, auth); errorCode(body) != "" {
		t.Fatalf("%s: publishPost %s = %s", p.host, p.slug, body)
	}
}

// searchSlugs returns the slugs of the posts host's search for query
// finds, sorted, and nil while the index is being built.
func searchSlugs(t *testing.T, base, host, query string) []string {
	t.Helper()
	code, body := graphQLAt(t, base, host, `{ search(query: "`+query+`", first: 50) { edges { node { post { slug } } } } }`)
	var resp struct {
		Data struct {
			Search struct {
				Edges []struct {
					Node struct{ Post struct{ Slug string } }
				}
			}
		}
	}
	if c := errorCode(body); c == "INDEX_BUILDING" {
		return nil
	} else if code != http.StatusOK || c != "" || json.Unmarshal([]byte(body), &resp) != nil {
		t.Fatalf("%s: search %q = %d %s", host, query, code, body)
	}
	var slugs []string
	for _, e := range resp.Data.Search.Edges {
		slugs = append(slugs, e.Node.Post.Slug)
	}
	slices.Sort(slugs)
	return slugs
}

// waitSearchFinds waits until host's search for query finds exactly the
// post slug.
func waitSearchFinds(t *testing.T, base, host, query, slug string) {
	t.Helper()
	deadline := time.Now().Add(pubWait)
	for {
		got := searchSlugs(t, base, host, query)
		if slices.Equal(got, []string{slug}) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: search %q finds %q, want %s", host, query, got, slug)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pubStream is a postPublished subscription over server-sent events.
type pubStream struct {
	host  string
	slugs chan string
}

// subscribePosts subscribes to postPublished at host after the cursor
// after, over server-sent events.
func subscribePosts(t *testing.T, base, host, after string) *pubStream {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": `subscription($after: String) { postPublished(after: $after) { post { slug } } }`,
		"variables": map[string]any{"after": after}})
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("%s: subscription = %d", host, resp.StatusCode)
	}
	st := &pubStream{host: host, slugs: make(chan string, 16)}
	go func() {
		defer resp.Body.Close()
		defer close(st.slugs)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data:")
			if !ok {
				continue
			}
			var ev struct {
				Data struct {
					PostPublished struct{ Post struct{ Slug string } }
				}
				Errors []struct{ Message string }
			}
			if json.Unmarshal([]byte(strings.TrimSpace(data)), &ev) != nil {
				continue
			}
			slug := ev.Data.PostPublished.Post.Slug
			if len(ev.Errors) > 0 {
				slug = "error: " + ev.Errors[0].Message
			}
			st.slugs <- slug
		}
	}()
	return st
}

// nextSlug returns the slug of the stream's next post.
func (st *pubStream) nextSlug(t *testing.T) string {
	t.Helper()
	select {
	case s, ok := <-st.slugs:
		if !ok {
			t.Fatalf("%s: the subscription ended", st.host)
		}
		return s
	case <-time.After(pubWait):
		t.Fatalf("%s: no event in time", st.host)
		return ""
	}
}
