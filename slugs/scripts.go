package slugs

import (
	"sort"
	"unicode"
)

// scripts are the script tables of the unicode package but Common and
// Inherited, which go with any script, by name for a stable order.
var scripts = func() []string {
	var out []string
	for name := range unicode.Scripts {
		if name != "Common" && name != "Inherited" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}()

// scriptOf returns the script of r, or "" for Common, Inherited and
// unassigned characters.
func scriptOf(r rune) string {
	if r < 0x80 {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			return "Latin"
		}
		return ""
	}
	for _, name := range scripts {
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	return ""
}

// together are the sets of scripts that one word may mix: the writing
// systems of Japanese, Korean and Chinese, each with Latin (TR39's
// highly restrictive level).
var together = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Hangul"},
	{"Latin", "Han", "Bopomofo"},
}

// mixedScripts reports whether word mixes scripts that no set of together
// holds, and two of them.
func mixedScripts(word string) (a, b string, mixed bool) {
	var seen []string
	for _, r := range word {
		if s := scriptOf(r); s != "" && !contains(seen, s) {
			seen = append(seen, s)
		}
	}
	if len(seen) < 2 {
		return "", "", false
	}
	for _, set := range together {
		if subset(seen, set) {
			return "", "", false
		}
	}
	return seen[0], seen[1], true
}

func subset(of, set []string) bool {
	for _, s := range of {
		if !contains(set, s) {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
