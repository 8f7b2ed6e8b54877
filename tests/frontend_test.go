package tests

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// errInfo returns the message, code, field and reason of the first
// GraphQL error in err.
func errInfo(err error) (message, code, field, reason string) {
	var list gqlerror.List
	if !errors.As(err, &list) || len(list) == 0 {
		return "", "", "", ""
	}
	e := list[0]
	code, _ = e.Extensions["code"].(string)
	field, _ = e.Extensions["field"].(string)
	reason, _ = e.Extensions["reason"].(string)
	return e.Message, code, field, reason
}

func TestAuthorPagesBySlug(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()

	page := ok[*AuthorBySlugResponse](t)(AuthorBySlug(ctx, s.client, "ada-lovelace", ptr(5), nil, nil, nil, nil, nil))
	equal(t, "author", page.Author.Id, b.authors[0])
	equal(t, "slug", page.Author.Slug, "ada-lovelace")
	equal(t, "posts", len(page.Author.Posts.Edges), 5)
	equal(t, "byline slug from the copy", page.Author.Posts.Edges[0].Node.Author.Slug, "ada-lovelace")
	bySlug := total(s.requests())
	ok[*AuthorPageResponse](t)(AuthorPage(ctx, s.client, b.authors[0], ptr(5), nil))
	byID := total(s.requests())
	t.Logf("author page by slug: %d requests, by id: %d", bySlug, byID)
	equal(t, "one request more than by id", bySlug, byID+1)

	t.Run("a new slug keeps the old one and reaches the bylines", func(t *testing.T) {
		a := ok[*UpdateAuthorResponse](t)(UpdateAuthor(ctx, b.writers[0], UpdateAuthorInput{Id: b.authors[0], Slug: ptr("countess")})).UpdateAuthor.Author
		equal(t, "slug", a.Slug, "countess")
		old := ok[*AuthorBySlugResponse](t)(AuthorBySlug(ctx, s.client, "ada-lovelace", ptr(1), nil, nil, nil, nil, nil))
		equal(t, "old slug leads to the author, with the new slug", old.Author.Slug, "countess")
		cat := ok[*CategoryPageResponse](t)(CategoryPage(ctx, s.client, "go", ptr(25), nil))
		for _, e := range cat.Category.Posts.Edges {
			if e.Node.Author.Name == "Ada Lovelace" && e.Node.Author.Slug != "countess" {
				t.Fatalf("byline of %s links to %q", e.Node.Slug, e.Node.Author.Slug)
			}
		}
		equal(t, "category page with bylines' slugs", total(s.requests()), 2)
		s.consistent()
	})

	t.Run("a slug another author has is refused and nothing is written", func(t *testing.T) {
		_, err := UpdateAuthor(ctx, b.writers[1], UpdateAuthorInput{Id: b.authors[1], Slug: ptr("countess"), Bio: ptr("changed")})
		_, c, _, reason := errInfo(err)
		equal(t, "code", c, "CONFLICT")
		equal(t, "reason", reason, "SLUG_TAKEN")
		_, err = CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("eve"), Name: "Eve", Slug: ptr("countess")})
		equal(t, "create", code(err), "CONFLICT")
		_, err = CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("eve"), Name: "Eve", Slug: ptr("Not a slug")})
		_, c, field, _ := errInfo(err)
		equal(t, "bad slug", c+" "+field, "BAD_USER_INPUT slug")
		grace := ok[*AuthorBySlugResponse](t)(AuthorBySlug(ctx, s.client, "grace-hopper", ptr(1), nil, nil, nil, nil, nil))
		equal(t, "grace's slug", grace.Author.Slug, "grace-hopper")
		_, err = AuthorBySlug(ctx, s.client, "eve", ptr(1), nil, nil, nil, nil, nil)
		equal(t, "eve", code(err), "NOT_FOUND")
		s.consistent()
	})

	t.Run("another author takes the old slug only by an admin", func(t *testing.T) {
		_, err := UpdateAuthor(ctx, b.writers[2], UpdateAuthorInput{Id: b.authors[2], Slug: ptr("ada-lovelace")})
		_, c, _, reason := errInfo(err)
		equal(t, "the author's own write", c+" "+reason, "CONFLICT SLUG_TAKEN")
		kept := ok[*AuthorBySlugResponse](t)(AuthorBySlug(ctx, s.client, "ada-lovelace", ptr(1), nil, nil, nil, nil, nil))
		equal(t, "the old slug still leads to its author", kept.Author.Slug, "countess")
		ok[*UpdateAuthorResponse](t)(UpdateAuthor(ctx, s.admin, UpdateAuthorInput{Id: b.authors[2], Slug: ptr("ada-lovelace")}))
		now := ok[*AuthorBySlugResponse](t)(AuthorBySlug(ctx, s.client, "ada-lovelace", ptr(1), nil, nil, nil, nil, nil))
		equal(t, "taken", now.Author.Id, b.authors[2])
		s.consistent()
	})
}

