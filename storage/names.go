package storage

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// A reader's display name comes from their token's name claim, which the
// identity provider lets a person type freely. It is shown as plain text
// beside their comments, so it is made fit for that before it is kept:
//
//   - normalised to NFKC, so look-alike forms (fullwidth ＜ and Ａ, small
//     ﹤, mathematical 𝐀, ligatures) become the characters they look
//     like and are handled as those;
//   - HTML tags (<…>) are removed, and so are the < and > left over: a
//     name holds no markup, whether or not a frontend escapes it;
//   - format (zero-width, bidirectional), variation-selector and other
//     default-ignorable characters are removed: they are invisible, or
//     change how the text around them reads;
//   - every run of white space, line breaks included, is one space, and
//     none leads or trails.
//
// What is left is cut to MaxNameLength characters. A claim with a control
// character other than white space (a terminal's escape sequence, a NUL)
// is not a name someone typed, and a claim with nothing left is no name
// either: the reader keeps the name already kept (DefaultReaderName for a
// new reader). Confusable letters of other scripts (a Cyrillic а for a
// Latin a) are not folded.

// markupTag matches an HTML tag, or anything written like one.
var markupTag = regexp.MustCompile(`<[^<>]*>`)

// readerName returns the display name a token's name claim gives, made
// fit to show as above, and false when nothing is left.
func readerName(claim string) (string, bool) {
	name := cleanName(claim)
	if utf8.RuneCountInString(name) > MaxNameLength {
		name = strings.TrimSpace(string([]rune(name)[:MaxNameLength]))
	}
	// Removing a character can bring two others together that NFKC
	// composes: a second pass settles them.
	name = cleanName(name)
	return name, name != "" && validateLine("name", name, MaxNameLength) == nil
}

// cleanName applies the rules above but the length; "" when nothing is
// left, or the claim is refused.
func cleanName(s string) string {
	s = norm.NFKC.String(strings.ToValidUTF8(s, ""))
	s = markupTag.ReplaceAllString(s, " ")
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
		case unicode.IsControl(r):
			return ""
		case r == '<' || r == '>' || unwantedInName(r):
		default:
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(r)
		}
	}
	return norm.NFKC.String(b.String())
}

// unwantedInName reports whether r has no place in a name shown as text:
// a format character, a variation selector, another character Unicode
// says to ignore when it is not supported, or one that stood for bytes
// that were no UTF-8.
func unwantedInName(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) || r == utf8.RuneError
}

// shownName returns a name kept before readerName cleaned claims as it
// cleans them now, or DefaultReaderName when nothing is left of it.
func shownName(kept string) string {
	if name, ok := readerName(kept); ok {
		return name
	}
	return DefaultReaderName
}
