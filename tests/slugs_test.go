package tests

import (
	"context"
	"testing"
)

// TestOldSlugsStayWithTheirAuthor renames a post and has another author
// ask for its old slug: refused with SLUG_TAKEN, so old links never turn
// to another author's content; the post's own author, and an admin, may
// take it, and the old slug then leads to the post that took it.
func TestOldSlugsStayWithTheirAuthor(t *testing.T) {
	s := newServer(t)
	b := s.seedReadersBlog(t)
	ctx := context.Background()
	publish := func(id string) {
		t.Helper()
		ok[*PublishPostResponse](t)(PublishPost(ctx, s.admin, PublishPostInput{Id: id}))
	}
	leadsTo := func(slug string) string {
		t.Helper()
		p := ok[*PostPageResponse](t)(PostPage(ctx, s.client, slug)).Post
		return p.Id + " " + p.Slug
	}
	taken := func(what string, err error) {
		t.Helper()
		_, c, _, reason := errInfo(err)
		equal(t, what, c+" "+reason, "CONFLICT SLUG_TAKEN")
	}

	first := ok[*CreatePostResponse](t)(CreatePost(ctx, b.ada, CreatePostInput{Title: "First", Slug: "first-name"})).CreatePost.Post
	publish(first.Id)
	v := ok[*UpdatePostResponse](t)(UpdatePost(ctx, b.ada, UpdatePostInput{Id: first.Id, ExpectedVersion: first.Version + 1, Slug: ptr("second-name")})).UpdatePost.Post.Version
	ok[*UpdatePostResponse](t)(UpdatePost(ctx, b.ada, UpdatePostInput{Id: first.Id, ExpectedVersion: v, Slug: ptr("third-name")}))
	equal(t, "an old slug", leadsTo("first-name"), first.Id+" third-name")

	_, err := CreatePost(ctx, b.grace, CreatePostInput{Title: "Squatter", Slug: "first-name"})
	taken("another author's createPost with an old slug", err)
	graces := ok[*CreatePostResponse](t)(CreatePost(ctx, b.grace, CreatePostInput{Title: "Grace's", Slug: "graces"})).CreatePost.Post
	publish(graces.Id)
	_, err = UpdatePost(ctx, b.grace, UpdatePostInput{Id: graces.Id, ExpectedVersion: graces.Version + 1, Slug: ptr("second-name")})
	taken("another author's updatePost to an old slug", err)
	equal(t, "the old slugs after the refusals", leadsTo("first-name")+", "+leadsTo("second-name"), first.Id+" third-name, "+first.Id+" third-name")
	equal(t, "grace's post unchanged", leadsTo("graces"), graces.Id+" graces")

	again := ok[*CreatePostResponse](t)(CreatePost(ctx, b.ada, CreatePostInput{Title: "Again", Slug: "first-name"})).CreatePost.Post
	equal(t, "the same author's createPost", again.Slug, "first-name")
	publish(again.Id)
	equal(t, "the old slug now", leadsTo("first-name"), again.Id+" first-name")
	equal(t, "the other old slug", leadsTo("second-name"), first.Id+" third-name")

	ok[*UpdatePostResponse](t)(UpdatePost(ctx, s.admin, UpdatePostInput{Id: graces.Id, ExpectedVersion: graces.Version + 1, Slug: ptr("second-name")}))
	equal(t, "taken by an admin's updatePost", leadsTo("second-name"), graces.Id+" second-name")
	equal(t, "the first post keeps its slug", leadsTo("third-name"), first.Id+" third-name")
	s.consistent()
}
