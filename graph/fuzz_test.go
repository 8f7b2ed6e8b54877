package graph

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// FuzzDecodeID runs its seeds (f.Add and testdata/fuzz) with every
// `go test`; scripts/fuzz.sh runs it as a fuzzer. A global id is accepted
// only when it is exactly what this server would have handed out, so one
// object has one id and no crafted string reaches storage as another kind.
func FuzzDecodeID(f *testing.F) {
	f.Add(postGID("0190a1b2-post"))
	f.Add(authorGID("ada"))
	f.Add(categoryGID("go"))
	f.Add(commentGID("p1", "1700000000000-ab.1700000000001-cd"))
	f.Add("")
	f.Add("Zm9vOmJhcg")
	f.Fuzz(func(t *testing.T, s string) {
		g, err := decodeID("id", s)
		if err != nil {
			if ve, ok := errors.AsType[*storage.ValidationError](err); !ok || ve.Field != "id" {
				t.Fatalf("decodeID(%q) = %v, want a ValidationError on id", s, err)
			}
			return
		}
		var again string
		switch g.kind {
		case kindPost, kindAuthor, kindCategory:
			if g.post != "" {
				t.Fatalf("decodeID(%q) = %+v: only comments name a post", s, g)
			}
			again = encodeID(g.kind, g.id)
		case kindComment:
			again = commentGID(g.post, g.id)
		default:
			t.Fatalf("decodeID(%q) = %+v: unknown kind", s, g)
		}
		if again != s {
			t.Fatalf("decodeID(%q) = %+v, which encodes as %q: two ids for one object", s, g, again)
		}
		for _, k := range []kind{kindPost, kindAuthor, kindCategory} {
			if _, err := decodeIDOf("id", s, k); (err == nil) != (k == g.kind) {
				t.Fatalf("decodeIDOf(%q, %s) = %v for a %s id", s, k, err, g.kind)
			}
		}
	})
}

// FuzzOpenPreview runs its seeds with every `go test`; scripts/fuzz.sh
// runs it as a fuzzer. A preview token opens only when it is one the key
// sealed, unchanged: anything else, however close, fails without a panic.
func FuzzOpenPreview(f *testing.F) {
	aead, err := previewAEAD([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		f.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	// Nonces of their own, not random ones: every fuzzing process must
	// know the same tokens.
	sealed := map[string]string{}
	for i, id := range []string{"0190a000-0000-7000-8000-000000000001", "p", strings.Repeat("x", 300)} {
		nonce := make([]byte, previewNonceBytes)
		nonce[0] = byte(i)
		tok := sealPreviewWith(aead, nonce, id, now.Add(time.Hour))
		sealed[tok] = id
		f.Add(tok)
		f.Add(tok[:len(tok)-1])
		f.Add(tok + "A")
	}
	f.Add("")
	f.Add("djEKcG9zdC0xCjE3NzIzNzA4MDA.c2lnbmF0dXJl")
	f.Fuzz(func(t *testing.T, tok string) {
		id, ok := openPreview(aead, tok, now)
		if want, known := sealed[tok]; ok != known || id != want {
			t.Fatalf("openPreview(%q) = %q, %v; sealed: %v", tok, id, ok, known)
		}
	})
}
