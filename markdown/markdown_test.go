package markdown

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/html"
)

func render(t *testing.T, src string) *Document {
	t.Helper()
	d, err := Render(context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRenderGitHubFlavour(t *testing.T) {
	d := render(t, "# Title\n\nSome *emphasis*, ~~gone~~ and https://example.com/x.\n\n"+
		"| a | b |\n|:--|--:|\n| 1 | 2 |\n\n```go\nfmt.Println(\"hi\")\n```\n")
	for _, want := range []string{
		`<h1 id="title">Title</h1>`,
		`<em>emphasis</em>`,
		`<del>gone</del>`,
		`<a href="https://example.com/x" rel="nofollow noreferrer">https://example.com/x</a>`,
		`<th align="left">a</th>`,
		`<td align="right">2</td>`,
		`<pre><code class="language-go">fmt.Println(&#34;hi&#34;)`,
	} {
		if !strings.Contains(d.HTML, want) {
			t.Errorf("HTML lacks %s:\n%s", want, d.HTML)
		}
	}
}

func TestRenderSanitizes(t *testing.T) {
	cases := []struct {
		name, src string
		banned    []string
	}{
		{"raw html", "<script>alert(1)</script>\n\nhi <img src=x onerror=alert(1)>", []string{"<script", "onerror", "alert"}},
		{"javascript link", "[x](javascript:alert(1))", []string{"javascript:"}},
		{"data image", "![x](data:image/png;base64,AAAA)", []string{"data:"}},
		{"relative image", "![x](/img/a.png)", []string{"/img/a.png", "<img"}},
		{"vbscript link", "<vbscript:msgbox(1)> [y](vbscript:msgbox(1))", []string{"href"}},
		{"html in a heading", "# Hi <b onclick=x>there</b>", []string{"onclick"}},
		{"style", "<style>body{display:none}</style>", []string{"<style", "display"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := render(t, c.src)
			for _, b := range c.banned {
				if strings.Contains(d.HTML, b) {
					t.Errorf("HTML keeps %q:\n%s", b, d.HTML)
				}
			}
		})
	}
	d := render(t, "![a cat](https://example.com/cat.png)")
	if !strings.Contains(d.HTML, `<img src="https://example.com/cat.png" alt="a cat">`) {
		t.Errorf("http image dropped: %s", d.HTML)
	}
	d = render(t, "[home](/posts/hello) and [site](http://example.com)")
	if !strings.Contains(d.HTML, `<a href="/posts/hello">home</a>`) ||
		!strings.Contains(d.HTML, `<a href="http://example.com" rel="nofollow noreferrer">site</a>`) {
		t.Errorf("links: %s", d.HTML)
	}
}

func TestTOCMatchesHeadingIDs(t *testing.T) {
	d := render(t, "# Intro\n\n## Café **au lait**\n\n## Intro\n\n### 日本語\n\n#### [Go](https://go.dev) `code`\n\n#\n\nSetext\n------\n")
	want := []Heading{
		{1, "Intro", "intro"},
		{2, "Café au lait", "cafe-au-lait"},
		{2, "Intro", "intro-2"},
		{3, "日本語", "section"},
		{4, "Go code", "go-code"},
		{2, "Setext", "setext"},
	}
	if len(d.TOC) != len(want) {
		t.Fatalf("toc = %+v, want %+v", d.TOC, want)
	}
	for i, h := range want {
		if d.TOC[i] != h {
			t.Errorf("toc[%d] = %+v, want %+v", i, d.TOC[i], h)
		}
		if !strings.Contains(d.HTML, `id="`+h.Anchor+`"`) {
			t.Errorf("HTML has no heading with id %q:\n%s", h.Anchor, d.HTML)
		}
	}
	// The empty heading has an id too, and it is unique.
	ids := regexp.MustCompile(`id="([^"]+)"`).FindAllStringSubmatch(d.HTML, -1)
	seen := map[string]bool{}
	for _, m := range ids {
		if seen[m[1]] {
			t.Errorf("id %q repeats", m[1])
		}
		seen[m[1]] = true
	}
	equal(t, "heading ids", len(ids), 7)
}

func TestTOCLimits(t *testing.T) {
	var b strings.Builder
	for range MaxHeadings + 5 {
		b.WriteString("## " + strings.Repeat("long words ", 20) + "\n\n")
	}
	d := render(t, b.String())
	equal(t, "entries", len(d.TOC), MaxHeadings)
	for _, h := range d.TOC {
		if n := len([]rune(h.Text)); n > MaxHeadingText || !strings.HasSuffix(h.Text, "…") {
			t.Fatalf("entry text %q has %d characters", h.Text, n)
		}
		if len(h.Anchor) > MaxAnchor+4 {
			t.Fatalf("anchor %q is too long", h.Anchor)
		}
	}
	if !strings.Contains(d.HTML, `-105"`) {
		t.Error("the headings past the table of contents lack their ids")
	}
}

func TestWordsReadingTimeAndExcerpt(t *testing.T) {
	d := render(t, "")
	equal(t, "empty words", d.Words, 0)
	equal(t, "empty minutes", d.ReadingMinutes, 0)
	equal(t, "empty excerpt", d.Excerpt, "")

	d = render(t, "# Heading here\n\n> A quote.\n\nFirst *real*\nparagraph.\n\n- a list item\n\n```\ncode words\n```\n\n| c1 | c2 |\n|---|---|\n| x | y |\n")
	equal(t, "words", d.Words, 16)
	equal(t, "minutes", d.ReadingMinutes, 1)
	equal(t, "excerpt", d.Excerpt, "First real paragraph.")

	d = render(t, strings.Repeat("word ", 2*WordsPerMinute+1))
	equal(t, "long minutes", d.ReadingMinutes, 3)
	if n := len([]rune(d.Excerpt)); n > ExcerptLength || !strings.HasSuffix(d.Excerpt, "…") {
		t.Errorf("excerpt of %d characters: %q", n, d.Excerpt)
	}
}

func TestRenderRefusesHTMLPastTheLimit(t *testing.T) {
	// A reference link repeats its URL at every use: 30 000 uses of a
	// 2 000-character URL would be 60 MB of HTML.
	src := "[a]: https://example.com/" + strings.Repeat("x", 2000) + "\n\n" + strings.Repeat(strings.Repeat("[a] ", 100)+"\n\n", 300)
	if _, err := Render(context.Background(), src, Options{}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	// Autolinks grow once sanitized (rel attributes): the limit holds on
	// the sanitized HTML too.
	if _, err := Render(context.Background(), strings.Repeat("www.a.io ", 11_000), Options{}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("autolinks: err = %v, want ErrTooLarge", err)
	}
	d := render(t, strings.Repeat("plain text ", 9_000))
	if len(d.HTML) > MaxHTMLBytes {
		t.Errorf("HTML of %d bytes", len(d.HTML))
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	src := "# A\n\n## A\n\ntext [l](http://x.y) www.z.io\n"
	a, b := render(t, src), render(t, src)
	if a.HTML != b.HTML || len(a.TOC) != len(b.TOC) || a.Excerpt != b.Excerpt {
		t.Error("two renders differ")
	}
}

// TestRenderConcurrently renders at once in many goroutines, as writes
// do; the race detector finds any state they share.
func TestRenderConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 20 {
				src := fmt.Sprintf("# Café %d\n\n## Über %d\n\ntext www.example.com", i, j)
				d, err := Render(context.Background(), src, Options{})
				if err != nil || len(d.TOC) != 2 || d.TOC[1].Anchor != fmt.Sprintf("uber-%d", j) {
					t.Errorf("render %d/%d: %+v, %v", i, j, d, err)
				}
				Slugify("José Núñez", 100)
			}
		})
	}
	wg.Wait()
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"Ada Lovelace":       "ada-lovelace",
		"  José  Núñez! ":    "jose-nunez",
		"Straße 42":          "strasse-42",
		"--a--b--":           "a-b",
		"日本語":                "",
		"C++ & Go: a primer": "c-go-a-primer",
	} {
		equal(t, "Slugify("+in+")", Slugify(in, 100), want)
	}
	equal(t, "cut at max", Slugify("abc def ghi", 5), "abc-d")
	equal(t, "no trailing hyphen", Slugify("abc def", 4), "abc")
}

