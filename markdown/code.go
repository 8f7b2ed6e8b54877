package markdown

import (
	"fmt"
	"io"
	"regexp"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"
)

// Fenced code keeps its language as the class of its code element
// (<pre><code class="language-go">), the convention of CommonMark's
// reference renderer that client-side highlighters read. With
// Options.Highlight, code in a language chroma knows is highlighted when
// the body is written: <pre class="chroma"><code class="language-go">
// holding <span class="kd">…</span> and the like, chroma's short class
// names, never inline styles, so the page's stylesheet picks the colours
// (ChromaCSS writes one for a chroma style). Highlighting is bounded:
// chroma's lexers are backtracking regular expressions, and many take
// time far beyond linear on hostile code (measured: 2 KB of ' in YAML
// 1.8 s, 4 KB of "$" in TypeScript 0.9 s, 8 KB of newlines in C 17 s), so
// only the languages of highlightable, whose lexers stayed near linear on
// every shape tried, are highlighted, a block at most MaxHighlightBlock
// bytes, a body at most MaxHighlightBytes in all and MaxHighlightBlocks
// blocks; the rest, and a block
// whose lexer fails, are written plain (still with their language class).

// MaxHighlightBytes is how many bytes of fenced code a body may have
// highlighted in all; the blocks past it are written plain.
const MaxHighlightBytes = 16_000

// MaxHighlightBlock is the largest block highlighted.
const MaxHighlightBlock = 4_000

// MaxHighlightBlocks is how many blocks of a body are highlighted: a
// lexer's run allocates about 180 KB, whatever the block's size.
const MaxHighlightBlocks = 20

// highlightable are the languages highlighted, by the names a fence may
// give them: the lexers whose worst time on the repeated units tried was
// under 0.6 s for 8 KB; the worst body found for them, four blocks of
// 4 KB, renders in 0.64 s (docs/performance.md).
var highlightable = map[string]bool{
	"go": true, "golang": true, "js": true, "javascript": true, "python": true, "py": true,
	"ruby": true, "rb": true, "rust": true, "rs": true, "bash": true, "sh": true, "shell": true,
}

// languageName is a language a code block's class may name.
var languageName = regexp.MustCompile(`^[A-Za-z0-9_+#.-]{1,32}$`)

// codeRenderer writes fenced code blocks; it lives for one Render.
type codeRenderer struct {
	highlight bool
	// highlighted counts the bytes and blocks of code highlighted so far.
	highlighted, blocks int
}

func (c *codeRenderer) render(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.FencedCodeBlock)
	lang := ""
	if l := n.Language(source); l != nil && languageName.Match(l) {
		lang = string(l)
	}
	var code []byte
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		code = append(code, seg.Value(source)...)
	}
	if highlightable[lang] && c.highlight && len(code) <= MaxHighlightBlock &&
		c.highlighted+len(code) <= MaxHighlightBytes && c.blocks < MaxHighlightBlocks {
		c.highlighted += len(code)
		c.blocks++
		if lexer := lexers.Get(lang); lexer != nil {
			if it, err := chroma.Coalesce(lexer).Tokenise(nil, string(code)); err == nil {
				_, _ = w.WriteString(`<pre class="chroma"><code class="language-` + lang + `">`)
				for t := it(); t != chroma.EOF; t = it() {
					class := tokenClass(t.Type)
					if t.Type == chroma.TextWhitespace {
						class = "" // spaces look the same in any colour
					}
					if class != "" {
						_, _ = w.WriteString(`<span class="` + class + `">`)
					}
					_, _ = w.Write(util.EscapeHTML([]byte(t.Value)))
					if class != "" {
						_, _ = w.WriteString(`</span>`)
					}
				}
				_, _ = w.WriteString("</code></pre>\n")
				return ast.WalkSkipChildren, nil
			}
		}
	}
	if lang != "" {
		_, _ = w.WriteString(`<pre><code class="language-` + lang + `">`)
	} else {
		_, _ = w.WriteString("<pre><code>")
	}
	_, _ = w.Write(util.EscapeHTML(code))
	_, _ = w.WriteString("</code></pre>\n")
	return ast.WalkSkipChildren, nil
}

// tokenClass returns chroma's class for a token type, as its HTML
// formatter names it: the type's own, else its nearest parent's; "" for
// plain text.
func tokenClass(t chroma.TokenType) string {
	for ; t != 0; t = t.Parent() {
		if cls, ok := chroma.StandardTypes[t]; ok {
			return cls
		}
	}
	return chroma.StandardTypes[t]
}

// tokenClassName matches the classes tokenClass returns: the policy
// allows a span only these.
var tokenClassName = regexp.MustCompile(`^[a-z][a-z0-9]{0,3}$`)

// ChromaCSS writes the stylesheet of chroma's style named style for the
// classes highlighted code has (selectors under .chroma). It fails when
// chroma has no style of that name.
func ChromaCSS(w io.Writer, style string) error {
	s, ok := styles.Registry[style]
	if !ok {
		return fmt.Errorf("no chroma style %q", style)
	}
	return chromahtml.New(chromahtml.WithClasses(true)).WriteCSS(w, s)
}

// ChromaStyles returns the names of chroma's styles, sorted.
func ChromaStyles() []string { return styles.Names() }
