package tests

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/blogql/blog/auth"
)

// Library images in posts: `![alt](media:<id>)` renders as a responsive
// img of the item's renditions; an id not in the library is refused.

func TestMediaImagesInBodies(t *testing.T) {
	s := newMediaServer(t)
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("alice"), Name: "Alice"}))
	alice := s.as("alice", auth.RoleAuthor)
	file := testJPEG(t, 1000, 750)
	id, status := s.upload(t, alice, "sunset.jpg", "image/jpeg", len(file), file)
	equal(t, "PUT status", status, http.StatusOK)
	ok[*CompleteUploadResponse](t)(CompleteUpload(ctx, alice, CompleteUploadInput{Id: id}))

	plain := "Intro."
	ok[*CreatePostResponse](t)(CreatePost(ctx, alice, CreatePostInput{Title: "Plain", Slug: "plain", Body: &plain}))
	without := s.requests()
	body := fmt.Sprintf("Intro.\n\n![A sunset](media:%s)\n\n![The same](media:%s)\n", id, id)
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, alice, CreatePostInput{Title: "Sunsets", Slug: "sunsets", Body: &body})).CreatePost.Post
	with := s.requests()
	equal(t, "BatchGetItem calls for the body's media", with["BatchGetItem"]-without["BatchGetItem"], 1)
	delete(with, "BatchGetItem")
	delete(without, "BatchGetItem")
	equal(t, "other requests", fmt.Sprint(with), fmt.Sprint(without))
	ok[*PublishPostResponse](t)(PublishPost(ctx, alice, PublishPostInput{Id: p.Id}))
	page := ok[*PostContentResponse](t)(PostContent(ctx, s.client, "sunsets")).Post
	u := func(w int, f string) string { return fmt.Sprintf("%s/media/%s/%d.%s", s.base, id, w, f) }
	srcset := strings.Join([]string{u(320, "webp") + " 320w", u(640, "webp") + " 640w", u(960, "webp") + " 960w", u(1000, "webp") + " 1000w"}, ", ")
	want := `<img src="` + u(1000, "jpeg") + `" alt="A sunset" srcset="` + srcset + `" sizes="(max-width: 1000px) 100vw, 1000px" width="1000" height="750" decoding="async">`
	if !strings.Contains(page.BodyHtml, want) {
		t.Errorf("bodyHtml = %s\nwant it to hold %s", page.BodyHtml, want)
	}
	if !strings.Contains(page.BodyHtml, `alt="The same" srcset="`+srcset+`" sizes="(max-width: 1000px) 100vw, 1000px" width="1000" height="750" decoding="async" loading="lazy">`) {
		t.Errorf("the second image is not lazy: %s", page.BodyHtml)
	}
	for _, f := range []string{u(1000, "jpeg"), u(640, "webp")} {
		if res, _ := get(t, f, nil); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", f, res.StatusCode)
		}
	}

	t.Run("an id not in the library is refused, and nothing written", func(t *testing.T) {
		bad := "![Lost](media:0190c8e2-7d1a-7c4e-9b1a-2f0e5d6c7b8a)"
		_, err := CreatePost(ctx, alice, CreatePostInput{Title: "Lost", Slug: "lost", Body: &bad})
		equal(t, "code", code(err), "BAD_USER_INPUT")
		equal(t, "field", extension(err, "field"), any("body"))
		if err == nil || !strings.Contains(err.Error(), "media:0190c8e2-7d1a-7c4e-9b1a-2f0e5d6c7b8a is not in the media library") {
			t.Errorf("error %v does not name the image", err)
		}
		_, err = UpdatePost(ctx, alice, UpdatePostInput{Id: p.Id, Body: &bad})
		equal(t, "update's code", code(err), "BAD_USER_INPUT")
		again := ok[*PostContentResponse](t)(PostContent(ctx, s.client, "sunsets")).Post
		equal(t, "bodyHtml after the refused update", again.BodyHtml, page.BodyHtml)
	})

	t.Run("a media id in code or text is no image", func(t *testing.T) {
		text := "See `media:0190c8e2-7d1a-7c4e-9b1a-2f0e5d6c7b8a` and media:x."
		ok[*CreatePostResponse](t)(CreatePost(ctx, alice, CreatePostInput{Title: "Text", Slug: "text", Body: &text}))
	})
}

