package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
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
// here at most once a second per post per server: FlushViews makes two
// UpdateItem ADDs, on the post's total item and on its item of the day,
// whatever the number of views. DynamoDB applies ADDs to one item one
// after another, so two servers never lose each other's views, and an
// item takes 1,000 writes a second: one item per post is far within reach
// of any fleet (two writes a second a server), and no write sharding is
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
// day's item; views from others count as none.
const MaxReferrersPerFlush = 20

// prefixRef starts the attributes of a day's item that count its views by
// referrer domain: one top-level attribute per domain, which ADD creates.
const prefixRef = "ref#"

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
}

// FlushViews adds b to the post's counts: one UpdateItem ADD on its total
// item (all time, week and month) and one on its item of b.At's day
// (views and referrer domains). It returns the counts after the writes. It
// fails when a write fails; either may have been made then.
func (s *Store) FlushViews(ctx context.Context, b ViewBatch) (ViewTotals, error) {
	var out ViewTotals
	if b.Views <= 0 {
		return out, nil
	}
	week, month := keys.PopularBucket(PeriodWeek, b.At), keys.PopularBucket(PeriodMonth, b.At)
	upd := expression.Add(expression.Name("viewCount"), expression.Value(b.Views)).
		Add(expression.Name("w#"+week), expression.Value(b.Views)).
		Add(expression.Name("m#"+month), expression.Value(b.Views)).
		Set(expression.Name("type"), expression.Value(typePostViews))
	// The counts of the period before the last are of no use again.
	if prev := keys.PopularBucket(PeriodWeek, b.At.AddDate(0, 0, -14)); prev != week {
		upd = upd.Remove(expression.Name("w#" + prev))
	}
	if prev := keys.PopularBucket(PeriodMonth, b.At.AddDate(0, -2, 0)); prev != month {
		upd = upd.Remove(expression.Name("m#" + prev))
	}
	var total struct {
		ViewCount int64 `dynamodbav:"viewCount"`
	}
	got, err := s.addViews(ctx, s.ks.PostViews(b.PostID), upd)
	if err != nil {
		return out, fmt.Errorf("flush views of post %q: %w", b.PostID, err)
	}
	if err := attributevalue.UnmarshalMap(got, &total); err != nil {
		return out, fmt.Errorf("flush views of post %q: %w", b.PostID, err)
	}
	out.Total = total.ViewCount
	_ = attributevalue.Unmarshal(got["w#"+week], &out.Week)
	_ = attributevalue.Unmarshal(got["m#"+month], &out.Month)

	dayUpd := expression.Add(expression.Name("views"), expression.Value(b.Views)).
		Set(expression.Name("type"), expression.Value(typePostViewDay)).
		Set(expression.Name("expiresAt"), expression.IfNotExists(expression.Name("expiresAt"),
			expression.Value(b.At.Add(ViewDayRetention).Unix())))
	refs := slices.Sorted(maps.Keys(b.Referrers))
	if len(refs) > MaxReferrersPerFlush {
		slices.SortStableFunc(refs, func(a, c string) int { return int(b.Referrers[c] - b.Referrers[a]) })
		refs = refs[:MaxReferrersPerFlush]
	}
	for _, d := range refs {
		dayUpd = dayUpd.Add(expression.NameNoDotSplit(prefixRef+d), expression.Value(b.Referrers[d]))
	}
	got, err = s.addViews(ctx, s.ks.PostViewDay(b.PostID, b.At), dayUpd)
	if err != nil {
		return out, fmt.Errorf("flush views of post %q: %w", b.PostID, err)
	}
	_ = attributevalue.Unmarshal(got["views"], &out.Day)
	return out, nil
}

// addViews makes the update upd of the item k and returns the attributes
// it changed, as they are after it.
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
		ReturnValues:              types.ReturnValueUpdatedNew,
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

// ViewDay is a post's views on a day and their referrer domains.
type ViewDay struct {
	Day       time.Time
	Views     int64
	Referrers map[string]int64
}

// PostViewDays returns the post's views on each day from from to to (UTC
// days, both included), oldest first, days without views left out: one
// Query of its day items.
func (s *Store) PostViewDays(ctx context.Context, id string, from, to time.Time) ([]ViewDay, error) {
	k := s.ks.PostViews(id)
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(
		expression.Key(keys.AttrPK).Equal(expression.Value(k.PK)).
			And(expression.Key(keys.AttrSK).Between(expression.Value(keys.PostViewDaySort(from)), expression.Value(keys.PostViewDaySort(to))))))
	if err != nil {
		return nil, err
	}
	var days []ViewDay
	pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName: aws.String(s.table), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("views of post %q: %w", id, err)
		}
		for _, it := range page.Items {
			var d struct {
				SK    string `dynamodbav:"SK"`
				Views int64  `dynamodbav:"views"`
			}
			if err := attributevalue.UnmarshalMap(it, &d); err != nil {
				return nil, fmt.Errorf("views of post %q: %w", id, err)
			}
			day, ok := keys.ViewDayOf(d.SK)
			if !ok {
				continue
			}
			vd := ViewDay{Day: day, Views: d.Views, Referrers: map[string]int64{}}
			for name, v := range it {
				if domain, ok := strings.CutPrefix(name, prefixRef); ok {
					var n int64
					if attributevalue.Unmarshal(v, &n) == nil {
						vd.Referrers[domain] = n
					}
				}
			}
			days = append(days, vd)
		}
	}
	return days, nil
}
