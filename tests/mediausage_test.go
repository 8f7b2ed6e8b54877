package tests

import (
	"context"
	"fmt"
	"testing"

	"github.com/blogql/blog/auth"
)

// Where media items are used: deleteMedia refuses an item that a post
// shows as its cover or in its body, naming the posts, unless force.

func TestMediaInUse(t *testing.T) {
	s := newMediaServer(t)
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("alice"), Name: "Alice"}))
	alice := s.as("alice", auth.RoleAuthor)
	file := testJPEG(t, 300, 200)
	item := func() string {
		id, _ := s.upload(t, alice, "x.jpg", "image/jpeg", len(file), file)
		return ok[*CompleteUploadResponse](t)(CompleteUpload(ctx, alice, CompleteUploadInput{Id: id})).CompleteUpload.Media.Id
	}
	cover, inBody, forced := item(), item(), item()
	body := fmt.Sprintf("![A](media:%s)\n\n![B](media:%s)\n", inBody, forced)
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, alice, CreatePostInput{Title: "Used", Slug: "used", CoverMediaId: &cover, Body: &body})).CreatePost.Post

	refused := func(id, as string) {
		t.Helper()
		_, err := DeleteMedia(ctx, alice, DeleteMediaInput{Id: id})
		equal(t, as+": code", code(err), "CONFLICT")
		equal(t, as+": reason", extension(err, "reason"), any("MEDIA_IN_USE"))
		equal(t, as+": usedBy", fmt.Sprint(extension(err, "usedBy")), fmt.Sprint([]any{map[string]any{"as": as, "post": p.Id}}))
	}
	refused(cover, "COVER")
	refused(inBody, "BODY")

	t.Run("a post that stops using an item frees it", func(t *testing.T) {
		v := ok[*RemoveCoverImageResponse](t)(RemoveCoverImage(ctx, alice, p.Id, p.Version, nil)).UpdatePost.Post.Version
		ok[*DeleteMediaResponse](t)(DeleteMedia(ctx, alice, DeleteMediaInput{Id: cover}))
		only := fmt.Sprintf("![B](media:%s)\n", forced)
		ok[*UpdatePostResponse](t)(UpdatePost(ctx, alice, UpdatePostInput{Id: p.Id, ExpectedVersion: v, Body: &only}))
		ok[*DeleteMediaResponse](t)(DeleteMedia(ctx, alice, DeleteMediaInput{Id: inBody}))
	})

	t.Run("force deletes an item in use, and the post can still change", func(t *testing.T) {
		ok[*DeleteMediaResponse](t)(DeleteMedia(ctx, alice, DeleteMediaInput{Id: forced, Force: ptr(true)}))
		equal(t, "usage", s.usage(t).Files, 0)
		plain := "No images."
		ok[*UpdatePostResponse](t)(UpdatePost(ctx, alice, UpdatePostInput{Id: p.Id, Body: &plain, ExpectedVersion: p.Version + 2}))
		again := fmt.Sprintf("![B](media:%s)\n", forced)
		_, err := UpdatePost(ctx, alice, UpdatePostInput{Id: p.Id, Body: &again, ExpectedVersion: p.Version + 3})
		equal(t, "naming it again", code(err), "BAD_USER_INPUT")
	})

	t.Run("deleting a post frees its items", func(t *testing.T) {
		id := item()
		b := fmt.Sprintf("![C](media:%s)\n", id)
		q := ok[*CreatePostResponse](t)(CreatePost(ctx, alice, CreatePostInput{Title: "Gone", Slug: "gone", Body: &b})).CreatePost.Post
		refusedID := func() string { _, err := DeleteMedia(ctx, alice, DeleteMediaInput{Id: id}); return code(err) }
		equal(t, "before", refusedID(), "CONFLICT")
		ok[*DeletePostResponse](t)(DeletePost(ctx, alice, DeletePostInput{Id: q.Id}))
		ok[*DeleteMediaResponse](t)(DeleteMedia(ctx, alice, DeleteMediaInput{Id: id}))
	})
	s.consistent()
}
