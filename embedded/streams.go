package embedded

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// DynamoDB Streams: the stored records of a table's streams and the
// layout of their shards.
//
//	"t:<table>"
//	    "stream"          (a key) the view type, present while the stream is enabled
//	    "records"         (a bucket) sequence number (21 digits) → record
//	    "shards"          (a bucket) first sequence number (21 digits) → creation time
//	                      (8 bytes, big-endian Unix milliseconds) | parent shard id
//	    "old:<label>"     (a bucket) "records" and "shards" of a previous, disabled stream
//
// A record is
//
//	version(1) event(1: INSERT, 2: MODIFY, 3: REMOVE) flags(1: bit 0 = TTL)
//	time(8, big-endian Unix milliseconds) eventID(16)
//	keys, new image, old image: each len(uvarint) stored item (codec.go), len 0 when absent
//
// Invariants:
//   - a record is written by applyChange in the bbolt transaction of the
//     change it records, so every acknowledged write has its record, and
//     no record exists of a write that failed;
//   - sequence numbers are the records bucket's bbolt sequence, written as
//     21 decimal digits, so that byte order is numeric order and commit
//     order; they only increase within a stream;
//   - a write that leaves the item as it was (an identical put, an update
//     that sets what is there, a delete of nothing) writes no record;
//   - a table without a stream pays one lookup of a key that is absent;
//   - records older than the retention are never returned: reads treat
//     them as trimmed, and the sweeper deletes them;
//   - a stream's shards never lose their lineage: a shard stores its
//     parent's id, which stays even once the parent is trimmed away.
//
// Shards: a stream's records are cut into shards by sequence number, as
// DynamoDB's are: the stream starts with one, and the first record written
// once the open shard is shardLifetime old starts the next, whose parent
// it is. A shard holds the sequence numbers from its start to the next
// one's; only the last is open, and only while the stream is enabled.
// DescribeStream lists the shards that still hold retained records, and
// the last; a shard's id is derived from its table, stream, start and
// creation time, so only its parent's is stored.
//
// A table has at most one enabled stream. Disabling it closes its last
// shard; it stays readable (DISABLED) for the retention after it was
// disabled, also once a new stream, with a new label, is enabled: its
// buckets then move under "old:<label>", and the sweeper drops them when
// the retention has passed.

var (
	keyStream      = []byte("stream")
	bucketRecords  = []byte("records")
	bucketShards   = []byte("shards")
	streamIdentity = []byte(`{"PrincipalId":"dynamodb.amazonaws.com","Type":"Service"}`)
)

const (
	recordVersion = 1
	seqDigits     = 21
	// DefaultStreamRetention is how long stream records are kept.
	DefaultStreamRetention = 24 * time.Hour
	// iteratorLifetime is how long a shard iterator may be used.
	iteratorLifetime = 15 * time.Minute
	// shardLifetime is how long a shard takes records before the next one
	// starts, about as long as DynamoDB's.
	shardLifetime = 4 * time.Hour
)

// Stream view types.
const (
	viewKeys    = "KEYS_ONLY"
	viewNew     = "NEW_IMAGE"
	viewOld     = "OLD_IMAGE"
	viewNewOld  = "NEW_AND_OLD_IMAGES"
	eventInsert = 1
	eventModify = 2
	eventRemove = 3
)

var eventNames = [...]string{eventInsert: "INSERT", eventModify: "MODIFY", eventRemove: "REMOVE"}

// streamDef is a table's stream, as its definition stores it.
type streamDef struct {
	Label    string    `json:"label"`
	ViewType string    `json:"viewType"`
	Created  time.Time `json:"created"`
	Enabled  bool      `json:"enabled"`
	Disabled time.Time `json:"disabled,omitzero"`
}

// streams returns the table's streams that are still readable at now
// with retention, the latest first.
func (d *tableDef) streams(now time.Time, retention time.Duration) []*streamDef {
	if d.Stream == nil {
		return nil
	}
	out := []*streamDef{d.Stream}
	for i := len(d.Previous) - 1; i >= 0; i-- {
		if now.Before(d.Previous[i].Disabled.Add(retention)) {
			out = append(out, &d.Previous[i])
		}
	}
	return out
}

// stream returns the readable stream of label, or nil.
func (d *tableDef) stream(label string, now time.Time, retention time.Duration) *streamDef {
	for _, sd := range d.streams(now, retention) {
		if sd.Label == label {
			return sd
		}
	}
	return nil
}

// streamBucket returns the bucket holding the records and shards of the
// table's stream sd, or nil.
func streamBucket(tb *bolt.Bucket, def *tableDef, sd *streamDef) *bolt.Bucket {
	if sd == def.Stream || sd.Label == def.Stream.Label {
		return tb
	}
	return tb.Bucket(oldStreamBucketName(sd.Label))
}

