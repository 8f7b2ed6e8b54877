package markdown

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func renderWith(t *testing.T, src string, opts Options) string {
	t.Helper()
	d, err := Render(context.Background(), src, opts)
	if err != nil {
		t.Fatal(err)
	}
	checkSafe(t, d.HTML, opts.SiteURL)
	return d.HTML
}

func contains(t *testing.T, html string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(html, w) {
			t.Errorf("HTML lacks %s:\n%s", w, html)
		}
	}
}

func lacks(t *testing.T, html string, banned ...string) {
	t.Helper()
	for _, b := range banned {
		if strings.Contains(html, b) {
			t.Errorf("HTML has %s:\n%s", b, html)
		}
	}
}

func TestFencedCodeKeepsItsLanguage(t *testing.T) {
	src := "```go\nfunc main() { fmt.Println(\"<hi>\") }\n```\n\n```\nno language\n```\n\n```nosuchlang\nx := 1\n```\n\n" +
		"```go\" onclick=\"alert(1)\nhostile info string\n```\n"
	plain := renderWith(t, src, Options{})
	contains(t, plain,
		`<pre><code class="language-go">func main() { fmt.Println(&#34;&lt;hi&gt;&#34;) }`,
		"<pre><code>no language",
		`<pre><code class="language-nosuchlang">x := 1`,
		"<pre><code>hostile info string")
	lacks(t, plain, "<span", "chroma", "onclick")

	lit := renderWith(t, src, Options{Highlight: true})
	contains(t, lit,
		`<pre class="chroma"><code class="language-go"><span class="kd">func</span> <span class="nf">main</span>`,
		`<span class="s">&#34;&lt;hi&gt;&#34;</span>`,
		`<pre><code class="language-nosuchlang">x := 1`, // no lexer: plain, with its class
		"<pre><code>no language")
	lacks(t, lit, "style=", "onclick")
}

func TestHighlightingIsBounded(t *testing.T) {
	block := "```go\n" + strings.Repeat("x := 1 // a line of Go\n", MaxHighlightBlock/23) + "```\n\n"
	html := renderWith(t, strings.Repeat(block, MaxHighlightBytes/MaxHighlightBlock+1), Options{Highlight: true})
	if n := strings.Count(html, `<pre class="chroma">`); n != MaxHighlightBytes/MaxHighlightBlock {
		t.Errorf("%d blocks highlighted, want %d", n, MaxHighlightBytes/MaxHighlightBlock)
	}
	contains(t, html, `<pre><code class="language-go">x := 1`)
	// Languages whose lexers are not known to be near linear are plain.
	contains(t, renderWith(t, "```yaml\na: 'b'\n```", Options{Highlight: true}), `<pre><code class="language-yaml">a: &#39;b&#39;`)
	// A block as large as a body may be renders (plain) within the limit.
	huge := "```go\n" + strings.Repeat("x := \"a\"\n", 90_000/9) + "```\n"
	if _, err := Render(context.Background(), huge, Options{Highlight: true}); err != nil {
		t.Fatal(err)
	}
}

func TestLinksInsideTheBlogAreFollowed(t *testing.T) {
	src := "[rel](/posts/a) [frag](#h-intro) [site](https://blog.example.com/posts/b) [SITE](HTTPS://Blog.Example.com/) " +
		"[other path](https://blog.example.com.evil.io/x) [http](http://blog.example.com/x) [ext](https://go.dev/) www.go.dev"
	html := renderWith(t, src, Options{SiteURL: "https://blog.example.com"})
	contains(t, html,
		`<a href="/posts/a">rel</a>`,
		`<a href="#h-intro">frag</a>`,
		`<a href="https://blog.example.com/posts/b">site</a>`,
		`<a href="https://blog.example.com.evil.io/x" rel="nofollow noreferrer">other path</a>`,
		`<a href="http://blog.example.com/x" rel="nofollow noreferrer">http</a>`,
		`<a href="https://go.dev/" rel="nofollow noreferrer">ext</a>`,
		`<a href="http://www.go.dev" rel="nofollow noreferrer">www.go.dev</a>`)
	// A site under a path holds only what is under it.
	html = renderWith(t, "[in](https://example.com/blog/p) [out](https://example.com/shop)", Options{SiteURL: "https://example.com/blog/"})
	contains(t, html, `<a href="https://example.com/blog/p">in</a>`, `<a href="https://example.com/shop" rel="nofollow noreferrer">out</a>`)
	// Without a site URL every link with a host is nofollow.
	html = renderWith(t, "[site](https://blog.example.com/posts/b)", Options{})
	contains(t, html, `rel="nofollow noreferrer"`)
}

