package markdown

import (
	"context"
	"fmt"
	"reflect"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// What Render refuses before building it. goldmark builds a node for every
// cell a table's header promises (a row of one "|" under a header of 5000
// columns is 5000 cells), walks every open block quote and list on every
// line, and compares every run of emphasis markers and every bracket of a
// paragraph with every earlier one; these limits keep each of those within
// a small multiple of the Markdown's length. Real posts come nowhere near
// them.
const (
	// MaxTableColumns is the most columns a table may have.
	MaxTableColumns = 100
	// MaxTableCells is the most cells the tables of a body may have in
	// all, counted as rows times the header's columns, as every row is
	// filled up to the header's width. An empty cell is ten bytes of HTML,
	// so more would not fit in MaxHTMLBytes anyway.
	MaxTableCells = 20_000
	// MinTableCells is as many cells as any body may have: past it, no
	// more than one a byte of the body. A cell costs some 400 bytes to
	// build, and rows filled up to a wide header make cells of no bytes
	// at all (a line of "|"), so without it 2 KB of Markdown could build
	// 20,000 cells. A written table spends bytes on every cell it has.
	MinTableCells = 1_000
	// MaxEscapedPipes is the most escaped pipes ("\|") the tables of a
	// body may have: goldmark compares each with every cell's code.
	MaxEscapedPipes = 100
	// MaxNesting is how deep block quotes and lists may nest in each
	// other.
	MaxNesting = 16
	// MaxDelimiters is the most runs of emphasis or strikethrough markers
	// (*, _ or ~) that one paragraph, heading or table cell may have.
	MaxDelimiters = 500
	// MaxBrackets is the most opening brackets ([ or ![ of links and
	// images) that one paragraph, heading or table cell may have.
	MaxBrackets = 200
	// MaxFootnotes is the most footnotes a body may define: goldmark
	// looks every footnote reference up among the definitions.
	MaxFootnotes = 100
)

// Errors for Markdown past the limits above.
var (
	ErrTableTooWide    = fmt.Errorf("has a table of more than %d columns", MaxTableColumns)
	ErrTooManyCells    = fmt.Errorf("has tables of more cells in all (rows times columns) than it has bytes, past %d, or more than %d", MinTableCells, MaxTableCells)
	ErrTooManyPipes    = fmt.Errorf("has more than %d escaped pipes (\\|) in tables", MaxEscapedPipes)
	ErrTooDeep         = fmt.Errorf("nests block quotes and lists more than %d deep", MaxNesting)
	ErrTooManyMarkers  = fmt.Errorf("has a paragraph with more than %d runs of *, _ or ~", MaxDelimiters)
	ErrTooManyBrackets = fmt.Errorf("has a paragraph with more than %d links, images or [ brackets", MaxBrackets)
	ErrTooManyNotes    = fmt.Errorf("defines more than %d footnotes", MaxFootnotes)
)

// budget is the state of one Render that the parser's guards share: the
// request's context, the first error, and what has been counted so far.
// Once err is set every guard refuses, so the rest of the parse and the
// render do no work but skipping.
type budget struct {
	ctx   context.Context
	err   error
	calls int
	// Counted over the whole body, and the most cells it may have.
	cells, pipes, footnotes, maxCells int
	// Counted in the block whose inlines are being parsed.
	delimiters, brackets int
}

var budgetKey = parser.NewContextKey()

func budgetOf(pc parser.Context) *budget { return pc.Get(budgetKey).(*budget) }

// ok reports whether the work may go on: no limit has been passed and the
// context is not done (looked at every 64th call: it takes a lock).
func (b *budget) ok() bool {
	if b.err != nil {
		return false
	}
	b.calls++
	if b.calls%64 == 0 {
		if err := b.ctx.Err(); err != nil {
			b.err = err
			return false
		}
	}
	return true
}

// fail records err unless an error is already recorded.
func (b *budget) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// newParser returns goldmark's CommonMark parser with GitHub's tables,
// strikethrough, autolinks and task lists, and footnotes (what goldmark.New
// with those extensions builds), with every part that can do more work
// than the Markdown is long behind a guard of the budget.
func newParser() parser.Parser {
	blocks := append(parser.DefaultBlockParsers(),
		util.Prioritized(footnoteGuard{extension.NewFootnoteBlockParser()}, 999))
	container := []reflect.Type{reflect.TypeOf(parser.NewBlockquoteParser()), reflect.TypeOf(parser.NewListParser())}
	for i, v := range blocks {
		if t := reflect.TypeOf(v.Value); t == container[0] || t == container[1] {
			blocks[i].Value = nestingGuard{v.Value.(parser.BlockParser)}
		}
	}
	inlines := append(parser.DefaultInlineParsers(),
		util.Prioritized(extension.NewStrikethroughParser(), 500),
		util.Prioritized(extension.NewLinkifyParser(), 999),
		util.Prioritized(extension.NewFootnoteParser(), 101),
		util.Prioritized(extension.NewTaskCheckBoxParser(), 0))
	link := reflect.TypeOf(parser.NewLinkParser())
	for i, v := range inlines {
		// Several parsers start at a bracket; only the link parser's
		// attempts count, so each bracket counts once.
		inlines[i].Value = inlineGuard{v.Value.(parser.InlineParser), reflect.TypeOf(v.Value) == link}
	}
	return parser.NewParser(
		parser.WithBlockParsers(blocks...),
		parser.WithInlineParsers(inlines...),
		parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(),
			util.Prioritized(paragraphGuard{}, 0),
			util.Prioritized(tableGuard{extension.NewTableParagraphTransformer()}, 200))...),
		parser.WithASTTransformers(util.Prioritized(extension.NewTableASTTransformer(), 0),
			util.Prioritized(extension.NewFootnoteASTTransformer(), 999)),
	)
}

