package storage

import (
	"slices"
	"testing"
	"time"

	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/blogql/blog/storage/internal/keys"
)

// TestEventsOfTheGoLiveMarker covers the records of a scheduled post by
// hand: its state comes from the go-live marker, never from the record's
// time, and the write that removes the marker alone is its publication.
func TestEventsOfTheGoLiveMarker(t *testing.T) {
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	h := &handRecords{t: t, at: at}
	rec := func(name streamtypes.OperationType, old, cur *postItem) streamtypes.Record {
		keyed := func(p *postItem) any {
			if p == nil {
				return nil
			}
			return p.withPostKeys(testKS)
		}
		return h.record(name, keyed(old), keyed(cur))
	}
	post := postItem{
		ID: "p1", Slug: "hello", Title: "Hello", Status: string(StatusPublished), AuthorID: "ada", AuthorSlug: "ada",
		Cats: []catRef{{Slug: "go", Name: "Go"}}, PublishedAt: keys.Time(at.Add(-time.Hour)), Version: 2,
	}
	// later is scheduled a minute after the record's time, with its
	// marker; live is the same post gone live.
	later := post
	later.PublishedAt, later.GoLiveAt = keys.Time(at.Add(time.Minute)), keys.Time(at.Add(time.Minute))
	live := later
	live.GoLiveAt = ""
	with := func(p postItem, change func(*postItem)) *postItem {
		change(&p)
		return &p
	}
	modify, insert, remove := streamtypes.OperationTypeModify, streamtypes.OperationTypeInsert, streamtypes.OperationTypeRemove
	for _, c := range []struct {
		name string
		rec  streamtypes.Record
		want []EventType
	}{
		{"a post published a minute later without the marker is post.published: the writer's clock said its time had passed",
			rec(insert, nil, &live), []EventType{EventPostPublished}},
		{"a post published an hour ago with the marker is post.scheduled: it has not gone live",
			rec(insert, nil, with(post, func(p *postItem) { p.GoLiveAt = p.PublishedAt })), []EventType{EventPostScheduled}},
		{"the marker removed, the version kept, is the go-live: post.published",
			rec(modify, &later, &live), []EventType{EventPostPublished}},
		{"a scheduled post edited, its marker kept, is no event",
			rec(modify, &later, with(later, func(p *postItem) { p.Title, p.Version = "Hello again", 3 })), nil},
		{"a scheduled post's marker moved with its time is post.rescheduled",
			rec(modify, &later, with(later, func(p *postItem) {
				p.PublishedAt, p.GoLiveAt, p.Version = keys.Time(at.Add(time.Hour)), keys.Time(at.Add(time.Hour)), 3
			})), []EventType{EventPostRescheduled}},
		{"a scheduled post made a draft is post.unscheduled",
			rec(modify, &later, with(later, func(p *postItem) { p.Status, p.PublishedAt, p.GoLiveAt, p.Version = string(StatusDraft), "", "", 3 })),
			[]EventType{EventPostUnscheduled}},
		{"a scheduled post removed is post.deleted", rec(remove, &later, nil), []EventType{EventPostDeleted}},
		{"a scheduled post published now is post.published",
			rec(modify, &later, with(post, func(p *postItem) { p.Version = 3 })), []EventType{EventPostPublished}},
		{"a published post given a marker by a write is post.unpublished and post.scheduled",
			rec(modify, &post, with(later, func(p *postItem) { p.Version = 3 })), []EventType{EventPostScheduled, EventPostUnpublished}},
		{"a marker added without a new version (Migrate marking a post an earlier version scheduled) is no event",
			rec(modify, &live, &later), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			evs, err := EventsOf(c.rec)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := typesOf(evs), append([]EventType{}, c.want...); !slices.Equal(got, want) {
				t.Errorf("events %v, want %v", got, want)
			}
		})
	}
}

// TestGoLiveAt decides the marker a write gives a post from the states
// before and after it and the store's clock at the write.
func TestGoLiveAt(t *testing.T) {
	const now, past, future, later = "2026-03-01T12:00:00.000Z", "2026-03-01T11:00:00.000Z", "2026-03-01T13:00:00.000Z", "2026-03-01T14:00:00.000Z"
	published := func(at, marker string) *postItem {
		return &postItem{ID: "p", Status: string(StatusPublished), PublishedAt: at, GoLiveAt: marker}
	}
	draft := &postItem{ID: "p", Status: string(StatusDraft)}
	for _, c := range []struct {
		name          string
		before, after *postItem
		want          string
	}{
		{"a draft has none", draft, draft, ""},
		{"publishing now or earlier gives none", draft, published(past, ""), ""},
		{"publishing later gives its time", draft, published(future, ""), future},
		{"rescheduling gives the new time", published(future, future), published(later, ""), later},
		{"moving a scheduled post to the past removes it", published(future, future), published(past, ""), ""},
		{"an edit keeps it", published(future, future), published(future, ""), future},
		{"an edit after the time has passed keeps it: GoLive makes the post go live", published(past, past), published(past, ""), past},
		{"an edit of a post that went live gives none, whatever the clock", published(future, ""), published(future, ""), ""},
		{"re-dating a live post to later gives its time", published(past, ""), published(future, ""), future},
		{"unpublishing removes it", published(future, future), draft, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := goLiveAt(c.before, c.after, now); got != c.want {
				t.Errorf("marker %q, want %q", got, c.want)
			}
		})
	}
}
