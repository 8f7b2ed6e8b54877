package changefeed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/feedstore"
)

// DynamoDB Streams' limits that reading a shard respects: at most 1000
// records a GetRecords, and no more than five GetRecords a second on one
// shard (Options.ReadGap apart), shared with at most one other reader.
const recordsLimit = 1000

// readShard reads the shard id of the stream arn under lease l from its
// checkpoint, appending each batch's events to the log with the new
// checkpoint, until the shard ends (it is marked finished and its lease
// released), the lease is lost (feedstore.ErrLeaseLost) or ctx ends. The
// checkpoint moves with events, and past records without events at most
// once a Options.CheckpointEvery; the feed's own records (feedstore.OwnRecord)
// never move it.
func (f *Feed) readShard(ctx context.Context, arn, id string, l feedstore.Lease) error {
	checkpoint := l.Checkpoint
	iter, err := f.iterator(ctx, arn, id, checkpoint)
	if err != nil {
		return err
	}
	// last is when the shard was last read, appended when its events
	// were last appended.
	var last, appended time.Time
	// behind is the last record without events read past the checkpoint
	// ("" for none), moved is when the checkpoint last moved.
	behind, moved := "", time.Now()
	for {
		if wait := max(f.opts.ReadGap-time.Since(last), f.opts.AppendGap-time.Since(appended)); wait > 0 && !sleep(ctx, wait) {
			return nil
		}
		last = time.Now()
		out, err := f.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter, Limit: aws.Int32(recordsLimit)})
		var (
			expired *streamtypes.ExpiredIteratorException
			trimmed *streamtypes.TrimmedDataAccessException
			gone    *streamtypes.ResourceNotFoundException
		)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.As(err, &expired):
			f.log.Warn("change feed: shard iterator expired; reading again from the checkpoint", "shard", id, "checkpoint", checkpoint)
			if iter, err = f.iterator(ctx, arn, id, checkpoint); err != nil {
				return err
			}
			continue
		case errors.As(err, &trimmed):
			f.log.Warn("change feed: records past the stream's retention were lost; reading the shard from its oldest record", "shard", id, "checkpoint", checkpoint)
			if iter, err = f.iterator(ctx, arn, id, ""); err != nil {
				return err
			}
			continue
		case errors.As(err, &gone):
			f.log.Warn("change feed: shard no longer in the stream", "shard", id)
			return nil
		case err != nil:
			return fmt.Errorf("read shard %s: %w", id, err)
		}
		batch := f.translate(ctx, id, out.Records)
		finished := out.NextShardIterator == nil
		if len(batch) > 0 {
			behind = batch[len(batch)-1].Sequence
		}
		if !finished && !hasEvents(batch) && (behind == "" || time.Since(moved) < f.opts.CheckpointEvery) {
			batch = nil // nothing to log: the checkpoint waits
		} else if len(batch) == 0 && behind != "" {
			batch = []storage.RecordEvents{{Sequence: behind}}
		}
		if len(batch) > 0 || finished {
			logged, err := f.store.AppendEvents(ctx, storage.Append{
				Shard: id, Owner: f.opts.Owner, Records: batch, Finished: finished, Retention: f.opts.Retention,
			})
			if len(logged) > 0 {
				f.appended.fire()
				appended = time.Now()
			}
			if err != nil {
				return err
			}
			if len(batch) > 0 {
				checkpoint = batch[len(batch)-1].Sequence
			}
			behind, moved = "", time.Now()
		}
		if finished {
			f.log.Info("change feed: shard read to its end", "shard", id)
			if err := f.store.Feed().ReleaseLease(context.WithoutCancel(ctx), feedstore.ShardLease(id), f.opts.Owner); err != nil && !errors.Is(err, feedstore.ErrLeaseLost) {
				f.log.Warn("change feed: release lease", "shard", id, "error", err)
			}
			return nil
		}
		iter = out.NextShardIterator
		if len(out.Records) == 0 && !sleep(ctx, f.opts.PollEvery) {
			return nil
		}
	}
}

// hasEvents reports whether a record of batch has events.
func hasEvents(batch []storage.RecordEvents) bool {
	for _, r := range batch {
		if len(r.Events) > 0 {
			return true
		}
	}
	return false
}

// translate returns the events of each record but the feed's own
// (feedstore.OwnRecord); a record that cannot be translated is logged and
// counts as one without events, so it never holds the shard up. Events link with the post path of the site
// settings when they set one (storage.Store.Site: held in memory, so no
// request but the first after a change).
func (f *Feed) translate(ctx context.Context, shard string, records []streamtypes.Record) []storage.RecordEvents {
	batch := make([]storage.RecordEvents, 0, len(records))
	paths := f.paths
	if site, err := f.store.Site(ctx); err != nil {
		f.log.Warn("change feed: site settings unread, events link with the server's post path", "error", err)
	} else if site.PostPath != "" {
		paths.Post = site.PostPath
	}
	for _, r := range records {
		if feedstore.OwnRecord(r) {
			continue
		}
		seq := ""
		if r.Dynamodb != nil {
			seq = aws.ToString(r.Dynamodb.SequenceNumber)
		}
		events, err := storage.EventsWith(paths, r)
		if err != nil {
			f.log.Error("change feed: record skipped: it does not translate into events", "shard", shard, "sequence", seq, "error", err)
			events = nil
		}
		if seq == "" {
			continue
		}
		batch = append(batch, storage.RecordEvents{Sequence: seq, Events: events})
	}
	return batch
}

// iterator returns an iterator of the shard after the sequence number
// checkpoint, or from its oldest record without one or when the
// checkpoint is past the stream's retention.
func (f *Feed) iterator(ctx context.Context, arn, id, checkpoint string) (*string, error) {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: aws.String(id), ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon}
	if checkpoint != "" {
		in.ShardIteratorType = streamtypes.ShardIteratorTypeAfterSequenceNumber
		in.SequenceNumber = aws.String(checkpoint)
	}
	out, err := f.streams.GetShardIterator(ctx, in)
	var trimmed *streamtypes.TrimmedDataAccessException
	if errors.As(err, &trimmed) && checkpoint != "" {
		f.log.Warn("change feed: the checkpoint is past the stream's retention: records were lost; reading the shard from its oldest record", "shard", id, "checkpoint", checkpoint)
		return f.iterator(ctx, arn, id, "")
	}
	if err != nil {
		return nil, fmt.Errorf("shard iterator of %s: %w", id, err)
	}
	return out.ShardIterator, nil
}