func TestPostSlugRedirects(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	p := ok[*PostPageResponse](t)(PostPage(ctx, s.client, "post-3")).Post
	byCurrent := total(s.requests())
	v := ok[*UpdatePostResponse](t)(UpdatePost(ctx, b.writers[1], UpdatePostInput{Id: p.Id, ExpectedVersion: p.Version, Slug: ptr("post-three")})).UpdatePost.Post.Version
	old := ok[*PostPageResponse](t)(PostPage(ctx, s.client, "post-3"))
	equal(t, "old slug finds the post, with its new slug", old.Post.Slug, "post-three")
	equal(t, "post page by an old slug, as by the current one", total(s.requests()), byCurrent)

	_, err := UpdatePost(ctx, b.writers[1], UpdatePostInput{Id: p.Id, ExpectedVersion: v, Slug: ptr("post-4")})
	_, c, _, reason := errInfo(err)
	equal(t, "current slug of another", c+" "+reason, "CONFLICT SLUG_TAKEN")
	equal(t, "version after the refusal", ok[*PostByIDResponse](t)(PostByID(ctx, s.client, p.Id)).Post.Version, v)

	other := ok[*PostPageResponse](t)(PostPage(ctx, s.client, "post-5")).Post
	ok[*UpdatePostResponse](t)(UpdatePost(ctx, b.writers[1], UpdatePostInput{Id: other.Id, ExpectedVersion: other.Version, Slug: ptr("post-3")}))
	equal(t, "the redirect taken", ok[*PostPageResponse](t)(PostPage(ctx, s.client, "post-3")).Post.Id, other.Id)
	equal(t, "the other's old slug", ok[*PostPageResponse](t)(PostPage(ctx, s.client, "post-5")).Post.Slug, "post-3")
	s.consistent()
}

