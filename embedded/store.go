package embedded

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The layout of the data file, and the reads and writes of items with
// their index and TTL entries.
//
//	"meta"            "format" → layout version
//	"tables"          table name → its definition (JSON of tableDef)
//	"t:<table>"       one bucket per table, holding:
//	    "items"           item key (keys.go) → stored item (codec.go)
//	    "i:<index>"       index key (keys.go) → item key
//	    "ttl"             expiry (8 bytes, big-endian seconds) | item key → ""
//	    "stream", "records", "shards"  its stream, when it has one (streams.go)
//	"tokens"          ClientRequestToken → token record (tokens.go)
//
// Invariants, true after every committed transaction:
//   - an item is in an index exactly when it has every key attribute of
//     the index with the index's types, and its entry's key is built from
//     its current values;
//   - with TTL on, an item is in "ttl" exactly when its TTL attribute is a
//     number from 0 to 2⁶³-1 seconds, under that number's whole seconds;
//     with TTL off the bucket is empty;
//   - every change of an item goes through writer.apply, which keeps the
//     two above in the same bbolt transaction as the item itself, so a
//     reader never sees an item without its entries or the reverse.

const layoutVersion = 1

var (
	bucketMeta   = []byte("meta")
	bucketTables = []byte("tables")
	bucketTokens = []byte("tokens")
	bucketItems  = []byte("items")
	bucketTTL    = []byte("ttl")
	keyFormat    = []byte("format")
)

func tableBucketName(name string) []byte { return []byte("t:" + name) }
func indexBucketName(name string) []byte { return []byte("i:" + name) }

// load creates the top-level buckets of a new file, checks the layout of
// an existing one and reads the table definitions.
func (s *store) load() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		if v := meta.Get(keyFormat); v == nil {
			if err := meta.Put(keyFormat, []byte{layoutVersion}); err != nil {
				return err
			}
		} else if len(v) != 1 || v[0] != layoutVersion {
			return fmt.Errorf("data file layout %v is not %d: written by another version", v, layoutVersion)
		}
		for _, b := range [][]byte{bucketTables, bucketTokens} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketTables).ForEach(func(k, v []byte) error {
			def := &tableDef{}
			if err := json.Unmarshal(v, def); err != nil {
				return fmt.Errorf("table %q: %w", k, err)
			}
			s.tables[def.Name] = def
			return nil
		})
	})
}

// itemChange is one change of an item: its table, its storage key, and
// the item before (nil when it is created) and after (nil when it is
// deleted); ttl marks deletions of expired items. Committed changes are
// what a change feed shows, in the shape of DynamoDB Streams' records.
type itemChange struct {
	def      *tableDef
	key      []byte
	old, new item
	ttl      bool
}

// writer collects the changes of one request inside a write transaction.
// Nothing reaches the transaction until the request's function returned
// without an error, so a request that fails writes nothing.
type writer struct {
	tx      *bolt.Tx
	changes []itemChange
	ops     []func(tx *bolt.Tx) error // changes of tables and tokens
	after   []func()                  // run once the transaction is durable
	now     time.Time                 // the time of the transaction's stream records
}

// put records that the item at key becomes it (old is what was there).
func (w *writer) put(def *tableDef, key []byte, old, it item) {
	w.changes = append(w.changes, itemChange{def: def, key: key, old: old, new: it})
}

// delete records that the item at key (old) goes.
func (w *writer) delete(def *tableDef, key []byte, old item) {
	w.changes = append(w.changes, itemChange{def: def, key: key, old: old})
}

// apply writes the collected changes into the transaction.
func (w *writer) apply() error {
	for _, op := range w.ops {
		if err := op(w.tx); err != nil {
			return err
		}
	}
	for _, c := range w.changes {
		if err := applyChange(w.tx, c, w.now); err != nil {
			return err
		}
	}
	return nil
}

// applyChange writes one item change with its index and TTL entries and
// its stream record.
func applyChange(tx *bolt.Tx, c itemChange, now time.Time) error {
	tb := tx.Bucket(tableBucketName(c.def.Name))
	if tb == nil {
		return fmt.Errorf("table %q has no bucket", c.def.Name)
	}
	items := tb.Bucket(bucketItems)
	if c.new == nil && c.old == nil {
		return nil
	}
	if c.new != nil {
		if err := items.Put(c.key, encodeItem(c.new)); err != nil {
			return err
		}
	} else if err := items.Delete(c.key); err != nil {
		return err
	}
	for i := range c.def.Indexes {
		ix := &c.def.Indexes[i]
		b := tb.Bucket(indexBucketName(ix.Name))
		var oldKey, newKey []byte
		if c.old != nil && ix.inIndex(c.old) {
			oldKey = append(itemKey(nil, ix.keyAttrs(), c.old), c.key...)
		}
		if c.new != nil && ix.inIndex(c.new) {
			newKey = append(itemKey(nil, ix.keyAttrs(), c.new), c.key...)
		}
		if oldKey != nil && !bytes.Equal(oldKey, newKey) {
			if err := b.Delete(oldKey); err != nil {
				return err
			}
		}
		if newKey != nil && !bytes.Equal(oldKey, newKey) {
			if err := b.Put(newKey, c.key); err != nil {
				return err
			}
		}
	}
	if c.def.TTL != "" {
		b := tb.Bucket(bucketTTL)
		oldAt, oldOK := expiry(c.def.TTL, c.old)
		newAt, newOK := expiry(c.def.TTL, c.new)
		if oldOK && (!newOK || oldAt != newAt) {
			if err := b.Delete(ttlKey(oldAt, c.key)); err != nil {
				return err
			}
		}
		if newOK && (!oldOK || oldAt != newAt) {
			if err := b.Put(ttlKey(newAt, c.key), nil); err != nil {
				return err
			}
		}
	}
	return writeRecord(tb, c, now)
}

