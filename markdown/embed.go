package markdown

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"
)

// Embeds: a paragraph that holds nothing but a link to a video, a pen, a
// gist or a post of a provider below becomes that thing, built here from
// the ids in the URL (never from the URL itself), so the HTML is one of a
// few fixed shapes that the policy allows and nothing else:
//
//   - YouTube (youtube.com, youtu.be; watch, shorts, live, embed), Vimeo
//     and CodePen become a sandboxed iframe inside <div class="embed
//     embed-<provider>">: YouTube from youtube-nocookie.com (no cookies
//     until the reader plays it), Vimeo with dnt=1 (no tracking),
//     CodePen's result tab; each with loading="lazy" and
//     referrerpolicy="strict-origin-when-cross-origin" (the page's origin
//     only, which YouTube needs to play);
//   - a Gist and a post on X (or Twitter) become <blockquote class="embed
//     embed-gist"> or <blockquote class="embed embed-x twitter-tweet">
//     holding a link to it: their own embeds are scripts, which a page
//     may load (X's widgets.js turns such a blockquote into the post) or
//     leave out.
//
// Any other URL on a line of its own stays a link.

// embedKind is the kind of the Embed node.
var embedKind = ast.NewNodeKind("Embed")

// embed is a block that shows an embedded video, pen, gist or post.
type embed struct {
	ast.BaseBlock
	provider string // youtube, vimeo, codepen, gist, x
	src      string // the iframe's URL, or the link of a blockquote
	title    string // the iframe's title, or the text of the link
}

func (n *embed) Kind() ast.NodeKind { return embedKind }

func (n *embed) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"Provider": n.provider, "Src": n.src}, nil)
}

var (
	youtubeID  = regexp.MustCompile(`^[A-Za-z0-9_-]{11}$`)
	digits     = regexp.MustCompile(`^[0-9]{1,20}$`)
	penUser    = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	penID      = regexp.MustCompile(`^[A-Za-z0-9]{1,16}$`)
	gistID     = regexp.MustCompile(`^[0-9a-f]{1,64}$`)
	xUser      = regexp.MustCompile(`^[A-Za-z0-9_]{1,15}$`)
	startParam = regexp.MustCompile(`^([0-9]{1,6})s?$`)
)

// embedSrc matches the iframe sources embedFor makes, and nothing else:
// the policy allows an iframe only with one of them.
var embedSrc = regexp.MustCompile(`^(https://www\.youtube-nocookie\.com/embed/[A-Za-z0-9_-]{11}(\?start=[0-9]{1,6})?` +
	`|https://player\.vimeo\.com/video/[0-9]{1,20}\?dnt=1` +
	`|https://codepen\.io/[A-Za-z0-9_-]{1,64}/embed/[A-Za-z0-9]{1,16}\?default-tab=result)$`)

