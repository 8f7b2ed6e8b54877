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

// A post's views of a day are counted on its views item (d#<day>,
// r#<day>#<domain>) while the day lasts, so a flush is one write, and move
// to the day's item after: MoveViewDays, called by the first flush of the
// post on a later day, is one TransactWriteItems that adds each past
// day's counts to its day item and removes them from the views item on
// the condition that they are still what the flush read, and that no
// other move came between (the views item's move number). So a day's
// views are counted once, on one item or the other, even when a server
// whose clock is behind adds to a day after it moved (the next flush
// moves the rest), and a move that lost a race changes nothing. Each day
// item carries the number of the move that last wrote it, which lets
// PostViewDays read the two items one after the other without counting a
// day twice.

// maxDaysPerMove bounds the past days one move takes; a post unviewed for
// longer moves the rest at its next flushes.
const maxDaysPerMove = 30

// errViewsMoved means that a move found the views item changed since the
// flush read it: another server moved the days or added to them. The next
// flush tries again.
var errViewsMoved = errors.New("views item changed since it was read")

// pastDays are the counts of past days a views item holds, and its move
// number, as a flush read them.
type pastDays struct {
	postID string
	moves  int64
	days   map[string]*dayCounts
}

// dayCounts are the views of a day and by referrer domain.
type dayCounts struct {
	views int64
	refs  map[string]int64
}

// readPastDays returns the counts of the days before today that the views
// item it holds.
func readPastDays(postID string, it map[string]types.AttributeValue, today string) pastDays {
	p := pastDays{postID: postID}
	_ = attributevalue.Unmarshal(it[attrMoves], &p.moves)
	for day, c := range viewsItemDays(it) {
		if day < today {
			if p.days == nil {
				p.days = map[string]*dayCounts{}
			}
			p.days[day] = c
		}
	}
	return p
}

// viewsItemDays returns the counts of days a views item holds, by day.
func viewsItemDays(it map[string]types.AttributeValue) map[string]*dayCounts {
	days := map[string]*dayCounts{}
	get := func(day string) *dayCounts {
		if days[day] == nil {
			days[day] = &dayCounts{refs: map[string]int64{}}
		}
		return days[day]
	}
	for name, v := range it {
		var n int64
		if day, ok := strings.CutPrefix(name, prefixViewsDay); ok && attributevalue.Unmarshal(v, &n) == nil {
			get(day).views = n
		} else if rest, ok := strings.CutPrefix(name, prefixViewsRef); ok && attributevalue.Unmarshal(v, &n) == nil {
			if day, domain, ok := strings.Cut(rest, "#"); ok {
				get(day).refs[domain] = n
			}
		}
	}
	return days
}

// MoveViewDays moves the counts of past days the flush that returned t
// read on the post's views item to their day items: one
// TransactWriteItems, or none when there are none. It returns the number
// of requests made. A move refused because the views item changed since
// the flush (another server's flush or move) is no error: the next flush
// moves what is left. It fails when the transaction fails otherwise;
// nothing moved then.
func (s *Store) MoveViewDays(ctx context.Context, t ViewTotals) (int, error) {
	p := t.past
	if len(p.days) == 0 {
		return 0, nil
	}
	tx := s.db.NewTxn()
	move := p.moves + 1
	days := slices.Sorted(maps.Keys(p.days))[:min(len(p.days), maxDaysPerMove)]
	upd := expression.Set(expression.Name(attrMoves), expression.Value(move))
	cond := expression.Name(attrMoves).AttributeNotExists()
	if p.moves > 0 {
		cond = expression.Name(attrMoves).Equal(expression.Value(p.moves))
	}
	for _, day := range days {
		c := p.days[day]
		at, err := time.Parse(time.DateOnly, day)
		if err != nil {
			continue
		}
		upd = upd.Remove(expression.Name(prefixViewsDay + day))
		cond = cond.And(expression.Name(prefixViewsDay + day).Equal(expression.Value(c.views)))
		dayUpd := expression.Add(expression.Name("views"), expression.Value(c.views)).
			Set(expression.Name("type"), expression.Value(typePostViewDay)).
			Set(expression.Name(attrMoves), expression.Value(move)).
			Set(expression.Name("expiresAt"), expression.IfNotExists(expression.Name("expiresAt"),
				expression.Value(at.Add(ViewDayRetention).Unix())))
		for _, d := range slices.Sorted(maps.Keys(c.refs)) {
			upd = upd.Remove(expression.NameNoDotSplit(prefixViewsRef + day + "#" + d))
			dayUpd = dayUpd.Add(expression.NameNoDotSplit(prefixRef+d), expression.Value(c.refs[d]))
		}
		if err := tx.Update(s.ks.PostViewDay(p.postID, at), dayUpd, nil, nil); err != nil {
			return 0, fmt.Errorf("move views of post %q: %w", p.postID, err)
		}
	}
	if err := tx.Update(s.ks.PostViews(p.postID), upd, &cond, errViewsMoved); err != nil {
		return 0, fmt.Errorf("move views of post %q: %w", p.postID, err)
	}
	switch err := s.db.Exec(ctx, tx); {
	case errors.Is(err, errViewsMoved):
		return 1, nil
	case err != nil:
		return 1, fmt.Errorf("move views of post %q: %w", p.postID, err)
	}
	return 1, nil
}

