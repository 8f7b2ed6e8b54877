// Package markdown turns a post's Markdown into what a frontend shows:
// sanitized HTML that a page can insert as it is, the table of contents,
// the word count and reading time, and a plain-text excerpt.
//
// The Markdown is CommonMark with GitHub's tables, strikethrough,
// autolinks and task lists, and footnotes, rendered by goldmark. Raw HTML
// in the Markdown is dropped, not passed through, and the rendered HTML
// is then sanitized with bluemonday's policy for user-generated content,
// made stricter where it can be and opened exactly as far as the HTML
// this package writes needs (policy.go): images only from absolute http
// and https URLs, with their width and height (images.go); links with a
// host, other than to Options.SiteURL, get rel="nofollow noreferrer";
// fenced code keeps its language as a class and may be highlighted with
// classes (code.go); a paragraph holding only a link to a video, a pen,
// a gist or a post of a known provider becomes a sandboxed iframe or a
// blockquote (embed.go). Every heading gets an id of ASCII letters,
// digits and hyphens, unique in the document and started with
// Options.HeadingIDPrefix, which the policy keeps and the table of
// contents names as its anchor; footnotes' ids start with the same
// prefix.
//
// Render's work is linear in the Markdown: what goldmark would build or
// compare without bound is refused before it is built (bounds.go), the
// HTML is written into a buffer that refuses past MaxHTMLBytes, and every
// step stops when the caller's context ends.
//
// Render is deterministic: the same Markdown with the same Options always
// gives the same result, so what was rendered once can be rendered again
// instead of being kept; Options.Version names the result's renderer, so
// what was rendered with another can be found and rendered again.
package markdown

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"golang.org/x/text/unicode/norm"
)

// Limits of what Render returns.
const (
	// MaxHTMLBytes is the most HTML a body may render to. Markdown can
	// expand (a reference link repeats its URL wherever it is used), and
	// the HTML is stored next to the Markdown in one DynamoDB item.
	MaxHTMLBytes = 200_000
	// MaxHeadings is how many headings the table of contents lists: the
	// first ones of the document. Later headings still get their ids.
	MaxHeadings = 100
	// MaxHeadingText is how many characters of a heading the table of
	// contents keeps; a longer one ends in "…".
	MaxHeadingText = 100
	// MaxAnchor is the length of a heading id before the suffix that
	// makes it unique.
	MaxAnchor = 64
	// ExcerptLength is how many characters a derived excerpt has at most.
	ExcerptLength = 300
	// WordsPerMinute is the reading speed that ReadingMinutes assumes.
	WordsPerMinute = 265
)

// ErrTooLarge means the Markdown renders to more than MaxHTMLBytes of HTML.
var ErrTooLarge = fmt.Errorf("renders to more than %d bytes of HTML", MaxHTMLBytes)

// Heading is one entry of a table of contents.
type Heading struct {
	Level  int    // 1 to 6
	Text   string // the heading as plain text
	Anchor string // the id of the heading in the HTML
}

// Document is what Render derives from Markdown.
type Document struct {
	HTML           string
	TOC            []Heading
	Words          int
	ReadingMinutes int
	Excerpt        string // the first paragraphs as plain text, at most ExcerptLength characters
}

var (
	mdParser   = newParser()
	mdRenderer = newHTMLRenderer()
)

var policy = newPolicy()

var httpURL = regexp.MustCompile(`^(?i)https?://[^/?#]`)

// Options configure Render.
type Options struct {
	// HeadingIDPrefix starts every heading id, and so every anchor of the
	// table of contents: a heading "Root" gets id="h-root" with "h-", so
	// a post's ids cannot take the name of an element of the page around
	// it (DOM clobbering). Empty gives the bare slugs. It must pass
	// CheckHeadingIDPrefix.
	HeadingIDPrefix string
	// SiteURL is the public site's URL (http or https, with a host, and
	// maybe a path): links to it are the blog's own and get no
	// rel="nofollow noreferrer". Empty: only relative links are.
	SiteURL string
	// Highlight highlights fenced code in a language chroma knows, with
	// classes (code.go).
	Highlight bool
	// Images are the media library's images the body may show, by id
	// (library.go; LibraryIDs names those to read). They are what the
	// body is rendered from, not how: Version leaves them out, and the
	// same Markdown with the same Images renders the same.
	Images map[string]LibraryImage
	// ImagesVersion names how Images are made (the renditions' URLs):
	// part of Version, so another makes bodies be rendered again.
	ImagesVersion string
	// RequireImages makes Render refuse a library image that Images does
	// not hold with an *UnknownImageError, instead of showing its alt
	// text; it changes no result Render returns, so Version leaves it out.
	RequireImages bool
}

// DefaultHeadingIDPrefix is the HeadingIDPrefix a server uses unless told
// otherwise.
const DefaultHeadingIDPrefix = "h-"