func TestMediaPostCover(t *testing.T) {
	s := newMediaServer(t)
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("alice"), Name: "Alice"}))
	alice := s.as("alice", auth.RoleAuthor)
	file := testJPEG(t, 1000, 750)
	id, status := s.upload(t, alice, "sunset.jpg", "image/jpeg", len(file), file)
	equal(t, "PUT status", status, http.StatusOK)
	ok[*CompleteUploadResponse](t)(CompleteUpload(ctx, alice, CompleteUploadInput{Id: id, Alt: ptr("A sunset")}))

	p := ok[*CreatePostResponse](t)(CreatePost(ctx, alice, CreatePostInput{Title: "Sunsets", Slug: "sunsets", CoverMediaId: &id})).CreatePost.Post
	v := ok[*PublishPostResponse](t)(PublishPost(ctx, alice, PublishPostInput{Id: p.Id})).PublishPost.Post.Version
	cover := ok[*PostCoverResponse](t)(PostCover(ctx, s.client, "sunsets")).Post.CoverImage
	u := func(w int, f string) string { return fmt.Sprintf("%s/media/%s/%d.%s", s.base, id, w, f) }
	equal(t, "url", cover.Url, u(1000, "jpeg"))
	equal(t, "alt", cover.Alt, "A sunset")
	equal(t, "size", fmt.Sprint(*cover.Width, "×", *cover.Height), "1000×750")
	equal(t, "srcset", *cover.Srcset, strings.Join([]string{u(320, "jpeg") + " 320w", u(640, "jpeg") + " 640w", u(960, "jpeg") + " 960w", u(1000, "jpeg") + " 1000w"}, ", "))
	equal(t, "sizes", *cover.Sizes, "(max-width: 1000px) 100vw, 1000px")
	if cover.DominantColor == nil || cover.Placeholder != nil {
		t.Errorf("dominantColor %v, placeholder %v: want a colour and no placeholder", cover.DominantColor, cover.Placeholder)
	}

	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			in   CreatePostInput
			says string
		}{
			{"an id not in the library", CreatePostInput{Title: "X", Slug: "x1", CoverMediaId: ptr("0190c8e2-7d1a-7c4e-9b1a-2f0e5d6c7b8a")}, "is not in the media library"},
			{"with coverImage too", CreatePostInput{Title: "X", Slug: "x2", CoverMediaId: &id, CoverImage: &ImageInput{Url: "https://example.com/a.jpg"}}, "cannot go with coverImage"},
		} {
			_, err := CreatePost(ctx, alice, tc.in)
			equal(t, tc.name+": code", code(err), "BAD_USER_INPUT")
			equal(t, tc.name+": field", extension(err, "field"), any("coverMediaId"))
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%s: %v does not say %q", tc.name, err, tc.says)
			}
		}
	})

	t.Run("updatePost sets and removes it", func(t *testing.T) {
		v = ok[*RemoveCoverImageResponse](t)(RemoveCoverImage(ctx, alice, p.Id, v, nil)).UpdatePost.Post.Version
		if c := ok[*PostCoverResponse](t)(PostCover(ctx, s.client, "sunsets")).Post.CoverImage; c != nil {
			t.Fatalf("cover after removing it: %+v", c)
		}
		ok[*UpdatePostResponse](t)(UpdatePost(ctx, alice, UpdatePostInput{Id: p.Id, ExpectedVersion: v, CoverMediaId: &id}))
		c := ok[*PostCoverResponse](t)(PostCover(ctx, s.client, "sunsets")).Post.CoverImage
		if c == nil || c.Srcset == nil {
			t.Fatalf("cover after updatePost: %+v", c)
		}
	})
}
