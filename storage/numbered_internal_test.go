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
		chunk := wantChunks(testKS, c.list, []string{"POST#2026-03-01T00:00:00.000Z#p1"}, 1, "2026-03-14T09:00:00.000Z")[0]
		events, err := EventsOf(rec(streamtypes.OperationTypeInsert, nil, chunk))
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 1 || events[0].Type != EventPostPagesUpdated || !slices.Contains(events[0].Data.CacheTags, c.tag) {
			t.Errorf("%s: events %+v, want post.pages.updated with tag %s", c.list, events, c.tag)
		}
	}
}

// TestPagesWorkerWaitsForGSI1 checks what the pages worker asks of a
// list read before it rebuilds the list's index: the post's new key in
// the lists it is in, and no key of it in the lists it left, so a read of
// GSI1 that has not the write yet is tried again.
func TestPagesWorkerWaitsForGSI1(t *testing.T) {
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	was := at.Add(-time.Hour)
	e := LoggedEvent{Position: 7, Event: Event{Type: EventPostEdited, Data: EventData{
		PostID: "p1", PublishedAt: at, PreviousPublishedAt: was, Categories: []string{"go"}, PreviousCategories: []string{"go", "old"},
	}}}
	newKey, oldKey := "POST#2026-03-14T09:00:00.000Z#p1", "POST#2026-03-14T08:00:00.000Z#p1"
	lists := pendingOf(e)
	for _, c := range []struct {
		list string
		sks  []string
		want bool
	}{
		{"CAT#go", []string{newKey}, true},
		{"CAT#go", []string{oldKey}, false},
		{"CAT#go", []string{oldKey, newKey}, false},
		{"FEED", []string{"POST#2026-01-01T00:00:00.000Z#p0", newKey}, true},
		{"CAT#old", nil, true},
		{"CAT#old", []string{oldKey}, false},
	} {
		p, ok := lists[c.list]
		if !ok {
			t.Fatalf("the event names no list %s: %v", c.list, lists)
		}
		if got := p.shows(c.sks); got != c.want {
			t.Errorf("%s showing %v: shows = %v, want %v", c.list, c.sks, got, c.want)
		}
		if !p.from.Equal(was) {
			t.Errorf("%s: from %v, want the earlier time %v", c.list, p.from, was)
		}
	}
}
