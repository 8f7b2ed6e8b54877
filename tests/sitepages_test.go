package tests

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// TestStaticPages builds an About page as an admin would and reads it as
// a frontend does: drafts hidden, rendered as posts are, listed for a
// menu in one Query, found by an old slug, never in the posts' lists, and
// a slug a post holds refused with nothing written, and the other way.
func TestStaticPages(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	about := ok[*CreatePageResponse](t)(CreatePage(ctx, s.admin, CreatePageInput{
		Title: "About", Slug: "about", Body: ptr("# About\n\nA blog about [Go](https://go.dev).\n\n## Contact\n\nWrite."),
		Seo: &PageSeoInput{Description: ptr("Who writes here")}, Order: ptr(1), IdempotencyKey: ptr("about-1"),
	})).CreatePage.Page.PageParts
	equal(t, "status", about.Status, PostStatusDraft)
	equal(t, "toc", len(about.Toc), 2)
	if !strings.Contains(about.BodyHtml, `<h2 id="h-contact">Contact</h2>`) || !strings.Contains(about.BodyHtml, `rel="nofollow noreferrer"`) {
		t.Errorf("bodyHtml %q: want the posts' rendering", about.BodyHtml)
	}
	t.Run("a resend with the idempotency key makes no second page", func(t *testing.T) {
		again := ok[*CreatePageResponse](t)(CreatePage(ctx, s.admin, CreatePageInput{
			Title: "About", Slug: "about", Body: ptr("# About\n\nA blog about [Go](https://go.dev).\n\n## Contact\n\nWrite."),
			Seo: &PageSeoInput{Description: ptr("Who writes here")}, Order: ptr(1), IdempotencyKey: ptr("about-1"),
		})).CreatePage.Page.PageParts
		equal(t, "same page", again.Id, about.Id)
		equal(t, "same html", again.BodyHtml, about.BodyHtml)
	})

	t.Run("a draft is found by admins only", func(t *testing.T) {
		_, err := PageBySlug(ctx, s.client, "about")
		equal(t, "anonymous", code(err), "NOT_FOUND")
		_, err = PageBySlug(ctx, b.writers[0], "about")
		equal(t, "an author", code(err), "NOT_FOUND")
		equal(t, "admin", ok[*PageBySlugResponse](t)(PageBySlug(ctx, s.admin, "about")).Page.Id, about.Id)
		_, err = Pages(ctx, s.client, nil, nil, nil, nil, ptr(true))
		equal(t, "drafts for the anonymous", code(err), "UNAUTHENTICATED")
		_, err = Pages(ctx, b.writers[0], nil, nil, nil, nil, ptr(true))
		equal(t, "drafts for an author", code(err), "FORBIDDEN")
		drafts := ok[*PagesResponse](t)(Pages(ctx, s.admin, nil, nil, nil, nil, ptr(true))).Pages.Edges
		equal(t, "drafts", len(drafts), 1)
	})

	about = ok[*PublishPageResponse](t)(PublishPage(ctx, s.admin, PublishPageInput{Id: about.Id, ExpectedVersion: &about.Version})).PublishPage.Page.PageParts
	contact := ok[*CreatePageResponse](t)(CreatePage(ctx, s.admin, CreatePageInput{Title: "Contact", Slug: "contact", ParentId: &about.Id})).CreatePage.Page.PageParts
	ok[*PublishPageResponse](t)(PublishPage(ctx, s.admin, PublishPageInput{Id: contact.Id}))
	imprint := ok[*CreatePageResponse](t)(CreatePage(ctx, s.admin, CreatePageInput{Title: "Imprint", Slug: "imprint"})).CreatePage.Page.PageParts
	ok[*PublishPageResponse](t)(PublishPage(ctx, s.admin, PublishPageInput{Id: imprint.Id}))
	s.consistent()

	t.Run("pages for a menu: by order, one Query, paged both ways", func(t *testing.T) {
		for _, first := range []int{2, 100} {
			r := ok[*PagesResponse](t)(Pages(ctx, s.client, &first, nil, nil, nil, nil)).Pages
			sameRequests(t, "requests", s.requests(), map[string]int{"Query": 1})
			var slugs []string
			for _, e := range r.Edges {
				slugs = append(slugs, e.Node.Slug)
			}
			want := "contact imprint about"[:min(len("contact imprint about"), map[int]int{2: 15, 100: 21}[first])]
			equal(t, "slugs", strings.Join(slugs, " "), want)
		}
		first := ok[*PagesResponse](t)(Pages(ctx, s.client, ptr(2), nil, nil, nil, nil)).Pages
		equal(t, "contact's parent", deref(first.Edges[0].Node.ParentId), about.Id)
		next := ok[*PagesResponse](t)(Pages(ctx, s.client, ptr(2), first.PageInfo.EndCursor, nil, nil, nil)).Pages
		equal(t, "next page", next.Edges[0].Node.Slug, "about")
		back := ok[*PagesResponse](t)(Pages(ctx, s.client, nil, nil, ptr(2), next.PageInfo.StartCursor, nil)).Pages
		equal(t, "back", back.Edges[0].Node.Slug, "contact")
		_, err := Pages(ctx, s.client, ptr(101), nil, nil, nil, nil)
		equal(t, "101", code(err), "BAD_USER_INPUT")
	})

	t.Run("a page by slug costs two GetItems, found or not", func(t *testing.T) {
		p := ok[*PageBySlugResponse](t)(PageBySlug(ctx, s.client, "about")).Page
		equal(t, "seo description", p.Seo.Description, "Who writes here")
		equal(t, "seo title", p.Seo.Title, "About")
		sameRequests(t, "requests", s.requests(), map[string]int{"GetItem": 2})
		for _, slug := range []string{"nothing-here", "post-3"} {
			_, err := PageBySlug(ctx, s.client, slug)
			equal(t, slug, code(err), "NOT_FOUND")
			sameRequests(t, "requests", s.requests(), map[string]int{"GetItem": 2})
		}
		byID := ok[*PageByIDResponse](t)(PageByID(ctx, s.client, about.Id)).Page
		equal(t, "by id", byID.Slug, "about")
		sameRequests(t, "requests", s.requests(), map[string]int{"GetItem": 1})
		node := ok[*NodeResponse](t)(Node(ctx, s.client, about.Id)).Node
		equal(t, "node", *(*node).GetTypename()+" "+(*node).GetId(), "Page "+about.Id)
	})

	t.Run("a slug a post holds is CONFLICT, and nothing is written", func(t *testing.T) {
		before := s.snapshot()
		_, err := CreatePage(ctx, s.admin, CreatePageInput{Title: "X", Slug: "post-3"})
		equal(t, "create", code(err), "CONFLICT")
		equal[any](t, "reason", extension(err, "reason"), "SLUG_TAKEN")
		_, err = UpdatePage(ctx, s.admin, UpdatePageInput{Id: imprint.Id, ExpectedVersion: 2, Slug: ptr("post-3")})
		equal(t, "update", code(err), "CONFLICT")
		s.unchanged(before)
	})
	t.Run("a slug a page holds, current or old, is CONFLICT for a post", func(t *testing.T) {
		ok[*UpdatePageResponse](t)(UpdatePage(ctx, s.admin, UpdatePageInput{Id: imprint.Id, ExpectedVersion: 2, Slug: ptr("legal")}))
		before := s.snapshot()
		for _, slug := range []string{"about", "imprint", "legal"} {
			_, err := CreatePost(ctx, b.writers[0], CreatePostInput{Title: "X", Slug: slug})
			equal(t, slug, code(err), "CONFLICT")
			_, err = CreatePost(ctx, s.admin, CreatePostInput{Title: "X", Slug: slug})
			equal(t, slug+" by an admin", code(err), "CONFLICT")
		}
		s.unchanged(before)
		equal(t, "old slug", ok[*PageBySlugResponse](t)(PageBySlug(ctx, s.client, "imprint")).Page.Slug, "legal")
		_, err := PostPage(ctx, s.client, "legal")
		equal(t, "a page's slug is no post's", code(err), "NOT_FOUND")
	})

	t.Run("pages are in no list of posts", func(t *testing.T) {
		feed := ok[*FeedResponse](t)(Feed(ctx, s.client, ptr(100), nil))
		for _, e := range feed.Posts.Edges {
			if e.Node.Slug == "about" {
				t.Error("the feed shows the About page")
			}
		}
		equal(t, "feed total", feed.Posts.TotalCount, 25)
	})

	t.Run("a stale version is CONFLICT with the current one", func(t *testing.T) {
		_, err := UpdatePage(ctx, s.admin, UpdatePageInput{Id: about.Id, ExpectedVersion: 1, Title: ptr("X")})
		equal(t, "code", code(err), "CONFLICT")
		equal[any](t, "current", extension(err, "currentVersion"), float64(about.Version))
	})

	t.Run("bad input is BAD_USER_INPUT naming the field", func(t *testing.T) {
		before := s.snapshot()
		for field, in := range map[string]CreatePageInput{
			"slug":     {Title: "X", Slug: "Not A Slug"},
			"title":    {Title: "", Slug: "x"},
			"order":    {Title: "X", Slug: "x", Order: ptr(-1)},
			"parentId": {Title: "X", Slug: "x", ParentId: &contact.Id}, // contact has a parent
		} {
			_, err := CreatePage(ctx, s.admin, in)
			equal(t, field, code(err), "BAD_USER_INPUT")
			equal[any](t, field+" field", extension(err, "field"), field)
		}
		s.unchanged(before)
	})

	t.Run("unpublished and deleted pages leave the menu", func(t *testing.T) {
		ok[*UnpublishPageResponse](t)(UnpublishPage(ctx, s.admin, UnpublishPageInput{Id: contact.Id}))
		_, err := UnpublishPage(ctx, s.admin, UnpublishPageInput{Id: contact.Id})
		equal(t, "a draft unpublished", code(err), "BAD_USER_INPUT")
		del := ok[*DeletePageResponse](t)(DeletePage(ctx, s.admin, DeletePageInput{Id: imprint.Id})).DeletePage
		equal(t, "deleted", del.DeletedId, imprint.Id)
		r := ok[*PagesResponse](t)(Pages(ctx, s.client, nil, nil, nil, nil, nil)).Pages
		equal(t, "menu", len(r.Edges), 1)
		_, err = PageBySlug(ctx, s.client, "legal")
		equal(t, "deleted page", code(err), "NOT_FOUND")
		s.consistent()
	})
}

