package markdown

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// costOptions turn on everything that costs: highlighting, and links
// compared with a site.
var costOptions = Options{HeadingIDPrefix: DefaultHeadingIDPrefix, SiteURL: "https://blog.example", Highlight: true}

// maxBody is the largest body a post may have (storage.MaxBodyBytes).
const maxBody = 100_000

// Render's allocation is held to allocPerByte bytes for each byte of
// Markdown, plus allocBase: the worst shapes known allocate about 400.
// Before the limits, a 24 KB table allocated 90 000 a byte (2.2 GB).
// Each highlighted block adds what a lexer's run allocates whatever the
// block's size (about 180 KB).
const (
	allocPerByte = 1024
	allocBase    = 1<<20 + MaxHighlightBlocks*200_000
)

// shapes returns Markdown of about n bytes in every shape known to make a
// Markdown parser work or allocate more than its length: tables that
// promise more cells than they have, deep nesting, runs of delimiters and
// brackets that each look far ahead or back, expansion, many headings.
func shapes(n int) map[string]string {
	fill := func(head, unit, tail string) string {
		return head + strings.Repeat(unit, max(1, (n-len(head)-len(tail))/len(unit))) + tail
	}
	seq := func(f func(i int) string) string {
		var b strings.Builder
		for i := 1; b.Len() < n; i++ {
			b.WriteString(f(i))
		}
		return b.String()
	}
	return map[string]string{
		"table-padding":    fill(strings.Repeat("|a", n/8)+"\n"+strings.Repeat("|-", n/8)+"\n", "|\n", ""),
		"table-100-cols":   fill(strings.Repeat("|a", 100)+"\n"+strings.Repeat("|-", 100)+"\n", "|\n", ""),
		"table-wide":       fill("", "|a", "\n") + fill("", "|-", "\n"),
		"table-pipes":      "|a|b|\n|-|-|\n" + fill("", "|`\\|`|`\\|`\n", ""),
		"tables-many":      fill("", "|a|b|\n|-|-|\n|c|d|\n\n", ""),
		"quotes-deep":      fill("", ">", "a"),
		"quotes-lazy":      fill(strings.Repeat(">", n/2)+"a\n", "a\n", ""),
		"lists-deep":       fill("", "- ", "a"),
		"ordered-deep":     fill("", "1. ", "a"),
		"lists-indented":   seq(func(i int) string { return strings.Repeat(" ", 2*i) + "- a\n" }),
		"emphasis":         fill("", "*a", ""),
		"emphasis-mixed":   fill("", "a*_b", ""),
		"emphasis-intra":   fill("", "a_b_ ", ""),
		"emphasis-nested":  strings.Repeat("*", n/2) + "a" + strings.Repeat("*", n/2),
		"strikethrough":    fill("", "~~a", ""),
		"brackets":         fill("", "[", ""),
		"brackets-closed":  fill(strings.Repeat("[", n/2), "]", ""),
		"links-unclosed":   fill("", "[a](", ""),
		"links-angle":      fill("", "[a](<", ""),
		"links-title":      fill("", "[a](b \"\n", ""),
		"references-open":  fill("", "[a][\n", ""),
		"images-nested":    strings.Repeat("![", n/8) + "a" + strings.Repeat("](b)", n/8),
		"backticks":        seq(func(i int) string { return strings.Repeat("`", i) + "a" }),
		"reference-use":    "[a]: http://x.y/" + strings.Repeat("z", 1000) + "\n\n" + fill("", "[a] ", ""),
		"definitions":      seq(func(i int) string { return fmt.Sprintf("[a%d]: /u\n", i) }),
		"definitions-open": fill("", "[a]: b '\n", ""),
		"headings-same":    fill("", "# a\n", ""),
		"headings-setext":  fill("", "a\n-\n", ""),
		"headings-quoted":  fill("", "> # a\n", ""),
		"linkify":          fill("", "www.a.io ", ""),
		"linkify-email":    " " + fill("", "_a", "@"),
		"html-inline":      fill("x ", "<!--a", ""),
		"html-attributes":  fill("x <a", " b=c", ""),
		"autolinks-open":   fill("", "<a@", ""),
		"hard-breaks":      fill("", "a  \n", ""),
		"items-loose":      fill("", "- a\n\n", ""),
		"plain":            fill("", "word ", ""),
		"code-huge":        fill("```go\n", "x := f(\"a\", 'b', 1.5) // c\n", "```\n"),
		"code-blocks":      fill("", "```go\nx := 1\n```\n", ""),
		"code-unclosed":    fill("", "```go\n`", ""),
		"embeds":           fill("", "https://youtu.be/dQw4w9WgXcQ\n\n", ""),
		"embeds-lookalike": fill("", "https://www.youtube.com/watch?v=dQw4w9WgXc\n\n", ""),
		"image-attrs":      fill("", "![a](http://x.io/a){width=1 height=2}", ""),
		"image-braces":     fill("", "![a](http://x.io/a){width=1 ", ""),
		"footnote-refs":    fill(seq2(MaxFootnotes, func(i int) string { return fmt.Sprintf("[^%d]: n\n", i) })+"\n", "[^99]", ""),
		"footnote-misses":  fill("[^a]: n\n\n", "[^b]", ""),
		"tasks":            fill("", "- [x] a\n", ""),
	}
}

