package storage

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/keys"
)

// The counts an author, category, tag or STATS item carries beside its
// total (counters.go writes them): an entry per scheduled post, and a count
// of posts per month, each month its own attribute (keys.MonthAttr).

// attrScheduled is the map on an author, a category and the STATS item
// that records the posts they count whose publishedAt was in the future
// when they were written: publishedAt by post id. postCount counts those
// posts from the start; a reader subtracts the entries still in the
// future, so a count changes the moment a post appears, with no write. An
// entry is written and removed in its post's transactions, and entries
// whose time has passed are removed by the next write that schedules a
// post there (see counterChange.action).
const attrScheduled = "scheduled"

// schedule holds an item's scheduled-post entries: publishedAt by post id.
// It is nil when the item has no map yet.
type schedule map[string]string

// split returns how many of total posts are visible at now and how many
// are still waiting for their time.
func (s schedule) split(total int64, now string) (visible, waiting int64) {
	for _, at := range s {
		if at > now {
			waiting++
		}
	}
	return total - waiting, waiting
}

// months holds an item's counts of posts by month ("2006-01"), scheduled
// posts included, as its month attributes hold them (keys.MonthAttr).
type months map[string]int64

// archive returns the months as a reader sees them at now: the entries of
// scheduled posts still in the future taken out, months without posts left
// out, newest first.
func (m months) archive(s schedule, now string) []ArchiveMonth {
	counts := maps.Clone(m)
	for _, at := range s {
		if at > now && len(at) >= len("2006-01") {
			counts[at[:len("2006-01")]]--
		}
	}
	var out []ArchiveMonth
	for month, n := range counts {
		t, err := time.Parse("2006-01", month)
		if err == nil && n > 0 {
			out = append(out, ArchiveMonth{Year: t.Year(), Month: t.Month(), PostCount: n})
		}
	}
	slices.SortFunc(out, func(a, b ArchiveMonth) int { return b.Start().Compare(a.Start()) })
	return out
}

// decodeCounter decodes the item av into out and returns its
// scheduled-post entries and its counts by month.
func decodeCounter(av types.AttributeValue, out any) (schedule, months, error) {
	m, ok := av.(*types.AttributeValueMemberM)
	if !ok {
		return nil, nil, fmt.Errorf("item is a %T, not a map", av)
	}
	if err := attributevalue.UnmarshalMap(m.Value, out); err != nil {
		return nil, nil, err
	}
	byMonth := months{}
	for name, v := range m.Value {
		if month, isMonth := strings.CutPrefix(name, keys.AttrMonthPrefix); isMonth {
			var n int64
			if err := attributevalue.Unmarshal(v, &n); err != nil {
				return nil, nil, fmt.Errorf("decode %s: %w", name, err)
			}
			byMonth[month] = n
		}
	}
	v, ok := m.Value[attrScheduled]
	if !ok {
		return nil, byMonth, nil
	}
	s := schedule{}
	if entries, isMap := v.(*types.AttributeValueMemberM); isMap {
		for id, at := range entries.Value {
			// A table written by earlier versions holds an entry "-" with
			// no time: like any entry whose time has passed it counts
			// nothing, and the next write that schedules a post there
			// removes it.
			if at, isString := at.(*types.AttributeValueMemberS); isString {
				s[id] = at.Value
			}
		}
	}
	return s, byMonth, nil
}
