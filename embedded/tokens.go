package embedded

import (
	"crypto/sha256"
	"encoding/json"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Idempotency tokens of TransactWriteItems (ClientRequestToken).
//
// Invariants:
//   - a token is recorded in the same transaction as the writes of the
//     request that used it, and only when that request succeeded, so a
//     cancelled transaction can be sent again with its token;
//   - for tokenTTL after that, the same token with the same request (the
//     same actions and values, whatever the order of their maps) answers
//     as the first did and writes nothing; with another request it is
//     IdempotentParameterMismatchException;
//   - after tokenTTL the token is new again; the sweeper removes expired
//     records.

// tokenTTL is how long DynamoDB keeps a ClientRequestToken.
const tokenTTL = 10 * time.Minute

// tokenRecord is what the data file keeps of a token.
type tokenRecord struct {
	Hash     []byte           `json:"hash"`
	Expires  int64            `json:"expires"` // Unix nanoseconds
	Capacity []recordCapacity `json:"capacity,omitempty"`
}

// recordCapacity is the capacity a recorded request consumed on a table.
type recordCapacity struct {
	Table   string             `json:"table"`
	Total   float64            `json:"total"`
	OfTable float64            `json:"ofTable"`
	Global  map[string]float64 `json:"global,omitempty"`
	Local   map[string]float64 `json:"local,omitempty"`
}

// requestHash returns a hash of the parts of a request that decide what it
// does, independent of the order of maps in its JSON.
func requestHash(parts ...any) []byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write(canonical(nil, p))
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}

// canonical appends a form of v in which maps are written in key order.
func canonical(b []byte, v any) []byte {
	switch x := v.(type) {
	case item:
		return canonicalValue(b, value{kind: kindM, m: x})
	case value:
		return canonicalValue(b, x)
	case exprValues:
		keys := sortedKeys(x)
		for _, k := range keys {
			b = append(b, k...)
			b = append(b, '=')
			b = canonicalValue(b, x[k].v)
			b = append(b, ';')
		}
		return b
	case map[string]string:
		keys := sortedKeys(x)
		for _, k := range keys {
			b = append(b, k...)
			b = append(b, '=')
			b = append(b, x[k]...)
			b = append(b, ';')
		}
		return b
	case []transactWriteItem:
		for _, a := range x {
			b = canonical(b, a)
			b = append(b, '|')
		}
		return b
	case transactWriteItem:
		switch {
		case x.Put != nil:
			return canonical(append(b, "Put"...), []any{x.Put.TableName, x.Put.Item, x.Put.ConditionExpression, x.Put.ExpressionAttributeNames, x.Put.ExpressionAttributeValues, x.Put.ReturnValuesOnConditionCheckFailure})
		case x.Update != nil:
			u := x.Update
			return canonical(append(b, "Update"...), []any{u.TableName, u.Key, u.UpdateExpression, u.ConditionExpression, u.ExpressionAttributeNames, u.ExpressionAttributeValues, u.ReturnValuesOnConditionCheckFailure})
		case x.Delete != nil:
			return canonical(append(b, "Delete"...), checkParts(x.Delete))
		case x.ConditionCheck != nil:
			return canonical(append(b, "ConditionCheck"...), checkParts(x.ConditionCheck))
		}
		return b
	case []any:
		for _, e := range x {
			b = canonical(b, e)
			b = append(b, 0)
		}
		return b
	case *string:
		if x == nil {
			return append(b, 0xFF)
		}
		return append(b, *x...)
	case string:
		return append(b, x...)
	}
	raw, _ := json.Marshal(v)
	return append(b, raw...)
}

func checkParts(c *conditionCheck) []any {
	return []any{c.TableName, c.Key, c.ConditionExpression, c.ExpressionAttributeNames, c.ExpressionAttributeValues, c.ReturnValuesOnConditionCheckFailure}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func canonicalValue(b []byte, v value) []byte {
	b = append(b, byte(v.kind))
	switch v.kind {
	case kindM:
		for _, k := range sortedKeys(v.m) {
			b = appendBytes(b, k)
			b = canonicalValue(b, v.m[k])
		}
		return append(b, 0)
	case kindL:
		for _, e := range v.list {
			b = canonicalValue(b, e)
		}
		return append(b, 0)
	case kindSS, kindNS, kindBS:
		set := slices.Clone(v.set)
		slices.Sort(set)
		for _, e := range set {
			b = appendBytes(b, e)
		}
		return append(b, 0)
	}
	return appendStored(b, v)
}

// lookupToken returns the live record of a token in tx, or nil.
func lookupToken(tx *bolt.Tx, token string, now time.Time) (*tokenRecord, error) {
	raw := tx.Bucket(bucketTokens).Get([]byte(token))
	if raw == nil {
		return nil, nil
	}
	rec := &tokenRecord{}
	if err := json.Unmarshal(raw, rec); err != nil {
		return nil, err
	}
	if rec.Expires <= now.UnixNano() {
		return nil, nil
	}
	return rec, nil
}

// saveToken records a token with the hash of its request and the capacity
// it consumed.
func saveToken(tx *bolt.Tx, token string, rec *tokenRecord) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketTokens).Put([]byte(token), raw)
}

// sweepTokens removes the records of expired tokens, at most limit, and
// returns how many it removed.
func sweepTokens(tx *bolt.Tx, now time.Time, limit int) (int, error) {
	b := tx.Bucket(bucketTokens)
	var expired [][]byte
	err := b.ForEach(func(k, v []byte) error {
		if len(expired) >= limit {
			return nil
		}
		var rec tokenRecord
		if err := json.Unmarshal(v, &rec); err != nil || rec.Expires <= now.UnixNano() {
			expired = append(expired, append([]byte(nil), k...))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, k := range expired {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(expired), nil
}

// record returns the capacities as a token record keeps them.
func (cs *capacities) record() []recordCapacity {
	var out []recordCapacity
	for _, c := range cs.order {
		out = append(out, recordCapacity{Table: c.table, Total: c.total, OfTable: c.ofTable, Global: c.global, Local: c.local})
	}
	return out
}

// restore returns the capacities a token record kept.
func restoreCapacities(rs []recordCapacity) capacities {
	var cs capacities
	for _, r := range rs {
		cs.order = append(cs.order, &consumed{table: r.Table, total: r.Total, ofTable: r.OfTable, global: r.Global, local: r.Local})
	}
	return cs
}