// seq2 joins f(1) to f(n).
func seq2(n int, f func(i int) string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(f(i))
	}
	return b.String()
}

// warmLexers compiles the lexers of the languages highlighted, which
// chroma does once a process, at their first use.
var warmLexers = sync.OnceFunc(func() {
	for lang := range highlightable {
		_, _ = Render(context.Background(), "```"+lang+"\nx\n```", costOptions)
	}
})

// cost renders src and returns what it allocated and how long it took
// (with the lexers compiled before).
func cost(t testing.TB, src string) (alloc uint64, took time.Duration, err error) {
	warmLexers()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err = Render(context.Background(), src, costOptions)
	took = time.Since(start)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, took, err
}

// TestRenderCostIsLinear renders every known bad shape at the largest
// body a post may have: each renders or is refused, allocating at most
// allocPerByte a byte.
func TestRenderCostIsLinear(t *testing.T) {
	all := shapes(maxBody)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range all {
			if !yield(k) {
				return
			}
		}
	}) {
		src := all[name]
		alloc, _, err := cost(t, src)
		if err != nil && !isRefusal(err) {
			t.Errorf("%s: %v", name, err)
		}
		if limit := uint64(allocPerByte*len(src) + allocBase); alloc > limit && !raceDetector {
			t.Errorf("%s: %d bytes allocated for %d bytes of Markdown", name, alloc, len(src))
		}
	}
}

// isRefusal reports whether err is Render refusing the Markdown.
func isRefusal(err error) bool {
	for _, e := range []error{ErrTooLarge, ErrTableTooWide, ErrTooManyCells, ErrTooManyPipes, ErrTooDeep, ErrTooManyMarkers, ErrTooManyBrackets, ErrTooManyNotes} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// FuzzRenderCost looks for Markdown that allocates more than allocPerByte
// a byte, or takes far longer than its length allows (a generous bound:
// the machine may be busy), or fails other than by a refusal.
func FuzzRenderCost(f *testing.F) {
	for _, src := range shapes(2000) {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > maxBody {
			return
		}
		alloc, took, err := cost(t, src)
		if err != nil && !isRefusal(err) {
			t.Fatal(err)
		}
		if limit := uint64(allocPerByte*len(src) + allocBase); alloc > limit && !raceDetector {
			t.Fatalf("%d bytes allocated for %d bytes of Markdown", alloc, len(src))
		}
		if limit := time.Second + time.Duration(len(src))*20*time.Microsecond; took > limit && !raceDetector {
			t.Fatalf("%s for %d bytes of Markdown", took, len(src))
		}
	})
}

// BenchmarkRenderWorstCase renders the worst shapes known at the largest
// body a post may have, reporting the time per KB of Markdown beside the
// bytes allocated.
func BenchmarkRenderWorstCase(b *testing.B) {
	all := shapes(maxBody)
	for _, name := range []string{"table-padding", "table-100-cols", "table-pipes", "quotes-deep", "lists-deep",
		"emphasis-mixed", "emphasis-intra", "brackets-closed", "links-unclosed", "links-title",
		"definitions-open", "headings-same", "headings-setext", "items-loose", "plain",
		"code-huge", "code-blocks", "embeds", "footnote-refs"} {
		src := all[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Render(context.Background(), src, costOptions); err != nil && !isRefusal(err) {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(float64(len(src))/1000), "ns/KB")
		})
	}
}
