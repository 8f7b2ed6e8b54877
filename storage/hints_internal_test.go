package storage

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/keys"
)

// TestHintsStayWithinTheirBounds fills the hints with more and larger
// comments than they hold: they keep at most maxHintBytes and maxHints of
// a kind, what they keep is recalled as it was put, and a comment put
// again replaces what was remembered of it.
func TestHintsStayWithinTheirBounds(t *testing.T) {
	h := newHints()
	body := strings.Repeat("x", 100_000)
	comment := func(i int, body string) (key, item) {
		k := key{PK: "POST#p", SK: fmt.Sprintf("COMMENT#%05d", i)}
		return k, item{
			keys.AttrPK: &types.AttributeValueMemberS{Value: k.PK}, keys.AttrSK: &types.AttributeValueMemberS{Value: k.SK},
			"type": &types.AttributeValueMemberS{Value: typeComment},
			"body": &types.AttributeValueMemberS{Value: body},
		}
	}
	for i := range 1000 {
		h.Saw(comment(i, body))
		if h.bytes > maxHintBytes {
			t.Fatalf("after %d comments of 100 KB: %d bytes of hints, bound %d", i+1, h.bytes, maxHintBytes)
		}
	}
	if n := len(h.items); n == 0 || n > maxHintBytes/100_000 {
		t.Errorf("%d comments of 100 KB remembered, want some and at most %d", n, maxHintBytes/100_000)
	}
	for i := range maxHints + 100 {
		h.Saw(comment(i, "short"))
	}
	if h.kinds[typeComment] != maxHints || len(h.items) != maxHints {
		t.Errorf("%d comments remembered (%d items), want the bound %d", h.kinds[typeComment], len(h.items), maxHints)
	}
	total := 0
	for _, v := range h.items {
		total += v.size
	}
	if total != h.bytes {
		t.Errorf("hints count %d bytes, their items take %d", h.bytes, total)
	}
	k, it := comment(7, "again")
	h.Saw(k, it)
	found, ok := h.recall([]key{k}, func(key) bool { return true })
	if !ok || found[k]["body"].(*types.AttributeValueMemberS).Value != "again" {
		t.Errorf("recall of a comment put again = %v, %v", found[k], ok)
	}
}