// TestPageWritersRace runs two admins' writes of one page with the same
// version, and a page and a post created with one slug at once: one of
// each wins, the other gets CONFLICT, and the table stays consistent.
func TestPageWritersRace(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	page := ok[*CreatePageResponse](t)(CreatePage(ctx, s.admin, CreatePageInput{Title: "About", Slug: "about"})).CreatePage.Page.PageParts
	for round := range 4 {
		var wg sync.WaitGroup
		codes := make([]string, 2)
		for i := range 2 {
			wg.Go(func() {
				_, err := UpdatePage(ctx, s.admin, UpdatePageInput{Id: page.Id, ExpectedVersion: page.Version, Body: ptr("Writer " + string(rune('A'+i)))})
				codes[i] = code(err)
			})
		}
		wg.Wait()
		if !(codes[0] == "" && codes[1] == "CONFLICT" || codes[0] == "CONFLICT" && codes[1] == "") {
			t.Fatalf("round %d: codes %q, want one success and one CONFLICT", round, codes)
		}
		page = ok[*PageByIDResponse](t)(PageByID(ctx, s.admin, page.Id)).Page.PageParts
	}
	for round := range 4 {
		slug := "contested-" + string(rune('a'+round))
		var wg sync.WaitGroup
		var pageCode, postCode string
		wg.Go(func() {
			_, err := CreatePage(ctx, s.admin, CreatePageInput{Title: "P", Slug: slug})
			pageCode = code(err)
		})
		wg.Go(func() {
			_, err := CreatePost(ctx, b.writers[0], CreatePostInput{Title: "P", Slug: slug})
			postCode = code(err)
		})
		wg.Wait()
		if !(pageCode == "" && postCode == "CONFLICT" || pageCode == "CONFLICT" && postCode == "") {
			t.Fatalf("round %d: page %q, post %q: want one success and one CONFLICT", round, pageCode, postCode)
		}
	}
	s.consistent()
}

