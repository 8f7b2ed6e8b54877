package embedded

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The stream operations: UpdateTable (for the stream settings only) in
// DynamoDB's API, and ListStreams, DescribeStream, GetShardIterator and
// GetRecords in DynamoDB Streams' (DynamoDBStreams_20120810), served on
// the same transport and handler.
//
// A shard iterator is an opaque token: the table, the stream's label, the
// sequence number to read next and the time it was made, base64url. It is
// good for iteratorLifetime, as DynamoDB's are; GetRecords returns a fresh
// one.

const streamsTargetPrefix = "DynamoDBStreams_20120810."

var streamOperations = map[string]operation{
	"ListStreams":      opListStreams,
	"DescribeStream":   opDescribeStream,
	"GetShardIterator": opGetShardIterator,
	"GetRecords":       opGetRecords,
}

func opUpdateTable(s *store, _ context.Context, body []byte) (any, error) {
	var in map[string]json.RawMessage
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var name string
	var spec *streamSpec
	for k, v := range in {
		var err error
		switch k {
		case "TableName":
			err = decode(v, &name)
		case "StreamSpecification":
			err = decode(v, &spec)
		default:
			return nil, validation("One or more parameter values were invalid: UpdateTable changes only StreamSpecification in the embedded engine, not %s", k)
		}
		if err != nil {
			return nil, err
		}
	}
	def, err := s.tableOf(name)
	if err != nil {
		return nil, err
	}
	if spec == nil {
		return nil, validation("Nothing to update")
	}
	if err := checkStreamSpec(spec); err != nil {
		return nil, err
	}
	var next tableDef
	err = s.commits.do(func(w *writer) error {
		cur, err := readDef(w.tx, name)
		if err != nil {
			return err
		}
		if cur == nil {
			return errResourceNotFound()
		}
		next = *cur
		enabled := cur.Stream != nil && cur.Stream.Enabled
		switch {
		case spec.StreamEnabled && enabled:
			return validation("Table already has an enabled stream")
		case spec.StreamEnabled:
			created := s.now().UTC().Truncate(time.Millisecond)
			if cur.Stream != nil && !created.After(cur.Stream.Created) {
				created = cur.Stream.Created.Add(time.Millisecond) // a new label
			}
			if cur.Stream != nil {
				next.Previous = append(slices.Clip(cur.Previous), *cur.Stream)
			}
			next.Stream = &streamDef{Label: streamLabel(created), ViewType: spec.StreamViewType, Created: created, Enabled: true}
			w.ops = append(w.ops, func(tx *bolt.Tx) error { return enableStream(tx, &next) })
		case enabled:
			sd := *cur.Stream
			sd.Enabled, sd.Disabled = false, s.now()
			next.Stream = &sd
			w.ops = append(w.ops, func(tx *bolt.Tx) error { return disableStream(tx, &next) })
		case cur.Stream == nil:
			return validation("Table has no stream to disable")
		default:
			return nil // already disabled: DynamoDB Local accepts it
		}
		w.after = append(w.after, func() { s.setTable(next.Name, &next) })
		return nil
	})
	if err != nil {
		return nil, err
	}
	var st map[string]tableStats
	err = s.db.View(func(tx *bolt.Tx) error {
		st, err = stats(tx, def)
		return err
	})
	if err != nil {
		return nil, err
	}
	return struct {
		TableDescription *tableDescription `json:"TableDescription"`
	}{next.describe(region, "ACTIVE", st)}, nil
}

func errStreamNotFound(arn string) error {
	return &apiError{code: "ResourceNotFoundException", msg: "Requested resource not found: Stream: " + arn + " not found"}
}

// streamOf returns the table and stream an ARN names, or
// ResourceNotFoundException.
func (s *store) streamOf(arn string) (*tableDef, *streamDef, error) {
	if arn == "" {
		return nil, nil, validation("1 validation error detected: Value null at 'streamArn' failed to satisfy constraint: Member must not be null")
	}
	rest, ok := strings.CutPrefix(arn, "arn:aws:dynamodb:"+region+":000000000000:table/")
	i := strings.LastIndex(rest, "/stream/")
	if !ok || i < 0 {
		return nil, nil, errStreamNotFound(arn)
	}
	def := s.table(rest[:i])
	if def == nil {
		return nil, nil, errStreamNotFound(arn)
	}
	sd := def.stream(rest[i+len("/stream/"):], s.now(), s.retention)
	if sd == nil {
		return nil, nil, errStreamNotFound(arn)
	}
	return def, sd, nil
}