func TestPostContentThroughTheAPI(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	body := "# Title\n\nIntro with a [link](https://example.com) and <script>alert(1)</script>.\n\n## Setup\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## Setup\n\n~~old~~ ![x](javascript:alert(1))\n"
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, b.writers[0], CreatePostInput{
		Title: "Rich", Slug: "rich", Body: &body, Categories: []string{"go"},
		CoverImage: &ImageInput{Url: "https://img.example.com/rich.png", Alt: ptr("A rich cover"), Width: ptr(1200), Height: ptr(630)},
		Seo:        &SeoInput{Description: ptr("Searchable"), CanonicalUrl: ptr("https://elsewhere.example.com/rich")},
	})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, b.writers[0], PublishPostInput{Id: p.Id}))
	// Raw HTML tags are dropped, their text stays text.
	equal(t, "derived excerpt", p.Excerpt, "Intro with a link and alert(1). old x")
	equal(t, "reading time", p.ReadingTimeMinutes, 1)

	r := ok[*PostContentResponse](t)(PostContent(ctx, s.client, "rich")).Post
	equal(t, "post page with HTML, toc and SEO", total(s.requests()), 2)
	for _, want := range []string{`<h2 id="h-setup">Setup</h2>`, `<h2 id="h-setup-2">Setup</h2>`, `<del>old</del>`, `<td>1</td>`,
		`<a href="https://example.com" rel="nofollow noreferrer">link</a>`} {
		if !strings.Contains(r.BodyHtml, want) {
			t.Errorf("HTML lacks %s:\n%s", want, r.BodyHtml)
		}
	}
	for _, banned := range []string{"script", "javascript", "<img"} {
		if strings.Contains(r.BodyHtml, banned) {
			t.Errorf("HTML keeps %s:\n%s", banned, r.BodyHtml)
		}
	}
	equal(t, "toc", len(r.Toc), 3)
	for _, h := range r.Toc {
		if !strings.Contains(r.BodyHtml, `id="`+h.Anchor+`"`) {
			t.Errorf("toc anchor %q is no heading id", h.Anchor)
		}
	}
	equal(t, "seo title falls back to the title", r.Seo.Title, "Rich")
	equal(t, "seo description", r.Seo.Description, "Searchable")
	equal(t, "og image falls back to the cover", *r.Seo.OgImage, "https://img.example.com/rich.png")
	equal(t, "canonical", *r.Seo.CanonicalUrl, "https://elsewhere.example.com/rich")
	equal(t, "cover", r.CoverImage.Alt, "A rich cover")
	equal(t, "cover width", *r.CoverImage.Width, 1200)

	t.Run("listings show the cover and reading time without reading posts", func(t *testing.T) {
		cat := ok[*CategoryPageResponse](t)(CategoryPage(ctx, s.client, "go", ptr(3), nil))
		n := cat.Category.Posts.Edges[0].Node
		equal(t, "newest", n.Slug, "rich")
		equal(t, "cover", n.CoverImage.Url, "https://img.example.com/rich.png")
		equal(t, "words", n.WordCount, r.WordCount)
		equal(t, "category page", total(s.requests()), 2)
	})

	t.Run("the cover goes with null, SEO fields with empty strings", func(t *testing.T) {
		v := ok[*PostByIDResponse](t)(PostByID(ctx, s.client, p.Id)).Post.Version
		after := ok[*RemoveCoverImageResponse](t)(RemoveCoverImage(ctx, b.writers[0], p.Id, v, nil)).UpdatePost.Post
		equal(t, "cover", after.CoverImage == nil, true)
		u := ok[*UpdatePostResponse](t)(UpdatePost(ctx, b.writers[0], UpdatePostInput{Id: p.Id, ExpectedVersion: after.Version, Title: ptr("Richer"),
			Seo: &SeoInput{CanonicalUrl: ptr("")}})).UpdatePost.Post
		equal(t, "an omitted cover stays removed", u.CoverImage == nil, true)
		seo := ok[*PostContentResponse](t)(PostContent(ctx, s.client, "rich")).Post.Seo
		equal(t, "canonical unset", seo.CanonicalUrl == nil, true)
		equal(t, "description kept", seo.Description, "Searchable")
		equal(t, "no og image without a cover", seo.OgImage == nil, true)
		s.consistent()
	})

	t.Run("bad content gets its code and writes nothing", func(t *testing.T) {
		cur := ok[*PostByIDResponse](t)(PostByID(ctx, s.client, p.Id)).Post
		long := strings.Repeat("d", 10_000)
		for name, c := range map[string]struct {
			in    UpdatePostInput
			field string
		}{
			"cover not http":                {UpdatePostInput{CoverImage: &ImageInput{Url: "javascript:alert(1)"}}, "coverImage.url"},
			"cover width 0":                 {UpdatePostInput{CoverImage: &ImageInput{Url: "https://x.io/a.png", Width: ptr(0)}}, "coverImage.width"},
			"seo description of 10 000":     {UpdatePostInput{Seo: &SeoInput{Description: &long}}, "seo.description"},
			"og image not a URL":            {UpdatePostInput{Seo: &SeoInput{OgImage: ptr("not a url")}}, "seo.ogImage"},
			"a body that renders too large": {UpdatePostInput{Body: ptr(strings.Repeat(`"<`, 50_000))}, "body"},
		} {
			c.in.Id, c.in.ExpectedVersion = p.Id, cur.Version
			_, err := UpdatePost(ctx, b.writers[0], c.in)
			_, code, field, _ := errInfo(err)
			equal(t, name, code+" "+field, "BAD_USER_INPUT "+c.field)
			equal(t, name+": writes", s.requests()["TransactWriteItems"], 0)
		}
		equal(t, "version", ok[*PostByIDResponse](t)(PostByID(ctx, s.client, p.Id)).Post.Version, cur.Version)
	})
}

