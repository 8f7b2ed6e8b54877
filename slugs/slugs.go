// Package slugs makes and checks the slugs of posts, pages, authors,
// categories, tags and series: words of letters, marks and digits of any
// script joined by single hyphens, in Unicode normalization form C and
// lower case. A slug made from a name keeps the name's script, except
// that Latin letters lose their accents ("Café" is "cafe", "Straße" is
// "strasse", as slugs always were); with transliteration, every script
// is written in Latin letters ("Привет мир" is "privet-mir").
//
// A slug may not mix look-alike scripts within a word: after Unicode
// TR39's "highly restrictive" level, a word is of one script, besides
// Common and Inherited characters, or of Latin, Han, Hiragana and
// Katakana (Japanese), Latin, Han and Hangul (Korean) or Latin, Han and
// Bopomofo (Chinese). "pаypal" with a Cyrillic а is refused.
package slugs

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gosimple/slug"
	"golang.org/x/text/cases"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

// Bounds of a slug, in characters (runes) and in bytes of UTF-8. A slug
// of 100 Latin, Cyrillic or Han characters fits both; the byte bound
// keeps every key that holds a slug (SLUG#<slug>, CAT#<slug>…, at most
// about 360 bytes with their prefixes) far below DynamoDB's 1024 bytes
// for a sort key, and a slug percent-encoded in a URL at most 900
// characters.
const (
	MaxRunes = 100
	MaxBytes = 300
)

var lower = cases.Lower(language.Und)

// Check returns nil when s is a slug, else an error that says why, as a
// phrase that follows "the slug " or a field's name.
func Check(s string) error {
	switch {
	case s == "" || !utf8.ValidString(s):
		return errShape
	case strings.ContainsFunc(s, hidden):
		return errors.New("must not contain control, format, invisible or text direction characters")
	case utf8.RuneCountInString(s) > MaxRunes || len(s) > MaxBytes:
		return fmt.Errorf("must be at most %d characters and %d bytes of UTF-8", MaxRunes, MaxBytes)
	case !norm.NFC.IsNormalString(s):
		return errors.New("must be in Unicode normalization form C (NFC), as a slug made from the same text is")
	case lower.String(s) != s:
		return errors.New("must be lower case")
	}
	for word := range strings.SplitSeq(s, "-") {
		if word == "" {
			return errShape
		}
		for i, r := range word {
			if !unicode.In(r, unicode.L, unicode.M, unicode.Nd) || (i == 0 && unicode.In(r, unicode.M)) {
				return errShape
			}
		}
		if a, b, mixed := mixedScripts(word); mixed {
			return fmt.Errorf("must not mix the %s and %s scripts in one word (%q), as look-alike spellings of other names do", a, b, word)
		}
	}
	return nil
}

var errShape = fmt.Errorf("must be 1 to %d letters, marks and digits (of any script, lower case) in words joined by single hyphens", MaxRunes)

// hidden reports whether r has no place in a slug whatever its place:
// a control, format (bidi controls and zero-width joiners among them),
// default-ignorable or separator character.
func hidden(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs, unicode.Zl, unicode.Zp, unicode.Bidi_Control, unicode.Other_Default_Ignorable_Code_Point) ||
		r == utf8.RuneError
}

// Make returns the slug of name, cut to MaxRunes and MaxBytes, or "" when
// name has no letter or digit. With latin, name is transliterated to
// Latin letters first. What Make returns may still fail Check for mixing
// scripts in a word.
func Make(name string, latin bool) string {
	if latin && !isASCII(name) {
		name = transliterate(name)
	}
	// Compatibility forms fold (full-width letters, ligatures), then the
	// decomposed form shows a Latin letter's accents as marks to drop.
	decomposed := norm.NFKD.String(lower.String(norm.NFKC.String(name)))
	var b strings.Builder
	hyphen, latinBase, inWord := false, false, false
	for _, r := range decomposed {
		switch {
		case unicode.In(r, unicode.M):
			if inWord && !latinBase {
				b.WriteRune(r)
			}
		case hidden(r):
		case r == 'ß' || unicode.In(r, unicode.L, unicode.Nd):
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen, inWord, latinBase = false, true, unicode.Is(unicode.Latin, r)
			if r == 'ß' {
				b.WriteString("ss")
			} else {
				b.WriteRune(r)
			}
		default:
			hyphen, inWord = true, false
		}
	}
	return Cut(norm.NFC.String(b.String()), MaxRunes, MaxBytes)
}

// Cut returns s within runes characters and bytes bytes, without a
// trailing hyphen.
func Cut(s string, runes, bytes int) string {
	n, end := 0, 0
	for i, r := range s {
		if n == runes || i+utf8.RuneLen(r) > bytes {
			break
		}
		n, end = n+1, i+utf8.RuneLen(r)
	}
	return strings.TrimRight(s[:end], "-")
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// transliterate writes name's non-ASCII runs in Latin letters with
// gosimple/slug, and leaves its ASCII as it is, so a name of ASCII makes
// the same slug with transliteration or without ("&" stays a separator).
func transliterate(name string) string {
	var b strings.Builder
	for name != "" {
		i := strings.IndexFunc(name, func(r rune) bool { return r >= utf8.RuneSelf })
		if i < 0 {
			b.WriteString(name)
			break
		}
		b.WriteString(name[:i])
		name = name[i:]
		j := strings.IndexFunc(name, func(r rune) bool { return r < utf8.RuneSelf })
		if j < 0 {
			j = len(name)
		}
		if t := slug.Make(name[:j]); t != "" {
			b.WriteString(t)
		} else {
			b.WriteByte(' ') // punctuation, symbols: a separator
		}
		name = name[j:]
	}
	return b.String()
}

// Canonical returns s as a slug is stored: in NFC and lower case by
// Unicode's rules, so that a decomposed or upper-case form of a slug
// ("Cafe\u0301", "ПРИВЕТ") names the slug ("café", "привет"). A lookup
// checks what Canonical returns; a slug of a-z, 0-9 and hyphens is itself.
func Canonical(s string) string {
	if isASCII(s) && !strings.ContainsFunc(s, func(r rune) bool { return 'A' <= r && r <= 'Z' }) {
		return s
	}
	return norm.NFC.String(lower.String(norm.NFC.String(s)))
}