func FuzzRender(f *testing.F) {
	f.Add("# a\n\n[x](javascript:y) <script>z</script> ![i](http://a/b)")
	f.Add("| a |\n|---|\n| <img src=x onerror=y> |")
	f.Add("<a href='vbscript:x'>y</a> [z](data:text/html,q) www.x.io")
	f.Add("![0](0)")
	f.Add(strings.Repeat("> - ", MaxNesting) + "a")
	f.Add("[](http:)")
	f.Add("https://www.youtube.com/watch?v=dQw4w9WgXcQ\n\n<https://vimeo.com/1>\n\nhttps://codepen.io/a/pen/b")
	f.Add("![a](https://x.io/a.png){width=1 height=2}![b](http://y/b){width=\"3\"}")
	f.Add("a[^1]\n\n[^1]: <script>x</script> [y](https://z.io)\n\n- [x] done")
	f.Add("```go\nfunc main() { \"<script>\" }\n```\n```js\" onclick=\"x\nalert(1)\n```")
	f.Fuzz(func(t *testing.T, src string) {
		d, err := Render(context.Background(), src, Options{HeadingIDPrefix: "h-", SiteURL: "https://blog.example", Highlight: true})
		if isRefusal(err) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		checkSafe(t, d.HTML, "https://blog.example")
	})
}

