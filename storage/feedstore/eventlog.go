package feedstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// The event log: the change feed's events in one order that every server
// reads (partition EVENTLOG). The head item (SK HEAD) holds seq, the last
// position used. The events of an append are packed, in order, into items
// of at most packBytes of JSON, each at SK EVENT#<20-digit position of its
// last event> with the events' JSON (events; position - len(events) + 1
// is the first one's) and a TTL (expiresAt) of the retention: a write
// bills each item's size in 1 KB units, doubled in a transaction, so
// events of under a kilobyte each cost a unit less apiece once packed.
// An item of one event written before packing holds its JSON in event.
//
// Invariants:
//   - positions are dense and committed in order: a batch is appended in
//     one TransactWriteItems whose head update is conditioned on the seq
//     it read, so two appends never share a position and a transaction
//     commits positions head+1..head+n only after every lower one;
//   - the same transaction moves the checkpoint of the shard the events
//     come from, conditioned on the appender still holding its lease, so
//     a record's events enter the log exactly once, whoever reads the
//     shard after a crash or a takeover;
//   - events leave the log only by TTL, oldest first (give or take
//     DynamoDB's TTL sweep): a reader that finds a gap at the start of
//     what it reads was away longer than the retention.

// OwnRecord reports whether the stream record r is a write of the change
// feed's own items: a lease, a server's heartbeat, the event log. No
// event follows from one, and a shard's checkpoint need not move past it:
// a reader that meets it again after a restart skips it again. Were such
// a record to move the checkpoint, the checkpoint's own write would come
// back as the next such record, and an idle shard would be written for
// ever.
func OwnRecord(r streamtypes.Record) bool {
	if r.Dynamodb == nil {
		return false
	}
	pk, ok := r.Dynamodb.Keys[attrPK].(*streamtypes.AttributeValueMemberS)
	return ok && (pk.Value == leasesPartition || pk.Value == eventLogPartition)
}

// DefaultEventRetention is how long an event stays in the log when
// Append.Retention is zero.
const DefaultEventRetention = 24 * time.Hour

// Limits of one append transaction: DynamoDB takes 100 actions and 4 MB
// in a TransactWriteItems, of which the lease and the head take two
// actions; the bytes keep a margin for the attribute names and the keys.
const (
	maxEventsPerAppend = 98
	maxAppendBytes     = 3 << 20
	maxAppendAttempts  = 30
	// packBytes is the most JSON an item of the log packs (an item takes
	// 400 KB); an event longer has an item of its own.
	packBytes = 64 << 10
)

// Record is the events of one stream record, each as its JSON, in
// order; Sequence is the record's sequence number.
type Record struct {
	Sequence string
	Events   []json.RawMessage
}

// Logged is an event at its place in the log: its JSON as it was
// appended.
type Logged struct {
	Position int64
	Event    json.RawMessage
}

// Append is a batch of a shard's records to log: their events, in order,
// and the shard's checkpoint at the last one.
type Append struct {
	// Shard is the shard the records come from, whose lease Owner holds
	// and whose checkpoint moves with the append. Empty, the append
	// moves no checkpoint and needs no lease: for a reader of the stream
	// that keeps its own (an AWS Lambda's event source mapping), which
	// may log a record's events again when it retries a batch.
	Shard, Owner string
	Records      []Record
	// Finished marks the shard read to its end once the batch is in.
	Finished bool
	// Retention is how long the events stay in the log; zero means
	// DefaultEventRetention.
	Retention time.Duration
}

type eventItem struct {
	PK   string `dynamodbav:"PK"`
	SK   string `dynamodbav:"SK"`
	Type string `dynamodbav:"type"`
	// Position is the last event's.
	Position int64 `dynamodbav:"position"`
	// Events are the events' JSON, as appended, in order; Event the one
	// event of an item written before packing.
	Events    []string `dynamodbav:"events,omitempty"`
	Event     string   `dynamodbav:"event,omitempty"`
	ExpiresAt int64    `dynamodbav:"expiresAt"`
}

// logged returns the events it holds at their positions.
func (it *eventItem) logged() []Logged {
	if it.Events == nil {
		return []Logged{{Position: it.Position, Event: json.RawMessage(it.Event)}}
	}
	out := make([]Logged, len(it.Events))
	first := it.Position - int64(len(it.Events)) + 1
	for i, e := range it.Events {
		out[i] = Logged{Position: first + int64(i), Event: json.RawMessage(e)}
	}
	return out
}

type eventHeadItem struct {
	PK  string `dynamodbav:"PK"`
	SK  string `dynamodbav:"SK"`
	Seq int64  `dynamodbav:"seq"`
}

