package tests

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"net/http"
	"strings"
	"testing"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/media"
)

// Animated GIFs: their GIF renditions keep every frame, they have no WebP
// ones, and an animation's frames count towards the pixels allowed.

// testGIF returns an animated GIF of a w×h screen with frames frames,
// each a fw×fh rectangle of its own colour, 10 hundredths apart.
func testGIF(t *testing.T, w, h, fw, fh, frames int) []byte {
	t.Helper()
	g := &gif.GIF{Config: image.Config{Width: w, Height: h}}
	for i := range frames {
		pal := color.Palette{color.RGBA{uint8(40 * i), 200, uint8(255 - 40*i), 255}, color.RGBA{0, 0, 0, 255}}
		g.Image = append(g.Image, image.NewPaletted(image.Rect(0, 0, fw, fh), pal))
		g.Delay = append(g.Delay, 10+i)
		g.Disposal = append(g.Disposal, gif.DisposalNone)
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, g); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestMediaAnimatedGIF(t *testing.T) {
	s := newMediaServer(t, func(o *media.Options) { o.MaxPixels = 1_000_000 })
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("alice"), Name: "Alice"}))
	alice := s.as("alice", auth.RoleAuthor)
	file := testGIF(t, 400, 100, 400, 100, 3)
	id, _ := s.upload(t, alice, "spin.gif", "image/gif", len(file), file)
	m := ok[*CompleteUploadResponse](t)(CompleteUpload(ctx, alice, CompleteUploadInput{Id: id})).CompleteUpload.Media
	equal(t, "format", string(m.Format), "GIF")

	res, body := get(t, fmt.Sprintf("%s/media/%s/320.gif", s.base, id), nil)
	equal(t, "status of 320.gif", res.StatusCode, http.StatusOK)
	g, err := gif.DecodeAll(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("320.gif: %v", err)
	}
	equal(t, "rendition", fmt.Sprint(g.Config.Width, "×", g.Config.Height, " ", len(g.Image), " frames ", g.Delay), "320×80 3 frames [10 11 12]")
	if len(g.Image) != 3 {
		t.FailNow()
	}
	r, gr, _, _ := g.Image[2].At(10, 10).RGBA()
	equal(t, "the last frame's colour", fmt.Sprint(r>>8, gr>>8), "80 200")

	res, _ = get(t, fmt.Sprintf("%s/media/%s/320.webp", s.base, id), nil)
	equal(t, "status of 320.webp", res.StatusCode, http.StatusNotFound)
	_, err = MediaLibrary(ctx, alice, nil, nil, ptr(ImageFormatWebp))
	equal(t, "srcset in WEBP", code(err), "BAD_USER_INPUT")
	lib := ok[*MediaLibraryResponse](t)(MediaLibrary(ctx, alice, nil, nil, nil)).Media.Edges[0].Node.Image
	if !strings.Contains(*lib.Webp, "/320.gif 320w") {
		t.Errorf("srcset %q: want the GIF renditions", *lib.Webp)
	}

	t.Run("a body lists its GIF renditions", func(t *testing.T) {
		b := fmt.Sprintf("![Spin](media:%s)\n", id)
		p := ok[*CreatePostResponse](t)(CreatePost(ctx, alice, CreatePostInput{Title: "Spin", Slug: "spin", Body: &b})).CreatePost.Post
		ok[*PublishPostResponse](t)(PublishPost(ctx, alice, PublishPostInput{Id: p.Id}))
		html := ok[*PostContentResponse](t)(PostContent(ctx, s.client, "spin")).Post.BodyHtml
		if !strings.Contains(html, "/320.gif 320w") || strings.Contains(html, ".webp") {
			t.Errorf("bodyHtml %s: want GIF renditions and no WebP", html)
		}
	})

	t.Run("an animation of too many pixels in all is refused", func(t *testing.T) {
		// 20 frames of one pixel on a 500×500 screen: 5 MP decoded.
		bomb := testGIF(t, 500, 500, 1, 1, 20)
		id, _ := s.upload(t, alice, "bomb.gif", "image/gif", len(bomb), bomb)
		_, err := CompleteUpload(ctx, alice, CompleteUploadInput{Id: id})
		equal(t, "code", code(err), "BAD_USER_INPUT")
		if err == nil || !strings.Contains(err.Error(), "20 frames of 500×500") {
			t.Errorf("err %v: want the frames named", err)
		}
		still := testGIF(t, 500, 500, 1, 1, 1)
		id, _ = s.upload(t, alice, "still.gif", "image/gif", len(still), still)
		ok[*CompleteUploadResponse](t)(CompleteUpload(ctx, alice, CompleteUploadInput{Id: id}))
	})
}
