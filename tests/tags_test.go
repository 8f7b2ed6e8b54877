package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/syndication"
)

// coBlog is a blog with co-authored, tagged posts: grace wrote five
// posts with ada and alan as co-authors, tagged Go and DynamoDB, one an
// hour; alan wrote one alone, tagged Go.
type coBlog struct {
	ids   map[string]string // author global ids by subject
	posts []string          // grace's posts' ids, oldest first
	solo  string
}

func (s *server) seedCoBlog(t *testing.T) *coBlog {
	t.Helper()
	ctx := context.Background()
	b := &coBlog{ids: map[string]string{}}
	for _, a := range [][2]string{{"ada", "Ada Lovelace"}, {"grace", "Grace Hopper"}, {"alan", "Alan Turing"}} {
		b.ids[a[0]] = ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: &a[0], Name: a[1]})).CreateAuthor.Author.Id
	}
	grace, alan := s.as("grace", auth.RoleAuthor), s.as("alan", auth.RoleAuthor)
	for i := range 5 {
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, grace, CreatePostInput{
			Title: fmt.Sprintf("Together %d", i), Slug: fmt.Sprintf("together-%d", i),
			CoAuthors: []string{b.ids["ada"], b.ids["alan"]}, Tags: []string{"Go", "DynamoDB"},
		})).CreatePost.Post
		at := start.Add(-time.Duration(10-i) * time.Hour)
		ok[*PublishPostResponse](t)(PublishPost(ctx, grace, PublishPostInput{Id: p.Id, At: &at}))
		b.posts = append(b.posts, p.Id)
	}
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, alan, CreatePostInput{Title: "Alone", Slug: "alone", Tags: []string{"go"}})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, alan, PublishPostInput{Id: p.Id}))
	b.solo = p.Id
	return b
}

func mapNames[T any](list []T, name func(T) string) []string {
	var out []string
	for _, v := range list {
		out = append(out, name(v))
	}
	return out
}

func TestCoAuthoredPostsBylinesAndPages(t *testing.T) {
	s := newServer(t)
	s.seedCoBlog(t)
	ctx := context.Background()
	s.requests()

	post := ok[*CoAuthoredPostResponse](t)(CoAuthoredPost(ctx, s.client, "together-4")).Post
	got := mapNames(post.Authors, func(a CoAuthoredPostPostAuthorsAuthor) string { return a.Name + "/" + a.Slug })
	if !slices.Equal(got, []string{"Grace Hopper/grace-hopper", "Ada Lovelace/ada-lovelace", "Alan Turing/alan-turing"}) {
		t.Errorf("bylines %v", got)
	}
	equal(t, "primary author", post.Author.Name, "Grace Hopper")
	if got := mapNames(post.Tags, func(t CoAuthoredPostPostTagsTag) string { return t.Slug + "=" + t.Name }); !slices.Equal(got, []string{"go=Go", "dynamodb=DynamoDB"}) {
		t.Errorf("tags %v", got)
	}
	if n := total(s.requests()); n > 2 {
		t.Errorf("post page with bylines and tags: %d requests, want 2 (its slug, the post)", n)
	}

	// Every co-author's page lists the post, with its bylines, and counts it.
	for slug, want := range map[string]int{"ada-lovelace": 5, "alan-turing": 6, "grace-hopper": 5} {
		page := ok[*CoAuthorPageResponse](t)(CoAuthorPage(ctx, s.client, slug, ptr(20))).Author
		equal(t, slug+" postCount", page.PostCount, want)
		equal(t, slug+" totalCount", page.Posts.TotalCount, want)
		equal(t, slug+" page", len(page.Posts.Edges), want)
		n := page.Posts.Edges[len(page.Posts.Edges)-1].Node
		equal(t, slug+" bylines", len(n.Authors), 3)
		equal(t, slug+" tags", len(n.Tags), 2)
		if got := total(s.requests()); got > 3 {
			t.Errorf("%s's page: %d requests, want at most 3 (slug, author, posts)", slug, got)
		}
	}

	// More of each author than the names is one batch read for the page.
	full := ok[*PostAuthorsInFullResponse](t)(PostAuthorsInFull(ctx, s.client, "together-0")).Post
	equal(t, "alan's count through the byline", full.Authors[2].PostCount, 6)
	equal(t, "go's count through the tag", full.Tags[0].PostCount, 6)
	if n := total(s.requests()); n > 4 {
		t.Errorf("post with its authors and tags in full: %d requests, want at most 4", n)
	}
	s.consistent()
}

