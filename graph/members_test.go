package graph

import (
	"bytes"
	"encoding/csv"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// TestMemberRowQuotes: a cell with a quote, a comma or a line break is
// quoted as RFC 4180 says, and one that would start a formula is text.
func TestMemberRowQuotes(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := &storage.Member{AccountID: "a1", Email: `"odd, one"@example.com`, EmailVerified: true, Tier: storage.TierFree,
		Newsletters: []string{"=HYPERLINK(\"x\")", "line\nbreak"}, CreatedAt: at, LastSeenAt: at}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = true
	_ = w.Write(memberRow(m))
	w.Flush()
	want := "a1,\"\"\"odd, one\"\"@example.com\",true,FREE,\"'=HYPERLINK(\"\"x\"\") line\r\nbreak\",2026-01-02T03:04:05Z,2026-01-02T03:04:05Z\r\n"
	if b.String() != want {
		t.Errorf("row = %q, want %q", b.String(), want)
	}
	for in, want := range map[string]string{"=1+1": "'=1+1", "+1": "'+1", "-1": "'-1", "@SUM(A1)": "'@SUM(A1)", "a=b": "a=b", "": ""} {
		if got := safeCell(in); got != want {
			t.Errorf("safeCell(%q) = %q, want %q", in, got, want)
		}
	}
}
