package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// A popular list is a GSI1 partition per period's bucket (a day, an ISO
// week, a month) of entries, one per post, beside the post's other items.
// An entry carries the post's summary, as a category copy does (no body),
// so a list is one Query. The summary and its version (the post's) are
// kept fresh two ways:
//
//   - The flusher (WritePopular) reads the post item before it writes the
//     entries and writes them on the condition that they hold no newer
//     version: an edit reaches the list at the post's next popular write.
//   - A post write that hides a published post (unpublish, delete, a
//     schedule) puts a tombstone over the post's entries of the current
//     buckets, in its own transaction (popularActions): an entry with the
//     new version and no GSI1 key, so the post leaves the lists at once
//     and a flusher that read the post before it cannot put it back.
//
// Readers list only the current buckets, so older entries need no
// tombstone; they expire.

// popularItem is a post's entry in the popular list of a period's bucket.
// A tombstone has no GSI1 key and no summary.
type popularItem struct {
	PK        string    `dynamodbav:"PK"`
	SK        string    `dynamodbav:"SK"`
	GSI1PK    string    `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK    string    `dynamodbav:"GSI1SK,omitempty"`
	Type      string    `dynamodbav:"type"`
	PostID    string    `dynamodbav:"postId"`
	Views     int64     `dynamodbav:"views"`
	Version   int64     `dynamodbav:"version"`
	Post      *postItem `dynamodbav:"post,omitempty"`
	ExpiresAt int64     `dynamodbav:"expiresAt"`
}

// WritePopular sets the entries of the post id in the popular lists of
// at's day, week and month to the counts t, with the post's summary as it
// reads it: one Query of the post item, then one UpdateItem an entry, on
// the condition that the entry does not rank the post higher already (a
// server that flushed later may have written a later count) nor hold a
// newer version of the post, which is no error. A post that is not
// visible at at is not written.
func (s *Store) WritePopular(ctx context.Context, id string, at time.Time, t ViewTotals) error {
	p, err := s.readPostItems(ctx, id, false, false)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("write popular entries of post %q: %w", id, err)
	}
	if !p.post().VisibleAt(at) {
		return nil
	}
	summary := p.summary()
	summary.PK, summary.SK, summary.GSI1PK, summary.GSI1SK = "", "", "", ""
	post, err := attributevalue.Marshal(summary)
	if err != nil {
		return fmt.Errorf("write popular entries of post %q: %w", id, err)
	}
	for _, e := range []struct {
		period string
		views  int64
	}{{PeriodDay, t.Day}, {PeriodWeek, t.Week}, {PeriodMonth, t.Month}} {
		if e.views <= 0 {
			continue
		}
		bucket := keys.PopularBucket(e.period, at)
		sort := keys.PopularSort(e.views, id)
		upd := expression.Set(expression.Name(keys.AttrGSI1PK), expression.Value(s.ks.PopularPartition(e.period, bucket))).
			Set(expression.Name(keys.AttrGSI1SK), expression.Value(sort)).
			Set(expression.Name("views"), expression.Value(e.views)).
			Set(expression.Name("postId"), expression.Value(id)).
			Set(expression.Name("type"), expression.Value(typePopularEntry)).
			Set(expression.Name("version"), expression.Value(p.Version)).
			Set(expression.Name("post"), expression.Value(post)).
			Set(expression.Name("expiresAt"), expression.Value(at.Add(PopularRetention).Unix()))
		cond := expression.Name(keys.AttrGSI1SK).AttributeNotExists().
			Or(expression.Name(keys.AttrGSI1SK).LessThan(expression.Value(sort))).
			And(expression.Name("version").AttributeNotExists().
				Or(expression.Name("version").LessThanEqual(expression.Value(p.Version))))
		expr, err := dynamo.BuildExpr(expression.NewBuilder().WithUpdate(upd).WithCondition(cond))
		if err != nil {
			return err
		}
		_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.table), Key: dynamo.MustKey(s.ks.PopularEntry(id, e.period, bucket)),
			UpdateExpression:          expr.Update(),
			ConditionExpression:       expr.Condition(),
			ExpressionAttributeNames:  expr.Names(),
			ExpressionAttributeValues: expr.Values(),
		})
		var failed *types.ConditionalCheckFailedException
		if err != nil && !errors.As(err, &failed) {
			return fmt.Errorf("write popular entry of post %q: %w", id, err)
		}
	}
	return nil
}

// popularActions adds to t the tombstones over the popular entries of the
// current buckets (at now) of a post that before showed and after hides:
// unpublished, scheduled for later or deleted. A post that did not show
// has no entries of these buckets; one that still shows keeps them
// (WritePopular refreshes their summary).
func popularActions(ks keys.Space, t *dynamo.Txn, before, after *postItem, now string) error {
	at := keys.ParseTime(now)
	if before == nil || !before.post().VisibleAt(at) || after != nil && after.post().VisibleAt(at) {
		return nil
	}
	version := before.Version + 1
	if after != nil {
		version = max(version, after.Version)
	}
	var errs []error
	for _, period := range PopularPeriods {
		k := ks.PopularEntry(before.ID, period, keys.PopularBucket(period, at))
		errs = append(errs, t.Put(popularItem{PK: k.PK, SK: k.SK, Type: typePopularEntry, PostID: before.ID,
			Version: version, ExpiresAt: at.Add(PopularRetention).Unix()}, nil, nil))
	}
	return errors.Join(errs...)
}

// Popular is a post in a popular list, with its views in the period.
type Popular struct {
	// Post is the post's summary as the entry carries it (Summary).
	Post  *Post
	Views int64
}

// PopularPosts returns the first posts of period's list at at (its
// current day, week or month), most viewed first, each with its summary:
// one Query of its GSI1 partition. Entries whose summary is not visible at
// at are left out. An unknown period is ErrInvalidInput.
func (s *Store) PopularPosts(ctx context.Context, period string, at time.Time, first int) ([]Popular, error) {
	if !slices.Contains(PopularPeriods, period) {
		return nil, fmt.Errorf("%w: unknown period %q", ErrInvalidInput, period)
	}
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(
		expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.PopularPartition(period, keys.PopularBucket(period, at))))))
	if err != nil {
		return nil, err
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String(keys.IndexGSI1),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(int32(first)),
	})
	if err != nil {
		return nil, fmt.Errorf("popular posts: %w", err)
	}
	list := make([]Popular, 0, len(out.Items))
	for _, it := range out.Items {
		var e popularItem
		if err := attributevalue.UnmarshalMap(it, &e); err != nil {
			return nil, fmt.Errorf("popular posts: %w", err)
		}
		if e.Post == nil {
			continue // written before entries carried the summary
		}
		e.Post.Type = typePopularEntry
		p := e.Post.post()
		if !p.VisibleAt(at) {
			continue
		}
		list = append(list, Popular{Post: p, Views: e.Views})
	}
	return list, nil
}