func TestArchivesAndPeriods(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	// The 25 posts of the blog went out hourly up to an hour ago: 13 on
	// the last day of February, 12 on the first of March. A post is
	// scheduled for later today.
	archive := ok[*ArchiveResponse](t)(Archive(ctx, s.client, nil, nil)).Archive
	equal(t, "archive request", total(s.requests()), 1)
	if len(archive) != 2 || archive[0].Month != 3 || archive[0].PostCount != 12 || archive[1].Month != 2 || archive[1].PostCount != 13 {
		t.Fatalf("archive %+v", archive)
	}
	equal(t, "March starts", archive[0].StartsAt, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	equal(t, "March ends", archive[0].EndsAt, time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC))
	byAda := ok[*ArchiveResponse](t)(Archive(ctx, s.client, &b.authors[0], nil)).Archive
	equal(t, "ada's months", len(byAda), 2)
	equal(t, "ada in march", byAda[0].PostCount, 6)
	inDynamo := ok[*ArchiveResponse](t)(Archive(ctx, s.client, nil, ptr("dynamodb"))).Archive
	equal(t, "dynamodb in february", inDynamo[len(inDynamo)-1].PostCount, 5)
	_, err := Archive(ctx, s.client, &b.authors[0], ptr("go"))
	equal(t, "both", code(err), "BAD_USER_INPUT")

	march := archive[0]
	t.Run("a month's posts, with the archive's count", func(t *testing.T) {
		page := ok[*FeedPageResponse](t)(FeedPage(ctx, s.client, ptr(5), nil, nil, nil, &march.StartsAt, &march.EndsAt)).Posts
		equal(t, "totalCount", page.TotalCount, 12)
		equal(t, "first page", len(page.Edges), 5)
		equal(t, "month page: the feed and the counts", total(s.requests()), 2)
		seen := 0
		for cursor := (*string)(nil); ; {
			p := ok[*FeedPageResponse](t)(FeedPage(ctx, s.client, ptr(5), cursor, nil, nil, &march.StartsAt, &march.EndsAt)).Posts
			for _, e := range p.Edges {
				if e.Node.PublishedAt.Before(march.StartsAt) || !e.Node.PublishedAt.Before(march.EndsAt) {
					t.Errorf("%s published %v", e.Node.Slug, e.Node.PublishedAt)
				}
				seen++
			}
			if !p.PageInfo.HasNextPage {
				break
			}
			cursor = p.PageInfo.EndCursor
		}
		equal(t, "posts of march", seen, 12)
		cat := ok[*CategoryFeedResponse](t)(CategoryFeed(ctx, s.client, "go", ptr(100), nil, nil, nil, &march.StartsAt, &march.EndsAt)).Category.Posts
		equal(t, "go in march", len(cat.Edges), 12)
		equal(t, "go in march, counted", cat.TotalCount, 12)
		equal(t, "category month page", total(s.requests()), 2)
		ada := ok[*AuthorBySlugResponse](t)(AuthorBySlug(ctx, s.client, "ada-lovelace", ptr(100), nil, nil, nil, &march.StartsAt, &march.EndsAt)).Author
		equal(t, "ada in march", len(ada.Posts.Edges), 6)
		equal(t, "ada in march, counted", ada.Posts.TotalCount, 6)
	})

	t.Run("a period within a month is counted by reading it", func(t *testing.T) {
		from, to := start.Add(-5*time.Hour), start.Add(-2*time.Hour)
		page := ok[*FeedPageResponse](t)(FeedPage(ctx, s.client, ptr(10), nil, nil, nil, &from, &to)).Posts
		equal(t, "posts", len(page.Edges), 3)
		equal(t, "totalCount", page.TotalCount, 3)
		equal(t, "the feed, its count", total(s.requests()), 2)
	})

	t.Run("scheduled posts count from their time", func(t *testing.T) {
		s.clock.Advance(3 * time.Hour)
		a := ok[*ArchiveResponse](t)(Archive(ctx, s.client, nil, nil)).Archive
		equal(t, "march with the scheduled post", a[0].PostCount, 13)
	})

	t.Run("bad periods", func(t *testing.T) {
		_, err := FeedPage(ctx, s.client, ptr(5), nil, nil, nil, &march.EndsAt, &march.StartsAt)
		_, c, field, _ := errInfo(err)
		equal(t, "reversed period", c+" "+field, "BAD_USER_INPUT publishedBefore")
		cursor := ok[*FeedPageResponse](t)(FeedPage(ctx, s.client, ptr(2), nil, nil, nil, nil, nil)).Posts.PageInfo.EndCursor
		_, err = FeedPage(ctx, s.client, ptr(2), cursor, nil, nil, &march.StartsAt, &march.EndsAt)
		_, c, field, _ = errInfo(err)
		equal(t, "cursor of another period", c+" "+field, "BAD_USER_INPUT after")
	})
	s.consistent()
}

