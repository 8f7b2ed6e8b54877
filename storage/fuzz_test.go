package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/blogql/blog/storage/internal/keys"
)

// The fuzz targets below run their seeds (f.Add and testdata/fuzz) with
// every `go test`; scripts/fuzz.sh runs them as fuzzers.

// cursorLists are the cursor namespaces of the lists, as queryPage and
// LatestPosts name them.
var cursorLists = []string{"feed", "author-posts:ada", "category-posts:go", "comments:p1", "authors"}

// FuzzDecodeCursor feeds strings to every list as cursors: only what the
// store sealed for that list is a position, anything else (altered,
// forged, another key's, another list's) a ValidationError on "after",
// and a position read survives sealing again.
func FuzzDecodeCursor(f *testing.F) {
	s := New(nil, "fuzz", WithCursorKey([]byte("a fixed key for the fuzz target, 32+ bytes")))
	other := New(nil, "fuzz", WithCursorKey([]byte("another key for the fuzz target, 32+ bytes")))
	f.Add(s.encodeCursor("feed", map[string]string{keys.AttrGSI1SK: "POST#2026-03-01T12:00:00.000Z#p1"}))
	f.Add(s.encodeCursor("author-posts:ada", map[string]string{keys.AttrPK: "AUTHOR#ada", keys.AttrSK: "POST#2026-03-01T12:00:00.000Z#p1"}))
	f.Add(s.encodeCursor("category-posts:go", map[string]string{keys.AttrPK: "POST#p1", keys.AttrSK: "CAT#go", keys.AttrGSI1PK: "CAT#go", keys.AttrGSI1SK: "POST#2026-03-01T12:00:00.000Z#p1"}))
	f.Add(other.encodeCursor("feed", map[string]string{keys.AttrGSI1SK: "POST#2026-03-01T12:00:00.000Z#p1"}))
	f.Add("")
	f.Add("!!!")
	f.Add("eyJsIjoiZmVlZCJ9") // {"l":"feed"}, a cursor as the server once made them
	f.Fuzz(func(t *testing.T, cursor string) {
		accepted := 0
		for _, list := range cursorLists {
			pos, err := s.decodeCursor(list, cursor)
			if err != nil {
				if ve, ok := errors.AsType[*ValidationError](err); !ok || ve.Field != "after" {
					t.Fatalf("decodeCursor(%q, %q) = %v, want a ValidationError on after", list, cursor, err)
				}
				continue
			}
			if cursor == "" {
				if pos != nil {
					t.Fatalf("empty cursor decoded to %v", pos)
				}
				continue
			}
			accepted++
			if len(pos) == 0 {
				t.Fatalf("decodeCursor(%q, %q) accepted a cursor without a position", list, cursor)
			}
			if again := s.encodeCursor(list, pos); again != cursor {
				t.Fatalf("position %v of %q seals as %q, not as the cursor %q it came from", pos, list, again, cursor)
			}
			if _, err := other.decodeCursor(list, cursor); err == nil {
				t.Fatalf("a cursor of one key was accepted by another: %q", cursor)
			}
		}
		if accepted > 1 {
			t.Fatalf("cursor %q accepted by %d lists", cursor, accepted)
		}
	})
}

// FuzzValidate checks what each validator lets through: whatever it
// accepts keeps the limits the schema documents, and whatever it refuses
// is a ValidationError naming the field.
func FuzzValidate(f *testing.F) {
	f.Add("Hello, world", "hello-world", "# Hi\n\nSome *Markdown* <b>and</b> \"quotes\".", "https://example.com/ada.png")
	f.Add("  ", "Hello World!", "\x00", "javascript:alert(1)")
	f.Add("line\nbreak", "a--b", "tab\there\u2028", "https://user:pass@example.com/")
	f.Add("\u202eevil", "-a", "\xff", "http://exa mple.com")
	f.Add("'; DROP TABLE posts; --", "x'or'1'='1", "<script>alert(1)</script>", "https://example.com/a b")
	f.Add(strings.Repeat("é", MaxTitleLength), strings.Repeat("a", MaxSlugLength), strings.Repeat("\"", 50), "http://:80/")
	f.Fuzz(func(t *testing.T, line, slug, text, link string) {
		checks := []struct {
			field string
			err   error
			ok    func() bool
		}{
			{"title", validateLine("title", line, MaxTitleLength), func() bool {
				return strings.TrimSpace(line) != "" && utf8.RuneCountInString(line) <= MaxTitleLength &&
					!strings.ContainsFunc(line, unicode.IsControl) && !strings.ContainsFunc(line, func(r rune) bool {
					return r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r)
				})
			}},
			{"slug", validateSlug("slug", slug), func() bool {
				return utf8.ValidString(slug) && len(slug) <= MaxSlugBytes && utf8.RuneCountInString(slug) <= MaxSlugLength &&
					slug != "" && !strings.HasPrefix(slug, "-") && !strings.HasSuffix(slug, "-") && !strings.Contains(slug, "--") &&
					!strings.ContainsFunc(slug, func(r rune) bool { return !unicode.In(r, unicode.L, unicode.M, unicode.Nd) && r != '-' })
			}},
			{"bio", validateText("bio", text, false, MaxBioLength), func() bool {
				return utf8.RuneCountInString(text) <= MaxBioLength && fitsRecord(text)
			}},
			{"body", validateBody("body", text, MaxBodyBytes), func() bool {
				return len(text) <= MaxBodyBytes && fitsRecord(text)
			}},
			{"avatarUrl", validateURL("avatarUrl", link), func() bool {
				if link == "" {
					return true
				}
				u, err := url.Parse(link)
				return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != "" &&
					u.User == nil && utf8.ValidString(link) && !strings.ContainsFunc(link, unicode.IsSpace)
			}},
		}
		for _, c := range checks {
			if c.err != nil {
				if ve, ok := errors.AsType[*ValidationError](c.err); !ok || ve.Field != c.field || !errors.Is(c.err, ErrInvalidInput) {
					t.Fatalf("%s: err = %v, want a ValidationError on %s", c.field, c.err, c.field)
				}
				continue
			}
			if !c.ok() {
				t.Fatalf("%s: accepted a value outside its limits: %q %q %q %q", c.field, line, slug, text, link)
			}
		}
	})
}

// fitsRecord reports whether s is valid UTF-8 without hidden control
// characters and takes at most twice its size once JSON-encoded the way
// idempotency records are: the bound that keeps a recorded post within
// DynamoDB's item size.
func fitsRecord(s string) bool {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, isHiddenControl) {
		return false
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return false
	}
	return b.Len() <= 2*len(s)+3 // quotes and newline
}
