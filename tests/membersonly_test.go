package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
)

const (
	membersOnlyBody = "The secret of the *compost* heap is air."
	membersOnlyPost = `{ post(slug: "members-compost") { title excerpt body bodyHtml toc { text } locked visibility } }`
)

type membersOnlyAnswer struct {
	Excerpt    string `json:"excerpt"`
	Body       string `json:"body"`
	BodyHTML   string `json:"bodyHtml"`
	TOC        []any  `json:"toc"`
	Locked     bool   `json:"locked"`
	Visibility string `json:"visibility"`
}

// getPost reads membersOnlyPost over GET as token (none: anonymous) and
// returns the post, the answer and its DynamoDB requests.
func (r *signInRig) getPost(t *testing.T, token string) (membersOnlyAnswer, httpAnswer, int) {
	t.Helper()
	h := map[string]string{}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	a := r.fetch(t, http.MethodGet, r.url+"?query="+url.QueryEscape(membersOnlyPost), "", h)
	var p membersOnlyAnswer
	var ga gqlAnswer
	if err := json.Unmarshal([]byte(a.body), &ga); err != nil || ga.code() != "" {
		t.Fatalf("post = %s (%v)", a.body, err)
	}
	if err := json.Unmarshal(ga.Data["post"], &p); err != nil {
		t.Fatalf("post = %s: %v", a.body, err)
	}
	return p, a, total(r.requests())
}

