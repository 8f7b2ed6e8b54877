package tests

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
)

// renderSite is the public site the rendering tests' renderer knows.
const renderSite = "https://blog.example"

// rendering makes s's server render with the site URL and highlighting
// (as -site-url and -highlight-code do), on the same table.
func (s *server) rendering(opts ...storage.Option) {
	s.store = storage.New(s.db, s.table, append([]storage.Option{storage.WithClock(s.clock.Now)}, opts...)...)
	s.serve()
}

// techBody is a post in every shape the renderer knows.
const techBody = "Read [the intro](/posts/intro), [the about page](" + renderSite + "/about) and [Go's site](https://go.dev).\n\n" +
	"```go\nfunc main() { fmt.Println(\"hi\") }\n```\n\n" +
	"![Diagram](https://img.example/d.png){width=800 height=450}\n\n![Photo](https://img.example/p.jpg){width=400 height=300}\n\n" +
	"https://www.youtube.com/watch?v=dQw4w9WgXcQ\n\n" +
	"https://gist.github.com/ada/0a1b2c\n\n" +
	"A claim.[^1]\n\n[^1]: Its source.\n\n" +
	"- [x] written\n- [ ] published\n"

// TestPostServesTheHTMLATechBlogShips publishes a post in every shape and
// reads its bodyHtml as a frontend does.
func TestPostServesTheHTMLATechBlogShips(t *testing.T) {
	s := newServer(t)
	s.rendering(storage.WithSiteURL(renderSite), storage.WithHighlight(true))
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada"}))
	ada := s.as("ada", auth.RoleAuthor)
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Tech", Slug: "tech", Body: ptr(techBody)})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: p.Id}))
	html := ok[*PostContentResponse](t)(PostContent(ctx, s.client, "tech")).Post.BodyHtml
	for _, want := range []string{
		`<pre class="chroma"><code class="language-go"><span class="kd">func</span>`,
		`<a href="/posts/intro">the intro</a>`,
		`<a href="` + renderSite + `/about">the about page</a>`,
		`<a href="https://go.dev" rel="nofollow noreferrer">Go&#39;s site</a>`,
		`<img src="https://img.example/d.png" alt="Diagram" width="800" height="450">`,
		`<img src="https://img.example/p.jpg" alt="Photo" width="400" height="300" loading="lazy">`,
		`<div class="embed embed-youtube"><iframe src="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ" title="YouTube video" width="560" height="315" sandbox="allow-scripts allow-same-origin allow-presentation allow-popups allow-popups-to-escape-sandbox"`,
		// allow names fullscreen; allowfullscreen beside it would be a
		// browser's console warning.
		`allow="accelerometer; clipboard-write; encrypted-media; gyroscope; picture-in-picture; fullscreen" referrerpolicy="strict-origin-when-cross-origin" loading="lazy"></iframe></div>`,
		`<blockquote class="embed embed-gist"><p><a href="https://gist.github.com/ada/0a1b2c" rel="nofollow noreferrer">`,
		`<sup id="h-fnref:1"><a href="#h-fn:1" class="footnote-ref" role="doc-noteref">1</a></sup>`,
		`<li id="h-fn:1">`,
		`<li><input checked="" disabled="" type="checkbox"> written</li>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("bodyHtml lacks %s:\n%s", want, html)
		}
	}
	for _, banned := range []string{"style=", "<script", "youtube.com/embed"} {
		if strings.Contains(html, banned) {
			t.Errorf("bodyHtml has %s:\n%s", banned, html)
		}
	}
	// Hostile input around the embeds stays out.
	hostile := "<iframe src=\"https://evil.example/\"></iframe>\n\nhttps://www.youtube.com.evil.example/watch?v=dQw4w9WgXcQ\n\n" +
		"[x](https://www.youtube.com/watch?v=dQw4w9WgXcQ\"onload=\"alert(1))\n\n![i](https://img.example/i.png){width=1 onerror=alert(1)}"
	h := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Hostile", Slug: "hostile", Body: &hostile})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: h.Id}))
	html = ok[*PostContentResponse](t)(PostContent(ctx, s.client, "hostile")).Post.BodyHtml
	for _, banned := range []string{"<iframe", "evil.example/\"", " onload=", " onerror=\""} {
		if strings.Contains(html, banned) {
			t.Errorf("hostile bodyHtml has %s:\n%s", banned, html)
		}
	}
	s.consistent()
}

// TestBodiesAreRenderedAgainInTheBackground changes the renderer (a new
// site URL and highlighting, as a restart with other flags does): the
// new server claims the table's renderer and its sweep renders every post
// and page again, while an author keeps editing a post and an admin a
// page through a server of the old renderer: no edit is lost, and the
// last one ends up rendered by the new renderer.
func TestBodiesAreRenderedAgainInTheBackground(t *testing.T) {
	old := newServer(t)
	b := old.seedBlog(t)
	ctx := context.Background()
	body := "See [about](" + renderSite + "/about).\n\n```go\nx := 1\n```\n"
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, b.writers[0], CreatePostInput{Title: "Edited", Slug: "edited", Body: &body})).CreatePost.Post
	pub := ok[*PublishPostResponse](t)(PublishPost(ctx, b.writers[0], PublishPostInput{Id: p.Id})).PublishPost.Post
	pg := ok[*CreatePageResponse](t)(CreatePage(ctx, old.admin, CreatePageInput{Title: "Colophon", Slug: "colophon", Body: &body})).CreatePage.Page
	pgVersion := ok[*PublishPageResponse](t)(PublishPage(ctx, old.admin, PublishPageInput{Id: pg.Id})).PublishPage.Page.Version
	draftPage := ok[*CreatePageResponse](t)(CreatePage(ctx, old.admin, CreatePageInput{Title: "Upcoming", Slug: "upcoming-page", Body: &body})).CreatePage.Page
	ok[bool](t)(old.store.ClaimRenderer(ctx))
	html := ok[*PostContentResponse](t)(PostContent(ctx, old.client, "edited")).Post.BodyHtml
	if !strings.Contains(html, `rel="nofollow noreferrer">about</a>`) || strings.Contains(html, "chroma") {
		t.Fatalf("rendered by the old renderer: %s", html)
	}

	// The new server starts: its renderer is the table's from now on.
	s := old.another()
	s.rendering(storage.WithSiteURL(renderSite), storage.WithHighlight(true))
	equal(t, "claimed", ok[bool](t)(s.store.ClaimRenderer(ctx)), true)
	ok[struct{}](t)(struct{}{}, old.store.RefreshRenderer(ctx))
	old.clock.Advance(time.Minute) // every server has read the claim

	const edits = 8
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.store.Rerender(ctx); err != nil && !errors.Is(err, storage.ErrBusy) {
				t.Error(err)
				return
			}
		}
	})
	version := pub.Version
	for i := range edits {
		body := fmt.Sprintf("Edit %d: see [about](%s/about).\n\n```go\nx := %d\n```\n", i, renderSite, i)
		r := ok[*UpdatePostResponse](t)(UpdatePost(ctx, b.writers[0], UpdatePostInput{Id: p.Id, ExpectedVersion: version, Body: &body}))
		version = r.UpdatePost.Post.Version
		rp := ok[*UpdatePageResponse](t)(UpdatePage(ctx, old.admin, UpdatePageInput{Id: pg.Id, ExpectedVersion: pgVersion, Body: &body}))
		pgVersion = rp.UpdatePage.Page.Version
	}
	close(stop)
	wg.Wait()
	// The worker sweeps every 10 s until a sweep finds nothing, 10 s or
	// more after the last edit of an outdated server.
	for i := 0; ; i++ {
		old.clock.Advance(10 * time.Second)
		r := ok[storage.Rerendered](t)(s.store.Rerender(ctx))
		if r.Done {
			break
		}
		if !r.Swept || i > 3 {
			t.Fatalf("sweep %d: %+v", i, r)
		}
	}

	post := ok[*PostContentResponse](t)(PostContent(ctx, s.client, "edited")).Post
	want := fmt.Sprintf("<p>Edit %d: see <a href=\"%s/about\">about</a>.</p>\n<pre class=\"chroma\"><code class=\"language-go\">", edits-1, renderSite)
	if !strings.HasPrefix(post.BodyHtml, want) {
		t.Errorf("the last edit is not rendered by the new renderer:\n got: %s\nwant: %s…", post.BodyHtml, want)
	}
	page := ok[*PageBySlugResponse](t)(PageBySlug(ctx, s.client, "colophon")).Page
	if !strings.HasPrefix(page.BodyHtml, want) || page.Version != pgVersion {
		t.Errorf("the last edit of the page (version %d, want %d) is not rendered by the new renderer:\n got: %s\nwant: %s…", page.Version, pgVersion, page.BodyHtml, want)
	}
	draft := ok[*PageByIDResponse](t)(PageByID(ctx, s.admin, draftPage.Id)).Page
	if want := "<p>See <a href=\"" + renderSite + "/about\">about</a>.</p>\n<pre class=\"chroma\">"; !strings.HasPrefix(draft.BodyHtml, want) {
		t.Errorf("the draft page is not rendered by the new renderer:\n got: %s\nwant: %s…", draft.BodyHtml, want)
	}
	// Every post of the blog, drafts too, has the new renderer's HTML.
	seeded := ok[*PostContentResponse](t)(PostContent(ctx, s.client, "post-3")).Post.BodyHtml
	equal(t, "a seeded post", seeded, "<h1 id=\"h-post-3\">Post 3</h1>\n<p>Body.</p>\n")
	r := ok[storage.Rerendered](t)(s.store.Rerender(ctx))
	equal(t, "a tick once done sweeps", r.Swept, false)
	s.consistent()
}
