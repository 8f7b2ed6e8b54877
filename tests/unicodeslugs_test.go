package tests

import (
	"context"
	"testing"
)

// TestUnicodeSlugs names tags, categories and posts in other scripts than
// Latin: their slugs keep the script and find them; a slug in another
// normalization form, one mixing look-alike scripts in a word and one
// with a text direction character are refused with BAD_USER_INPUT; with
// slugTransliteration LATIN, titles make Latin slugs; ASCII slugs stay.
func TestUnicodeSlugs(t *testing.T) {
	s := newServer(t)
	b := s.seedReadersBlog(t)
	ctx := context.Background()

	cat := ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: "привет", Name: "Привет"})).CreateCategory.Category
	equal(t, "category slug", cat.Slug, "привет")
	equal(t, "category by slug", ok[*CategoryPageResponse](t)(CategoryPage(ctx, s.client, "привет", nil, nil)).Category.Name, "Привет")
	old := ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: "plain-ascii", Name: "Plain"})).CreateCategory.Category
	equal(t, "an ASCII slug", ok[*CategoryPageResponse](t)(CategoryPage(ctx, s.client, old.Slug, nil, nil)).Category.Name, "Plain")

	for _, c := range []struct{ what, slug string }{
		{"decomposed é", "cafe\u0301"},
		{"Cyrillic а in a Latin word", "p\u0430ypal"},
		{"a right-to-left override", "abc\u202Edef"},
		{"upper case", "Привет-2"},
	} {
		_, err := CreateCategory(ctx, s.admin, CreateCategoryInput{Slug: c.slug, Name: "x"})
		equal(t, c.what, code(err), "BAD_USER_INPUT")
	}

	for _, c := range []struct{ title, slug string }{
		{"日本語の記事", "日本語の記事"},
		{"Привет мир", "привет-мир"},
		{"مرحبا بالعالم", "مرحبا-بالعالم"},
	} {
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, b.ada, CreatePostInput{Title: c.title, Tags: []string{"日本語"}})).CreatePost.Post
		equal(t, "slug of "+c.title, p.Slug, c.slug)
		ok[*PublishPostResponse](t)(PublishPost(ctx, s.admin, PublishPostInput{Id: p.Id}))
		equal(t, "post by "+c.slug, ok[*PostPageResponse](t)(PostPage(ctx, s.client, c.slug)).Post.Id, p.Id)
	}
	equal(t, "tag by slug", ok[*TagPageResponse](t)(TagPage(ctx, s.client, "日本語", nil, nil, nil, nil)).Tag.Name, "日本語")

	// Composed and decomposed й name one tag, and both forms find it, as
	// does upper case.
	for title, name := range map[string]string{"Composed": "Мой", "Decomposed": "Мои\u0306"} {
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, b.ada, CreatePostInput{Title: title, Tags: []string{name}})).CreatePost.Post
		ok[*PublishPostResponse](t)(PublishPost(ctx, s.admin, PublishPostInput{Id: p.Id}))
	}
	for _, form := range []string{"мой", "мои\u0306", "МОЙ", "МОИ\u0306"} {
		tag := ok[*TagPageResponse](t)(TagPage(ctx, s.client, form, nil, nil, nil, nil)).Tag
		equal(t, "the tag found by "+form, tag.Slug, "мой")
		equal(t, "its posts, by "+form, tag.Posts.TotalCount, 2)
	}
	equal(t, "a category by upper case", ok[*CategoryPageResponse](t)(CategoryPage(ctx, s.client, "ПРИВЕТ", nil, nil)).Category.Name, "Привет")
	equal(t, "a post by upper case", ok[*PostPageResponse](t)(PostPage(ctx, s.client, "ПРИВЕТ-МИР")).Post.Slug, "привет-мир")
	_, err := CreatePost(ctx, b.ada, CreatePostInput{Title: "p\u0430ypal login"})
	equal(t, "a title mixing scripts in a word", code(err), "BAD_USER_INPUT")

	site := ok[*SiteResponse](t)(Site(ctx, s.client)).Site
	ok[*UpdateSiteResponse](t)(UpdateSite(ctx, s.admin, UpdateSiteInput{ExpectedVersion: site.Version, SlugTransliteration: ptr(SlugTransliterationLatin)}))
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, b.ada, CreatePostInput{Title: "Привет мир!"})).CreatePost.Post
	equal(t, "transliterated", p.Slug, "privet-mir")
	s.consistent()
}