// AppendEvents logs the events of a.Records at the next positions and
// moves the shard's checkpoint to the last record, in one
// TransactWriteItems, or in several when the events do not fit in one
// (a record's events always in the same one, each transaction
// checkpointing the last record it holds). A batch without events only
// moves the checkpoint. When another appender moved the head first, the
// transaction is built again on the new head. It returns the events as
// logged. It fails with ErrLeaseLost when the shard's lease is not
// a.Owner's (nothing of the transaction that met it is written), and
// with the table primitives' ErrBusy (storage.ErrBusy) when the head
// kept moving.
func (s *Store) AppendEvents(ctx context.Context, a Append) ([]Logged, error) {
	if a.Retention <= 0 {
		a.Retention = DefaultEventRetention
	}
	groups, err := appendGroups(a.Records)
	if err != nil {
		return nil, fmt.Errorf("append events of shard %s: %w", a.Shard, err)
	}
	var logged []Logged
	// The head last seen (by this append, the log's readers or a
	// cancellation) is tried first: the head's condition checks it, and a
	// cancellation returns the true one.
	head := s.logHead.Load()
	if head == 0 {
		head = -1 // unknown: read it
	}
	for i, g := range groups {
		last := g[len(g)-1].Sequence
		finished := a.Finished && i == len(groups)-1
		if countEvents(g) == 0 {
			if a.Shard == "" {
				continue
			}
			if err := s.CheckpointShard(ctx, a.Shard, a.Owner, last, finished); err != nil {
				return logged, err
			}
			continue
		}
		got, err := s.appendGroup(ctx, a, g, finished, &head)
		logged = append(logged, got...)
		if err != nil {
			return logged, fmt.Errorf("append events of shard %s: %w", a.Shard, err)
		}
	}
	if len(groups) == 0 && a.Finished && a.Shard != "" {
		return nil, s.CheckpointShard(ctx, a.Shard, a.Owner, "", true)
	}
	return logged, nil
}