// expiry returns the whole seconds of the TTL attribute attr of it, if it
// is a number DynamoDB would expire the item by.
func expiry(attr string, it item) (uint64, bool) {
	v, ok := it[attr]
	if !ok || v.kind != kindN {
		return 0, false
	}
	n := v.number()
	if n.neg || n.digits == "" {
		return 0, n.digits == ""
	}
	if n.exp > 19 {
		return 0, false
	}
	whole := n.digits
	if n.exp < len(whole) {
		whole = whole[:max(n.exp, 0)]
	}
	var secs uint64
	for _, c := range whole {
		secs = secs*10 + uint64(c-'0')
	}
	for i := len(whole); i < n.exp; i++ {
		secs *= 10
	}
	if secs > math.MaxInt64 {
		return 0, false
	}
	return secs, true
}

func ttlKey(at uint64, key []byte) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(key)), at)
	return append(b, key...)
}

// items returns the items bucket of a table in tx, or nil when the table
// has gone.
func items(tx *bolt.Tx, table string) *bolt.Bucket {
	tb := tx.Bucket(tableBucketName(table))
	if tb == nil {
		return nil
	}
	return tb.Bucket(bucketItems)
}

// indexBucket returns the bucket of an index in tx, or nil.
func indexBucket(tx *bolt.Tx, table, index string) *bolt.Bucket {
	tb := tx.Bucket(tableBucketName(table))
	if tb == nil {
		return nil
	}
	return tb.Bucket(indexBucketName(index))
}

// getItem returns the item at key in a table, or nil.
func getItem(tx *bolt.Tx, table string, key []byte) (item, error) {
	b := items(tx, table)
	if b == nil {
		return nil, errResourceNotFound()
	}
	raw := b.Get(key)
	if raw == nil {
		return nil, nil
	}
	return decodeItem(raw)
}

// readDef returns the definition of a table as stored in tx, or nil.
func readDef(tx *bolt.Tx, name string) (*tableDef, error) {
	raw := tx.Bucket(bucketTables).Get([]byte(name))
	if raw == nil {
		return nil, nil
	}
	def := &tableDef{}
	if err := json.Unmarshal(raw, def); err != nil {
		return nil, fmt.Errorf("table %q: %w", name, err)
	}
	return def, nil
}

// createTableBuckets makes the buckets of a new table.
func createTableBuckets(tx *bolt.Tx, def *tableDef) error {
	raw, err := json.Marshal(def)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketTables).Put([]byte(def.Name), raw); err != nil {
		return err
	}
	tb, err := tx.CreateBucket(tableBucketName(def.Name))
	if err != nil {
		return err
	}
	if _, err := tb.CreateBucket(bucketItems); err != nil {
		return err
	}
	for _, ix := range def.Indexes {
		if _, err := tb.CreateBucket(indexBucketName(ix.Name)); err != nil {
			return err
		}
	}
	if _, err = tb.CreateBucket(bucketTTL); err != nil {
		return err
	}
	if def.Stream == nil {
		return nil
	}
	return newStream(tb, def.Stream)
}

// deleteTableBuckets removes a table and everything in it.
func deleteTableBuckets(tx *bolt.Tx, name string) error {
	if err := tx.Bucket(bucketTables).Delete([]byte(name)); err != nil {
		return err
	}
	return tx.DeleteBucket(tableBucketName(name))
}

// putDef stores a table's changed definition.
func putDef(tx *bolt.Tx, def *tableDef) error {
	raw, err := json.Marshal(def)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketTables).Put([]byte(def.Name), raw)
}

// setTTL stores a table's new TTL setting and rebuilds its TTL entries.
func setTTL(tx *bolt.Tx, def *tableDef) error {
	if err := putDef(tx, def); err != nil {
		return err
	}
	tb := tx.Bucket(tableBucketName(def.Name))
	if err := tb.DeleteBucket(bucketTTL); err != nil {
		return err
	}
	ttl, err := tb.CreateBucket(bucketTTL)
	if err != nil || def.TTL == "" {
		return err
	}
	return tb.Bucket(bucketItems).ForEach(func(k, v []byte) error {
		it, err := decodeItem(v)
		if err != nil {
			return err
		}
		if at, ok := expiry(def.TTL, it); ok {
			return ttl.Put(ttlKey(at, k), nil)
		}
		return nil
	})
}

// stats counts the items of a table and each of its indexes and sums the
// table's item sizes.
func stats(tx *bolt.Tx, def *tableDef) (map[string]tableStats, error) {
	out := map[string]tableStats{}
	tb := tx.Bucket(tableBucketName(def.Name))
	if tb == nil {
		return nil, errResourceNotFound()
	}
	var all tableStats
	itemsB := tb.Bucket(bucketItems)
	err := itemsB.ForEach(func(k, v []byte) error {
		n, err := storedSize(v)
		all.items++
		all.bytes += int64(n)
		return err
	})
	if err != nil {
		return nil, err
	}
	out[""] = all
	for _, ix := range def.Indexes {
		var st tableStats
		err := tb.Bucket(indexBucketName(ix.Name)).ForEach(func(k, v []byte) error {
			n, err := storedSize(itemsB.Get(v))
			st.items++
			st.bytes += int64(n)
			return err
		})
		if err != nil {
			return nil, err
		}
		out[ix.Name] = st
	}
	return out, nil
}
