package markdown

import (
	"bytes"
	"html"
	"net/url"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
)

// The sanitizer is the net under the renderer: raw HTML never reaches it
// (goldmark drops it), so all it sees is what the node renderers write,
// and it lets through exactly the shapes they write beyond bluemonday's
// policy for user-generated content:
//
//   - class on code ("language-<name>"), on pre ("chroma") and on spans
//     (chroma's short token classes), so highlighted code and client-side
//     highlighters work;
//   - iframes only with a source that embedSrc matches (the players of
//     YouTube without cookies, Vimeo and CodePen), a sandbox holding at
//     most the tokens of iframeSandbox (bluemonday adds an empty one when
//     there is none), and fixed allow, referrerpolicy and loading values;
//     the embed's wrapper classes on div and blockquote;
//   - width, height and loading="lazy" on images, and a library image's
//     srcset (of http, https or root-relative URLs), sizes and
//     decoding="async";
//   - footnotes' classes and roles, and task lists' disabled checkboxes.
//
// Every link with a host gets rel="nofollow noreferrer"; links within
// the page or the site (relative ones) get no rel. Links to
// Options.SiteURL are the blog's own too: Render takes their rel off
// after sanitizing (unfollow).

// newPolicy returns the sanitizer's policy, described above.
func newPolicy() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.RequireNoFollowOnLinks(false)
	p.RequireNoFollowOnFullyQualifiedLinks(true)
	p.RequireNoReferrerOnFullyQualifiedLinks(true)

	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[A-Za-z0-9_+#.-]{1,32}$`)).OnElements("code")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^chroma$`)).OnElements("pre")
	p.AllowAttrs("class").Matching(tokenClassName).OnElements("span")

	p.AllowAttrs("src").Matching(embedSrc).OnElements("iframe")
	p.AllowAttrs("width", "height").Matching(regexp.MustCompile(`^[0-9]{1,4}$`)).OnElements("iframe")
	p.AllowAttrs("allow").Matching(regexp.MustCompile(`^` + regexp.QuoteMeta(iframeAllow) + `$`)).OnElements("iframe")
	p.AllowAttrs("referrerpolicy").Matching(regexp.MustCompile(`^` + iframeReferer + `$`)).OnElements("iframe")
	p.AllowAttrs("loading").Matching(regexp.MustCompile(`^lazy$`)).OnElements("iframe", "img")
	p.AllowAttrs("sandbox").OnElements("iframe")
	// A library image's (library.go): written by Render from
	// Options.Images, never from the Markdown.
	p.AllowAttrs("srcset").Matching(srcsetValue).OnElements("img")
	p.AllowAttrs("sizes").Matching(regexp.MustCompile(`^\(max-width: [0-9]{1,5}px\) 100vw, [0-9]{1,5}px$`)).OnElements("img")
	p.AllowAttrs("decoding").Matching(regexp.MustCompile(`^async$`)).OnElements("img")
	p.RequireSandboxOnIFrame(bluemonday.SandboxAllowScripts, bluemonday.SandboxAllowSameOrigin,
		bluemonday.SandboxAllowPresentation, bluemonday.SandboxAllowPopups, bluemonday.SandboxAllowPopupsToEscapeSandbox)
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^embed embed-(youtube|vimeo|codepen)$`)).OnElements("div")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^embed embed-(gist|x twitter-tweet)$`)).OnElements("blockquote")

	p.AllowAttrs("class").Matching(regexp.MustCompile(`^footnotes$`)).OnElements("div")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^footnote-(ref|backref)$`)).OnElements("a")
	p.AllowAttrs("role").Matching(regexp.MustCompile(`^doc-(noteref|backlink|endnotes)$`)).OnElements("a", "div")

	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").Matching(regexp.MustCompile(`^$`)).OnElements("input")
	return p
}

// srcsetValue matches a srcset of http, https or root-relative URLs with
// width descriptors.
var srcsetValue = regexp.MustCompile(`^(?:(?:https?://|/)[^\s,"'<>]+ [0-9]{1,5}w)(?:, (?:https?://|/)[^\s,"'<>]+ [0-9]{1,5}w)*$`)

// relOnLink matches a link as the sanitizer writes one with a host: its
// href first, its rel last.
var relOnLink = regexp.MustCompile(`<a href="([^"]*)"([^>]*) rel="nofollow noreferrer">`)

// site is a public site URL links are compared with.
type site struct {
	scheme, host, path string
}

// parseSite returns the site of a URL, and false when it has no http or
// https scheme and host.
func parseSite(raw string) (site, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return site{}, false
	}
	return site{scheme: u.Scheme, host: strings.ToLower(u.Host), path: strings.TrimSuffix(u.Path, "/")}, true
}

// holds reports whether the absolute URL raw is on the site: same scheme
// (or none: protocol-relative), same host, and a path within the site's.
func (s site) holds(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "" && u.Scheme != s.scheme) || strings.ToLower(u.Host) != s.host {
		return false
	}
	return s.path == "" || u.Path == s.path || strings.HasPrefix(u.Path, s.path+"/")
}

// bareLink matches a link as the sanitizer writes one: its href first.
var bareLink = regexp.MustCompile(`<a href="([^"]*)"([^>]*)>`)

// nofollowHosts gives rel="nofollow noreferrer" to the sanitized links
// that have none but that a browser reads with a host: "///x.io" and
// "https:x.io" name the host x.io to a browser, not to the sanitizer's
// URL parser.
func nofollowHosts(sanitized []byte) []byte {
	return bareLink.ReplaceAllFunc(sanitized, func(a []byte) []byte {
		m := bareLink.FindSubmatch(a)
		if bytes.Contains(m[2], []byte(" rel=")) || !namesHost(html.UnescapeString(string(m[1]))) {
			return a
		}
		return append(a[:len(a)-1:len(a)-1], ` rel="nofollow noreferrer">`...)
	})
}

// namesHost reports whether a browser reads the link href with a host (or
// it cannot be parsed, so it might): "//x", "///x", "https:x" and
// "https://x" do; "0//", "/a" and "#b" do not.
func namesHost(href string) bool {
	u, err := url.Parse(href)
	return err != nil || u.Host != "" || u.Scheme == "http" || u.Scheme == "https" || strings.HasPrefix(href, "//")
}

// unfollow takes rel="nofollow noreferrer" off the sanitized links to
// the site s: the output only ever shrinks.
func unfollow(sanitized []byte, s site) []byte {
	return relOnLink.ReplaceAllFunc(sanitized, func(a []byte) []byte {
		m := relOnLink.FindSubmatch(a)
		if !s.holds(html.UnescapeString(string(m[1]))) {
			return a
		}
		return append(append(append([]byte(`<a href="`), m[1]...), '"'), append(m[2], '>')...)
	})
}