func TestImageAttributes(t *testing.T) {
	src := "![first](https://e.io/1.png){width=800 height=450}\n\n![second](https://e.io/2.png){ height=\"90\" width=\"160\" } text\n\n" +
		"![third](https://e.io/3.png){width=0}\n\n![fourth](https://e.io/4.png){width=800 onerror=x}\n\n![local](/a.png){width=5}\n\n![fifth](https://e.io/5.png)"
	d, err := Render(context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkSafe(t, d.HTML, "")
	contains(t, d.HTML,
		`<img src="https://e.io/1.png" alt="first" width="800" height="450">`,
		`<img src="https://e.io/2.png" alt="second" width="160" height="90" loading="lazy"> text`,
		`<img src="https://e.io/3.png" alt="third" loading="lazy">{width=0}`,
		`<img src="https://e.io/4.png" alt="fourth" loading="lazy">{width=800 onerror=x}`,
		`<img src="https://e.io/5.png" alt="fifth" loading="lazy">`)
	lacks(t, d.HTML, "/a.png", "<img src=\"https://e.io/1.png\" alt=\"first\" width=\"800\" height=\"450\" loading")
	if strings.Contains(d.Excerpt, "width=800 height") {
		t.Errorf("excerpt keeps the attributes: %q", d.Excerpt)
	}
}

func TestEmbeds(t *testing.T) {
	const youtube = `<div class="embed embed-youtube"><iframe src="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ" title="YouTube video" width="560" height="315" sandbox="` + iframeSandbox + `" allow="` + iframeAllow + `" referrerpolicy="strict-origin-when-cross-origin" loading="lazy"></iframe></div>`
	for _, c := range []struct{ name, src, want string }{
		{"youtube watch", "https://www.youtube.com/watch?v=dQw4w9WgXcQ", youtube},
		{"youtube short link", "https://youtu.be/dQw4w9WgXcQ", youtube},
		{"youtube in angle brackets", "<https://youtube.com/shorts/dQw4w9WgXcQ>", youtube},
		{"youtube as a link of itself", "[https://m.youtube.com/watch?v=dQw4w9WgXcQ](https://m.youtube.com/watch?v=dQw4w9WgXcQ)", youtube},
		{"youtube start", "https://youtu.be/dQw4w9WgXcQ?t=90", `src="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ?start=90"`},
		{"vimeo", "https://vimeo.com/76979871", `<div class="embed embed-vimeo"><iframe src="https://player.vimeo.com/video/76979871?dnt=1" title="Vimeo video"`},
		{"codepen", "https://codepen.io/ada/pen/KzXyZw", `<div class="embed embed-codepen"><iframe src="https://codepen.io/ada/embed/KzXyZw?default-tab=result" title="CodePen"`},
		{"gist", "https://gist.github.com/ada/5f1e2c", `<blockquote class="embed embed-gist"><p><a href="https://gist.github.com/ada/5f1e2c" rel="nofollow noreferrer">Gist ada/5f1e2c</a></p></blockquote>`},
		{"x", "https://twitter.com/golang/status/1234567890", `<blockquote class="embed embed-x twitter-tweet"><p><a href="https://x.com/golang/status/1234567890" rel="nofollow noreferrer">Post by @golang on X</a></p></blockquote>`},
	} {
		t.Run(c.name, func(t *testing.T) {
			contains(t, renderWith(t, "Intro.\n\n"+c.src+"\n\nOutro.", Options{}), c.want)
		})
	}
	// Not embeds: a link in a sentence, a link with other text, other
	// hosts and look-alikes, ids that are not ids.
	for _, src := range []string{
		"Watch https://www.youtube.com/watch?v=dQw4w9WgXcQ now",
		"[my video](https://www.youtube.com/watch?v=dQw4w9WgXcQ)",
		"https://www.youtube.com.evil.io/watch?v=dQw4w9WgXcQ",
		"https://evil.io/www.youtube.com/watch?v=dQw4w9WgXcQ",
		"https://evil.io/?u=https://youtu.be/dQw4w9WgXcQ",
		"https://www.youtube.com/watch?v=dQw4w9WgXc%22onload%3Dalert(1)",
		"https://youtu.be/dQw4w9WgXcQ/../../evil",
		"https://user@youtu.be/dQw4w9WgXcQ",
		"https://youtu.be:8443/dQw4w9WgXcQ",
		"javascript://youtu.be/dQw4w9WgXcQ",
		"https://vimeo.com/76979871abc",
		"https://codepen.io/ada/pen/Kz\"X",
		"https://gist.github.com/ada/not-hex",
		"https://x.com/golang/likes/1",
	} {
		t.Run("not "+src, func(t *testing.T) {
			lacks(t, renderWith(t, src, Options{}), "<iframe", "embed")
		})
	}
}

// TestPolicyAllowsOnlyEmbedIframes sanitizes hostile HTML with the policy
// directly: the renderer never gives it raw HTML, but the policy alone
// must keep every iframe but the embeds' players out.
func TestPolicyAllowsOnlyEmbedIframes(t *testing.T) {
	good := `<iframe src="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ" sandbox="` + iframeSandbox + `"></iframe>`
	if out := policy.Sanitize(good); !strings.Contains(out, `<iframe src="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ"`) {
		t.Fatalf("the embed's iframe is dropped: %s", out)
	}
	for _, h := range []string{
		`<iframe src="https://evil.io/"></iframe>`,
		`<iframe src="javascript:alert(1)"></iframe>`,
		`<iframe srcdoc="<script>alert(1)</script>"></iframe>`,
		`<iframe src="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ/../../x"></iframe>`,
		`<iframe src="https://www.youtube.com/embed/dQw4w9WgXcQ"></iframe>`,
		`<iframe src="https://player.vimeo.com/video/1?dnt=1&autoplay=1"></iframe>`,
		`<iframe src="//www.youtube-nocookie.com/embed/dQw4w9WgXcQ"></iframe>`,
	} {
		out := policy.Sanitize(h)
		if strings.Contains(out, "src") || strings.Contains(out, "alert") {
			t.Errorf("%s sanitizes to %s", h, out)
		}
	}
	out := policy.Sanitize(`<iframe src="https://player.vimeo.com/video/1?dnt=1" sandbox="allow-top-navigation allow-scripts allow-forms" onload="alert(1)" allow="camera; microphone"></iframe>`)
	if strings.Contains(out, "top-navigation") || strings.Contains(out, "forms") || strings.Contains(out, "onload") || strings.Contains(out, "camera") {
		t.Errorf("a player's iframe keeps powers it must not have: %s", out)
	}
	if !strings.Contains(out, `sandbox="allow-scripts"`) {
		t.Errorf("sandbox not kept to its allowed tokens: %s", out)
	}
	if out := policy.Sanitize(`<iframe src="https://player.vimeo.com/video/1?dnt=1"></iframe>`); !strings.Contains(out, `sandbox=""`) {
		t.Errorf("an iframe without a sandbox gets none: %s", out)
	}
	// Raw iframes in Markdown never get that far.
	lacks(t, renderWith(t, good+"\n\nx "+good, Options{}), "<iframe")
	// Nor do classes other than the renderer's.
	out = policy.Sanitize(`<p class="x"><span class="admin-only">a</span><code class="language-go onclick">b</code><pre class="hidden">c</pre><div class="embed embed-evil">d</div></p>`)
	lacks(t, out, "class")
}

func TestFootnotesAndTaskLists(t *testing.T) {
	src := "A claim[^src] and another[^2], the first again[^src].\n\n[^src]: The *source*, https://go.dev.\n[^2]: Second.\n\n" +
		"- [ ] to do\n- [x] done\n- [not a box] text\n"
	d, err := Render(context.Background(), src, Options{HeadingIDPrefix: "h-"})
	if err != nil {
		t.Fatal(err)
	}
	checkSafe(t, d.HTML, "")
	contains(t, d.HTML,
		`<sup id="h-fnref:1"><a href="#h-fn:1" class="footnote-ref" role="doc-noteref">1</a></sup>`,
		`<sup id="h-fnref1:1"><a href="#h-fn:1" class="footnote-ref" role="doc-noteref">1</a></sup>`,
		`<div class="footnotes" role="doc-endnotes">`,
		`<li id="h-fn:1">`,
		`<a href="#h-fnref:1" class="footnote-backref" role="doc-backlink">`,
		`<a href="https://go.dev" rel="nofollow noreferrer">https://go.dev</a>`,
		`<li><input disabled="" type="checkbox"> to do</li>`,
		`<li><input checked="" disabled="" type="checkbox"> done</li>`,
		`<li>[not a box] text</li>`)
	equal(t, "excerpt", d.Excerpt, "A claim and another, the first again.")

	var many strings.Builder
	for i := range MaxFootnotes + 1 {
		many.WriteString("[^" + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + "]: n\n")
	}
	if _, err := Render(context.Background(), many.String(), Options{}); !errors.Is(err, ErrTooManyNotes) {
		t.Errorf("err = %v, want ErrTooManyNotes", err)
	}
}

func TestHeadingsHaveAnchorsForTheirLinks(t *testing.T) {
	d, err := Render(context.Background(), "# Intro\n\nSee [below](#h-usage).\n\n## Usage", Options{HeadingIDPrefix: "h-"})
	if err != nil {
		t.Fatal(err)
	}
	contains(t, d.HTML, `<h2 id="h-usage">Usage</h2>`, `<a href="#h-usage">below</a>`)
	equal(t, "anchor", d.TOC[1].Anchor, "h-usage")
}

func TestVersionNamesTheRenderer(t *testing.T) {
	base := Options{HeadingIDPrefix: "h-"}
	v := base.Version()
	if !strings.HasPrefix(v, "r4-") || len(v) != len("r4-")+12 {
		t.Errorf("version %q", v)
	}
	equal(t, "same options", Options{HeadingIDPrefix: "h-"}.Version(), v)
	for _, o := range []Options{{HeadingIDPrefix: "p-"}, {HeadingIDPrefix: "h-", SiteURL: "https://a.io"}, {HeadingIDPrefix: "h-", Highlight: true}, {HeadingIDPrefix: "h-", ImagesVersion: "https://a.io"}} {
		if o.Version() == v {
			t.Errorf("%+v has the version of %+v", o, base)
		}
	}
}
