package changefeed

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/blogql/blog/storage/feedstore"
)

// The coordinator: every RenewEvery it renews this server's heartbeat,
// which holds all its leases (one write, however many it holds), stops
// the work of those it lost, and takes the free ones whose work may
// start. It alone starts and stops holders, so the set of holders needs
// no lock.

// holder is the work of one lease this server holds.
type holder struct {
	cancel context.CancelFunc
	done   chan struct{}
	// stopping is set once the lease is lost: the holder stays in the
	// set until its work has stopped, so that the lease is not taken
	// again (by this server) while it still runs.
	stopping bool
}

func (f *Feed) coordinate(ctx context.Context) {
	held := map[string]*holder{}
	var (
		arn string
		// until is when this server's heartbeat expires.
		until time.Time
	)
	t := time.NewTimer(0)
	defer t.Stop()
	var finished <-chan struct{}
	for {
		select {
		case <-ctx.Done():
			f.stop(ctx, held)
			return
		case <-t.C:
		case <-finished:
			// A shard read to its end: its children may start now,
			// not at the next renewal.
			t.Stop()
		}
		finished = f.finished.wait()
		start := time.Now()
		var expires time.Time
		arn, expires = f.round(ctx, held, arn, &until)
		// The next round renews in RenewEvery, or comes as soon as a
		// lease another server holds expires: when that server died, its
		// work is taken over once its lease lapses, not up to RenewEvery
		// later.
		next := start.Add(f.opts.RenewEvery)
		if !expires.IsZero() && expires.Before(next) {
			next = expires.Add(takeoverMargin)
		}
		t.Reset(max(0, time.Until(next)))
	}
}

// takeoverMargin is how long after another server's lease expires (by
// this server's clock) the round that takes it comes.
const takeoverMargin = 20 * time.Millisecond

// round is one pass of the coordinator; it returns the stream's ARN as
// it knows it ("" to look it up again), and when the first of the leases
// other servers hold expires, by this process's clock (zero: none is
// held). until is when this server's heartbeat expires, which it moves.
func (f *Feed) round(ctx context.Context, held map[string]*holder, arn string, until *time.Time) (string, time.Time) {
	for name, h := range held {
		select {
		case <-h.done:
			delete(held, name)
		default:
		}
	}
	f.heartbeat(ctx, held, until)
	leases, err := f.store.Feed().Leases(ctx)
	if err != nil {
		if ctx.Err() == nil {
			f.log.Warn("change feed: read leases", "error", err)
		}
		return arn, time.Time{}
	}
	byName := map[string]feedstore.Lease{}
	var expires time.Time
	now, local := f.store.Now(), time.Now()
	for _, l := range leases {
		byName[l.Name] = l
		if h := held[l.Name]; h != nil && !h.stopping && l.Owner != f.opts.Owner && !l.Finished {
			f.log.Warn("change feed: lease lost to another server", "lease", l.Name, "owner", l.Owner)
			h.cancel()
			h.stopping = true
		}
		if l.Owner != f.opts.Owner && l.HeldAt(now) && !l.Finished {
			// The store's clock tells the lease's time left; the timer
			// runs on this process's.
			if at := local.Add(l.Until.Sub(now)); expires.IsZero() || at.Before(expires) {
				expires = at
			}
		}
	}
	if !f.opts.Exclusive && !now.Before(*until) {
		return arn, expires // not a lease may be taken without a heartbeat
	}
	for _, w := range f.workers {
		f.take(ctx, held, byName, feedstore.WorkerLease(w.Name), func(ctx context.Context, l feedstore.Lease) error {
			return f.runWorker(ctx, w, l)
		})
	}
	if f.opts.NoShards {
		return "", expires
	}
	if arn == "" {
		if arn, err = f.store.StreamARN(ctx); err != nil {
			if ctx.Err() == nil {
				f.log.Warn("change feed: no stream to read", "error", err)
			}
			return "", expires
		}
	}
	shards, err := f.shards(ctx, arn)
	if err != nil {
		if ctx.Err() == nil {
			f.log.Warn("change feed: describe the stream", "stream", arn, "error", err)
		}
		return "", expires
	}
	inStream := map[string]bool{}
	for _, s := range shards {
		inStream[aws.ToString(s.ShardId)] = true
	}
	for _, s := range shards {
		id := aws.ToString(s.ShardId)
		if byName[feedstore.ShardLease(id)].Finished {
			continue
		}
		if p := aws.ToString(s.ParentShardId); p != "" && inStream[p] && !byName[feedstore.ShardLease(p)].Finished {
			continue // its parent first: a key's records stay in order
		}
		f.take(ctx, held, byName, feedstore.ShardLease(id), func(ctx context.Context, l feedstore.Lease) error {
			return f.readShard(ctx, arn, id, l)
		})
	}
	for _, l := range leases {
		// A finished shard that the stream no longer lists is gone for
		// good (trimmed): its lease is no longer a parent's either.
		if id, ok := l.ShardID(); ok && l.Finished && !inStream[id] {
			if err := f.store.Feed().DeleteShardLease(ctx, id); err != nil && ctx.Err() == nil {
				f.log.Warn("change feed: delete a finished shard's lease", "shard", id, "error", err)
			}
		}
	}
	return arn, expires
}

