package changefeed

import (
	"context"
	"testing"

	"github.com/blogql/blog/storage"
)

// writeOperations are the DynamoDB operations that write.
var writeOperations = []string{"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}

// TestAnIdleFeedWritesOnlyItsHeartbeat lets a feed with a shard and three
// workers log what was written and its workers take it, then counts its
// requests while it reads the idle shard 30 times: an exclusive feed (the
// embedded engine's) writes nothing; a fleet's server writes its
// heartbeat, one write a round of its coordinator, whatever the number of
// its leases. Neither writes the shard's checkpoint past the records of
// its own writes.
func TestAnIdleFeedWritesOnlyItsHeartbeat(t *testing.T) {
	for _, exclusive := range []bool{true, false} {
		name := "fleet"
		if exclusive {
			name = "exclusive"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			f := e.feed("a")
			f.opts.Exclusive = exclusive
			workers := []string{"one", "two", "three"}
			for _, w := range workers {
				f.AddWorker(Worker{Name: w, Events: func(context.Context, []storage.LoggedEvent) error { return nil }})
			}
			ctx, counter := storage.WithRequestCounter(context.Background())
			e.runIn(ctx, f)
			e.write(3)
			e.eventually("every worker's checkpoint at 3", func() bool {
				leases, err := e.store.Feed().Leases(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, l := range leases {
					if l.Position == 3 {
						n++
					}
				}
				return n == len(workers)
			})

			const reads = 30
			before := counter.ByOperation()
			e.eventually("30 reads of the idle shard", func() bool {
				return counter.ByOperation()["GetRecords"] >= before["GetRecords"]+reads
			})
			after := counter.ByOperation()
			writes := map[string]int{}
			total := 0
			for _, op := range writeOperations {
				if n := after[op] - before[op]; n > 0 {
					writes[op] = n
					total += n
				}
			}
			// A round writes the heartbeat before it describes the
			// stream: the round under way at the end may have written.
			rounds := after["DescribeStream"] - before["DescribeStream"]
			switch {
			case exclusive && total != 0:
				t.Errorf("an exclusive feed wrote %v while idle", writes)
			case !exclusive && (total > rounds+1 || total != writes["UpdateItem"]):
				t.Errorf("a fleet's feed wrote %v in %d rounds while idle, want one heartbeat a round", writes, rounds)
			}
		})
	}
}