// embedFor returns the embed a link to raw means, or nil when its URL is
// not one of a provider's.
func embedFor(raw string) *embed {
	if len(raw) > 300 {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil || u.Port() != "" {
		return nil
	}
	host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	q := u.Query()
	switch host {
	case "youtube.com", "m.youtube.com", "youtu.be", "youtube-nocookie.com":
		id := ""
		switch {
		case host == "youtu.be" && len(parts) == 1:
			id = parts[0]
		case len(parts) == 1 && parts[0] == "watch":
			id = q.Get("v")
		case len(parts) == 2 && (parts[0] == "shorts" || parts[0] == "embed" || parts[0] == "live"):
			id = parts[1]
		}
		if !youtubeID.MatchString(id) {
			return nil
		}
		src := "https://www.youtube-nocookie.com/embed/" + id
		t := q.Get("t")
		if t == "" {
			t = q.Get("start")
		}
		if m := startParam.FindStringSubmatch(t); m != nil {
			if n, _ := strconv.Atoi(m[1]); n > 0 {
				src += "?start=" + strconv.Itoa(n)
			}
		}
		return &embed{provider: "youtube", src: src, title: "YouTube video"}
	case "vimeo.com", "player.vimeo.com":
		id := ""
		switch {
		case host == "vimeo.com" && len(parts) == 1:
			id = parts[0]
		case host == "player.vimeo.com" && len(parts) == 2 && parts[0] == "video":
			id = parts[1]
		}
		if !digits.MatchString(id) {
			return nil
		}
		return &embed{provider: "vimeo", src: "https://player.vimeo.com/video/" + id + "?dnt=1", title: "Vimeo video"}
	case "codepen.io":
		if len(parts) != 3 || (parts[1] != "pen" && parts[1] != "embed") || !penUser.MatchString(parts[0]) || !penID.MatchString(parts[2]) {
			return nil
		}
		return &embed{provider: "codepen", src: "https://codepen.io/" + parts[0] + "/embed/" + parts[2] + "?default-tab=result", title: "CodePen"}
	case "gist.github.com":
		if len(parts) != 2 || !penUser.MatchString(parts[0]) || !gistID.MatchString(parts[1]) {
			return nil
		}
		link := "https://gist.github.com/" + parts[0] + "/" + parts[1]
		return &embed{provider: "gist", src: link, title: "Gist " + parts[0] + "/" + parts[1]}
	case "x.com", "twitter.com", "mobile.twitter.com", "mobile.x.com":
		if len(parts) != 3 || parts[1] != "status" || !xUser.MatchString(parts[0]) || !digits.MatchString(parts[2]) {
			return nil
		}
		link := "https://x.com/" + parts[0] + "/status/" + parts[2]
		return &embed{provider: "x", src: link, title: "Post by @" + parts[0] + " on X"}
	}
	return nil
}

// embedOf returns the embed that the paragraph p means: one whose only
// content is a link (an autolink, or a link whose text is its URL) to a
// provider's URL; nil for any other paragraph.
func embedOf(p *ast.Paragraph, source []byte) *embed {
	var only ast.Node
	for c := p.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok && util.IsBlank(t.Segment.Value(source)) {
			continue
		}
		if only != nil {
			return nil
		}
		only = c
	}
	switch n := only.(type) {
	case *ast.AutoLink:
		if n.AutoLinkType != ast.AutoLinkURL {
			return nil
		}
		return embedFor(string(n.URL(source)))
	case *ast.Link:
		if plainText(n, source) != string(n.Destination) {
			return nil
		}
		return embedFor(string(n.Destination))
	}
	return nil
}

// iframeSandbox and iframeAllow are what an embedded player may do:
// run its scripts on its own origin, go full screen and open its site in
// a new tab; not navigate the page, nor submit forms or download. Full
// screen is in allow alone: allowfullscreen beside allow makes browsers
// warn in the console that allow takes precedence.
const (
	iframeSandbox = "allow-scripts allow-same-origin allow-presentation allow-popups allow-popups-to-escape-sandbox"
	iframeAllow   = "accelerometer; clipboard-write; encrypted-media; gyroscope; picture-in-picture; fullscreen"
	iframeReferer = "strict-origin-when-cross-origin"
)

// renderEmbed writes an embed (see the top of this file).
func renderEmbed(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*embed)
	switch n.provider {
	case "gist", "x":
		class := "embed embed-" + n.provider
		if n.provider == "x" {
			class += " twitter-tweet"
		}
		_, _ = w.WriteString(`<blockquote class="` + class + `"><p><a href="`)
		_, _ = w.Write(util.EscapeHTML([]byte(n.src)))
		_, _ = w.WriteString(`">`)
		_, _ = w.Write(util.EscapeHTML([]byte(n.title)))
		_, _ = w.WriteString("</a></p></blockquote>\n")
	default:
		_, _ = w.WriteString(`<div class="embed embed-` + n.provider + `"><iframe src="`)
		_, _ = w.Write(util.EscapeHTML([]byte(n.src)))
		_, _ = w.WriteString(`" title="` + n.title + `" width="560" height="315" sandbox="` + iframeSandbox +
			`" allow="` + iframeAllow + `" referrerpolicy="` + iframeReferer + `" loading="lazy"></iframe></div>` + "\n")
	}
	return ast.WalkSkipChildren, nil
}