func TestTagPagesAndTagAdministration(t *testing.T) {
	s := newServer(t)
	b := s.seedCoBlog(t)
	ctx := context.Background()
	s.requests()

	first := ok[*TagPageResponse](t)(TagPage(ctx, s.client, "go", ptr(4), nil, nil, nil)).Tag
	equal(t, "name", first.Name, "Go")
	equal(t, "postCount", first.PostCount, 6)
	equal(t, "totalCount", first.Posts.TotalCount, 6)
	want := []string{b.solo, b.posts[4], b.posts[3], b.posts[2]}
	if got := mapNames(first.Posts.Edges, func(e TagPageTagPostsPostConnectionEdgesPostEdge) string { return e.Node.Id }); !slices.Equal(got, want) {
		t.Errorf("first page %v, want %v", got, want)
	}
	equal(t, "has next", first.Posts.PageInfo.HasNextPage, true)
	if n := total(s.requests()); n > 2 {
		t.Errorf("tag page: %d requests, want 2 (the tag, its posts)", n)
	}
	next := ok[*TagPageResponse](t)(TagPage(ctx, s.client, "go", ptr(4), first.Posts.PageInfo.EndCursor, nil, nil)).Tag.Posts
	equal(t, "second page", len(next.Edges), 2)
	equal(t, "second page has next", next.PageInfo.HasNextPage, false)
	back := ok[*TagPageResponse](t)(TagPage(ctx, s.client, "go", nil, nil, ptr(3), next.PageInfo.StartCursor)).Tag.Posts
	if got := mapNames(back.Edges, func(e TagPageTagPostsPostConnectionEdgesPostEdge) string { return e.Node.Id }); !slices.Equal(got, []string{b.posts[4], b.posts[3], b.posts[2]}) {
		t.Errorf("backward page %v", got)
	}
	equal(t, "backward page has previous", back.PageInfo.HasPreviousPage, true)
	if n := total(s.requests()); n > 4 {
		t.Errorf("two more tag pages: %d requests, want 4", n)
	}

	list := ok[*TagListResponse](t)(TagList(ctx, s.client, nil, nil)).Tags
	if got := mapNames(list.Edges, func(e TagListTagsTagConnectionEdgesTagEdge) string {
		return fmt.Sprintf("%s=%s:%d", e.Node.Slug, e.Node.Name, e.Node.PostCount)
	}); !slices.Equal(got, []string{"dynamodb=DynamoDB:5", "go=Go:6"}) {
		t.Errorf("tags %v", got)
	}
	if n := total(s.requests()); n > 1 {
		t.Errorf("tags: %d requests, want 1", n)
	}

	// An admin renames a tag: every page shows the new name at once.
	renamed := ok[*RenameTagResponse](t)(RenameTag(ctx, s.admin, RenameTagInput{Slug: "go", Name: "Golang", ExpectedVersion: ptr(1)})).RenameTag.Tag
	equal(t, "renamed", renamed.Name, "Golang")
	_, err := RenameTag(ctx, s.admin, RenameTagInput{Slug: "go", Name: "Go", ExpectedVersion: ptr(1)})
	equal(t, "a stale rename", code(err), "CONFLICT")
	page := ok[*CoAuthorPageResponse](t)(CoAuthorPage(ctx, s.client, "ada-lovelace", nil)).Author
	equal(t, "tag name on ada's page", page.Posts.Edges[0].Node.Tags[0].Name, "Golang")

	// And merges DynamoDB into it: its posts move, its slug leads there.
	merged := ok[*MergeTagsResponse](t)(MergeTags(ctx, s.admin, MergeTagsInput{From: "dynamodb", Into: "go"})).MergeTags.Tag
	equal(t, "merged into", merged.Slug, "go")
	equal(t, "merged count", merged.PostCount, 6)
	old := ok[*TagPageResponse](t)(TagPage(ctx, s.client, "dynamodb", nil, nil, nil, nil)).Tag
	equal(t, "dynamodb leads to", old.Slug, "go")
	post := ok[*CoAuthoredPostResponse](t)(CoAuthoredPost(ctx, s.client, "together-0")).Post
	if got := mapNames(post.Tags, func(t CoAuthoredPostPostTagsTag) string { return t.Slug + "=" + t.Name }); !slices.Equal(got, []string{"go=Golang"}) {
		t.Errorf("tags after the merge %v", got)
	}
	_, err = MergeTags(ctx, s.admin, MergeTagsInput{From: "go", Into: "go"})
	equal(t, "a merge into itself", code(err), "BAD_USER_INPUT")
	_, err = MergeTags(ctx, s.admin, MergeTagsInput{From: "nope", Into: "go"})
	equal(t, "a merge of a missing tag", code(err), "NOT_FOUND")
	s.consistent()
}