type streamSummary struct {
	StreamArn   string `json:"StreamArn"`
	TableName   string `json:"TableName"`
	StreamLabel string `json:"StreamLabel"`
}

func opListStreams(s *store, _ context.Context, body []byte) (any, error) {
	var in struct {
		TableName               string `json:"TableName"`
		Limit                   *int   `json:"Limit"`
		ExclusiveStartStreamArn string `json:"ExclusiveStartStreamArn"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	limit, err := pageLimit(in.Limit, "maximum allowed size")
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	var all []streamSummary
	now := s.now()
	for _, def := range s.tables {
		if in.TableName != "" && def.Name != in.TableName {
			continue
		}
		for _, sd := range def.streams(now, s.retention) {
			all = append(all, streamSummary{StreamArn: sd.arn(def.Name), TableName: def.Name, StreamLabel: sd.Label})
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(all, func(a, b streamSummary) int { return strings.Compare(a.StreamArn, b.StreamArn) })
	if in.ExclusiveStartStreamArn != "" {
		i, _ := slices.BinarySearchFunc(all, in.ExclusiveStartStreamArn, func(a streamSummary, arn string) int { return strings.Compare(a.StreamArn, arn) })
		for i < len(all) && all[i].StreamArn <= in.ExclusiveStartStreamArn {
			i++
		}
		all = all[i:]
	}
	out := struct {
		Streams                []streamSummary `json:"Streams"`
		LastEvaluatedStreamArn string          `json:"LastEvaluatedStreamArn,omitempty"`
	}{Streams: all}
	if out.Streams == nil {
		out.Streams = []streamSummary{}
	}
	if len(all) > limit {
		out.Streams = all[:limit]
		out.LastEvaluatedStreamArn = all[limit-1].StreamArn
	}
	return out, nil
}

// pageLimit returns the Limit of ListStreams or DescribeStream (of, the
// name DynamoDB's message gives its maximum), 100 by default.
func pageLimit(limit *int, of string) (int, error) {
	switch {
	case limit == nil:
		return 100, nil
	case *limit < 1:
		return 0, validation("1 validation error detected: Value '%d' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1", *limit)
	case *limit > 100:
		return 0, validation("One or more parameter values were invalid: Limit cannot be greater than the %s: 100", of)
	}
	return *limit, nil
}

type sequenceRange struct {
	StartingSequenceNumber string `json:"StartingSequenceNumber"`
	EndingSequenceNumber   string `json:"EndingSequenceNumber,omitempty"`
}

type shardDescription struct {
	ShardID             string        `json:"ShardId"`
	SequenceNumberRange sequenceRange `json:"SequenceNumberRange"`
	ParentShardID       string        `json:"ParentShardId,omitempty"`
}

// streamState is a stream as a read transaction sees it: its shards, the
// oldest retained and the last written sequence numbers, and its records.
type streamState struct {
	shards      []shard
	first, last uint64
	records     *bolt.Bucket
}

// streamState reads the state of a table's stream sd in tx.
func (s *store) streamState(tx *bolt.Tx, def *tableDef, sd *streamDef) (*streamState, error) {
	var sb *bolt.Bucket
	if tb := tx.Bucket(tableBucketName(def.Name)); tb != nil {
		sb = streamBucket(tb, def, sd)
	}
	if sb == nil || sb.Bucket(bucketRecords) == nil {
		return nil, errStreamNotFound(sd.arn(def.Name))
	}
	st := &streamState{records: sb.Bucket(bucketRecords)}
	var err error
	if st.shards, err = shards(sb, def, sd); err != nil {
		return nil, err
	}
	st.first, st.last, err = horizon(st.records, s.now().Add(-s.retention))
	return st, err
}

// shard returns the shard of id, or nil.
func (st *streamState) shard(id string) *shard {
	for i := range st.shards {
		if st.shards[i].id == id {
			return &st.shards[i]
		}
	}
	return nil
}

func opDescribeStream(s *store, _ context.Context, body []byte) (any, error) {
	var in struct {
		StreamArn             string `json:"StreamArn"`
		Limit                 *int   `json:"Limit"`
		ExclusiveStartShardID string `json:"ExclusiveStartShardId"`
		ShardFilter           *struct {
			Type    string `json:"Type"`
			ShardID string `json:"ShardId"`
		} `json:"ShardFilter"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	limit, err := pageLimit(in.Limit, "maximum")
	if err != nil {
		return nil, err
	}
	if f := in.ShardFilter; f != nil && f.Type != "CHILD_SHARDS" {
		return nil, validation("1 validation error detected: Value 'null' at 'shardFilter.type' failed to satisfy constraint: Member must be CHILD_SHARDS")
	}
	def, sd, err := s.streamOf(in.StreamArn)
	if err != nil {
		return nil, err
	}
	var st *streamState
	if err := s.db.View(func(tx *bolt.Tx) error {
		st, err = s.streamState(tx, def, sd)
		return err
	}); err != nil {
		return nil, err
	}
	type description struct {
		StreamArn               string             `json:"StreamArn"`
		StreamLabel             string             `json:"StreamLabel"`
		StreamStatus            string             `json:"StreamStatus"`
		StreamViewType          string             `json:"StreamViewType"`
		CreationRequestDateTime epochTime          `json:"CreationRequestDateTime"`
		TableName               string             `json:"TableName"`
		KeySchema               []keySchemaElement `json:"KeySchema"`
		Shards                  []shardDescription `json:"Shards"`
		LastEvaluatedShardID    string             `json:"LastEvaluatedShardId,omitempty"`
	}
	d := description{
		StreamArn: sd.arn(def.Name), StreamLabel: sd.Label, StreamStatus: "ENABLED", StreamViewType: sd.ViewType,
		CreationRequestDateTime: epochTime(sd.Created), TableName: def.Name, KeySchema: schemaOf(def.Hash, def.Range),
		Shards: []shardDescription{},
	}
	if !sd.Enabled {
		d.StreamStatus = "DISABLED"
	}
	skipping := in.ExclusiveStartShardID != ""
	for i, sh := range st.shards {
		if skipping {
			skipping = sh.id != in.ExclusiveStartShardID
			continue
		}
		if i < len(st.shards)-1 && sh.end < st.first {
			continue // trimmed away
		}
		if in.ShardFilter != nil && sh.parent != in.ShardFilter.ShardID {
			continue
		}
		if len(d.Shards) == limit {
			d.LastEvaluatedShardID = d.Shards[limit-1].ShardID
			break
		}
		desc := shardDescription{ShardID: sh.id, ParentShardID: sh.parent,
			SequenceNumberRange: sequenceRange{StartingSequenceNumber: formatSeq(max(sh.start, st.first))}}
		if !sh.open {
			desc.SequenceNumberRange.EndingSequenceNumber = formatSeq(sh.end)
		}
		d.Shards = append(d.Shards, desc)
	}
	return struct {
		StreamDescription description `json:"StreamDescription"`
	}{d}, nil
}

// shardIterator is what a shard iterator token holds.
type shardIterator struct {
	table, label, shard string
	next                uint64 // the sequence number to read next
	made                time.Time
}

func (it shardIterator) token() string {
	raw := it.table + "|" + it.label + "|" + it.shard + "|" + strconv.FormatUint(it.next, 10) + "|" + strconv.FormatInt(it.made.UnixMilli(), 10)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func parseIterator(token string) (shardIterator, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return shardIterator{}, false
	}
	parts := strings.Split(string(raw), "|")
	if len(parts) != 5 {
		return shardIterator{}, false
	}
	next, err1 := strconv.ParseUint(parts[3], 10, 64)
	made, err2 := strconv.ParseInt(parts[4], 10, 64)
	if err1 != nil || err2 != nil {
		return shardIterator{}, false
	}
	return shardIterator{table: parts[0], label: parts[1], shard: parts[2], next: next, made: time.UnixMilli(made)}, true
}

func errTrimmed() error {
	return &apiError{code: "TrimmedDataAccessException", msg: "The operation attempted to read past the oldest stream record in a shard."}
}

func errNoShard() error {
	return &apiError{code: "ResourceNotFoundException", msg: "Shard does not exist"}
}

func opGetShardIterator(s *store, _ context.Context, body []byte) (any, error) {
	var in struct {
		StreamArn         string `json:"StreamArn"`
		ShardID           string `json:"ShardId"`
		ShardIteratorType string `json:"ShardIteratorType"`
		SequenceNumber    string `json:"SequenceNumber"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	switch in.ShardIteratorType {
	case "TRIM_HORIZON", "LATEST", "AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER":
	default:
		return nil, validation("1 validation error detected: Value '%s' at 'shardIteratorType' failed to satisfy constraint: Member must satisfy enum value set: [AFTER_SEQUENCE_NUMBER, LATEST, AT_SEQUENCE_NUMBER, TRIM_HORIZON]", in.ShardIteratorType)
	}
	if in.SequenceNumber != "" && len(in.SequenceNumber) < seqDigits {
		return nil, validation("1 validation error detected: Value '%s' at 'sequenceNumber' failed to satisfy constraint: Member must have length greater than or equal to 21", in.SequenceNumber)
	}
	def, sd, err := s.streamOf(in.StreamArn)
	if err != nil {
		return nil, err
	}
	it := shardIterator{table: def.Name, label: sd.Label, shard: in.ShardID, made: s.now()}
	err = s.db.View(func(tx *bolt.Tx) error {
		st, err := s.streamState(tx, def, sd)
		if err != nil {
			return err
		}
		sh := st.shard(in.ShardID)
		if sh == nil {
			return errNoShard()
		}
		end := sh.end
		switch in.ShardIteratorType {
		case "TRIM_HORIZON":
			it.next = max(sh.start, st.first)
		case "LATEST":
			it.next = end + 1
		default:
			n, ok := parseSeq(in.SequenceNumber)
			if !ok || n < sh.start || n > end {
				return validation("One or more parameter values were invalid: Invalid SequenceNumber")
			}
			if n < st.first {
				return errTrimmed()
			}
			it.next = n
			if in.ShardIteratorType == "AFTER_SEQUENCE_NUMBER" {
				it.next++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return struct {
		ShardIterator string `json:"ShardIterator"`
	}{it.token()}, nil
}

// recordsPage is GetRecords' answer, written as JSON from the records.
type recordsPage struct {
	records []*record
	view    string
	next    string
}

func (p *recordsPage) appendJSON(b []byte) []byte {
	b = append(b, `{"Records":[`...)
	for i, r := range p.records {
		if i > 0 {
			b = append(b, ',')
		}
		b = r.appendJSON(b, p.view)
	}
	b = append(b, ']')
	if p.next != "" {
		b = append(b, `,"NextShardIterator":`...)
		b = appendString(b, p.next)
	}
	return append(b, '}')
}

// maxRecordsBytes bounds the records of one GetRecords answer, as
// DynamoDB's 1 MB.
const maxRecordsBytes = 1 << 20

func opGetRecords(s *store, _ context.Context, body []byte) (any, error) {
	var in struct {
		ShardIterator string `json:"ShardIterator"`
		Limit         *int   `json:"Limit"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	limit := 1000
	if in.Limit != nil {
		if *in.Limit > 1000 {
			return nil, validation("One or more parameter values were invalid: Limit should be less than or equal to 1000")
		}
		if *in.Limit < 1 {
			return nil, validation("1 validation error detected: Value '%d' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1", *in.Limit)
		}
		limit = *in.Limit
	}
	if in.ShardIterator == "" {
		return nil, validation("1 validation error detected: Value null at 'shardIterator' failed to satisfy constraint: Member must not be null")
	}
	it, ok := parseIterator(in.ShardIterator)
	if !ok {
		return nil, validation("Invalid ShardIterator")
	}
	now := s.now()
	if now.Sub(it.made) > iteratorLifetime {
		return nil, &apiError{code: "ExpiredIteratorException", msg: "Iterator expired. The iterator was created at time " + it.made.UTC().Format(time.RFC3339) + " while right now it's " + now.UTC().Format(time.RFC3339) + ". The iterator is valid for 15 minutes."}
	}
	def := s.table(it.table)
	var sd *streamDef
	if def != nil {
		sd = def.stream(it.label, now, s.retention)
	}
	if sd == nil {
		return nil, errStreamNotFound("arn:aws:dynamodb:" + region + ":000000000000:table/" + it.table + "/stream/" + it.label)
	}
	page := &recordsPage{view: sd.ViewType}
	next := it.next
	closed := false
	err := s.db.View(func(tx *bolt.Tx) error {
		st, err := s.streamState(tx, def, sd)
		if err != nil {
			return err
		}
		sh := st.shard(it.shard)
		if sh == nil {
			return errNoShard()
		}
		if next < st.first {
			return errTrimmed()
		}
		end := sh.end
		closed = !sh.open
		size := 0
		c := st.records.Cursor()
		for k, v := c.Seek([]byte(formatSeq(next))); k != nil && len(page.records) < limit && size < maxRecordsBytes; k, v = c.Next() {
			n, _ := parseSeq(string(k))
			if n > end {
				break
			}
			r, err := decodeRecord(k, v)
			if err != nil {
				return err
			}
			page.records = append(page.records, r)
			size += len(v)
			next = n + 1
		}
		if closed && next <= end && len(page.records) < limit && size < maxRecordsBytes {
			next = end + 1 // the rest of the shard was never written
		}
		closed = closed && next > end
		return nil
	})
	if err != nil {
		return nil, err
	}
	// A closed shard read to its end has no next iterator.
	if !closed {
		it.next, it.made = next, now
		page.next = it.token()
	}
	return page, nil
}