// shards returns every shard of the stream arn: DescribeStream, page by
// page.
func (f *Feed) shards(ctx context.Context, arn string) ([]streamtypes.Shard, error) {
	var (
		all   []streamtypes.Shard
		after *string
	)
	for {
		out, err := f.streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{
			StreamArn: aws.String(arn), ExclusiveStartShardId: after,
		})
		if err != nil {
			return nil, err
		}
		all = append(all, out.StreamDescription.Shards...)
		after = out.StreamDescription.LastEvaluatedShardId
		if after == nil {
			return all, nil
		}
	}
}

// heartbeat renews this server's heartbeat, which holds every lease it
// took, unless the feed is Exclusive; when it cannot, and the heartbeat
// has expired, every holder stops: other servers may take their leases.
func (f *Feed) heartbeat(ctx context.Context, held map[string]*holder, until *time.Time) {
	if f.opts.Exclusive {
		return
	}
	u, err := f.store.Feed().Heartbeat(ctx, f.opts.Owner, f.opts.LeaseDuration)
	switch {
	case err == nil:
		*until = u
	case ctx.Err() != nil:
	case f.store.Now().Before(*until):
		f.log.Warn("change feed: renew the heartbeat", "error", err)
	default:
		f.log.Warn("change feed: heartbeat expired before it could be renewed", "error", err)
		for _, h := range held {
			h.cancel()
			h.stopping = true
		}
	}
}

// take takes the lease name when it is free and not held here, and runs
// work under it until work returns or the lease is lost or ctx ends.
func (f *Feed) take(ctx context.Context, held map[string]*holder, leases map[string]feedstore.Lease, name string, work func(context.Context, feedstore.Lease) error) {
	if held[name] != nil {
		return
	}
	if l, ok := leases[name]; ok && l.HeldAt(f.store.Now()) && l.Owner != f.opts.Owner && !f.opts.Exclusive {
		return
	}
	l, err := f.store.Feed().TakeLease(ctx, name, f.opts.Owner)
	if err != nil {
		if !errors.Is(err, feedstore.ErrLeaseHeld) && ctx.Err() == nil {
			f.log.Warn("change feed: take lease", "lease", name, "error", err)
		}
		return
	}
	if leases[name].Owner != f.opts.Owner {
		f.log.Info("change feed: lease taken", "lease", name, "checkpoint", l.Checkpoint, "position", l.Position)
	}
	wctx, cancel := context.WithCancel(ctx)
	h := &holder{cancel: cancel, done: make(chan struct{})}
	held[name] = h
	go func() {
		defer close(h.done)
		defer cancel()
		err := work(wctx, l)
		switch {
		case wctx.Err() != nil:
		case err == nil:
			f.finished.fire() // the work is done: a shard read to its end
		case errors.Is(err, feedstore.ErrLeaseLost):
			f.log.Warn("change feed: lease lost to another server", "lease", name)
		case err != nil:
			// Keep the lease: the next round takes it again and starts
			// over from its checkpoint.
			f.log.Warn("change feed: lease's work failed; starting over from its checkpoint", "lease", name, "error", err)
		}
	}()
}

// stop stops every holder and, unless the feed abandons them, releases
// their leases.
func (f *Feed) stop(ctx context.Context, held map[string]*holder) {
	for _, h := range held {
		h.cancel()
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for name, h := range held {
		<-h.done
		if f.abandon {
			continue
		}
		if err := f.store.Feed().ReleaseLease(rctx, name, f.opts.Owner); err != nil && !errors.Is(err, feedstore.ErrLeaseLost) {
			f.log.Warn("change feed: release lease", "lease", name, "error", err)
		}
	}
}