// TestSiteSettings: the site query shows the server's defaults until an
// admin sets the settings with their version, costs no request once the
// server holds them, and refuses bad input with nothing written.
func TestSiteSettings(t *testing.T) {
	s := newServer(t, func(_ *storage.ClientConfig, o *graph.HandlerOptions) {
		o.Site = graph.SiteDefaults{Title: "Default title", URL: "https://default.example.com"}
	})
	ctx := context.Background()
	site := ok[*SiteResponse](t)(Site(ctx, s.client)).Site.SiteParts
	equal(t, "default title", site.Title, "Default title")
	equal(t, "default url", deref(site.Url), "https://default.example.com")
	equal(t, "default post path", site.PostPath, "/posts/{slug}")
	equal(t, "page path", deref(site.PagePath), "/{slug}")
	equal(t, "version", site.Version, 0)
	sameRequests(t, "the first read", s.requests(), map[string]int{"GetItem": 1})
	ok[*SiteResponse](t)(Site(ctx, s.client))
	sameRequests(t, "a held site", s.requests(), map[string]int{})

	in := UpdateSiteInput{
		ExpectedVersion: 0, Title: ptr("Notes"), Description: ptr("On Go"), Url: ptr("https://notes.example.com"),
		PostPath: ptr("/{yyyy}/{mm}/{slug}"), Locale: ptr("en-GB"), Timezone: ptr("Europe/Berlin"),
		LogoUrl: ptr("https://notes.example.com/logo.svg"),
		Menus: []MenuInput{{Name: "main", Items: []MenuItemInput{
			{Label: "About", Kind: MenuLinkKindPage, Slug: ptr("about")},
			{Label: "Go & more", Kind: MenuLinkKindCategory, Slug: ptr("go")},
			{Label: "Go tag", Kind: MenuLinkKindTag, Slug: ptr("golang")},
			{Label: "Source", Kind: MenuLinkKindUrl, Url: ptr("https://github.com/notes")},
		}}},
		SocialLinks: []SocialAccountInput{{Network: "Mastodon", Url: "https://mastodon.social/@notes"}},
	}
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("wren"), Name: "Wren"}))
	_, err := UpdateSite(ctx, s.as("wren", auth.RoleAuthor), in)
	equal(t, "an author", code(err), "FORBIDDEN")
	site = ok[*UpdateSiteResponse](t)(UpdateSite(ctx, s.admin, in)).UpdateSite.Site.SiteParts
	equal(t, "version", site.Version, 1)
	paths := []string{}
	for _, it := range site.Menus[0].Items {
		paths = append(paths, deref(it.Path))
	}
	equal(t, "menu paths", strings.Join(paths, " "), "/about /categories/go  https://github.com/notes")
	equal(t, "a plain label with an ampersand", site.Menus[0].Items[1].Label, "Go & more")
	read := ok[*SiteResponse](t)(Site(ctx, s.client)).Site
	equal(t, "read", read.Title+" "+deref(read.Url)+" "+read.PostPath+" "+deref(read.Timezone), "Notes https://notes.example.com /{yyyy}/{mm}/{slug} Europe/Berlin")
	sameRequests(t, "a held site after the write", s.requests(), map[string]int{})

	_, err = UpdateSite(ctx, s.admin, in)
	equal(t, "stale", code(err), "CONFLICT")
	equal[any](t, "current", extension(err, "currentVersion"), float64(1))
	before := s.snapshot()
	for field, bad := range map[string]UpdateSiteInput{
		"timezone":               {ExpectedVersion: 1, Timezone: ptr("Nowhere/Else")},
		"postPath":               {ExpectedVersion: 1, PostPath: ptr("/{id}")},
		"menus[0].items[0].url":  {ExpectedVersion: 1, Menus: []MenuInput{{Name: "m", Items: []MenuItemInput{{Label: "x", Kind: MenuLinkKindUrl, Url: ptr("javascript:alert(1)")}}}}},
		"menus[0].items[0].slug": {ExpectedVersion: 1, Menus: []MenuInput{{Name: "m", Items: []MenuItemInput{{Label: "x", Kind: MenuLinkKindPage}}}}},
		"socialLinks":            {ExpectedVersion: 1, SocialLinks: make([]SocialAccountInput, 21)},
		"menus[0].items[0].label": {ExpectedVersion: 1, Menus: []MenuInput{{Name: "m", Items: []MenuItemInput{
			{Label: `<img src=x onerror="alert(1)">`, Kind: MenuLinkKindUrl, Url: ptr("https://notes.example.com")}}}}},
		"menus[0].name": {ExpectedVersion: 1, Menus: []MenuInput{{Name: "<b>main</b>", Items: []MenuItemInput{}}}},
	} {
		_, err := UpdateSite(ctx, s.admin, bad)
		equal(t, field, code(err), "BAD_USER_INPUT")
	}
	s.unchanged(before)
	s.consistent()
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// TestSmallConsistencies: a category by its id and updated by it, an
// archive by an author's slug, and an author's profile.
func TestSmallConsistencies(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	goCat := ok[*CategoryByIDResponse](t)(CategoryByID(ctx, s.client, base64.RawURLEncoding.EncodeToString([]byte("Category:go")))).Category
	equal(t, "category by id", goCat.Slug, "go")
	upd := ok[*UpdateCategoryResponse](t)(UpdateCategory(ctx, s.admin, UpdateCategoryInput{Id: &goCat.Id, Name: ptr("Golang")})).UpdateCategory.Category
	equal(t, "updated by id", upd.Name, "Golang")
	_, err := UpdateCategory(ctx, s.admin, UpdateCategoryInput{Id: &goCat.Id, Slug: ptr("go"), Name: ptr("Both")})
	equal(t, "id and slug", code(err), "BAD_USER_INPUT")
	_, err = UpdateCategory(ctx, s.admin, UpdateCategoryInput{Name: ptr("Neither")})
	equal(t, "neither", code(err), "BAD_USER_INPUT")

	byID := ok[*ArchiveResponse](t)(Archive(ctx, s.client, &b.authors[0], nil))
	bySlug := ok[*ArchiveOfAuthorSlugResponse](t)(ArchiveOfAuthorSlug(ctx, s.client, "ada-lovelace"))
	equal(t, "months", len(bySlug.Archive), len(byID.Archive))
	equal(t, "count", bySlug.Archive[0].PostCount, byID.Archive[0].PostCount)
	_, err = ArchiveOfAuthorSlug(ctx, s.client, "nobody")
	equal(t, "unknown slug", code(err), "NOT_FOUND")

	r := ok[*UpdateAuthorProfileResponse](t)(UpdateAuthorProfile(ctx, b.writers[0], UpdateAuthorInput{Id: b.authors[0],
		Website: ptr("https://ada.example.com"), Location: ptr("London"),
		SocialLinks: []SocialAccountInput{{Network: "GitHub", Url: "https://github.com/ada"}}})).UpdateAuthor.Author
	equal(t, "website", deref(r.Website), "https://ada.example.com")
	p := ok[*AuthorProfileResponse](t)(AuthorProfile(ctx, s.client, "ada-lovelace")).Author
	equal(t, "location", deref(p.Location), "London")
	equal(t, "social", p.SocialLinks[0].Url, "https://github.com/ada")
	before := s.snapshot()
	_, err = UpdateAuthorProfile(ctx, b.writers[0], UpdateAuthorInput{Id: b.authors[0], Website: ptr("not a url")})
	equal(t, "bad website", code(err), "BAD_USER_INPUT")
	equal[any](t, "field", extension(err, "field"), "website")
	s.unchanged(before)
	t.Run("drafts and the moderation queue have a totalCount: one Query", func(t *testing.T) {
		drafts := ok[*DraftTotalResponse](t)(DraftTotal(ctx, b.writers[0], b.authors[0])).Author.Drafts
		equal(t, "ada's drafts", drafts.TotalCount, 1)
		sameRequests(t, "drafts", s.requests(), map[string]int{"GetItem": 1, "Query": 2})
		for i := range 3 {
			ok[*AddCommentResponse](t)(AddComment(ctx, s.reader(fmt.Sprintf("r%d", i), "R", ""), AddCommentInput{PostId: b.published[0], Body: "Held"}))
		}
		equal(t, "the admins' queue", ok[*QueueTotalResponse](t)(QueueTotal(ctx, s.admin)).ModerationQueue.TotalCount, 3)
		sameRequests(t, "queue", s.requests(), map[string]int{"Query": 2})
		equal(t, "ada's queue", ok[*QueueTotalResponse](t)(QueueTotal(ctx, b.writers[0])).ModerationQueue.TotalCount, 3)
		equal(t, "grace's queue", ok[*QueueTotalResponse](t)(QueueTotal(ctx, b.writers[1])).ModerationQueue.TotalCount, 0)
	})
	t.Run("a draft that takes an old slug keeps the redirect until it is published", func(t *testing.T) {
		old := ok[*PostPageResponse](t)(PostPage(ctx, s.client, "post-2")).Post
		ok[*UpdatePostResponse](t)(UpdatePost(ctx, b.writers[0], UpdatePostInput{Id: old.Id, ExpectedVersion: old.Version, Slug: ptr("post-2-renamed")}))
		draft := ok[*CreatePostResponse](t)(CreatePost(ctx, b.writers[0], CreatePostInput{Title: "New", Slug: "post-2"})).CreatePost.Post
		seen := ok[*PostPageResponse](t)(PostPage(ctx, s.client, "post-2")).Post
		equal(t, "a reader still goes to the old post", seen.Id+" "+seen.Slug, old.Id+" post-2-renamed")
		sameRequests(t, "requests", s.requests(), map[string]int{"GetItem": 1, "BatchGetItem": 1, "Query": 1})
		mine := ok[*PostPageResponse](t)(PostPage(ctx, b.writers[0], "post-2")).Post
		equal(t, "its author sees the draft", mine.Id, draft.Id)
		ok[*PublishPostResponse](t)(PublishPost(ctx, b.writers[0], PublishPostInput{Id: draft.Id}))
		seen = ok[*PostPageResponse](t)(PostPage(ctx, s.client, "post-2")).Post
		equal(t, "published, it is the new post", seen.Id, draft.Id)
		s.consistent()
	})
	cleared := ok[*UpdateAuthorProfileResponse](t)(UpdateAuthorProfile(ctx, b.writers[0], UpdateAuthorInput{Id: b.authors[0],
		Website: ptr(""), SocialLinks: []SocialAccountInput{}})).UpdateAuthor.Author
	equal(t, "cleared website", cleared.Website, (*string)(nil))
	equal(t, "cleared social", len(cleared.SocialLinks), 0)
	s.consistent()
}