// hasHost reports whether a browser reads a link's href with a host (or
// it cannot be parsed, so might): "//x", "///x", "https:x" and
// "https://x" do, a relative path such as "0//" does not.
func hasHost(href string) bool {
	u, err := url.Parse(href)
	return err != nil || u.Host != "" || u.Scheme == "http" || u.Scheme == "https" || strings.HasPrefix(href, "//")
}

// checkSafe fails unless every element of the HTML is one a page may
// show, with no event handler, style or script URL, classes only of the
// shapes the renderer writes, iframes only of the embeds' players and
// sandboxed, inputs only disabled checkboxes, and every link with a host
// nofollow but those to siteURL.
func checkSafe(t *testing.T, h, siteURL string) {
	t.Helper()
	site, _ := parseSite(siteURL)
	z := html.NewTokenizer(strings.NewReader(h))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			attrs := map[string]string{}
			for _, a := range tok.Attr {
				attrs[a.Key] = a.Val
			}
			switch tok.Data {
			case "script", "style", "object", "embed", "form", "svg", "math", "link", "meta", "base":
				t.Fatalf("element %s in %s", tok.Data, h)
			case "iframe":
				if !embedSrc.MatchString(attrs["src"]) || attrs["sandbox"] != iframeSandbox || attrs["srcdoc"] != "" {
					t.Fatalf("iframe %v in %s", tok, h)
				}
			case "input":
				if attrs["type"] != "checkbox" || len(attrs) > 3 {
					t.Fatalf("input %v in %s", tok, h)
				}
				if _, ok := attrs["disabled"]; !ok {
					t.Fatalf("enabled input in %s", h)
				}
			case "a":
				if hasHost(attrs["href"]) && !(siteURL != "" && site.holds(attrs["href"])) && attrs["rel"] != "nofollow noreferrer" {
					t.Fatalf("link %v without nofollow in %s", tok, h)
				}
			}
			for _, a := range tok.Attr {
				v := strings.ToLower(strings.TrimSpace(a.Val))
				switch {
				case strings.HasPrefix(a.Key, "on"), a.Key == "style", a.Key == "srcdoc":
					t.Fatalf("attribute %s in %s", a.Key, h)
				case a.Key == "class" && !allowedClass(tok.Data, a.Val):
					t.Fatalf("class %q on %s in %s", a.Val, tok.Data, h)
				case tok.Data == "img" && a.Key == "src" && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://"):
					t.Fatalf("image from %q", a.Val)
				case (a.Key == "href" || a.Key == "src" || a.Key == "cite") && !safeScheme(v):
					t.Fatalf("URL %q in %s", a.Val, h)
				}
			}
		}
	}
}

// allowedClass reports whether class is one the renderer writes on an
// element el.
func allowedClass(el, class string) bool {
	switch el {
	case "code":
		return strings.HasPrefix(class, "language-") && languageName.MatchString(class[len("language-"):])
	case "pre":
		return class == "chroma"
	case "span":
		return tokenClassName.MatchString(class)
	case "div":
		return class == "footnotes" || class == "embed embed-youtube" || class == "embed embed-vimeo" || class == "embed embed-codepen"
	case "blockquote":
		return class == "embed embed-gist" || class == "embed embed-x twitter-tweet"
	case "a":
		return class == "footnote-ref" || class == "footnote-backref"
	}
	return false
}

// safeScheme reports whether a URL is relative or http, https or mailto.
func safeScheme(v string) bool {
	colon := strings.Index(v, ":")
	if colon < 0 || strings.ContainsAny(v[:colon], "/?#") {
		return true
	}
	switch v[:colon] {
	case "http", "https", "mailto":
		return true
	}
	return false
}

