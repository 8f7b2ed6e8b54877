package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
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

// Views are counted in memory by each server (package views) and added
// here at most once a second per post per server: FlushViews makes one
// UpdateItem ADD, on the post's views item, whatever the number of views.
// The item keeps all time, the week's and the month's counts, and the
// views and referrer domains of the days not yet moved to their own items
// (d#<day>, r#<day>#<domain>); the first flush on a later day moves them
// (viewdays.go), once a day a post. DynamoDB applies ADDs to one item one
// after another, so two servers never lose each other's views, and an
// item takes 1,000 writes a second: one item per post is far within reach
// of any fleet (one write a second a server), and no write sharding is
// needed. The popular lists are kept apart from the counts (WritePopular),
// more rarely, as each of their writes is a write of a GSI1 partition
// every viewed post of the period shares.

// The item types of views.
const (
	typePostViews    = "postViews"
	typePostViewDay  = "postViewDay"
	typePopularEntry = "popularEntry"
)

// The popularity periods.
const (
	PeriodDay   = "DAY"
	PeriodWeek  = "WEEK"
	PeriodMonth = "MONTH"
)

// PopularPeriods are the periods posts are ranked by views in.
var PopularPeriods = []string{PeriodDay, PeriodWeek, PeriodMonth}

// ViewDayRetention is how long a post's views of a day are kept: the
// item of a day expires after it (DynamoDB's TTL).
const ViewDayRetention = 400 * 24 * time.Hour

// PopularRetention is how long an entry of a popular list outlives its
// period's start.
const PopularRetention = 62 * 24 * time.Hour

// MaxReferrersPerFlush bounds the referrer domains one flush adds to a
// day's counts; views from others count as none.
const MaxReferrersPerFlush = 20

// prefixRef starts the attributes of a day's item that count its views by
// referrer domain: one top-level attribute per domain, which ADD creates.
const prefixRef = "ref#"

// The attributes of the views item that count the views of a day (d#<day>)
// and by referrer domain (r#<day>#<domain>) until they move to the day's
// item, and the number of moves made (attrMoves), which a day's item
// carries of the move that last wrote it.
const (
	prefixViewsDay = "d#"
	prefixViewsRef = "r#"
	attrMoves      = "moves"
)

// ViewBatch is what a server counted of a post since its last flush.
type ViewBatch struct {
	PostID string
	// At is when they were counted: their day, week and month.
	At    time.Time
	Views int64
	// Referrers counts the views by referrer domain.
	Referrers map[string]int64
}

// ViewTotals are a post's counts after a flush: all time, and in At's
// day, week and month.
type ViewTotals struct {
	Total, Day, Week, Month int64
	// past are the counts of earlier days the views item still holds,
	// which MoveViewDays moves to their day items.
	past pastDays
}

// PastDays reports whether the views item holds counts of days before the
// flush's, which MoveViewDays moves.
func (t ViewTotals) PastDays() bool { return len(t.past.days) > 0 }

// FlushViews adds b to the post's counts: one UpdateItem ADD on its views
// item (all time, week, month, and b.At's day and its referrer domains).
// It returns the counts after the write, with the days before b.At's the
// item still holds (ViewTotals.PastDays). It fails when the write fails:
// nothing was added then, or the whole batch was.
func (s *Store) FlushViews(ctx context.Context, b ViewBatch) (ViewTotals, error) {
	var out ViewTotals
	if b.Views <= 0 {
		return out, nil
	}
	day := keys.Day(b.At)
	week, month := keys.PopularBucket(PeriodWeek, b.At), keys.PopularBucket(PeriodMonth, b.At)
	upd := expression.Add(expression.Name("viewCount"), expression.Value(b.Views)).
		Add(expression.Name("w#"+week), expression.Value(b.Views)).
		Add(expression.Name("m#"+month), expression.Value(b.Views)).
		Add(expression.Name(prefixViewsDay+day), expression.Value(b.Views)).
		Set(expression.Name("type"), expression.Value(typePostViews))
	// The counts of the period before the last are of no use again.
	if prev := keys.PopularBucket(PeriodWeek, b.At.AddDate(0, 0, -14)); prev != week {
		upd = upd.Remove(expression.Name("w#" + prev))
	}
	if prev := keys.PopularBucket(PeriodMonth, b.At.AddDate(0, -2, 0)); prev != month {
		upd = upd.Remove(expression.Name("m#" + prev))
	}
	refs := slices.Sorted(maps.Keys(b.Referrers))
	if len(refs) > MaxReferrersPerFlush {
		slices.SortStableFunc(refs, func(a, c string) int { return int(b.Referrers[c] - b.Referrers[a]) })
		refs = refs[:MaxReferrersPerFlush]
	}
	for _, d := range refs {
		upd = upd.Add(expression.NameNoDotSplit(prefixViewsRef+day+"#"+d), expression.Value(b.Referrers[d]))
	}
	got, err := s.addViews(ctx, s.ks.PostViews(b.PostID), upd)
	if err != nil {
		return out, fmt.Errorf("flush views of post %q: %w", b.PostID, err)
	}
	var total struct {
		ViewCount int64 `dynamodbav:"viewCount"`
	}
	if err := attributevalue.UnmarshalMap(got, &total); err != nil {
		return out, fmt.Errorf("flush views of post %q: %w", b.PostID, err)
	}
	out.Total = total.ViewCount
	_ = attributevalue.Unmarshal(got["w#"+week], &out.Week)
	_ = attributevalue.Unmarshal(got["m#"+month], &out.Month)
	_ = attributevalue.Unmarshal(got[prefixViewsDay+day], &out.Day)
	out.past = readPastDays(b.PostID, got, day)
	return out, nil
}

// addViews makes the update upd of the item k and returns the item as it
// is after it.
func (s *Store) addViews(ctx context.Context, k key, upd expression.UpdateBuilder) (map[string]types.AttributeValue, error) {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithUpdate(upd))
	if err != nil {
		return nil, err
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: dynamo.MustKey(k),
		UpdateExpression:          expr.Update(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ReturnValues:              types.ReturnValueAllNew,
	})
	if err != nil {
		return nil, err
	}
	return out.Attributes, nil
}

// ViewCounts returns the all-time views of each post of ids, in order
// (zero for one never viewed): one BatchGetItem of their total items.
func (s *Store) ViewCounts(ctx context.Context, ids []string) ([]int64, error) {
	found, err := s.db.BatchGet(ctx, mapKeys(ids, s.ks.PostViews), false)
	if err != nil {
		return nil, fmt.Errorf("view counts: %w", err)
	}
	out := make([]int64, len(ids))
	for i, id := range ids {
		var v struct {
			ViewCount int64 `dynamodbav:"viewCount"`
		}
		if err := dynamo.DecodeFound(found, s.ks.PostViews(id), &v); err != nil && !errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("view counts: %w", err)
		}
		out[i] = v.ViewCount
	}
	return out, nil
}
