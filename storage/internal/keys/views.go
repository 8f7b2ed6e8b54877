package keys

import (
	"fmt"
	"strings"
	"time"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// Views: a post's view counts live in its own partition, on items no body
// rides on, so a flush of views is billed for a few hundred bytes: one
// total item, one item per day, and one entry per popularity period whose
// GSI1 partition lists the period's posts by views.

// The sort keys and prefixes of a post's view items.
const (
	viewsSK       = "VIEWS"
	prefixViewDay = "VIEWS#"
	prefixPopular = "POPULAR#"
)

// PostEngagementPrefixes are the sort-key prefixes of a post's views,
// popular entries and reactions (REACT covers REACT# and REACTIONS#), which
// the cleanup after a deleted post removes.
var PostEngagementPrefixes = []string{viewsSK, prefixPopular, "REACT"}

// PostViews is the item that counts a post's views: all time, and in the
// current week and month (the counts its popularity entries are kept
// from).
func (s Space) PostViews(id string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPost + id, SK: viewsSK}
}

// PostViewDay is the item that counts a post's views and their referrer
// domains on day (UTC): the post's days are one key range.
func (s Space) PostViewDay(id string, day time.Time) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPost + id, SK: prefixViewDay + Day(day)}
}

// PostViewDaySort is the sort key of the post's view item of day, for a
// range of days.
func PostViewDaySort(day time.Time) string { return prefixViewDay + Day(day) }

// Day returns the UTC day of t as view items name it: "2006-01-02".
func Day(t time.Time) string { return t.UTC().Format("2006-01-02") }

// PopularBucket returns the bucket of period ("DAY", "WEEK" or "MONTH")
// that t falls in: the UTC day, the ISO week ("2006-W01") or the month.
func PopularBucket(period string, t time.Time) string {
	t = t.UTC()
	switch period {
	case "WEEK":
		y, w := t.ISOWeek()
		return fmt.Sprintf("%04d-W%02d", y, w)
	case "MONTH":
		return t.Format("2006-01")
	}
	return Day(t)
}

// PopularEntry is the entry of a post in the popular list of a period's
// bucket, beside the post's other items.
func (s Space) PopularEntry(id, period, bucket string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + PrefixPost + id, SK: prefixPopular + period + "#" + bucket}
}

// PopularPartition is the GSI1 partition of the popular list of a
// period's bucket: a new partition every day, week and month.
func (s Space) PopularPartition(period, bucket string) string {
	return s.prefix + prefixPopular + period + "#" + bucket
}

// PopularSort orders a post in a popular list by its views: zero-padded,
// so string order is count order, then by post id.
func PopularSort(views int64, id string) string { return fmt.Sprintf("%015d#%s", views, id) }

// ViewDayOf returns the day of a post's view item whose sort key is sk, or
// false when sk is not one's.
func ViewDayOf(sk string) (time.Time, bool) {
	s, ok := strings.CutPrefix(sk, prefixViewDay)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse("2006-01-02", s)
	return t, err == nil
}
