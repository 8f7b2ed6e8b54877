package dynamo

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The tenant guard: an in-process dynamodb:LeadingKeys. A Table confined
// to a publication (Confine) checks every partition key a request names
// before the request leaves the process: the keys of GetItem, PutItem,
// UpdateItem and DeleteItem, of every request of a BatchGetItem or
// BatchWriteItem and every action of a TransactGetItems or
// TransactWriteItems, an item's GSI1 partition where a put writes one,
// and the partition key (table or GSI1) of a Query's key condition. Each
// must start with the publication's prefix or be one of the global key
// families. A request that fails is never made: it returns
// ErrOutsideSpace and counts one violation (Violations). A Scan names no
// key: its answer is cut to the items the guard lets through, so a
// publication's reader never sees another's item.
//
// The guard checks keys, not expressions: an update that SETs a GSI1
// partition is the caller's to build from its own key space.

// ErrOutsideSpace means a request named a key outside its publication's
// space and was not made.
var ErrOutsideSpace = errors.New("a key outside the publication's space")

// violations counts the requests the guard refused, over every Table.
var violations atomic.Int64

// Violations returns how many requests the tenant guard refused since the
// process started.
func Violations() int64 { return violations.Load() }

// guard is a Table's confinement to one key space.
type guard struct {
	prefix string
	global []string
}

// Confine returns a Table on the same client, name and watcher whose
// requests may touch only partition keys that start with prefix, or with
// one of global (key families that belong to no publication). An empty
// prefix is a programming error and panics.
func (t *Table) Confine(prefix string, global []string) *Table {
	if prefix == "" {
		panic("dynamo: Confine with an empty prefix")
	}
	c := *t
	c.guard = &guard{prefix: prefix, global: global}
	return &c
}

// Unconfined returns a Table on the same client, name and watcher without
// the guard: the layout migration, which moves items between spaces,
// table administration, and the platform's reads of each publication's
// own item across publications (storage.PublicationLocales) use it.
func (t *Table) Unconfined() *Table {
	c := *t
	c.guard = nil
	return &c
}

// allows reports whether the guard lets a request touch partition pk.
func (g *guard) allows(pk string) bool {
	if strings.HasPrefix(pk, g.prefix) {
		return true
	}
	for _, f := range g.global {
		if strings.HasPrefix(pk, f) {
			return true
		}
	}
	return false
}

// refuse counts a violation and returns its error, naming the key.
func (g *guard) refuse(op, pk string) error {
	violations.Add(1)
	return fmt.Errorf("%s %q: %w", op, pk, ErrOutsideSpace)
}

// partitions returns the partition keys an item (or a key) names: its PK,
// and its GSI1 partition when it has one. An attribute that is missing
// (PK) or not a string is "", which no space allows.
func partitions(it map[string]types.AttributeValue) []string {
	str := func(a string) string {
		s, _ := it[a].(*types.AttributeValueMemberS)
		if s == nil {
			return ""
		}
		return s.Value
	}
	if _, ok := it[attrGSI1PK]; ok {
		return []string{str(attrPK), str(attrGSI1PK)}
	}
	return []string{str(attrPK)}
}

// checkItems checks the partitions of each item or key.
func (g *guard) checkItems(op string, items ...map[string]types.AttributeValue) error {
	if g == nil {
		return nil
	}
	for _, it := range items {
		for _, pk := range partitions(it) {
			if !g.allows(pk) {
				return g.refuse(op, pk)
			}
		}
	}
	return nil
}

// equality finds "<name> = <value>" in a key condition, as the expression
// builder writes it (with or without the parentheses around each part).
var equality = regexp.MustCompile(`(#\w+) = (:\w+)`)

// checkQuery checks the partition key of a Query's key condition: the
// value it equals PK (or GSI1PK) to. A condition the guard cannot read is
// refused.
func (g *guard) checkQuery(in *dynamodb.QueryInput) error {
	if g == nil {
		return nil
	}
	key := attrPK
	if in.IndexName != nil {
		key = attrGSI1PK
	}
	cond := ""
	if in.KeyConditionExpression != nil {
		cond = *in.KeyConditionExpression
	}
	for _, m := range equality.FindAllStringSubmatch(cond, -1) {
		if in.ExpressionAttributeNames[m[1]] != key {
			continue
		}
		v, ok := in.ExpressionAttributeValues[m[2]].(*types.AttributeValueMemberS)
		if !ok || !g.allows(v.Value) {
			pk := ""
			if ok {
				pk = v.Value
			}
			return g.refuse("Query", pk)
		}
		return nil
	}
	return g.refuse("Query", cond)
}

// checkBatchGet checks every key of every table of a BatchGetItem.
func (g *guard) checkBatchGet(in *dynamodb.BatchGetItemInput) error {
	if g == nil {
		return nil
	}
	for _, ka := range in.RequestItems {
		if err := g.checkItems("BatchGetItem", ka.Keys...); err != nil {
			return err
		}
	}
	return nil
}

// checkBatchWrite checks every put and delete of a BatchWriteItem.
func (g *guard) checkBatchWrite(in *dynamodb.BatchWriteItemInput) error {
	if g == nil {
		return nil
	}
	for _, ws := range in.RequestItems {
		for _, w := range ws {
			var err error
			switch {
			case w.PutRequest != nil:
				err = g.checkItems("BatchWriteItem", w.PutRequest.Item)
			case w.DeleteRequest != nil:
				err = g.checkItems("BatchWriteItem", w.DeleteRequest.Key)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// checkTransactGet checks every Get of a TransactGetItems.
func (g *guard) checkTransactGet(in *dynamodb.TransactGetItemsInput) error {
	if g == nil {
		return nil
	}
	for _, a := range in.TransactItems {
		if a.Get != nil {
			if err := g.checkItems("TransactGetItems", a.Get.Key); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkTransactWrite checks every action of a TransactWriteItems.
func (g *guard) checkTransactWrite(in *dynamodb.TransactWriteItemsInput) error {
	if g == nil {
		return nil
	}
	const op = "TransactWriteItems"
	for _, a := range in.TransactItems {
		var err error
		switch {
		case a.Put != nil:
			err = g.checkItems(op, a.Put.Item)
		case a.Update != nil:
			err = g.checkItems(op, a.Update.Key)
		case a.Delete != nil:
			err = g.checkItems(op, a.Delete.Key)
		case a.ConditionCheck != nil:
			err = g.checkItems(op, a.ConditionCheck.Key)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// filterScan drops from a Scan's answer the items the guard does not let
// through, counting none as a violation: a Scan asks for no key.
func (g *guard) filterScan(out *dynamodb.ScanOutput) {
	if g == nil || out == nil {
		return
	}
	kept := out.Items[:0]
	for _, it := range out.Items {
		if g.checkItemsQuiet(it) {
			kept = append(kept, it)
		}
	}
	out.Items = kept
	out.Count = int32(len(kept))
}

// checkItemsQuiet reports whether the guard lets it through, counting
// nothing.
func (g *guard) checkItemsQuiet(it map[string]types.AttributeValue) bool {
	s, ok := it[attrPK].(*types.AttributeValueMemberS)
	return ok && g.allows(s.Value)
}