// footnoteGuard records ErrTooManyNotes when a body defines more than
// MaxFootnotes footnotes; from then on the budget is spent.
type footnoteGuard struct{ parser.BlockParser }

func (g footnoteGuard) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	b := budgetOf(pc)
	if !b.ok() {
		return nil, parser.NoChildren
	}
	n, state := g.BlockParser.Open(parent, reader, pc)
	if n != nil {
		if b.footnotes++; b.footnotes > MaxFootnotes {
			b.fail(ErrTooManyNotes)
		}
	}
	return n, state
}

// paragraphGuard runs first on every paragraph: once the budget is spent
// it empties the paragraph, so that nothing parses its lines again (link
// reference definitions, tables, inlines).
type paragraphGuard struct{}

func (paragraphGuard) Transform(node *ast.Paragraph, _ text.Reader, pc parser.Context) {
	if !budgetOf(pc).ok() {
		node.Lines().Clear()
	}
}

// tableGuard counts a table's columns and cells before goldmark's table
// transformer builds them, and refuses (leaves the paragraph a paragraph
// and records the error) past MaxTableColumns, the body's cells (one a
// byte past MinTableCells, at most MaxTableCells) or MaxEscapedPipes.
// goldmark takes the first line that is a delimiter row for the table's
// and fills each line below it up to that row's columns; the guard counts
// every line that may be a delimiter row that way, so it never counts
// fewer cells than goldmark builds.
type tableGuard struct{ parser.ParagraphTransformer }

func (g tableGuard) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	b := budgetOf(pc)
	lines := node.Lines()
	if !b.ok() || lines.Len() < 2 {
		return
	}
	source := reader.Source()
	table := false
	for i := 1; i < lines.Len() && b.cells <= b.maxCells; i++ {
		row := lines.At(i)
		cols := delimiterColumns(row.Value(source))
		if cols == 0 {
			continue
		}
		if cols > MaxTableColumns {
			b.fail(ErrTableTooWide)
			return
		}
		b.cells += cols * (lines.Len() - i)
		table = true
	}
	if !table {
		g.ParagraphTransformer.Transform(node, reader, pc)
		return
	}
	for i := range lines.Len() {
		line := lines.At(i)
		b.pipes += escapedPipes(line.Value(source))
	}
	switch {
	case b.cells > b.maxCells:
		b.fail(ErrTooManyCells)
	case b.pipes > MaxEscapedPipes:
		b.fail(ErrTooManyPipes)
	default:
		g.ParagraphTransformer.Transform(node, reader, pc)
	}
}

// delimiterColumns returns how many columns line has if it may be a
// table's delimiter row, else 0. goldmark takes a line for one when it
// holds only spaces, '-', ':' and '|', and each of its cells is dashes
// between optional colons; the count is of cells with a '-' or ':' in
// them, which is never fewer than goldmark's when it takes the line.
func delimiterColumns(line []byte) int {
	cols, dash, inCell := 0, false, false
	for _, c := range line {
		switch c {
		case ' ', '\t', '\n', '\r', '\f', '\v':
		case '-', ':':
			dash = dash || c == '-'
			if !inCell {
				cols++
				inCell = true
			}
		case '|':
			inCell = false
		default:
			return 0
		}
	}
	if !dash {
		return 0
	}
	return cols
}

// escapedPipes counts "\|" in line.
func escapedPipes(line []byte) int {
	n := 0
	for i := 1; i < len(line); i++ {
		if line[i] == '|' && line[i-1] == '\\' {
			n++
		}
	}
	return n
}

// nestingGuard records ErrTooDeep when a block quote or list opens inside
// MaxNesting others; from then on the budget is spent, and no block quote
// or list opens any more (their lines are parsed as text).
type nestingGuard struct{ parser.BlockParser }

func (g nestingGuard) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	b := budgetOf(pc)
	if !b.ok() {
		return nil, parser.NoChildren
	}
	n, state := g.BlockParser.Open(parent, reader, pc)
	if n == nil {
		return n, state
	}
	depth := 0
	for p := parent; p != nil && depth < MaxNesting; p = p.Parent() {
		if k := p.Kind(); k == ast.KindBlockquote || k == ast.KindList {
			depth++
		}
	}
	if depth >= MaxNesting {
		b.fail(ErrTooDeep)
	}
	return n, state
}