// TestMembersOnlyPosts: a MEMBERS post shows its excerpt and locked to
// anonymous readers and to readers who are not members, in a public,
// tagged answer for the anonymous; its body to members, in an answer no
// shared cache keeps, and to staff; and its feed item carries the
// excerpt alone.
func TestMembersOnlyPosts(t *testing.T) {
	r := newSignInRig(t, 50)
	r.opts.HTTP.CacheMaxAge, r.opts.HTTP.CacheSMaxAge = time.Minute, time.Hour
	r.serve()
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, r.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada Lovelace"}))
	ada := r.tokenOf("ada", auth.RoleAuthor)
	var created struct {
		Post struct {
			ID         string `json:"id"`
			Visibility string `json:"visibility"`
		} `json:"post"`
	}
	a := r.gql(t, ada, `mutation($body: String) { createPost(input: {title: "Members compost", slug: "members-compost",
		excerpt: "What the heap needs.", body: $body, visibility: MEMBERS}) { post { id visibility } } }`,
		map[string]any{"body": "# Air\n\n" + membersOnlyBody}, "createPost", &created)
	if a.code() != "" {
		t.Fatalf("createPost = %s", a.body)
	}
	equal(t, "visibility", created.Post.Visibility, "MEMBERS")
	ok[*PublishPostResponse](t)(PublishPost(ctx, r.as("ada", auth.RoleAuthor), PublishPostInput{Id: created.Post.ID}))
	member := r.signInAs(t, "member@example.com")

	t.Run("anonymous: the excerpt, locked, public and tagged", func(t *testing.T) {
		p, h, n := r.getPost(t, "")
		equal(t, "locked", p.Locked, true)
		equal(t, "excerpt", p.Excerpt, "What the heap needs.")
		equal(t, "body", p.Body, "")
		equal(t, "bodyHtml", p.BodyHTML, "")
		equal(t, "toc", len(p.TOC), 0)
		equal(t, "visibility", p.Visibility, "MEMBERS")
		equal(t, "Cache-Control", h.header.Get("Cache-Control"), "public, max-age=60, s-maxage=3600")
		if h.header.Get("Surrogate-Key") == "" {
			t.Error("the locked answer carries no Surrogate-Key")
		}
		equal(t, "DynamoDB requests: the post, without its body", n, 2)
	})
	t.Run("a member: the body, never kept by a shared cache", func(t *testing.T) {
		p, h, n := r.getPost(t, member.AccessToken)
		equal(t, "locked", p.Locked, false)
		if !strings.Contains(p.Body, membersOnlyBody) || !strings.Contains(p.BodyHTML, "<em>compost</em>") || len(p.TOC) != 1 {
			t.Errorf("the member's post = %+v", p)
		}
		if cc := h.header.Get("Cache-Control"); strings.Contains(cc, "public") || strings.Contains(cc, "s-maxage") {
			t.Errorf("Cache-Control %q of a member's answer", cc)
		}
		equal(t, "Surrogate-Key", h.header.Get("Surrogate-Key"), "")
		equal(t, "DynamoDB requests: the post with its body, and the membership", n, 3)
	})
	t.Run("a reader who is not a member: locked", func(t *testing.T) {
		p, h, n := r.getPost(t, r.tokenOf("reader-1", auth.RoleReader))
		equal(t, "locked", p.Locked, true)
		equal(t, "body", p.Body, "")
		equal(t, "Surrogate-Key", h.header.Get("Surrogate-Key"), "")
		equal(t, "DynamoDB requests", n, 3)
	})
	t.Run("staff: the body", func(t *testing.T) {
		p, _, n := r.getPost(t, ada)
		equal(t, "locked", p.Locked, false)
		equal(t, "body", strings.Contains(p.Body, membersOnlyBody), true)
		equal(t, "DynamoDB requests: no membership read", n, 2)
	})
	t.Run("the feed carries the excerpt alone", func(t *testing.T) {
		f := newSyndicationServer(t, r.server)
		for _, path := range feedFormats {
			a, _ := f.get(t, "/"+path)
			equal(t, path+" status", a.status, http.StatusOK)
			if strings.Contains(a.body, "secret of the") {
				t.Errorf("%s carries the members-only body: %s", path, a.body)
			}
			if !strings.Contains(a.body, "What the heap needs.") {
				t.Errorf("%s lacks the excerpt: %s", path, a.body)
			}
		}
	})
	t.Run("its page is indexed, and says it is not free", func(t *testing.T) {
		var got struct {
			Head struct {
				Robots string `json:"robots"`
				JSONLD string `json:"jsonLd"`
			} `json:"head"`
		}
		a := r.gql(t, "", `{ post(slug: "members-compost") { head { robots jsonLd } } }`, nil, "post", &got)
		if a.code() != "" {
			t.Fatalf("head = %s", a.body)
		}
		equal(t, "robots", got.Head.Robots, "index, follow, max-image-preview:large")
		if !strings.Contains(got.Head.JSONLD, `"isAccessibleForFree":false`) {
			t.Errorf("jsonLd %s does not say isAccessibleForFree false", got.Head.JSONLD)
		}
		if strings.Contains(got.Head.JSONLD, "secret of the") {
			t.Errorf("jsonLd %s shows the body", got.Head.JSONLD)
		}
	})
	t.Run("made public, everyone reads it", func(t *testing.T) {
		a := r.gql(t, ada, `mutation($id: ID!) { updatePost(input: {id: $id, expectedVersion: 2, visibility: PUBLIC}) { post { visibility } } }`,
			map[string]any{"id": created.Post.ID}, "", nil)
		if a.code() != "" {
			t.Fatalf("updatePost = %s", a.body)
		}
		p, _, _ := r.getPost(t, "")
		equal(t, "locked", p.Locked, false)
		equal(t, "body", strings.Contains(p.Body, membersOnlyBody), true)
	})
	t.Run("a bad visibility", func(t *testing.T) {
		a := r.gql(t, ada, `mutation { createPost(input: {title: "X", visibility: SECRET}) { post { id } } }`, nil, "", nil)
		equal(t, "code", a.code(), "GRAPHQL_VALIDATION_FAILED")
	})
}

// TestMembersOnlyPostsSearchByExcerpt: search is public, so a
// members-only post is found by its title and excerpt, never by its
// body, and its snippet is its excerpt.
func TestMembersOnlyPostsSearchByExcerpt(t *testing.T) {
	s := newSearchServer(t)
	ada, _ := s.writer()
	ctx := context.Background()
	members := PostVisibilityMembers
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Brewing notes", Slug: "brewing-notes",
		Excerpt: ptr("Brewing at home."), Body: ptr("Zymurgy is the brewing of beer."), Visibility: &members})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: p.Id}))
	s.publish(ada, "brewing-basics", "Brewing basics", "Zymurgy for beginners: brewing starts with water.")

	r := s.waitFound(t, "brewing", "brewing-notes", "brewing-basics")
	for _, e := range r.Search.Edges {
		if e.Node.Post.Slug == "brewing-notes" && strings.Contains(strings.ToLower(e.Node.Snippet), "zymurgy") {
			t.Errorf("the members-only post's snippet %q shows its body", e.Node.Snippet)
		}
	}
	found, _ := s.find(t, "zymurgy")
	equal(t, "found by a word of the body alone", strings.Join(found, " "), "brewing-basics")
}
