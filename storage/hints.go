package storage

import (
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Hints: what this server last saw of the items a comment's transaction
// depends on, so that adding a comment is one TransactWriteItems instead
// of a read and a transaction.
//
// A comment's transaction needs the post's count item (its status,
// publication time and author: postparts.go), whether its author id
// names an author, the reader's profile and rate item, and for a reply
// the parent comment. The store remembers the last of each it read or
// wrote, and a comment whose items are all remembered is written from
// them without a read. Nothing remembered is trusted: every action of the
// transaction is guarded by a condition on what it assumed (the post's
// status and publication time, the parent's version, the rate item's version,
// the reader's profile, and attribute_not_exists for what it assumed
// missing), and asks for the item as it is when that condition fails
// (ReturnValuesOnConditionCheckFailure ALL_OLD). A stale hint costs one
// cancelled transaction, whose cancellation reasons bring the current
// items, and the write is built again from them. What a hint would refuse
// (a post no longer visible, a deleted parent, a reader over the rate
// limit) is read again before it is refused, so errors are always those
// of a consistent read. Authors are never deleted, so an author id once
// seen stays one.
//
// Hints are bounded (maxHints of each kind and maxHintBytes in all, an
// arbitrary one dropped to make room) and belong to one Store value and
// the copies At makes of it.

// maxHints bounds each kind of hint.
const maxHints = 4096

// maxHintBytes bounds the size of all hints' attributes together: a
// comment that carries its first replies can take 100 KB.
const maxHintBytes = 32 << 20

// hints holds the items remembered, by key. Only the attributes a
// comment's transaction needs are kept of a post.
type hints struct {
	mu    sync.Mutex
	items map[key]hint
	kinds map[string]int // number of items of each type, for the bound
	bytes int            // the size of every hint, for the bound
}

// hint is a remembered item and its size.
type hint struct {
	item item
	size int
}

func newHints() *hints {
	return &hints{items: map[key]hint{}, kinds: map[string]int{}}
}

// hinted are the item types a comment's transaction depends on.
var hinted = map[string]bool{typePostCount: true, typeAuthor: true, typeReader: true, typeRate: true, typeComment: true}

// Remember keeps the items of found whose types a comment's transaction
// depends on, and forgets those of keys that found does not hold.
func (h *hints) Remember(ks []key, found map[key]item) {
	if !slices.ContainsFunc(ks, func(k key) bool { it, ok := found[k]; return !ok || hinted[itemType(it)] }) {
		return // nothing to keep or forget: no lock taken on the path of most reads
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range ks {
		if it, ok := found[k]; ok {
			h.put(k, it)
		} else {
			h.forget(k)
		}
	}
}

// Saw keeps it, the item under k as a read found it, or forgets k when it
// is nil: there is no such item.
func (h *hints) Saw(k key, it item) {
	if it != nil && !hinted[itemType(it)] {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if it == nil {
		h.forget(k)
		return
	}
	h.put(k, it)
}

// put keeps it under k when its type is hinted; the caller holds mu.
func (h *hints) put(k key, it item) {
	kind := itemType(it)
	if !hinted[kind] {
		return
	}
	h.forget(k)
	if h.kinds[kind] >= maxHints {
		for other, v := range h.items { // an arbitrary one of its kind
			if itemType(v.item) == kind {
				h.forget(other)
				break
			}
		}
	}
	size := itemBytes(it)
	for other := range h.items { // arbitrary ones, until it fits
		if h.bytes+size <= maxHintBytes {
			break
		}
		h.forget(other)
	}
	if h.bytes+size > maxHintBytes {
		return // larger than the bound on its own
	}
	h.kinds[kind]++
	h.bytes += size
	h.items[k] = hint{item: it, size: size}
}

// forget drops what is remembered of k; the caller holds mu.
func (h *hints) forget(k key) {
	if v, ok := h.items[k]; ok {
		h.kinds[itemType(v.item)]--
		h.bytes -= v.size
		delete(h.items, k)
	}
}

// recall returns the remembered items of keys, and whether every key
// that required names is among them; the others may be missing, which
// stands for "no such item".
func (h *hints) recall(ks []key, required func(key) bool) (map[key]item, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	found := make(map[key]item, len(ks))
	for _, k := range ks {
		if v, ok := h.items[k]; ok {
			found[k] = v.item
		} else if required(k) {
			return nil, false
		}
	}
	return found, true
}

// Learn keeps what the cancellation of a transaction showed of the items
// whose conditions failed: the item as it is, or, when none came back,
// that it is missing.
func (h *hints) Learn(actions []types.TransactWriteItem, reasons []types.CancellationReason) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, r := range reasons {
		if i >= len(actions) || r.Code == nil || *r.Code != "ConditionalCheckFailed" {
			continue
		}
		k, ok := actionKey(actions[i])
		if !ok {
			continue
		}
		if r.Item != nil {
			h.put(k, r.Item)
		} else {
			h.forget(k)
		}
	}
}

// Wrote keeps the items a transaction put and forgets those it deleted,
// now that it has succeeded. An update leaves what is remembered: no update changes
// what a comment's transaction depends on without a condition that a
// stale hint fails.
func (h *hints) Wrote(actions []types.TransactWriteItem) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, a := range actions {
		if a.Put == nil && a.Delete == nil {
			continue
		}
		k, ok := actionKey(a)
		switch {
		case !ok:
		case a.Put != nil:
			h.put(k, a.Put.Item)
		default:
			h.forget(k)
		}
	}
}

// itemBytes returns about how much memory the attributes of it take.
func itemBytes(it item) int {
	n := 0
	for name, v := range it {
		n += len(name) + valueBytes(v)
	}
	return n
}

// valueBytes returns about how much memory an attribute value takes.
func valueBytes(v types.AttributeValue) int {
	const overhead = 16
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return overhead + len(v.Value)
	case *types.AttributeValueMemberN:
		return overhead + len(v.Value)
	case *types.AttributeValueMemberB:
		return overhead + len(v.Value)
	case *types.AttributeValueMemberSS:
		n := overhead
		for _, s := range v.Value {
			n += overhead + len(s)
		}
		return n
	case *types.AttributeValueMemberL:
		n := overhead
		for _, e := range v.Value {
			n += valueBytes(e)
		}
		return n
	case *types.AttributeValueMemberM:
		return overhead + itemBytes(v.Value)
	}
	return overhead
}

// itemType returns the "type" attribute of it.
func itemType(it item) string {
	if v, ok := it["type"].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// actionKey returns the key of the item a transaction's action writes or
// checks.
func actionKey(a types.TransactWriteItem) (key, bool) {
	var av map[string]types.AttributeValue
	switch {
	case a.Put != nil:
		av = a.Put.Item
	case a.Update != nil:
		av = a.Update.Key
	case a.Delete != nil:
		av = a.Delete.Key
	case a.ConditionCheck != nil:
		av = a.ConditionCheck.Key
	}
	var k key
	if err := attributevalue.UnmarshalMap(av, &k); err != nil || k.PK == "" {
		return key{}, false
	}
	return k, true
}
