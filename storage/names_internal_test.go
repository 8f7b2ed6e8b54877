package storage

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestReaderNamesAreText checks what a token's name claim becomes: plain
// text of one line, without markup or invisible characters, and the same
// when cleaned again, which the invariant checker relies on.
func TestReaderNamesAreText(t *testing.T) {
	cases := []struct{ claim, want string }{
		{"Lin Reader", "Lin Reader"},
		{`Tom & Jerry's "Café"`, `Tom & Jerry's "Café"`},
		{"<img src=x onerror=alert(1)>Eve", "Eve"},
		{"Mallory<script>alert(1)</script>", "Mallory alert(1)"},
		{"＜img src=x onerror=alert(1)＞Trent", "Trent"},
		{"﹤b﹥Walter﹤/b﹥", "Walter"},
		{"Ｐｅｇｇｙ", "Peggy"},
		{"𝐕𝐢𝐜𝐭𝐨𝐫", "Victor"},
		{"a < b > c", "a c"},
		{"<<b>>Oscar", "Oscar"},
		{"Bob\u200b\u200d\ufeff", "Bob"},
		{"\u202eBob\u202c", "Bob"},
		{"\u3164", ""},
		{"Ada\nLovelace\t the\u2028Second ", "Ada Lovelace the Second"},
		{"E\x00ve", ""},
		{"Lin\x1b[31m", ""},
		{"bad \xff byte", "bad byte"},
		{"e\u200b\u0301", "é"},
		{"<b></b>", ""},
		{"   ", ""},
		{strings.Repeat("x", MaxNameLength) + "<b>", strings.Repeat("x", MaxNameLength)},
		{strings.Repeat("é", MaxNameLength+5), strings.Repeat("é", MaxNameLength)},
	}
	for _, c := range cases {
		got, ok := readerName(c.claim)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("readerName(%q) = %q, %t; want %q", c.claim, got, ok, c.want)
		}
		if again, _ := readerName(got); again != got {
			t.Errorf("readerName(%q) = %q, cleaned again %q", c.claim, got, again)
		}
		if utf8.RuneCountInString(got) > MaxNameLength || strings.ContainsAny(got, "<>") {
			t.Errorf("readerName(%q) = %q", c.claim, got)
		}
	}
}

// FuzzReaderName checks that any claim becomes a name readerName keeps as
// it is, of one line, without < or >.
func FuzzReaderName(f *testing.F) {
	for _, s := range []string{"<img src=x onerror=alert(1)>Eve", "＜a＞", "e\u200b\u0301", "\u1100\u200b\u1161"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, claim string) {
		got, ok := readerName(claim)
		if !ok {
			return
		}
		if again, ok := readerName(got); !ok || again != got {
			t.Errorf("readerName(%q) = %q, cleaned again %q", claim, got, again)
		}
		if strings.ContainsAny(got, "<>") || validateLine("name", got, MaxNameLength) != nil {
			t.Errorf("readerName(%q) = %q", claim, got)
		}
	})
}