// TestBothDirections walks every connection backward from its end and
// checks it gives the forward order, with pageInfo as the Relay
// specification defines it, at the cost of a forward page.
func TestBothDirections(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	for i := range 7 {
		ok[*AddCommentResponse](t)(AddComment(ctx, b.writers[0], AddCommentInput{PostId: b.published[23], Body: "c" + string(rune('a'+i))}))
		s.clock.Advance(time.Second)
	}
	type page struct {
		ids              []string
		hasNext, hasPrev bool
		start, end       *string
		requests         int
	}
	type list struct {
		name string
		read func(first *int, after *string, last *int, before *string) (page, error)
		cost int
	}
	ids := func(n int, id func(int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = id(i)
		}
		return out
	}
	lists := []list{
		{"feed", func(first *int, after *string, last *int, before *string) (page, error) {
			r, err := FeedPage(ctx, s.client, first, after, last, before, nil, nil)
			if err != nil {
				return page{}, err
			}
			p := r.Posts
			return page{ids(len(p.Edges), func(i int) string { return p.Edges[i].Node.Id }), p.PageInfo.HasNextPage, p.PageInfo.HasPreviousPage, p.PageInfo.StartCursor, p.PageInfo.EndCursor, total(s.requests())}, nil
		}, 5},
		{"category", func(first *int, after *string, last *int, before *string) (page, error) {
			r, err := CategoryFeed(ctx, s.client, "go", first, after, last, before, nil, nil)
			if err != nil {
				return page{}, err
			}
			p := r.Category.Posts
			return page{ids(len(p.Edges), func(i int) string { return p.Edges[i].Node.Id }), p.PageInfo.HasNextPage, p.PageInfo.HasPreviousPage, p.PageInfo.StartCursor, p.PageInfo.EndCursor, total(s.requests())}, nil
		}, 2},
		{"author", func(first *int, after *string, last *int, before *string) (page, error) {
			r, err := AuthorBySlug(ctx, s.client, "grace-hopper", first, after, last, before, nil, nil)
			if err != nil {
				return page{}, err
			}
			p := r.Author.Posts
			return page{ids(len(p.Edges), func(i int) string { return p.Edges[i].Node.Id }), p.PageInfo.HasNextPage, p.PageInfo.HasPreviousPage, p.PageInfo.StartCursor, p.PageInfo.EndCursor, total(s.requests())}, nil
		}, 3},
		{"comments", func(first *int, after *string, last *int, before *string) (page, error) {
			r, err := CommentPage(ctx, s.client, "post-23", first, after, last, before)
			if err != nil {
				return page{}, err
			}
			p := r.Post.Comments
			return page{ids(len(p.Edges), func(i int) string { return p.Edges[i].Node.Id }), p.PageInfo.HasNextPage, p.PageInfo.HasPreviousPage, p.PageInfo.StartCursor, p.PageInfo.EndCursor, total(s.requests())}, nil
		}, 3},
		{"authors", func(first *int, after *string, last *int, before *string) (page, error) {
			r, err := Authors(ctx, s.client, first, after, last, before)
			if err != nil {
				return page{}, err
			}
			p := r.Authors
			return page{ids(len(p.Edges), func(i int) string { return p.Edges[i].Node.Id }), p.PageInfo.HasNextPage, p.PageInfo.HasPreviousPage, p.PageInfo.StartCursor, p.PageInfo.EndCursor, total(s.requests())}, nil
		}, 2},
		{"drafts", func(first *int, after *string, last *int, before *string) (page, error) {
			r, err := DraftPage(ctx, b.writers[0], b.authors[0], first, after, last, before)
			if err != nil {
				return page{}, err
			}
			p := r.Author.Drafts
			return page{ids(len(p.Edges), func(i int) string { return p.Edges[i].Node.Id }), p.PageInfo.HasNextPage, p.PageInfo.HasPreviousPage, p.PageInfo.StartCursor, p.PageInfo.EndCursor, total(s.requests())}, nil
		}, 2},
	}
	for _, l := range lists {
		t.Run(l.name, func(t *testing.T) {
			var forward []string
			var after *string
			for {
				p := ok[page](t)(l.read(ptr(2), after, nil, nil))
				equal(t, "hasPreviousPage forward", p.hasPrev, after != nil)
				forward = append(forward, p.ids...)
				if !p.hasNext {
					break
				}
				after = p.end
			}
			var backward []string
			var before *string
			for {
				p := ok[page](t)(l.read(nil, nil, ptr(2), before))
				equal(t, "hasNextPage backward", p.hasNext, before != nil)
				if p.requests > l.cost {
					t.Errorf("backward page: %d requests, a forward one costs %d", p.requests, l.cost)
				}
				backward = append(p.ids, backward...)
				if !p.hasPrev {
					break
				}
				before = p.start
			}
			if strings.Join(forward, ",") != strings.Join(backward, ",") || len(forward) == 0 {
				t.Errorf("forward %v, backward %v", forward, backward)
			}
			_, err := l.read(ptr(2), nil, ptr(2), nil)
			_, c, field, _ := errInfo(err)
			equal(t, "first and last", c+" "+field, "BAD_USER_INPUT last")
		})
	}

	t.Run("a before cursor of another list is refused", func(t *testing.T) {
		other := ok[*FeedPageResponse](t)(FeedPage(ctx, s.client, ptr(2), nil, nil, nil, nil, nil)).Posts.PageInfo.EndCursor
		_, err := CategoryFeed(ctx, s.client, "go", nil, nil, ptr(2), other, nil, nil)
		_, c, field, _ := errInfo(err)
		equal(t, "category with the feed's cursor", c+" "+field, "BAD_USER_INPUT before")
		_, err = Authors(ctx, s.client, nil, nil, ptr(2), ptr("bm90LWEtY3Vyc29y"))
		_, c, field, _ = errInfo(err)
		equal(t, "authors with garbage", c+" "+field, "BAD_USER_INPUT before")
		_, err = FeedPage(ctx, s.client, ptr(2), nil, nil, other, nil, nil)
		_, c, field, _ = errInfo(err)
		equal(t, "first with before", c+" "+field, "BAD_USER_INPUT before")
	})
}

