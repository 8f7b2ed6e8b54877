package storage

import (
	"slices"
	"testing"
	"time"

	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// TestPageIndexEvents checks that a write of a list's page index is
// post.pages.updated with the list's cache tag, so the numbered pages
// read before the index changed are purged.
func TestPageIndexEvents(t *testing.T) {
	rec := (&handRecords{t: t, at: time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)}).record
	for _, c := range []struct{ list, tag string }{{"FEED", "feed"}, {"CAT#go", "category:go"}, {"TAG#news", "tag:news"}} {
		chunk := wantChunks(c.list, []string{"POST#2026-03-01T00:00:00.000Z#p1"}, "2026-03-14T09:00:00.000Z")[0]
		events, err := EventsOf(rec(streamtypes.OperationTypeInsert, nil, chunk))
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 1 || events[0].Type != EventPostPagesUpdated || !slices.Contains(events[0].Data.CacheTags, c.tag) {
			t.Errorf("%s: events %+v, want post.pages.updated with tag %s", c.list, events, c.tag)
		}
	}
}