// appendGroups cuts records into the groups that one transaction each
// appends: at most maxEventsPerAppend events and maxAppendBytes of JSON,
// never splitting a record.
func appendGroups(records []Record) ([][]Record, error) {
	var (
		groups       [][]Record
		cur          []Record
		events, size int
	)
	for _, r := range records {
		n, b := len(r.Events), 0
		for _, raw := range r.Events {
			b += len(raw) + 200
		}
		if n > maxEventsPerAppend || b > maxAppendBytes {
			return nil, fmt.Errorf("record %s has %d events of %d bytes, more than a transaction holds", r.Sequence, n, b)
		}
		if len(cur) > 0 && (events+n > maxEventsPerAppend || size+b > maxAppendBytes) {
			groups = append(groups, cur)
			cur, events, size = nil, 0, 0
		}
		cur = append(cur, r)
		events += n
		size += b
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	return groups, nil
}

func countEvents(g []Record) int {
	n := 0
	for _, r := range g {
		n += len(r.Events)
	}
	return n
}

// appendGroup appends one group's events in one transaction, after the
// head *head (-1: read it first), which it moves on.
func (s *Store) appendGroup(ctx context.Context, a Append, g []Record, finished bool, head *int64) ([]Logged, error) {
	for attempt := 1; ; attempt++ {
		if *head < 0 {
			h, err := s.EventLogHead(ctx)
			if err != nil {
				return nil, err
			}
			*head = h
		}
		t, logged, err := s.appendTxn(a, g, finished, *head)
		if err != nil {
			return nil, err
		}
		err = s.db.Exec(ctx, t)
		switch {
		case err == nil:
			*head += int64(len(logged))
			s.sawPosition(*head)
			return logged, nil
		case errors.Is(err, ErrLeaseLost):
			return nil, err
		case errors.Is(err, dynamo.ErrRetry):
			// Another shard's holder appended first: its head came back
			// with the cancellation.
			*head = headOf(t, a.Shard != "")
		case errors.Is(err, dynamo.ErrBusy):
			*head = -1
		default:
			return nil, err
		}
		if attempt == maxAppendAttempts {
			return nil, dynamo.ErrBusy
		}
		if err := dynamo.Sleep(ctx, min(attempt, 3)); err != nil {
			return nil, err
		}
	}
}

// appendTxn builds the transaction appending g after head: the lease's
// checkpoint first (its failure explains any other), the head, the events.
func (s *Store) appendTxn(a Append, g []Record, finished bool, head int64) (*dynamo.Txn, []Logged, error) {
	t := s.db.NewTxn()
	if a.Shard != "" {
		upd, _ := shardCheckpoint(g[len(g)-1].Sequence, finished)
		if err := t.Update(leaseKey(ShardLease(a.Shard)), upd, ptr(ownedBy(a.Owner)), ErrLeaseLost); err != nil {
			return nil, nil, err
		}
	}
	n := int64(countEvents(g))
	headCond := expression.Name("seq").Equal(expression.Value(head))
	if head == 0 {
		headCond = expression.AttributeNotExists(expression.Name("seq")).Or(headCond)
	}
	headUpd := expression.Set(expression.Name("seq"), expression.Value(head+n)).
		Set(expression.Name("type"), expression.Value(TypeEventHead))
	if err := t.Update(eventLogHead(), headUpd, &headCond, dynamo.ErrRetry); err != nil {
		return nil, nil, err
	}
	expires := s.Now().Add(a.Retention).Unix()
	logged := make([]Logged, 0, n)
	var pack []string
	size := 0
	put := func() error {
		if len(pack) == 0 {
			return nil
		}
		k := eventKey(head + int64(len(logged)))
		err := t.Put(eventItem{PK: k.PK, SK: k.SK, Type: TypeEvent, Position: head + int64(len(logged)), Events: pack, ExpiresAt: expires}, nil, nil)
		pack, size = nil, 0
		return err
	}
	for _, r := range g {
		for _, raw := range r.Events {
			if size > 0 && size+len(raw) > packBytes {
				if err := put(); err != nil {
					return nil, nil, err
				}
			}
			pack, size = append(pack, string(raw)), size+len(raw)
			logged = append(logged, Logged{Position: head + int64(len(logged)) + 1, Event: raw})
		}
	}
	if err := put(); err != nil {
		return nil, nil, err
	}
	t.ReturnOld()
	return t, logged, nil
}

// headOf returns the head that cancelled t, or -1 when the cancellation
// did not carry it.
// The head's action is the first, or the second after a lease's.
func headOf(t *dynamo.Txn, withLease bool) int64 {
	i := 0
	if withLease {
		i = 1
	}
	if len(t.Reasons()) <= i || t.Reasons()[i].Item == nil {
		return -1
	}
	var h eventHeadItem
	if err := attributevalue.UnmarshalMap(t.Reasons()[i].Item, &h); err != nil {
		return -1
	}
	return h.Seq
}

// EventLogHead returns the last position of the event log: 0 before the
// first event. It is one strongly consistent GetItem.
func (s *Store) EventLogHead(ctx context.Context) (int64, error) {
	var h eventHeadItem
	err := s.db.Get(ctx, eventLogHead(), true, &h)
	if errors.Is(err, dynamo.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the event log's head: %w", err)
	}
	s.sawPosition(h.Seq)
	return h.Seq, nil
}

// sawPosition remembers that the log reaches position p.
func (s *Store) sawPosition(p int64) {
	for {
		cur := s.logHead.Load()
		if p <= cur || s.logHead.CompareAndSwap(cur, p) {
			return
		}
	}
}

// MaxEventsPage is the most events EventsAfter returns at once.
const MaxEventsPage = 1000

// EventsAfter returns up to limit events of the log after position after
// (0: from the oldest kept), in order: one strongly consistent Query. An
// event whose position is not the one after its predecessor's (or after
// after) marks events gone by TTL, or a transaction that a reader sees
// in part: changefeed waits before it skips one. It fails when limit is
// not 1 to MaxEventsPage.
func (s *Store) EventsAfter(ctx context.Context, after int64, limit int) ([]Logged, error) {
	if limit < 1 || limit > MaxEventsPage {
		return nil, fmt.Errorf("events after %d: limit %d is not 1 to %d", after, limit, MaxEventsPage)
	}
	kc := expression.Key(attrPK).Equal(expression.Value(eventLogPartition)).
		And(expression.Key(attrSK).Between(expression.Value(eventSortKey(max(after, 0)+1)), expression.Value(prefixEvent+"~")))
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(kc))
	if err != nil {
		return nil, err
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.db.Name()),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, fmt.Errorf("read events after %d: %w", after, err)
	}
	events := make([]Logged, 0, len(out.Items))
	for _, av := range out.Items {
		var it eventItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return events, fmt.Errorf("decode event item: %w", err)
		}
		for _, e := range it.logged() {
			if e.Position > after && len(events) < limit {
				events = append(events, e)
			}
		}
	}
	if len(events) > 0 {
		s.sawPosition(events[len(events)-1].Position)
	}
	return events, nil
}
