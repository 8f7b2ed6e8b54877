package storage_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

func TestRenderedBodyCoverAndSEO(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	cover := &storage.Image{URL: "https://example.com/c.png", Alt: "A cover", Width: 1200, Height: 630}
	body := "# Hello\n\nThe first paragraph, with a [link](https://example.com).\n\n## Part two\n\n<script>x()</script>\n"
	p := must[*storage.Post](t)(e.store.CreatePost(ctx, storage.NewPost{
		AuthorID: "ada", Title: "Hello", Slug: "hello", Body: body, Categories: []string{"go"},
		CoverImage: cover, SEO: storage.SEO{Description: "For search engines"},
	}))
	equal(t, "derived excerpt", p.Excerpt, "The first paragraph, with a link.")
	equal(t, "words", p.WordCount, 9)
	equal(t, "minutes", p.ReadingMinutes, 1)
	if !strings.Contains(p.BodyHTML, `<h2 id="h-part-two">Part two</h2>`) || strings.Contains(p.BodyHTML, "script") {
		t.Errorf("HTML: %s", p.BodyHTML)
	}
	equal(t, "toc", len(p.TOC), 2)
	equal(t, "toc anchor", p.TOC[1], storage.Heading{Level: 2, Text: "Part two", Anchor: "h-part-two"})
	equal(t, "cover", *p.CoverImage, *cover)
	equal(t, "seo", p.SEO, storage.SEO{Description: "For search engines"})
	e.publish(p, time.Time{})
	e.consistent()

	t.Run("copies carry the cover, counts and excerpt, not the rendered body", func(t *testing.T) {
		r := must[*storage.Result[*storage.Post]](t)(e.store.CategoryPosts(ctx, "go", storage.PageArgs{Limit: 5}, storage.Period{}))
		c := r.Items[0]
		equal(t, "summary", c.Summary, true)
		equal(t, "cover", *c.CoverImage, *cover)
		equal(t, "words", c.WordCount, 9)
		equal(t, "excerpt", c.Excerpt, p.Excerpt)
		equal(t, "no HTML", c.BodyHTML, "")
		equal(t, "no SEO", c.SEO, storage.SEO{})
	})

	t.Run("an edit of the body renders it again; a written excerpt wins", func(t *testing.T) {
		u := must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{
			ID: p.ID, ExpectedVersion: 2, Body: ptr("Just *one* line."), Excerpt: ptr("Mine"),
			RemoveCoverImage: true, SEO: &storage.SEOPatch{Title: ptr("Search title"), Description: ptr("")},
		}))
		equal(t, "html", u.BodyHTML, "<p>Just <em>one</em> line.</p>\n")
		equal(t, "toc", len(u.TOC), 0)
		equal(t, "words", u.WordCount, 3)
		equal(t, "excerpt", u.Excerpt, "Mine")
		equal(t, "cover removed", u.CoverImage == nil, true)
		equal(t, "seo", u.SEO, storage.SEO{Title: "Search title"})
		u = must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: 3, Excerpt: ptr(""),
			SEO: &storage.SEOPatch{Title: ptr("")}}))
		equal(t, "excerpt derived again", u.Excerpt, "Just one line.")
		equal(t, "no seo", u.SEO, storage.SEO{})
		e.consistent()
	})

	t.Run("a replay returns the same rendered body", func(t *testing.T) {
		in := storage.NewPost{AuthorID: "ada", Title: "Again", Slug: "again", Body: "## Twice\n\ntext", IdempotencyKey: "replayed"}
		first := must[*storage.Post](t)(e.store.CreatePost(ctx, in))
		again := must[*storage.Post](t)(e.store.CreatePost(ctx, in))
		equal(t, "id", again.ID, first.ID)
		equal(t, "html", again.BodyHTML, first.BodyHTML)
		equal(t, "toc", len(again.TOC), 1)
		equal(t, "anchor", again.TOC[0].Anchor, "h-twice")
	})
}

func TestBadContentWritesNothing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	p := e.post("ada", "kept")
	long := strings.Repeat("x", 10_000)
	cases := []struct {
		name  string
		in    storage.PostPatch
		field string
	}{
		{"cover not http", storage.PostPatch{CoverImage: &storage.Image{URL: "javascript:alert(1)"}}, "coverImage.url"},
		{"cover relative", storage.PostPatch{CoverImage: &storage.Image{URL: "/img.png"}}, "coverImage.url"},
		{"cover without url", storage.PostPatch{CoverImage: &storage.Image{Alt: "x"}}, "coverImage.url"},
		{"alt with a line break", storage.PostPatch{CoverImage: &storage.Image{URL: "https://x.io/a.png", Alt: "a\nb"}}, "coverImage.alt"},
		{"alt too long", storage.PostPatch{CoverImage: &storage.Image{URL: "https://x.io/a.png", Alt: long}}, "coverImage.alt"},
		{"negative width", storage.PostPatch{CoverImage: &storage.Image{URL: "https://x.io/a.png", Width: -1}}, "coverImage.width"},
		{"cover set and removed", storage.PostPatch{CoverImage: &storage.Image{URL: "https://x.io/a.png"}, RemoveCoverImage: true}, "coverImage"},
		{"seo description of 10 000 characters", storage.PostPatch{SEO: &storage.SEOPatch{Description: &long}}, "seo.description"},
		{"seo title on two lines", storage.PostPatch{SEO: &storage.SEOPatch{Title: ptr("a\nb")}}, "seo.title"},
		{"canonical not http", storage.PostPatch{SEO: &storage.SEOPatch{CanonicalURL: ptr("ftp://x.io/")}}, "seo.canonicalUrl"},
		{"og image with credentials", storage.PostPatch{SEO: &storage.SEOPatch{OGImage: ptr("https://u:p@x.io/a.png")}}, "seo.ogImage"},
		{"body renders to too much HTML", storage.PostPatch{Body: ptr(strings.Repeat(`"<`, storage.MaxBodyBytes/2))}, "body"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.ID, c.in.ExpectedVersion = p.ID, p.Version
			n := counted(func(ctx context.Context) {
				_, err := e.store.UpdatePost(ctx, c.in)
				var ve *storage.ValidationError
				if !errors.As(err, &ve) || ve.Field != c.field {
					t.Errorf("err = %v, want invalid %s", err, c.field)
				}
			})
			equal(t, "requests", len(n), 0)
		})
	}
	_, err := e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "T", Slug: "t", CoverImage: &storage.Image{URL: "data:image/png;base64,AA"}})
	if !errors.Is(err, storage.ErrInvalidInput) {
		t.Errorf("create with a data: cover: %v", err)
	}
	equal(t, "version", must[*storage.Post](t)(e.store.GetPost(ctx, p.ID)).Version, p.Version)
	e.consistent()
}