// inlineGuard runs an inline parser while the budget lasts, and counts
// the emphasis delimiters and link brackets of the block being parsed.
type inlineGuard struct {
	parser.InlineParser
	brackets bool // count the brackets it is tried at
}

func (g inlineGuard) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	b := budgetOf(pc)
	if !b.ok() {
		return nil
	}
	if c := block.Peek(); g.brackets && (c == '[' || c == '!') {
		line, _ := block.PeekLine()
		if c == '[' || len(line) > 1 && line[1] == '[' {
			if b.brackets++; b.brackets > MaxBrackets {
				b.fail(ErrTooManyBrackets)
				return nil
			}
		}
	}
	n := g.InlineParser.Parse(parent, block, pc)
	if _, ok := n.(*parser.Delimiter); ok {
		if b.delimiters++; b.delimiters > MaxDelimiters {
			b.fail(ErrTooManyMarkers)
		}
	}
	return n
}

// CloseBlock ends a block: the counts per block start again.
func (g inlineGuard) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	b := budgetOf(pc)
	b.delimiters, b.brackets = 0, 0
	if cb, ok := g.InlineParser.(parser.CloseBlocker); ok {
		cb.CloseBlock(parent, block, pc)
	}
}

// htmlRenderer renders a parsed body as goldmark's HTML renderer does with
// the same extensions, node by node while the budget lasts, into a writer
// that refuses past a number of bytes.
type htmlRenderer struct {
	funcs map[ast.NodeKind]renderer.NodeRendererFunc
}

func newHTMLRenderer() *htmlRenderer {
	r := &htmlRenderer{funcs: map[ast.NodeKind]renderer.NodeRendererFunc{}}
	// Later ones win, as goldmark registers by priority.
	html.NewRenderer().RegisterFuncs(r)
	extension.NewStrikethroughHTMLRenderer().RegisterFuncs(r)
	extension.NewTableHTMLRenderer(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)).RegisterFuncs(r)
	extension.NewTaskCheckBoxHTMLRenderer().RegisterFuncs(r)
	// Footnote ids start with the heading id prefix, kept on the document
	// (Render), so a footnote cannot take the name of an element of the
	// page either.
	extension.NewFootnoteHTMLRenderer(extension.WithFootnoteIDPrefixFunction(func(n ast.Node) []byte {
		if doc := n.OwnerDocument(); doc != nil {
			if v, ok := doc.AttributeString(footnotePrefixAttr); ok {
				return v.([]byte)
			}
		}
		return nil
	})).RegisterFuncs(r)
	r.Register(embedKind, renderEmbed)
	return r
}

// Register implements renderer.NodeRendererFuncRegisterer.
func (r *htmlRenderer) Register(kind ast.NodeKind, f renderer.NodeRendererFunc) {
	r.funcs[kind] = f
}

// footnotePrefixAttr is the document's attribute that holds the prefix
// of footnote ids.
const footnotePrefixAttr = "footnote-id-prefix"

// render writes doc's HTML to w, its fenced code by code; it stops at the
// first node after the budget is spent or w refused to write, with that
// error.
func (r *htmlRenderer) render(b *budget, w *cappedWriter, source []byte, doc ast.Node, code *codeRenderer) error {
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if w.err != nil {
			return ast.WalkStop, w.err
		}
		if !b.ok() {
			return ast.WalkStop, b.err
		}
		if n.Kind() == ast.KindFencedCodeBlock {
			return code.render(w, source, n, entering)
		}
		if f := r.funcs[n.Kind()]; f != nil {
			return f(w, source, n, entering)
		}
		return ast.WalkContinue, nil
	})
	if err == nil {
		err = w.err
	}
	return err
}

// cappedWriter keeps at most max bytes and fails every write past them
// with ErrTooLarge; it keeps failing after the first. It is a
// util.BufWriter, so goldmark's node renderers write to it directly.
type cappedWriter struct {
	buf []byte
	max int
	err error
}

func (w *cappedWriter) room(n int) bool {
	if w.err == nil && len(w.buf)+n > w.max {
		w.err = ErrTooLarge
	}
	return w.err == nil
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if !w.room(len(p)) {
		return 0, w.err
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

func (w *cappedWriter) WriteString(s string) (int, error) {
	if !w.room(len(s)) {
		return 0, w.err
	}
	w.buf = append(w.buf, s...)
	return len(s), nil
}

func (w *cappedWriter) WriteByte(c byte) error {
	if !w.room(1) {
		return w.err
	}
	w.buf = append(w.buf, c)
	return nil
}

func (w *cappedWriter) WriteRune(r rune) (int, error) {
	if !w.room(utf8.RuneLen(r)) {
		return 0, w.err
	}
	w.buf = utf8.AppendRune(w.buf, r)
	return utf8.RuneLen(r), nil
}

func (w *cappedWriter) Available() int { return w.max - len(w.buf) }
func (w *cappedWriter) Buffered() int  { return 0 }
func (w *cappedWriter) Flush() error   { return w.err }

// contextReader reads r while ctx is not done.
type contextReader struct {
	ctx context.Context
	r   interface{ Read([]byte) (int, error) }
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
