package markdown

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestLibraryImages(t *testing.T) {
	ctx := context.Background()
	sunset := LibraryImage{
		Src:    "https://blog.example/media/abc-1/1000.jpeg",
		Srcset: "https://blog.example/media/abc-1/320.webp 320w, https://blog.example/media/abc-1/1000.webp 1000w",
		Sizes:  "(max-width: 1000px) 100vw, 1000px", Width: 1000, Height: 750,
	}
	opts := Options{Images: map[string]LibraryImage{"abc-1": sunset}}
	src := "![A sunset](media:abc-1){width=10}\n\n![Again](media:abc-1)\n\n![Gone](media:nope-2) and `media:nope-3` in code\n"
	d, err := Render(ctx, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	contains(t, d.HTML,
		`<p><img src="https://blog.example/media/abc-1/1000.jpeg" alt="A sunset" srcset="https://blog.example/media/abc-1/320.webp 320w, https://blog.example/media/abc-1/1000.webp 1000w" sizes="(max-width: 1000px) 100vw, 1000px" width="1000" height="750" decoding="async"></p>`,
		`alt="Again" srcset="https://blog.example/media/abc-1/320.webp 320w, https://blog.example/media/abc-1/1000.webp 1000w" sizes="(max-width: 1000px) 100vw, 1000px" width="1000" height="750" decoding="async" loading="lazy">`,
		`<p>Gone and <code>media:nope-3</code> in code</p>`)
	again, err := Render(ctx, src, opts)
	if err != nil || again.HTML != d.HTML {
		t.Errorf("rendered again: %v, differs: %t", err, again.HTML != d.HTML)
	}

	opts.RequireImages = true
	_, err = Render(ctx, src, opts)
	var unknown *UnknownImageError
	if !errors.As(err, &unknown) || unknown.ID != "nope-2" {
		t.Errorf("with RequireImages: %v, want the unknown image nope-2", err)
	}
	if _, err := Render(ctx, "`media:nope-3`", opts); err != nil {
		t.Errorf("a media id in code with RequireImages: %v", err)
	}

	ids, ok := LibraryIDs(src)
	equal(t, "ids", strings.Join(ids, " "), "abc-1 nope-2 nope-3")
	equal(t, "ok", ok, true)
}
