package tests

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"net/http"
	"strings"
	"testing"

	_ "golang.org/x/image/webp"

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
	// The table's first post counts the publication's posts for its
	// quota once; the two compared are the ones after it.
	ok[*CreatePostResponse](t)(CreatePost(ctx, alice, CreatePostInput{Title: "First", Slug: "first", Body: &plain}))
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

// exifOrientation returns an EXIF APP1 segment stating orientation o,
// with GPS data after its IFD.
func exifOrientation(o uint16) []byte {
	tiff := []byte("MM\x00\x2a\x00\x00\x00\x08")
	tiff = append(tiff, 0, 1)                         // one entry
	tiff = append(tiff, 0x01, 0x12, 0, 3, 0, 0, 0, 1) // orientation, SHORT, one
	tiff = append(tiff, byte(o>>8), byte(o), 0, 0)
	tiff = append(tiff, 0, 0, 0, 0) // no next IFD
	tiff = append(tiff, "GPSLatitude 48.8584 GPSLongitude 2.2945"...)
	return jpegSegment(0xE1, append([]byte("Exif\x00\x00"), tiff...))
}

// halves returns a w×h JPEG whose left half is red and right half blue,
// with extra segments.
func halves(t *testing.T, w, h int, extra ...[]byte) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.RGBA{220, 20, 20, 255}
			if x >= w/2 {
				c = color.RGBA{20, 20, 220, 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	out := append([]byte(nil), b[:2]...)
	for _, seg := range extra {
		out = append(out, seg...)
	}
	return append(out, b[2:]...)
}

// TestMediaEXIFOrientation checks that a photo stored sideways or
// mirrored, as cameras do, with its EXIF orientation saying how to turn
// it, is recorded at its upright size and served upright, without its
// EXIF or GPS data.
func TestMediaEXIFOrientation(t *testing.T) {
	s := newMediaServer(t)
	ctx := context.Background()
	alice := s.as("alice", auth.RoleAuthor)
	// The stored picture is 400×200, red on the left, blue on the right.
	for _, tc := range []struct {
		o            uint16
		w, h         int
		first, where string // the colour at the upright picture's first edge, and which edge
	}{
		{1, 400, 200, "red", "left"},
		{2, 400, 200, "blue", "left"},
		{3, 400, 200, "blue", "left"},
		{4, 400, 200, "red", "left"},
		{5, 200, 400, "red", "top"},
		{6, 200, 400, "red", "top"},
		{7, 200, 400, "blue", "top"},
		{8, 200, 400, "blue", "top"},
	} {
		t.Run(fmt.Sprintf("orientation %d", tc.o), func(t *testing.T) {
			file := halves(t, 400, 200, exifOrientation(tc.o))
			id, status := s.upload(t, alice, "photo.jpg", "image/jpeg", len(file), file)
			equal(t, "PUT status", status, http.StatusOK)
			m := ok[*CompleteUploadResponse](t)(CompleteUpload(ctx, alice, CompleteUploadInput{Id: id})).CompleteUpload.Media
			equal(t, "recorded size", fmt.Sprint(*m.Image.Width, "×", *m.Image.Height), fmt.Sprint(tc.w, "×", tc.h))
			for _, f := range []string{"jpeg", "webp"} {
				res, body := get(t, fmt.Sprintf("%s/media/%s/%d.%s", s.base, id, tc.w, f), nil)
				equal(t, f+" status", res.StatusCode, http.StatusOK)
				for _, leak := range []string{"GPS", "Exif"} {
					if bytes.Contains(body, []byte(leak)) {
						t.Errorf("%s rendition holds %q", f, leak)
					}
				}
				img, _, err := image.Decode(bytes.NewReader(body))
				if err != nil {
					t.Fatalf("%s rendition: %v", f, err)
				}
				equal(t, f+" size", fmt.Sprint(img.Bounds().Dx(), "×", img.Bounds().Dy()), fmt.Sprint(tc.w, "×", tc.h))
				at := image.Pt(5, tc.h/2)
				if tc.where == "top" {
					at = image.Pt(tc.w/2, 5)
				}
				r, _, b, _ := img.At(at.X, at.Y).RGBA()
				got := "red"
				if b > r {
					got = "blue"
				}
				equal(t, f+" colour at the "+tc.where, got, tc.first)
			}
		})
	}
}