func TestPreviousAndNext(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	// post-i went out at start-(25-i) hours; the dynamodb category has
	// every third post.
	r := ok[*PostArticleResponse](t)(PostArticle(ctx, s.client, "post-12", "dynamodb")).Post
	equal(t, "previous", r.Previous.Slug, "post-11")
	equal(t, "next", r.Next.Slug, "post-13")
	equal(t, "previous in category", r.PreviousInCategory.Slug, "post-9")
	equal(t, "next in category", r.NextInCategory.Slug, "post-15")
	got := s.requests()
	t.Logf("post page with previous, next and both in a category: %v", got)
	equal(t, "requests: post by slug, 1+1 feed, 1+1 category", total(got), 2+2+2)
	newest := ok[*PostArticleResponse](t)(PostArticle(ctx, s.client, "post-24", "go")).Post
	equal(t, "the newest has no next", newest.Next == nil, true)
	equal(t, "a scheduled post is not next yet", newest.NextInCategory == nil, true)
	oldest := ok[*PostArticleResponse](t)(PostArticle(ctx, s.client, "post-0", "go")).Post
	equal(t, "the oldest has no previous", oldest.Previous == nil, true)
	s.clock.Advance(3 * time.Hour)
	newest = ok[*PostArticleResponse](t)(PostArticle(ctx, s.client, "post-24", "go")).Post
	equal(t, "the scheduled post once out", newest.Next.Slug, "soon")
	_ = b
}

