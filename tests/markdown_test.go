package tests

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/blogql/blog/auth"
)

// wideTable is a table whose header has cols columns, over rows rows of a
// lone "|": goldmark fills every row up to the header's width.
func wideTable(cols, rows int) string {
	return strings.Repeat("|a", cols) + "|\n" + strings.Repeat("|-", cols) + "|\n" + strings.Repeat("|\n", rows)
}

// allocated returns how many bytes the test process allocated while f
// ran: the server runs in it.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestMarkdownIsRenderedInBoundedMemory sends bodies within the body limit
// that goldmark would expand without bound (a 24 KB table once took 2.2 GB
// and 7 s to refuse, 7 500 headings of the same text 470 MB and 10 s):
// each is refused with BAD_USER_INPUT naming the limit it passes, or
// rendered, in a few megabytes.
func TestMarkdownIsRenderedInBoundedMemory(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada"}))
	asAda := s.as("ada", auth.RoleAuthor)
	// Far below what it took (2 GB for the table, 450 MB for the
	// headings), far above what it takes: the request, the JSON of a body
	// of 30 KB and the parse, or the 190 KB of HTML of the headings
	// (13 MB; 90 under the race detector, whose sync.Pool drops things).
	const maxAlloc = 256 << 20
	cases := []struct {
		name, body, message string // message "" is a post that renders
	}{
		{"a header of 5000 columns over 2000 lone pipes (24 KB)", wideTable(5000, 2000), "more than 100 columns"},
		{"a header of 6000 columns over 3000 lone pipes (30 KB)", wideTable(6000, 3000), "more than 100 columns"},
		{"a header of 100 columns over 10 000 lone pipes", wideTable(100, 10_000), "more cells in all"},
		{"a header of 100 columns over 199 lone pipes (2 KB)", wideTable(100, 199), "more cells in all"},
		{"block quotes 20 000 deep", strings.Repeat(">", 20_000) + " a", "more than 16 deep"},
		{"lists 10 000 deep", strings.Repeat("- ", 10_000) + "a", "more than 16 deep"},
		{"10 000 runs of emphasis in a paragraph", strings.Repeat("a*_b", 10_000), "more than 500 runs of *, _ or ~"},
		{"7 500 unclosed links on a line", strings.Repeat("[a](", 7_500), "more than 200 links"},
		{"7 500 headings of the same text", strings.Repeat("# a\n", 7_500), ""},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			n := allocated(func() {
				_, err = CreatePost(ctx, asAda, CreatePostInput{Title: "Big", Slug: "big-" + string(rune('a'+i)), Body: &c.body})
			})
			if c.message == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				equal(t, "code", code(err), "BAD_USER_INPUT")
				equal(t, "field", extension(err, "field"), any("body"))
				if err == nil || !strings.Contains(err.Error(), c.message) {
					t.Errorf("error %v does not name the limit (%q)", err, c.message)
				}
			}
			if n > maxAlloc {
				t.Errorf("the request allocated %d MB", n>>20)
			}
		})
	}
}

// TestHeadingIDsArePrefixed: a heading's id starts with "h-", so a post
// cannot name an element "root", "config" or "cookie" and clobber what
// the page around it looks up by id; the table of contents names the
// same ids.
func TestHeadingIDsArePrefixed(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	body := "# root\n\n## config\n\n## cookie\n\ntext\n"
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, b.writers[0], CreatePostInput{Title: "Ids", Slug: "ids", Body: &body})).CreatePost.Post
	ok[*PublishPostResponse](t)(PublishPost(ctx, b.writers[0], PublishPostInput{Id: p.Id}))
	r := ok[*PostContentResponse](t)(PostContent(ctx, s.client, "ids")).Post
	for _, want := range []string{`<h1 id="h-root">root</h1>`, `<h2 id="h-config">config</h2>`, `<h2 id="h-cookie">cookie</h2>`} {
		if !strings.Contains(r.BodyHtml, want) {
			t.Errorf("HTML lacks %s:\n%s", want, r.BodyHtml)
		}
	}
	for _, bare := range []string{`id="root"`, `id="config"`, `id="cookie"`} {
		if strings.Contains(r.BodyHtml, bare) {
			t.Errorf("HTML has %s", bare)
		}
	}
	equal(t, "toc entries", len(r.Toc), 3)
	equal(t, "toc anchor", r.Toc[0].Anchor, "h-root")
	for _, h := range r.Toc {
		if !strings.Contains(r.BodyHtml, `id="`+h.Anchor+`"`) {
			t.Errorf("toc anchor %q is no heading id", h.Anchor)
		}
	}
}
