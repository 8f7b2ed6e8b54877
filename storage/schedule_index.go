package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// The go-live index: one Query finds the scheduled posts due in every
// publication of the table. Each schedule item (schedule.go) is also in
// GSI1 partition GOLIVE, sorted by <at>#<pubId>#<postId>: a sparse,
// global index partition that holds the scheduled posts and nothing
// else, written by the same put and deleted by the same delete as the
// schedule item itself, in the post's transactions, so it needs no write
// of its own and can never disagree with the schedule for longer than
// GSI1 takes to show a write. GoLive reads the range of it that is due
// (one Query, whatever the number of publications) and makes each post go
// live in its own publication's Store, with the conditional transaction
// of schedule.go: an entry GSI1 still shows after its item went (a post
// gone live, moved or deleted) costs one transaction that fails its
// condition, and nothing else.
//
// Schedule items written before the index have no GSI1 attributes:
// IndexSchedule, which the "schedule" worker runs once when a server
// first holds its lease, walks the publications' directory and, in each
// publication, makes the due ones go live and adds the others to the
// index.
//
// Every schedule write of the platform lands in the one GSI1 partition
// GOLIVE: one write unit each (an item under 1 KB), so it takes some
// 1,000 schedule changes (schedules, reschedules, unschedules and
// go-lives) a second, platform-wide, before it throttles.

// GoLive makes the scheduled posts of every publication whose time has
// passed go live: it reads the go-live index's items due at the store's
// clock (one Query of GSI1 of at most 100, and one more for every 100
// after), and for each removes the post's marker and deletes its schedule
// item in one TransactWriteItems in the post's publication, conditional
// on the marker still naming the item's time. It returns how many posts
// went live. A post rescheduled, unpublished or deleted meanwhile is
// skipped (and a schedule item left behind without its post is deleted),
// so several servers may sweep at once: each scheduled time goes live
// once. The posts of a suspended publication stay in the index, due,
// and go live at the first call after it is active again; each call reads
// the directory item of a publication with posts due (one GetItem). It
// returns the posts that went live so far and the first error of a read
// or a write, after which the next call goes on. Any Store of the table
// sweeps every publication.
func (s *Store) GoLive(ctx context.Context) (int, error) {
	suspended := map[string]bool{}
	return s.goLiveDue(ctx, dueRange{
		source: "the go-live index", index: keys.IndexGSI1,
		pkAttr: keys.AttrGSI1PK, skAttr: keys.AttrGSI1SK, pk: keys.GoLivePartition,
	}, func(ctx context.Context, it scheduleItem) (bool, error) {
		return s.goLiveIndexed(ctx, it, suspended)
	})
}

// goLiveIndexed makes the post of the go-live index's item it go live in
// its own publication's Store, unless the publication is suspended
// (suspended holds what was read of each publication in this sweep). An
// item whose key names no publication is skipped: it is none of the
// index's.
func (s *Store) goLiveIndexed(ctx context.Context, it scheduleItem, suspended map[string]bool) (bool, error) {
	pub, ok := keys.Of(it.PK)
	if !ok {
		return false, nil
	}
	in, err := s.In(pub)
	if err != nil {
		return false, err
	}
	paused, read := suspended[pub]
	if !read {
		if paused, err = in.Suspended(ctx); err != nil {
			return false, err
		}
		suspended[pub] = paused
	}
	if paused {
		return false, nil
	}
	return in.goLive(ctx, it)
}

// IndexSchedule puts in the go-live index the schedule items an earlier
// version wrote without it, in every publication: it walks the directory
// and, in each publication, makes the posts that are due go live (a
// consistent Query of its SCHEDULE partition, as GoLive does, unless it
// is suspended: one GetItem of its directory item) and adds
// every schedule item still without its GSI1 attributes to the index
// (one more Query of the partition, and one UpdateItem an item,
// conditional on the item being there). It returns how many items it
// added. It is idempotent, and cheap when there is nothing to add: a GetItem
// and two Queries a publication and one Query a hundred publications.
func (s *Store) IndexSchedule(ctx context.Context) (int, error) {
	n := 0
	err := s.inEveryPublication(ctx, "index the schedule", func(p *Store) error {
		paused, err := p.Suspended(ctx)
		if err != nil {
			return err
		}
		if !paused {
			if _, err := p.sweepSchedule(ctx); err != nil {
				return err
			}
		}
		added, err := p.indexSchedule(ctx)
		n += added
		return err
	})
	return n, err
}

// indexSchedule adds the Store's publication's schedule items without
// GSI1 attributes to the go-live index.
func (s *Store) indexSchedule(ctx context.Context) (int, error) {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().
		WithKeyCondition(expression.Key(keys.AttrPK).Equal(expression.Value(s.ks.Partition(schedulePartition)))).
		WithFilter(expression.Name(keys.AttrGSI1PK).AttributeNotExists()))
	if err != nil {
		return 0, err
	}
	pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    expr.KeyCondition(),
		FilterExpression:          expr.Filter(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ConsistentRead:            aws.Bool(true),
	})
	n := 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return n, fmt.Errorf("index the schedule of %s: %w", s.ks.ID(), err)
		}
		var items []scheduleItem
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return n, fmt.Errorf("index the schedule of %s: %w", s.ks.ID(), err)
		}
		for _, it := range items {
			did, err := s.indexItem(ctx, it)
			if err != nil {
				return n, fmt.Errorf("index schedule item %s: %w", it.SK, err)
			}
			if did {
				n++
			}
		}
	}
	return n, nil
}

// indexItem sets the GSI1 attributes of the schedule item it, on the
// condition that it is still there, and reports whether it did.
func (s *Store) indexItem(ctx context.Context, it scheduleItem) (bool, error) {
	want := newScheduleItem(s.ks, it.At, it.PostID)
	expr, err := dynamo.BuildExpr(expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name(keys.AttrGSI1PK), expression.Value(want.GSI1PK)).
			Set(expression.Name(keys.AttrGSI1SK), expression.Value(want.GSI1SK))).
		WithCondition(dynamo.CondExists()))
	if err != nil {
		return false, err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: dynamo.MustKey(scheduleKey(s.ks, it.At, it.PostID)),
		UpdateExpression:          expr.Update(),
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	var gone *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &gone):
		return false, nil // gone live, moved or deleted meanwhile
	case err != nil:
		return false, err
	}
	return true, nil
}