// MaxHeadingIDPrefix is the longest HeadingIDPrefix.
const MaxHeadingIDPrefix = 32

var idPrefix = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_-]*)?$`)

// CheckHeadingIDPrefix returns an error unless p may start heading ids:
// empty, or an ASCII letter followed by letters, digits, hyphens and
// underscores, at most MaxHeadingIDPrefix bytes.
func CheckHeadingIDPrefix(p string) error {
	if len(p) > MaxHeadingIDPrefix || !idPrefix.MatchString(p) {
		return fmt.Errorf("heading id prefix %q: must be empty or an ASCII letter followed by letters, digits, - and _, at most %d bytes", p, MaxHeadingIDPrefix)
	}
	return nil
}

// Render renders Markdown. It fails with ErrTooLarge when the HTML would
// be larger than MaxHTMLBytes, with one of the errors of the limits
// (ErrTableTooWide, ErrTooManyCells, ErrTooManyPipes, ErrTooDeep,
// ErrTooManyMarkers, ErrTooManyBrackets, ErrTooManyNotes) when the Markdown passes one, with
// an *UnknownImageError for a library image not in Options.Images when
// Options.RequireImages is set, and
// with ctx's error when ctx is done first; it never fails otherwise. Each
// of these stops the work where it is found: nothing more is parsed,
// rendered or sanitized.
func Render(ctx context.Context, src string, opts Options) (*Document, error) {
	source := []byte(src)
	b := &budget{ctx: ctx, maxCells: min(MaxTableCells, max(MinTableCells, len(source)))}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pc := parser.NewContext()
	pc.Set(budgetKey, b)
	doc := mdParser.Parse(text.NewReader(source), parser.WithContext(pc))
	if b.err != nil {
		return nil, b.err
	}
	doc.SetAttributeString(footnotePrefixAttr, []byte(opts.HeadingIDPrefix))
	// An image from anywhere but an absolute http or https URL (a data:
	// URL, a path on whatever site shows the post) is shown as its text.
	// A library image is shown as Options.Images gives it (library.go).
	var images, shown []*ast.Image
	library := map[*ast.Image]LibraryImage{}
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !b.ok() {
			return ast.WalkStop, b.err
		}
		img, ok := n.(*ast.Image)
		if !ok || !entering {
			return ast.WalkContinue, nil
		}
		if id := libraryID(img.Destination); id != "" {
			li, found := opts.Images[id]
			switch {
			case found:
				setLibraryImage(img, li)
				library[img] = li
				shown = append(shown, img)
			case opts.RequireImages:
				return ast.WalkStop, &UnknownImageError{ID: id}
			default:
				images = append(images, img)
			}
		} else if httpURL.Match(img.Destination) {
			shown = append(shown, img)
		} else {
			images = append(images, img)
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		return nil, err
	}
	for _, img := range images {
		img.Parent().ReplaceChild(img.Parent(), img, ast.NewString([]byte(plainText(img, source))))
	}
	setImageAttributes(shown, source)
	for img, li := range library {
		// The original's size wins over braces that follow it.
		img.SetAttributeString("width", []byte(strconv.Itoa(li.Width)))
		img.SetAttributeString("height", []byte(strconv.Itoa(li.Height)))
	}
	out := &Document{}
	ids := anchors{prefix: opts.HeadingIDPrefix}
	var words, excerpt strings.Builder
	var embeds []*ast.Paragraph
	err = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if !b.ok() {
			return ast.WalkStop, b.err
		}
		switch n := n.(type) {
		case *ast.Heading:
			plain := plainText(n, source)
			anchor := ids.next(plain)
			n.SetAttributeString("id", []byte(anchor))
			if plain != "" && len(out.TOC) < MaxHeadings {
				out.TOC = append(out.TOC, Heading{Level: n.Level, Text: cut(plain, MaxHeadingText), Anchor: anchor})
			}
			words.WriteString(plain + " ")
			return ast.WalkSkipChildren, nil
		case *ast.Paragraph:
			if e := embedOf(n, source); e != nil {
				embeds = append(embeds, n)
				return ast.WalkSkipChildren, nil
			}
			plain := plainText(n, source)
			words.WriteString(plain + " ")
			if excerpt.Len() < ExcerptLength*utf8.UTFMax && plain != "" && !inQuoteOrList(n) {
				excerpt.WriteString(plain + " ")
			}
			return ast.WalkSkipChildren, nil
		case *ast.TextBlock, *extast.TableCell:
			words.WriteString(plainText(n, source) + " ")
			return ast.WalkSkipChildren, nil
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			lines := n.Lines()
			for i := range lines.Len() {
				seg := lines.At(i)
				words.Write(seg.Value(source))
			}
			words.WriteByte(' ')
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		return nil, err
	}
	for _, p := range embeds {
		e := embedOf(p, source)
		p.Parent().ReplaceChild(p.Parent(), p, e)
	}
	// goldmark's HTML is a little larger than the sanitized HTML for some
	// text (it spells a quote with six bytes, the policy with five), so it
	// may exceed the limit twice over before anything is sanitized.
	raw := &cappedWriter{max: 2 * MaxHTMLBytes}
	if err := mdRenderer.render(b, raw, source, doc, &codeRenderer{highlight: opts.Highlight}); err != nil {
		return nil, err
	}
	html := &cappedWriter{max: MaxHTMLBytes}
	if err := policy.SanitizeReaderToWriter(contextReader{ctx, bytes.NewReader(raw.buf)}, html); err != nil {
		if html.err != nil {
			return nil, html.err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("sanitize html: %w", err)
	}
	html.buf = nofollowHosts(html.buf)
	if s, ok := parseSite(opts.SiteURL); ok {
		html.buf = unfollow(html.buf, s)
	}
	out.HTML = string(html.buf)
	out.Words = len(strings.Fields(words.String()))
	out.ReadingMinutes = ReadingMinutes(out.Words)
	out.Excerpt = cut(strings.Join(strings.Fields(excerpt.String()), " "), ExcerptLength)
	return out, nil
}

// ReadingMinutes is the time it takes to read words words at
// WordsPerMinute, rounded up: 0 for none, at least 1 for any.
func ReadingMinutes(words int) int {
	return (words + WordsPerMinute - 1) / WordsPerMinute
}

// inQuoteOrList reports whether a paragraph is inside a block quote or a
// list item, which do not make a good excerpt.
func inQuoteOrList(n ast.Node) bool {
	for p := n.Parent(); p != nil; p = p.Parent() {
		switch p.Kind() {
		case ast.KindBlockquote, ast.KindListItem, extast.KindFootnote:
			return true
		}
	}
	return false
}

// plainText returns the text a reader sees in n: inline markup, link
// targets and raw HTML left out, line breaks as spaces.
func plainText(n ast.Node, source []byte) string {
	var b strings.Builder
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				b.Write(c.Segment.Value(source))
				if c.SoftLineBreak() || c.HardLineBreak() {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(c.Value)
			case *ast.AutoLink:
				b.Write(c.Label(source))
			case *ast.RawHTML:
			default:
				walk(c)
			}
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// cut shortens s to at most n characters, ending in "…" when it cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	// End at a word when there is one in the last fifth.
	if i := lastSpace(r); i > n*4/5 {
		r = r[:i]
	}
	return strings.TrimRightFunc(string(r), unicode.IsSpace) + "…"
}

func lastSpace(r []rune) int {
	for i := len(r) - 1; i >= 0; i-- {
		if unicode.IsSpace(r[i]) {
			return i
		}
	}
	return -1
}

// anchors makes heading ids: the prefix, then the heading's text folded
// to lower-case ASCII letters and digits joined by hyphens, "section" when
// nothing is left, with "-2", "-3", … for repeats.
type anchors struct {
	prefix string
	taken  map[string]bool
	// suffix is the next suffix to try for a base: a body of many
	// headings with the same text tries each suffix once, not once for
	// every earlier heading.
	suffix map[string]int
}

func (a *anchors) next(plain string) string {
	if a.taken == nil {
		a.taken, a.suffix = map[string]bool{}, map[string]int{}
	}
	base := Slugify(plain, MaxAnchor)
	if base == "" {
		base = "section"
	}
	id := base
	if a.taken[id] {
		i := max(a.suffix[base], 2)
		for id = base + "-" + strconv.Itoa(i); a.taken[id]; id = base + "-" + strconv.Itoa(i) {
			i++
		}
		a.suffix[base] = i + 1
	}
	a.taken[id] = true
	return a.prefix + id
}

// Slugify returns s as lower-case ASCII letters and digits separated by
// single hyphens, at most max bytes long: accents are dropped ("Café" is
// "cafe"), and every run of other characters becomes one hyphen. It
// returns "" when s has no letter or digit of the Latin alphabet.
func Slugify(s string, max int) string {
	// Decomposed, an accented letter is the letter and a mark (Mn), which
	// is dropped with everything else but a-z and 0-9.
	folded := s
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			folded = norm.NFKD.String(s)
			break
		}
	}
	var b strings.Builder
	hyphen := false
	for _, r := range folded {
		if b.Len() > max {
			break // the rest is cut off below
		}
		r = unicode.ToLower(r)
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
		case r == 'ß':
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteString("ss")
		case unicode.Is(unicode.Mn, r):
		default:
			hyphen = true
		}
	}
	out := b.String()
	if len(out) > max {
		out = strings.TrimRight(out[:max], "-")
	}
	return out
}
