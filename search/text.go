package search

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/blogql/blog/storage"
)

// plainText returns the text a reader reads of p's body: its rendered
// HTML without tags (so snippets show no Markdown), with a space where
// blocks end and between words, or the Markdown when nothing was rendered.
// A members-only post's text is its excerpt: search is public, and
// neither its matches nor its snippets may tell what the body says.
func plainText(p *storage.Post) string {
	if p.Visibility == storage.VisibilityMembers {
		return p.Excerpt
	}
	if p.BodyHTML == "" {
		return p.Body
	}
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(p.BodyHTML))
	for {
		switch z.Next() {
		case html.ErrorToken:
			// Snippets run on as text does: one space between words.
			return strings.Join(strings.Fields(b.String()), " ")
		case html.TextToken:
			b.Write(z.Text())
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			switch atom.Lookup(name) {
			case atom.P, atom.Br, atom.Li, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
				atom.Pre, atom.Blockquote, atom.Tr, atom.Td, atom.Th, atom.Div, atom.Hr, atom.Img:
				b.WriteByte('\n')
			}
		}
	}
}