func equal[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestRenderRefusesPastItsLimits(t *testing.T) {
	table := func(cols, rows int) string {
		return strings.Repeat("|a", cols) + "|\n" + strings.Repeat("|-", cols) + "|\n" + strings.Repeat("|\n", rows)
	}
	// full is a table whose rows have every cell written.
	full := func(cols, rows int) string {
		return strings.Repeat("|a", cols) + "|\n" + strings.Repeat("|-", cols) + "|\n" + strings.Repeat(strings.Repeat("|b", cols)+"|\n", rows)
	}
	cases := []struct {
		name, src string
		want      error
	}{
		{"columns", table(MaxTableColumns+1, 1), ErrTableTooWide},
		{"columns after a line goldmark takes for no delimiter row", "x\n|-| |-|\n" + table(MaxTableColumns+1, 1), ErrTableTooWide},
		{"cells", table(MaxTableColumns, MaxTableCells/MaxTableColumns), ErrTooManyCells},
		{"cells of many tables", strings.Repeat(table(50, 49)+"\n", MaxTableCells/2500+1), ErrTooManyCells},
		{"cells written out", full(MaxTableColumns, MaxTableCells/MaxTableColumns), ErrTooManyCells},
		{"cells of rows filled up, more than the body's bytes", table(MaxTableColumns, 2*MinTableCells/MaxTableColumns), ErrTooManyCells},
		{"escaped pipes", "|a|\n|-|\n" + strings.Repeat("|`\\|`\n", MaxEscapedPipes+1), ErrTooManyPipes},
		{"block quotes", strings.Repeat(">", MaxNesting+1) + " a", ErrTooDeep},
		{"lists", strings.Repeat("- ", MaxNesting+1) + "a", ErrTooDeep},
		{"lists in block quotes", strings.Repeat("> - ", MaxNesting/2+1) + "a", ErrTooDeep},
		{"emphasis", strings.Repeat("*a", MaxDelimiters+1), ErrTooManyMarkers},
		{"strikethrough", strings.Repeat("~~a", MaxDelimiters+1), ErrTooManyMarkers},
		{"brackets", strings.Repeat("[a](", MaxBrackets+1), ErrTooManyBrackets},
		{"images", strings.Repeat("![a](", MaxBrackets+1), ErrTooManyBrackets},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Render(context.Background(), c.src, Options{}); !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
		})
	}
	// At the limits, and spread over paragraphs and cells, all renders.
	for name, src := range map[string]string{
		"columns":              table(MaxTableColumns, 1),
		"cells written out":    full(50, 3*MinTableCells/50),
		"cells filled up":      table(MaxTableColumns, MinTableCells/MaxTableColumns-2),
		"block quotes":         strings.Repeat(">", MaxNesting) + " a",
		"lists":                strings.Repeat("- ", MaxNesting) + "a",
		"emphasis":             strings.Repeat("*a", MaxDelimiters),
		"emphasis, paragraphs": strings.Repeat(strings.Repeat("*a* ", MaxDelimiters/2)+"\n\n", 3),
		"links, cells":         "|a|b|\n|-|-|\n" + strings.Repeat("|"+strings.Repeat("[a](b) ", MaxBrackets)+"|c|\n", 2),
	} {
		if _, err := Render(context.Background(), src, Options{}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestRenderEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Render(ctx, "# a", Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestHeadingIDPrefix(t *testing.T) {
	d, err := Render(context.Background(), "# root\n\n## root\n\n## Config", Options{HeadingIDPrefix: "h-"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"h-root", "h-root-2", "h-config"} {
		equal(t, "anchor", d.TOC[i].Anchor, want)
		if !strings.Contains(d.HTML, `id="`+want+`"`) {
			t.Errorf("HTML has no id %q: %s", want, d.HTML)
		}
	}
	for _, p := range []string{"", "h-", "post_", "X9"} {
		if err := CheckHeadingIDPrefix(p); err != nil {
			t.Errorf("prefix %q: %v", p, err)
		}
	}
	for _, p := range []string{"1", "-", "h ", `h"`, strings.Repeat("h", MaxHeadingIDPrefix+1)} {
		if CheckHeadingIDPrefix(p) == nil {
			t.Errorf("prefix %q accepted", p)
		}
	}
}