func sameRequests(t *testing.T, what string, got, want map[string]int) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Errorf("%s: DynamoDB requests %v, want %v", what, got, want)
	}
}

// TestWebhooksFollowPagesAndSite: a page's publication, edit and deletion
// and a change of the site settings reach a webhook as their events, with
// the page's paths; after the settings set a post path and a site URL, the
// next post's event and the feed link with them.
func TestWebhooksFollowPagesAndSite(t *testing.T) {
	s := startFeedServer(t)
	ctx := context.Background()
	writer := s.writer()
	r := newFeedReceiver(t)
	s.hook(writer, r, "page.published", "page.published.edited", "page.deleted", "site.updated", "post.published")

	pg := ok[*CreatePageResponse](t)(CreatePage(ctx, writer, CreatePageInput{Title: "About", Slug: "about", Body: ptr("Hi.")})).CreatePage.Page
	id := rawID(t, pg.Id, "Page")
	ok[*PublishPageResponse](t)(PublishPage(ctx, writer, PublishPageInput{Id: pg.Id}))
	t.Run("publishing a page is page.published with its path and tag", func(t *testing.T) {
		d := r.waitEvent(t, "page.published", func(e storage.EventData) bool { return e.PageID == id })
		if d.Data.Slug != "about" || !hasAll(d.Data.Paths, "/about") || !hasAll(d.Data.CacheTags, "page:"+id) {
			t.Errorf("page.published data %+v", d.Data)
		}
	})
	ok[*UpdatePageResponse](t)(UpdatePage(ctx, writer, UpdatePageInput{Id: pg.Id, ExpectedVersion: 2, Slug: ptr("about-us")}))
	t.Run("renaming it is page.published.edited with both paths", func(t *testing.T) {
		d := r.waitEvent(t, "page.published.edited", func(e storage.EventData) bool { return e.PageID == id })
		if !hasAll(d.Data.Paths, "/about", "/about-us") || !slices.Contains(d.Data.PreviousSlugs, "about") {
			t.Errorf("page.published.edited data %+v", d.Data)
		}
	})
	ok[*DeletePageResponse](t)(DeletePage(ctx, writer, DeletePageInput{Id: pg.Id}))
	t.Run("deleting it is page.deleted", func(t *testing.T) {
		r.waitEvent(t, "page.deleted", func(e storage.EventData) bool { return e.PageID == id })
	})

	ok[*UpdateSiteResponse](t)(UpdateSite(ctx, writer, UpdateSiteInput{ExpectedVersion: 0, Url: ptr("https://notes.example.com"),
		PostPath: ptr("/blog/{slug}"), Title: ptr("Notes")}))
	t.Run("a change of the settings is site.updated", func(t *testing.T) {
		d := r.waitEvent(t, "site.updated", func(e storage.EventData) bool { return true })
		if !slices.Equal(d.Data.CacheTags, []string{"site"}) {
			t.Errorf("site.updated data %+v", d.Data)
		}
	})
	post := ok[*CreatePostResponse](t)(CreatePost(ctx, writer, CreatePostInput{Title: "Hello", Slug: "hello", Categories: []string{"feeds"}})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, writer, PublishPostInput{Id: post.Id}))
	t.Run("events and feeds link with the settings' post path and URL", func(t *testing.T) {
		postID := rawID(t, post.Id, "Post")
		d := r.waitEvent(t, "post.published", func(e storage.EventData) bool { return e.PostID == postID })
		if !slices.Contains(d.Data.Paths, "/blog/hello") {
			t.Errorf("post.published paths %v, want /blog/hello", d.Data.Paths)
		}
		resp, err := http.Get(s.base + "/feed.xml")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		for _, want := range []string{"<title>Notes</title>", "<link>https://notes.example.com/blog/hello</link>"} {
			if !strings.Contains(string(body), want) {
				t.Errorf("feed %s: no %s", body, want)
			}
		}
	})
}