func TestDraftPreviews(t *testing.T) {
	s := newServer(t, func(_ *storage.ClientConfig, o *graph.HandlerOptions) { o.HTTP.CacheMaxAge = time.Minute })
	b := s.seedBlog(t)
	ctx := context.Background()
	link := ok[*CreatePreviewLinkResponse](t)(CreatePreviewLink(ctx, b.writers[0], CreatePreviewLinkInput{PostId: b.draft, ExpiresIn: ptr(3600)})).CreatePreviewLink
	equal(t, "expires", link.ExpiresAt, s.clock.Now().Add(time.Hour))
	// The ownership check, the post, and the server's first use of the key.
	equal(t, "createPreviewLink requests", s.requests()["GetItem"]+s.requests()["Query"], 3)
	ok[*CreatePreviewLinkResponse](t)(CreatePreviewLink(ctx, b.writers[0], CreatePreviewLinkInput{PostId: b.draft}))
	equal(t, "createPreviewLink requests once the key is known", total(s.requests()), 2)
	equal(t, "post", link.Post.Status, PostStatusDraft)

	p := ok[*PreviewResponse](t)(Preview(ctx, s.client, link.Token)).Post
	equal(t, "draft shown to anyone holding the token", p.Id, b.draft)
	equal(t, "status", p.Status, PostStatusDraft)
	equal(t, "preview requests: the post (the key is read once a server)", total(s.requests()), 1)

	t.Run("never cached", func(t *testing.T) {
		vars, _ := json.Marshal(map[string]string{"t": link.Token})
		get := s.getQueryURL(`query P($t: String!) { post(previewToken: $t) { title } }`, string(vars), "")
		r := s.fetch(t, http.MethodGet, get, "", nil)
		equal(t, "status", r.status, http.StatusOK)
		equal(t, "Cache-Control", r.header.Get("Cache-Control"), "no-store")
		if !strings.Contains(r.body, `"title":"Draft"`) {
			t.Errorf("body %s", r.body)
		}
		public := s.fetch(t, http.MethodGet, s.getQueryURL(`{ posts(first: 1) { totalCount } }`, "", ""), "", nil)
		if cc := public.header.Get("Cache-Control"); !strings.HasPrefix(cc, "public") {
			t.Errorf("a public page after a preview: %q", cc)
		}
	})

	t.Run("a scheduled post too, for an admin's link", func(t *testing.T) {
		l := ok[*CreatePreviewLinkResponse](t)(CreatePreviewLink(ctx, s.admin, CreatePreviewLinkInput{PostId: b.scheduled})).CreatePreviewLink
		equal(t, "default lifetime", l.ExpiresAt, s.clock.Now().Add(7*24*time.Hour))
		equal(t, "scheduled", ok[*PreviewResponse](t)(Preview(ctx, s.client, l.Token)).Post.Status, PostStatusScheduled)
	})

	t.Run("only the post's author or an admin makes a link", func(t *testing.T) {
		_, err := CreatePreviewLink(ctx, b.writers[1], CreatePreviewLinkInput{PostId: b.draft})
		equal(t, "someone else's draft", code(err), "NOT_FOUND")
		_, err = CreatePreviewLink(ctx, b.writers[1], CreatePreviewLinkInput{PostId: b.published[0]})
		equal(t, "someone else's post", code(err), "FORBIDDEN")
		_, err = CreatePreviewLink(ctx, s.client, CreatePreviewLinkInput{PostId: b.draft})
		equal(t, "anonymous", code(err), "UNAUTHENTICATED")
		for _, secs := range []int{0, 59, 30*24*3600 + 1} {
			_, err = CreatePreviewLink(ctx, b.writers[0], CreatePreviewLinkInput{PostId: b.draft, ExpiresIn: &secs})
			_, c, field, _ := errInfo(err)
			equal(t, "expiresIn", c+" "+field, "BAD_USER_INPUT expiresIn")
		}
	})

	missing, missingCode, _, _ := errInfo(func() error {
		_, err := Preview(ctx, s.client, "bm90aGluZw.c2lnbmF0dXJl")
		return err
	}())
	equal(t, "unknown token", missingCode, "NOT_FOUND")
	for _, id := range []string{b.draft, strings.TrimPrefix(b.draft, "UG9zdDo")} {
		if strings.Contains(missing, id) {
			t.Errorf("message %q names an id", missing)
		}
	}
	sameAsMissing := func(what, token string) {
		t.Helper()
		_, err := Preview(ctx, s.client, token)
		msg, c, _, _ := errInfo(err)
		equal(t, what+": code", c, "NOT_FOUND")
		equal(t, what+": message", msg, missing)
	}
	// The token is sealed: nothing of the post, the table or the time
	// shows in it.
	sealed, err := base64.RawURLEncoding.DecodeString(link.Token)
	if err != nil {
		t.Fatalf("token %q is not base64url: %v", link.Token, err)
	}
	rawID, _ := base64.RawURLEncoding.DecodeString(b.draft)
	postID := strings.TrimPrefix(string(rawID), "Post:")
	for _, internal := range []string{postID, postID[:8], "POST#", "Post:", b.draft, fmt.Sprint(link.ExpiresAt.Unix())} {
		if strings.Contains(string(sealed), internal) || strings.Contains(link.Token, internal) {
			t.Errorf("token %q shows %q", link.Token, internal)
		}
	}
	// flip changes one bit of byte i of the token.
	flip := func(i int) string {
		c := bytes.Clone(sealed)
		c[(i+len(c))%len(c)] ^= 1
		return base64.RawURLEncoding.EncodeToString(c)
	}
	sameAsMissing("altered nonce", flip(0))
	sameAsMissing("altered payload", flip(14))
	sameAsMissing("altered tag", flip(-1))
	sameAsMissing("cut short", base64.RawURLEncoding.EncodeToString(sealed[:len(sealed)-1]))
	sameAsMissing("garbage", "x")
	sameAsMissing("forged in the unsealed form of an earlier version", base64.RawURLEncoding.EncodeToString([]byte("v1\n"+postID+"\n9999999999"))+".c2lnbmF0dXJl")
	s.clock.Advance(time.Hour)
	sameAsMissing("expired", link.Token)

	t.Run("a deleted post", func(t *testing.T) {
		l := ok[*CreatePreviewLinkResponse](t)(CreatePreviewLink(ctx, b.writers[0], CreatePreviewLinkInput{PostId: b.draft})).CreatePreviewLink
		ok[*DeletePostResponse](t)(DeletePost(ctx, b.writers[0], DeletePostInput{Id: b.draft}))
		sameAsMissing("deleted", l.Token)
	})

	t.Run("a token of another table's key does not verify", func(t *testing.T) {
		other := newServer(t)
		ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, other.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada"}))
		d := ok[*CreatePostResponse](t)(CreatePost(ctx, other.as("ada", auth.RoleAuthor), CreatePostInput{Title: "Elsewhere", Slug: "elsewhere"})).CreatePost.Post
		foreign := ok[*CreatePreviewLinkResponse](t)(CreatePreviewLink(ctx, other.admin, CreatePreviewLinkInput{PostId: d.Id})).CreatePreviewLink
		sameAsMissing("foreign", foreign.Token)
	})
}