func oldStreamBucketName(label string) []byte { return []byte("old:" + label) }

// streamLabel returns the label of a stream created at t, as DynamoDB
// writes it.
func streamLabel(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000") }

// arn returns the stream's ARN for table.
func (sd *streamDef) arn(table string) string {
	return "arn:aws:dynamodb:" + region + ":000000000000:table/" + table + "/stream/" + sd.Label
}

// shard is one shard of a stream: the sequence numbers from start to end
// (end is meaningless while it is open).
type shard struct {
	id         string
	start, end uint64
	open       bool
	created    time.Time
	parent     string
}

// shards returns the shards of the table's stream sd, whose buckets are
// in sb, oldest first, with their ends: the next one's start, or the last
// record for the last shard.
func shards(sb *bolt.Bucket, def *tableDef, sd *streamDef) ([]shard, error) {
	b := sb.Bucket(bucketShards)
	if b == nil {
		return nil, fmt.Errorf("table %q has a stream but no shards bucket", def.Name)
	}
	var out []shard
	err := b.ForEach(func(k, v []byte) error {
		start, ok := parseSeq(string(k))
		if !ok || len(v) < 8 {
			return errCorrupt
		}
		created := time.UnixMilli(int64(binary.BigEndian.Uint64(v)))
		sh := shard{id: shardID(def, sd, k, created), start: start, created: created, parent: string(v[8:])}
		if n := len(out); n > 0 {
			out[n-1].end = start - 1
		}
		out = append(out, sh)
		return nil
	})
	if n := len(out); n > 0 {
		out[n-1].end = max(sb.Bucket(bucketRecords).Sequence(), out[n-1].start-1)
		out[n-1].open = sd.Enabled
	}
	return out, err
}

// shardID returns the id of the shard of def's stream sd that starts at
// start (its 21 digits) and was created at created.
func shardID(def *tableDef, sd *streamDef, start []byte, created time.Time) string {
	h := fnv.New32a()
	h.Write([]byte(def.ID + "/" + sd.Label + "/" + string(start)))
	return fmt.Sprintf("shardId-%020d-%08x", created.UnixMilli(), h.Sum32())
}

// openShard starts a shard at sequence number start, the child of
// parent.
func openShard(tb *bolt.Bucket, start uint64, now time.Time, parent string) error {
	v := binary.BigEndian.AppendUint64(nil, uint64(now.UnixMilli()))
	return tb.Bucket(bucketShards).Put([]byte(formatSeq(start)), append(v, parent...))
}

// newStream makes the buckets of a table's new stream, with its first
// shard.
func newStream(tb *bolt.Bucket, sd *streamDef) error {
	for _, name := range [][]byte{bucketRecords, bucketShards} {
		if _, err := tb.CreateBucket(name); err != nil {
			return err
		}
	}
	if err := openShard(tb, 1, sd.Created, ""); err != nil {
		return err
	}
	return tb.Put(keyStream, []byte(sd.ViewType))
}

// formatSeq writes a sequence number as DynamoDB does: 21 digits.
func formatSeq(n uint64) string {
	s := strconv.FormatUint(n, 10)
	if len(s) >= seqDigits {
		return s
	}
	return "000000000000000000000"[:seqDigits-len(s)] + s
}

// parseSeq reads a sequence number; ok is false for anything else.
func parseSeq(s string) (uint64, bool) {
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// sameItem reports whether two items hold the same attributes and values.
func sameItem(a, b item) bool {
	return equal(value{kind: kindM, m: a}, value{kind: kindM, m: b})
}

// writeRecord appends the stream record of a change to the table's
// stream, if it has one enabled, in the change's transaction.
func writeRecord(tb *bolt.Bucket, c itemChange, now time.Time) error {
	view := tb.Get(keyStream)
	if view == nil {
		return nil
	}
	var event byte
	switch {
	case c.old == nil && c.new == nil:
		return nil
	case c.old == nil:
		event = eventInsert
	case c.new == nil:
		event = eventRemove
	default:
		if sameItem(c.old, c.new) {
			return nil
		}
		event = eventModify
	}
	records := tb.Bucket(bucketRecords)
	if records == nil {
		return fmt.Errorf("table %q has a stream but no records bucket", c.def.Name)
	}
	seq, err := records.NextSequence()
	if err != nil {
		return err
	}
	k, v := tb.Bucket(bucketShards).Cursor().Last()
	if k == nil || len(v) < 8 {
		return fmt.Errorf("table %q has a stream but no shard", c.def.Name)
	}
	start, _ := parseSeq(string(k))
	// The open shard, once it holds records and is old, has a child that
	// takes this one.
	if created := time.UnixMilli(int64(binary.BigEndian.Uint64(v))); start < seq && now.Sub(created) >= shardLifetime {
		// The stream as stored: c.def may predate its last UpdateTable.
		def, err := readDef(tb.Tx(), c.def.Name)
		if err != nil || def == nil || def.Stream == nil {
			return fmt.Errorf("table %q has a stream but no stream definition: %v", c.def.Name, err)
		}
		if err := openShard(tb, seq, now, shardID(def, def.Stream, k, created)); err != nil {
			return err
		}
	}
	src := c.new
	if src == nil {
		src = c.old
	}
	keys := item{}
	for _, ka := range c.def.keyAttrs() {
		keys[ka.Name] = src[ka.Name]
	}
	var flags byte
	if c.ttl {
		flags = 1
	}
	b := make([]byte, 0, 128)
	b = append(b, recordVersion, event, flags)
	b = binary.BigEndian.AppendUint64(b, uint64(now.UnixMilli()))
	var id [16]byte
	_, _ = rand.Read(id[:])
	b = append(b, id[:]...)
	b = appendSection(b, keys)
	switch string(view) {
	case viewNew:
		b = appendSection(b, c.new)
		b = appendSection(b, nil)
	case viewOld:
		b = appendSection(b, nil)
		b = appendSection(b, c.old)
	case viewNewOld:
		b = appendSection(b, c.new)
		b = appendSection(b, c.old)
	default:
		b = appendSection(b, nil)
		b = appendSection(b, nil)
	}
	return records.Put([]byte(formatSeq(seq)), b)
}

func appendSection(b []byte, it item) []byte {
	if it == nil {
		return append(b, 0)
	}
	enc := encodeItem(it)
	b = binary.AppendUvarint(b, uint64(len(enc)))
	return append(b, enc...)
}

// record is a stored stream record, decoded.
type record struct {
	seq            string
	event          byte
	ttl            bool
	at             time.Time
	id             [16]byte
	keys, new, old item
}

// recordTime returns the time of a stored record without decoding it.
func recordTime(v []byte) (time.Time, error) {
	if len(v) < 11 || v[0] != recordVersion {
		return time.Time{}, errCorrupt
	}
	return time.UnixMilli(int64(binary.BigEndian.Uint64(v[3:11]))), nil
}

// decodeRecord reads a stored record.
func decodeRecord(seq, v []byte) (*record, error) {
	at, err := recordTime(v)
	if err != nil || len(v) < 27 {
		return nil, errCorrupt
	}
	r := &record{seq: string(seq), event: v[1], ttl: v[2]&1 != 0, at: at}
	copy(r.id[:], v[11:27])
	rest := v[27:]
	for _, dst := range []*item{&r.keys, &r.new, &r.old} {
		n, k := binary.Uvarint(rest)
		if k <= 0 || uint64(len(rest)-k) < n {
			return nil, errCorrupt
		}
		rest = rest[k:]
		if n > 0 {
			if *dst, err = decodeItem(rest[:n]); err != nil {
				return nil, err
			}
		}
		rest = rest[n:]
	}
	return r, nil
}

// size is the record's SizeBytes: its keys and images, as DynamoDB counts
// them.
func (r *record) size() int { return r.keys.size() + r.new.size() + r.old.size() }

// appendJSON appends the record as GetRecords answers it.
func (r *record) appendJSON(b []byte, view string) []byte {
	b = append(b, `{"eventID":"`...)
	b = fmt.Appendf(b, "%x-%x-%x-%x-%x", r.id[0:4], r.id[4:6], r.id[6:8], r.id[8:10], r.id[10:16])
	b = append(b, `","eventName":"`...)
	b = append(b, eventNames[r.event]...)
	b = append(b, `","eventVersion":"1.1","eventSource":"aws:dynamodb","awsRegion":"`+region+`","dynamodb":{"ApproximateCreationDateTime":`...)
	b = strconv.AppendInt(b, r.at.Unix(), 10)
	b = append(b, `,"Keys":`...)
	b = appendItem(b, r.keys)
	if r.new != nil {
		b = append(b, `,"NewImage":`...)
		b = appendItem(b, r.new)
	}
	if r.old != nil {
		b = append(b, `,"OldImage":`...)
		b = appendItem(b, r.old)
	}
	b = append(b, `,"SequenceNumber":"`...)
	b = append(b, r.seq...)
	b = append(b, `","SizeBytes":`...)
	b = strconv.AppendInt(b, int64(r.size()), 10)
	b = append(b, `,"StreamViewType":`...)
	b = appendString(b, view)
	b = append(b, '}')
	if r.ttl {
		b = append(b, `,"userIdentity":`...)
		b = append(b, streamIdentity...)
	}
	return append(b, '}')
}

// enableStream starts a new stream on a table in tx, dropping the records
// of any previous one.
func enableStream(tx *bolt.Tx, def *tableDef) error {
	if err := putDef(tx, def); err != nil {
		return err
	}
	tb := tx.Bucket(tableBucketName(def.Name))
	if n := len(def.Previous); n > 0 && tb.Bucket(bucketRecords) != nil {
		// The previous stream's buckets move aside, readable as it is.
		old, err := tb.CreateBucket(oldStreamBucketName(def.Previous[n-1].Label))
		if err != nil {
			return err
		}
		for _, name := range [][]byte{bucketRecords, bucketShards} {
			if err := tx.MoveBucket(name, tb, old); err != nil {
				return err
			}
		}
	}
	return newStream(tb, def.Stream)
}

// dropOldStreams deletes, in tx, the previous streams of the tables of
// defs that are no longer readable at now, and returns the definitions it
// changed.
func dropOldStreams(tx *bolt.Tx, defs []*tableDef, now time.Time, retention time.Duration) ([]*tableDef, error) {
	var changed []*tableDef
	for _, d := range defs {
		def, err := readDef(tx, d.Name)
		if err != nil || def == nil {
			return changed, err
		}
		keep := def.Previous[:0:0]
		for _, sd := range def.Previous {
			if now.Before(sd.Disabled.Add(retention)) {
				keep = append(keep, sd)
				continue
			}
			tb := tx.Bucket(tableBucketName(def.Name))
			if tb.Bucket(oldStreamBucketName(sd.Label)) != nil {
				if err := tb.DeleteBucket(oldStreamBucketName(sd.Label)); err != nil {
					return changed, err
				}
			}
		}
		if len(keep) == len(def.Previous) {
			continue
		}
		def.Previous = keep
		if err := putDef(tx, def); err != nil {
			return changed, err
		}
		changed = append(changed, def)
	}
	return changed, nil
}

// disableStream stops writing a table's stream; its records stay.
func disableStream(tx *bolt.Tx, def *tableDef) error {
	if err := putDef(tx, def); err != nil {
		return err
	}
	return tx.Bucket(tableBucketName(def.Name)).Delete(keyStream)
}

// horizon returns the sequence number of the oldest record younger than
// cutoff (the next one to be written when there is none) and the last
// sequence number written.
func horizon(records *bolt.Bucket, cutoff time.Time) (first, last uint64, err error) {
	last = records.Sequence()
	c := records.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		at, err := recordTime(v)
		if err != nil {
			return 0, 0, err
		}
		if !at.Before(cutoff) {
			n, _ := parseSeq(string(k))
			return n, last, nil
		}
	}
	return last + 1, last, nil
}

// dropTrimmedShards deletes the shards whose records are all gone: those
// followed by a shard that starts at or before the oldest record left.
func dropTrimmedShards(tb *bolt.Bucket, records *bolt.Bucket) error {
	oldest := records.Sequence() + 1
	if k, _ := records.Cursor().First(); k != nil {
		oldest, _ = parseSeq(string(k))
	}
	b := tb.Bucket(bucketShards)
	var starts [][]byte
	if err := b.ForEach(func(k, _ []byte) error {
		starts = append(starts, bytes.Clone(k))
		return nil
	}); err != nil {
		return err
	}
	var drop [][]byte
	for i := 0; i+1 < len(starts); i++ {
		if n, _ := parseSeq(string(starts[i+1])); n > oldest {
			break
		}
		drop = append(drop, starts[i])
	}
	for _, k := range drop {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// trimStreams deletes, in tx, up to limit records older than cutoff of
// the tables of defs, and returns how many it deleted.
func trimStreams(tx *bolt.Tx, defs []*tableDef, cutoff time.Time, limit int) (int, error) {
	n := 0
	for _, def := range defs {
		tb := tx.Bucket(tableBucketName(def.Name))
		if tb == nil {
			continue
		}
		records := tb.Bucket(bucketRecords)
		if records == nil {
			continue
		}
		var old [][]byte
		c := records.Cursor()
		for k, v := c.First(); k != nil && n+len(old) < limit; k, v = c.Next() {
			at, err := recordTime(v)
			if err != nil {
				return n, err
			}
			if !at.Before(cutoff) {
				break
			}
			old = append(old, bytes.Clone(k))
		}
		for _, k := range old {
			if err := records.Delete(k); err != nil {
				return n, err
			}
		}
		n += len(old)
		if err := dropTrimmedShards(tb, records); err != nil {
			return n, err
		}
	}
	return n, nil
}
