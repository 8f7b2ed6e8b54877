package embedded

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"runtime"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Time to live: a sweeper deletes the items whose TTL attribute lies in
// the past, in the background, as DynamoDB does, and drops expired
// idempotency tokens.
//
// Invariants:
//   - an item is deleted only if, in the transaction that deletes it, its
//     TTL attribute still says it expired: a write that gave it a new
//     time meanwhile keeps it;
//   - as in DynamoDB, an item whose time is more than five years in the
//     past is never deleted (a TTL attribute holding something else than
//     seconds, such as milliseconds, is mistaken for a far-off past);
//   - expired items stay readable until the sweeper deletes them, as in
//     DynamoDB, where that can take days; here it takes one TTLInterval;
//   - deletions go through the committer, so the change feed sees them,
//     marked ttl, like DynamoDB Streams' deletions by the service;
//   - the same sweep deletes stream records older than the retention, and
//     disabled streams the retention after they were disabled.

// trimStreams deletes the stream records older than the retention, in
// batches.
func (s *store) trimStreams() error {
	s.mu.RLock()
	var defs []*tableDef
	for _, d := range s.tables {
		if d.Stream != nil {
			defs = append(defs, d)
		}
	}
	s.mu.RUnlock()
	for len(defs) > 0 {
		n := 0
		err := s.commits.do(func(w *writer) error {
			w.ops = append(w.ops, func(tx *bolt.Tx) error {
				var err error
				n, err = trimStreams(tx, defs, s.now().Add(-s.retention), 10*sweepBatch)
				if err != nil {
					return err
				}
				changed, err := dropOldStreams(tx, defs, s.now(), s.retention)
				for _, def := range changed {
					w.after = append(w.after, func() { s.setTable(def.Name, def) })
				}
				return err
			})
			return nil
		})
		if err != nil || n < 10*sweepBatch {
			return err
		}
	}
	return nil
}

// sweepBatch bounds the deletions of one transaction.
const sweepBatch = 500

// maxExpiredAge is how far in the past a TTL may lie and still delete.
const maxExpiredAge = 5 * 365 * 24 * time.Hour

// sweepEvery sweeps expired items every interval until the store closes.
func (s *store) sweepEvery(interval time.Duration) {
	defer s.sweeper.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
			if _, err := s.sweep(); err != nil {
				slog.Error("embedded dynamodb: delete expired items", "err", err)
			}
		}
	}
}

// SweepExpired deletes every expired item now, as the background sweeper
// does every TTLInterval, and returns how many it deleted.
func (e *Engine) SweepExpired() (int, error) {
	defer runtime.KeepAlive(e)
	return e.s.sweep()
}

// sweep deletes expired items in batches until none is left.
func (s *store) sweep() (int, error) {
	total := 0
	for {
		select {
		case <-s.closing:
			return total, nil
		default:
		}
		n, more, err := s.sweepOnce()
		total += n
		if err != nil || !more {
			if err == nil {
				err = s.commits.do(func(w *writer) error {
					w.ops = append(w.ops, func(tx *bolt.Tx) error {
						_, err := sweepTokens(tx, s.now(), 10*sweepBatch)
						return err
					})
					return nil
				})
			}
			if err == nil {
				err = s.trimStreams()
			}
			return total, err
		}
	}
}

// expiredEntry is an item whose TTL entry says it expired.
type expiredEntry struct {
	def *tableDef
	key []byte
}

// sweepOnce deletes up to sweepBatch expired items in one transaction. more
// reports whether there may be others.
func (s *store) sweepOnce() (deleted int, more bool, err error) {
	now := s.now()
	hi := uint64(max(now.Unix(), 0))
	lo := uint64(max(now.Add(-maxExpiredAge).Unix(), 0))
	s.mu.RLock()
	var defs []*tableDef
	for _, d := range s.tables {
		if d.TTL != "" {
			defs = append(defs, d)
		}
	}
	s.mu.RUnlock()
	if len(defs) == 0 {
		return 0, false, nil
	}
	// Find candidates in a read transaction, so writers are not held up
	// by the search.
	var found []expiredEntry
	err = s.db.View(func(tx *bolt.Tx) error {
		for _, def := range defs {
			tb := tx.Bucket(tableBucketName(def.Name))
			if tb == nil {
				continue
			}
			c := tb.Bucket(bucketTTL).Cursor()
			from := binary.BigEndian.AppendUint64(nil, lo)
			for k, _ := c.Seek(from); k != nil && len(found) < sweepBatch; k, _ = c.Next() {
				if binary.BigEndian.Uint64(k) > hi {
					break
				}
				found = append(found, expiredEntry{def: def, key: bytes.Clone(k[8:])})
			}
		}
		return nil
	})
	if err != nil || len(found) == 0 {
		return 0, false, err
	}
	err = s.commits.do(func(w *writer) error {
		deleted = 0
		for _, e := range found {
			def, err := readDef(w.tx, e.def.Name)
			if err != nil {
				return err
			}
			if def == nil || def.TTL == "" {
				continue
			}
			old, err := getItem(w.tx, def.Name, e.key)
			if err != nil || old == nil {
				continue
			}
			at, ok := expiry(def.TTL, old)
			if !ok || at > hi || at < lo {
				continue
			}
			w.changes = append(w.changes, itemChange{def: def, key: e.key, old: old, ttl: true})
			deleted++
		}
		return nil
	})
	return deleted, len(found) == sweepBatch, err
}