// TestCoAuthorsAndTagsBadInputWritesNothing sends an 11th co-author, an
// 11th tag, an unknown co-author and a change of too much at once: each is
// BAD_USER_INPUT, and the table is as it was.
func TestCoAuthorsAndTagsBadInputWritesNothing(t *testing.T) {
	s := newServer(t)
	b := s.seedCoBlog(t)
	ctx := context.Background()
	grace := s.as("grace", auth.RoleAuthor)
	var ten []string
	for i := range 10 {
		sub := fmt.Sprintf("co-%d", i)
		ten = append(ten, ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: &sub, Name: sub})).CreateAuthor.Author.Id)
	}
	var eleven, otherTen []string
	for i := range 11 {
		eleven = append(eleven, fmt.Sprintf("tag %d", i))
		otherTen = append(otherTen, fmt.Sprintf("other %d", i))
	}
	var cats, otherCats []string
	for i := range 20 {
		slug := fmt.Sprintf("cat-%d", i)
		ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: slug, Name: slug}))
		if i < 10 {
			cats = append(cats, slug)
		} else {
			otherCats = append(otherCats, slug)
		}
	}
	full := ok[*CreatePostResponse](t)(CreatePost(ctx, grace, CreatePostInput{
		Title: "Full", Slug: "full", CoAuthors: ten[:9], Tags: eleven[:10], Categories: cats,
	})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, grace, PublishPostInput{Id: full.Id}))
	before := s.snapshot()
	for name, in := range map[string]CreatePostInput{
		"an 11th author":          {Title: "T", Slug: "t1", CoAuthors: ten},
		"an 11th tag":             {Title: "T", Slug: "t2", Tags: eleven},
		"an unknown co-author":    {Title: "T", Slug: "t3", CoAuthors: []string{b.ids["ada"], "QXV0aG9yOm5vYm9keQ"}},
		"the author as co-author": {Title: "T", Slug: "t4", CoAuthors: []string{b.ids["grace"]}},
		"a tag without letters":   {Title: "T", Slug: "t5", Tags: []string{"!!!"}},
	} {
		_, err := CreatePost(ctx, grace, in)
		equal(t, name, code(err), "BAD_USER_INPUT")
	}
	for name, in := range map[string]UpdatePostInput{
		"an 11th author by an update":                      {Id: full.Id, ExpectedVersion: 2, CoAuthors: ten},
		"an 11th tag by an update":                         {Id: full.Id, ExpectedVersion: 2, Tags: eleven},
		"all tags and categories at once, past 100 writes": {Id: full.Id, ExpectedVersion: 2, Tags: otherTen[:10], Categories: otherCats},
	} {
		_, err := UpdatePost(ctx, grace, in)
		equal(t, name, code(err), "BAD_USER_INPUT")
	}
	s.unchanged(before)
	// The same changes one after another are taken.
	ok[*UpdatePostResponse](t)(UpdatePost(ctx, grace, UpdatePostInput{Id: full.Id, ExpectedVersion: 2, Tags: otherTen[:10]}))
	ok[*UpdatePostResponse](t)(UpdatePost(ctx, grace, UpdatePostInput{Id: full.Id, ExpectedVersion: 3, Categories: otherCats}))
	s.consistent()
}

// TestCoAuthorsFeedHasTheirCoWrittenPosts reads a co-author's feed: it
// lists the posts they co-wrote, from their own copies, for the same
// requests as any author's feed (excerpts: no read of the bodies).
func TestCoAuthorsFeedHasTheirCoWrittenPosts(t *testing.T) {
	s := newServer(t)
	s.seedCoBlog(t)
	f := newSyndicationServer(t, s, func(o *syndication.Options) { o.Content = syndication.ContentExcerpt })
	f.get(t, "/sitemap.xml") // the server's first request reads the site settings
	a, n := f.get(t, "/authors/ada-lovelace/feed.json")
	equal(t, "status", a.status, http.StatusOK)
	equal(t, "DynamoDB requests", n, 3)
	var feed struct {
		Items []struct {
			URL string `json:"url"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(a.body), &feed); err != nil {
		t.Fatal(err)
	}
	equal(t, "items", len(feed.Items), 5)
	if len(feed.Items) > 0 && !strings.HasSuffix(feed.Items[0].URL, "/posts/together-4") {
		t.Errorf("newest item %s", feed.Items[0].URL)
	}
}