// ViewDay is a post's views on a day and their referrer domains.
type ViewDay struct {
	Day       time.Time
	Views     int64
	Referrers map[string]int64
}

// PostViewDays returns the post's views on each day from from to to (UTC
// days, both included), oldest first, days without views left out: one
// GetItem of its views item (the days not moved yet), then one Query of
// its day items, both strongly consistent. A day item written by a move
// the views item had not made when it was read already holds what the
// views item held of its day, which is then not added again.
func (s *Store) PostViewDays(ctx context.Context, id string, from, to time.Time) ([]ViewDay, error) {
	got, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: dynamo.MustKey(s.ks.PostViews(id)), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("views of post %q: %w", id, err)
	}
	var moves int64
	_ = attributevalue.Unmarshal(got.Item[attrMoves], &moves)
	pending := viewsItemDays(got.Item)

	k := s.ks.PostViews(id)
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(
		expression.Key(keys.AttrPK).Equal(expression.Value(k.PK)).
			And(expression.Key(keys.AttrSK).Between(expression.Value(keys.PostViewDaySort(from)), expression.Value(keys.PostViewDaySort(to))))))
	if err != nil {
		return nil, err
	}
	byDay := map[string]*ViewDay{}
	pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName: aws.String(s.table), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ConsistentRead: aws.Bool(true),
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
				Moves int64  `dynamodbav:"moves"`
			}
			if err := attributevalue.UnmarshalMap(it, &d); err != nil {
				return nil, fmt.Errorf("views of post %q: %w", id, err)
			}
			day, ok := keys.ViewDayOf(d.SK)
			if !ok {
				continue
			}
			vd := &ViewDay{Day: day, Views: d.Views, Referrers: map[string]int64{}}
			for name, v := range it {
				if domain, ok := strings.CutPrefix(name, prefixRef); ok {
					var n int64
					if attributevalue.Unmarshal(v, &n) == nil {
						vd.Referrers[domain] = n
					}
				}
			}
			if d.Moves > moves {
				delete(pending, keys.Day(day))
			}
			byDay[keys.Day(day)] = vd
		}
	}
	for day, c := range pending {
		at, err := time.Parse(time.DateOnly, day)
		if err != nil || day < keys.Day(from) || day > keys.Day(to) {
			continue
		}
		vd := byDay[day]
		if vd == nil {
			vd = &ViewDay{Day: at, Referrers: map[string]int64{}}
			byDay[day] = vd
		}
		vd.Views += c.views
		for d, n := range c.refs {
			vd.Referrers[d] += n
		}
	}
	days := make([]ViewDay, 0, len(byDay))
	for _, day := range slices.Sorted(maps.Keys(byDay)) {
		days = append(days, *byDay[day])
	}
	return days, nil
}
