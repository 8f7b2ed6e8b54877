package storage_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/feedstore"
)

// The event log and the leases, as the change feed's dispatcher uses
// them: appends that move a shard's checkpoint atomically, under the
// shard's lease, at dense positions.

func records(from, n, eventsEach int) []storage.RecordEvents {
	out := make([]storage.RecordEvents, n)
	for i := range out {
		seq := fmt.Sprintf("%021d", from+i)
		out[i].Sequence = seq
		for j := range eventsEach {
			out[i].Events = append(out[i].Events, storage.Event{
				ID: fmt.Sprintf("evt_%s_%d", seq, j), Type: storage.EventAuthorUpdated,
				Time: start, Data: storage.EventData{AuthorID: "ada"},
			})
		}
	}
	return out
}

func (e *env) take(name, owner string) feedstore.Lease {
	e.t.Helper()
	ctx := context.Background()
	if _, err := e.store.Feed().Heartbeat(ctx, owner, 10*time.Second); err != nil {
		e.t.Fatal(err)
	}
	l, err := e.store.Feed().TakeLease(ctx, name, owner)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

// logged returns every event of the log and fails the test when their
// positions are not 1, 2, 3… or an id repeats.
func (e *env) logged() []storage.LoggedEvent {
	e.t.Helper()
	all, err := e.store.EventsAfter(context.Background(), 0, feedstore.MaxEventsPage)
	if err != nil {
		e.t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, ev := range all {
		if ev.Position != int64(i+1) || seen[ev.ID] {
			e.t.Fatalf("event %d is %d %s; positions must be dense from 1 and ids unique", i, ev.Position, ev.ID)
		}
		seen[ev.ID] = true
	}
	return all
}

func TestAppendEventsLogsInOrderAndCheckpoints(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.take(feedstore.ShardLease("s1"), "a")
	// 150 events do not fit in one transaction: they go in two, each
	// checkpointing the last record it holds; trailing records without
	// events move the checkpoint too.
	batch := append(records(1, 150, 1), records(151, 2, 0)...)
	cctx, counter := storage.WithRequestCounter(ctx)
	got, err := e.store.AppendEvents(cctx, storage.Append{Shard: "s1", Owner: "a", Records: batch})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 150 || got[149].Position != 150 {
		t.Fatalf("logged %d events, the last at %d", len(got), got[len(got)-1].Position)
	}
	if n := counter.ByOperation()["TransactWriteItems"]; n != 2 {
		t.Errorf("appended in %d transactions, want 2", n)
	}
	if all := e.logged(); len(all) != 150 || all[0].ID != batch[0].Events[0].ID {
		t.Fatalf("the log holds %d events", len(all))
	}
	if h, _ := e.store.Feed().EventLogHead(ctx); h != 150 {
		t.Errorf("head %d, want 150", h)
	}
	l := e.take(feedstore.ShardLease("s1"), "a")
	if l.Checkpoint != batch[len(batch)-1].Sequence || l.Finished {
		t.Errorf("lease %+v, want the checkpoint at the last record", l)
	}
	// A batch without events only checkpoints; Finished marks the shard.
	if _, err := e.store.AppendEvents(ctx, storage.Append{Shard: "s1", Owner: "a", Records: records(153, 1, 0), Finished: true}); err != nil {
		t.Fatal(err)
	}
	if l := e.take(feedstore.ShardLease("s1"), "a"); l.Checkpoint != fmt.Sprintf("%021d", 153) || !l.Finished {
		t.Errorf("lease %+v, want finished at the last record", l)
	}
	after, err := e.store.EventsAfter(ctx, 148, 10)
	if err != nil || len(after) != 2 || after[0].Position != 149 {
		t.Errorf("EventsAfter(148) = %v, %v", after, err)
	}
	e.consistent()
}

func TestLostLeaseStopsAppends(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	name := feedstore.ShardLease("s1")
	e.take(name, "a")
	if _, err := e.store.Feed().TakeLease(ctx, name, "b"); !errors.Is(err, feedstore.ErrLeaseHeld) {
		t.Fatalf("b took a's lease: %v", err)
	}
	if _, err := e.store.AppendEvents(ctx, storage.Append{Shard: "s1", Owner: "a", Records: records(1, 1, 1)}); err != nil {
		t.Fatal(err)
	}
	// a pauses past its heartbeat's expiry; b takes the shard over from
	// a's checkpoint.
	e.clock.Advance(11 * time.Second)
	if _, err := e.store.Feed().Heartbeat(ctx, "b", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	l, err := e.store.Feed().TakeLease(ctx, name, "b")
	if err != nil || l.Checkpoint != fmt.Sprintf("%021d", 1) {
		t.Fatalf("b's takeover: %+v, %v", l, err)
	}
	for _, a := range []storage.Append{
		{Shard: "s1", Owner: "a", Records: records(2, 1, 1)},
		{Shard: "s1", Owner: "a", Records: records(2, 1, 0)},
		{Shard: "s1", Owner: "a", Finished: true},
	} {
		if _, err := e.store.AppendEvents(ctx, a); !errors.Is(err, feedstore.ErrLeaseLost) {
			t.Errorf("a's append after losing the lease: %v, want ErrLeaseLost", err)
		}
	}
	// a's heartbeat, renewed late, does not give the lease back.
	if _, err := e.store.Feed().Heartbeat(ctx, "a", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Feed().TakeLease(ctx, name, "a"); !errors.Is(err, feedstore.ErrLeaseHeld) {
		t.Errorf("a took b's lease back: %v", err)
	}
	if err := e.store.Feed().ReleaseLease(ctx, name, "a"); !errors.Is(err, feedstore.ErrLeaseLost) {
		t.Errorf("a released b's lease: %v", err)
	}
	if all := e.logged(); len(all) != 1 {
		t.Errorf("the log holds %d events, want a's first one", len(all))
	}
	if l := e.take(name, "b"); l.Checkpoint != fmt.Sprintf("%021d", 1) {
		t.Errorf("checkpoint %q moved by a", l.Checkpoint)
	}
	// Released, the lease is free at once, its checkpoint kept.
	if err := e.store.Feed().ReleaseLease(ctx, name, "b"); err != nil {
		t.Fatal(err)
	}
	if l := e.take(name, "c"); l.Checkpoint != fmt.Sprintf("%021d", 1) {
		t.Errorf("c took %+v", l)
	}
	e.consistent()
}

// TestAppendEventsRetriesWhenTheHeadMoved lets another shard's holder
// append between a's read of the head and a's transaction: a's head
// condition fails, and a appends after the other's events.
func TestAppendEventsRetriesWhenTheHeadMoved(t *testing.T) {
	e := newRaceEnv(t)
	ctx := context.Background()
	e.take(feedstore.ShardLease("s1"), "a")
	e.take(feedstore.ShardLease("s2"), "b")
	e.hooks.at("TransactWriteItems", 1, e.racing("append of s2", func(ctx context.Context, s *storage.Store) error {
		_, err := s.AppendEvents(ctx, storage.Append{Shard: "s2", Owner: "b", Records: records(100, 2, 1)})
		return err
	}))
	// And DynamoDB cancels a's next attempt for a conflict, as it does
	// when two transactions meet.
	e.hooks.at("TransactWriteItems", 2, cancelled("TransactionConflict"))
	got, err := e.store.AppendEvents(ctx, storage.Append{Shard: "s1", Owner: "a", Records: records(1, 2, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Position != 3 || got[1].Position != 4 {
		t.Fatalf("a logged %+v, want positions 3 and 4", got)
	}
	all := e.logged()
	if len(all) != 4 || all[0].ID != records(100, 1, 1)[0].Events[0].ID || all[2].ID != got[0].ID {
		t.Errorf("log %+v", all)
	}
	e.consistent()
}

func TestWorkerLeaseCheckpoints(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	name := feedstore.WorkerLease("webhooks")
	if l := e.take(name, "a"); l.Position != 0 {
		t.Fatalf("a new worker lease starts at %d", l.Position)
	}
	if err := e.store.Feed().CheckpointWorker(ctx, name, "a", 7); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Feed().CheckpointWorker(ctx, name, "b", 9); !errors.Is(err, feedstore.ErrLeaseLost) {
		t.Errorf("b checkpointed a's worker: %v", err)
	}
	leases, err := e.store.Feed().Leases(ctx)
	if err != nil || len(leases) != 1 || leases[0].Position != 7 || leases[0].Owner != "a" || !leases[0].HeldAt(e.clock.Now()) {
		t.Errorf("leases %+v, %v", leases, err)
	}
}

// TestAppendEventsWithoutAShard appends as a reader that keeps its own
// checkpoints does (a Lambda on the stream): no lease, and a head that
// moved is read from the cancellation all the same.
func TestAppendEventsWithoutAShard(t *testing.T) {
	e := newRaceEnv(t)
	ctx := context.Background()
	e.hooks.at("TransactWriteItems", 1, e.racing("another append", func(ctx context.Context, s *storage.Store) error {
		_, err := s.AppendEvents(ctx, storage.Append{Records: records(100, 1, 1)})
		return err
	}))
	cctx, counter := storage.WithRequestCounter(ctx)
	got, err := e.store.AppendEvents(cctx, storage.Append{Records: append(records(1, 2, 1), records(3, 1, 0)...)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Position != 2 {
		t.Fatalf("logged %+v, want positions 2 and 3", got)
	}
	// One read of the head, two transactions: the cancelled one told the
	// new head.
	if ops := counter.ByOperation(); ops["GetItem"] != 1 || ops["TransactWriteItems"] != 2 {
		t.Errorf("requests %v", ops)
	}
	if leases, err := e.store.Feed().Leases(ctx); err != nil || len(leases) != 0 {
		t.Errorf("leases %v, %v", leases, err)
	}
	if len(e.logged()) != 3 {
		t.Errorf("the log holds %d events", len(e.logged()))
	}
	e.consistent()
}

// TestCheckFindsABrokenEventLog breaks the log by hand: the checker
// reports an event missing where TTL cannot have removed it, and one past
// the head, but not events TTL removed.
func TestCheckFindsABrokenEventLog(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.take(feedstore.ShardLease("s1"), "a")
	// One append an event: an item each.
	for i := 1; i <= 4; i++ {
		if _, err := e.store.AppendEvents(ctx, storage.Append{Shard: "s1", Owner: "a", Records: records(i, 1, 1)}); err != nil {
			t.Fatal(err)
		}
	}
	e.consistent()
	del := func(sk string) {
		t.Helper()
		_, err := e.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(e.table), Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "EVENTLOG"}, "SK": &types.AttributeValueMemberS{Value: sk}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	del("EVENT#00000000000000000002")
	del("EVENT#00000000000000000004")
	bad, err := e.store.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"the event log misses positions 2 to 2", "the event log misses positions 4 to 4"}
	if !slices.Equal(bad, want) {
		t.Errorf("Check = %q, want %q", bad, want)
	}
	// Once the events' retention has passed, TTL may have removed any of
	// them: no gap is an inconsistency.
	e.clock.Advance(feedstore.DefaultEventRetention + time.Minute)
	e.consistent()
}

// TestAnAppendPacksItsEvents: the events of one append share items, so
// an append of three small events writes the lease, the head and one item
// (2 write units each in a transaction); a reader gets each at its
// position, from the middle of an item too, no more than it asked for.
func TestAnAppendPacksItsEvents(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.take(feedstore.ShardLease("s1"), "a")
	cctx, counter := storage.WithRequestCounter(ctx)
	if _, err := e.store.AppendEvents(cctx, storage.Append{Shard: "s1", Owner: "a", Records: append(records(1, 2, 1), records(3, 1, 0)...)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.AppendEvents(cctx, storage.Append{Shard: "s1", Owner: "a", Records: records(4, 1, 3)}); err != nil {
		t.Fatal(err)
	}
	// DynamoDB Local reports a transaction's units otherwise.
	if _, write := counter.Capacity(); dynamotest.Endpoint(t) == "" && write != 12 {
		t.Errorf("two appends of 2 and 3 small events cost %.1f write units, want 12 (the lease, the head and an item, twice)", write)
	}
	items, err := e.client.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(e.table), KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :ev)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "EVENTLOG"}, ":ev": &types.AttributeValueMemberS{Value: "EVENT#"}}})
	if err != nil || len(items.Items) != 2 {
		t.Errorf("the log's events are in %d items (%v), want 2, an append's each", len(items.Items), err)
	}
	all := e.logged()
	if len(all) != 5 || all[2].ID != records(4, 1, 3)[0].Events[0].ID {
		t.Fatalf("the log holds %v", all)
	}
	for after, want := range map[int64][]int64{0: {1, 2, 3}, 1: {2, 3, 4}, 3: {4, 5}, 4: {5}, 5: nil} {
		got, err := e.store.EventsAfter(ctx, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		var positions []int64
		for _, ev := range got {
			positions = append(positions, ev.Position)
		}
		if !slices.Equal(positions, want) {
			t.Errorf("EventsAfter(%d, 3) at %v, want %v", after, positions, want)
		}
	}
	e.consistent()
	// An item of one event, as written before packing, reads as it did.
	_, err = e.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "EVENTLOG"}, "SK": &types.AttributeValueMemberS{Value: "EVENT#00000000000000000006"},
		"type": &types.AttributeValueMemberS{Value: feedstore.TypeEvent}, "position": &types.AttributeValueMemberN{Value: "6"},
		"event":     &types.AttributeValueMemberS{Value: `{"id":"evt_old","type":"author.updated"}`},
		"expiresAt": &types.AttributeValueMemberN{Value: "4102444800"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.store.EventsAfter(ctx, 5, 3); err != nil || len(got) != 1 || got[0].Position != 6 || got[0].ID != "evt_old" {
		t.Errorf("EventsAfter(5) of an item of one event = %+v, %v", got, err)
	}
}
