package storage

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/blogql/blog/frontend"
)

// TestEventsOfFeaturedSeriesAndRevisions checks the change feed's events
// of the featured flag, series and revisions: featuring a published post
// is post.published.edited tagged featured; a series' writes are
// series.updated with its page and tag; a post joining a series is
// post.published.edited with the series' page; a revision item means
// nothing of its own.
func TestEventsOfFeaturedSeriesAndRevisions(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	s, f := newFeedTest(t, "fsrevents", &now)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.CreateAuthor(ctx, NewAuthor{ID: "ada", Name: "Ada"})
	must(err)
	p, err := s.CreatePost(ctx, NewPost{AuthorID: "ada", Title: "Hello", Slug: "hello", Body: "Hi."})
	must(err)
	_, err = s.Publish(ctx, PublishPost{ID: p.ID})
	must(err)
	f.events()

	_, err = s.SetFeatured(ctx, FeaturePost{ID: p.ID, Featured: true})
	must(err)
	evs := f.events()
	if !slices.Equal(typesOf(evs), []EventType{EventPostEdited}) || !slices.Contains(evs[0].Data.CacheTags, frontend.TagFeatured) {
		t.Errorf("featuring: %+v", evs)
	}

	_, err = s.CreateSeries(ctx, NewSeries{Slug: "tour", Title: "Tour", OwnerID: "ada"})
	must(err)
	evs = f.events()
	if !slices.Equal(typesOf(evs), []EventType{EventSeriesUpdated}) ||
		!slices.Equal(evs[0].Data.Paths, []string{"/series/tour"}) || !slices.Equal(evs[0].Data.CacheTags, []string{frontend.TagSeries("tour"), frontend.TagAllSeries}) {
		t.Errorf("a new series: %+v", evs)
	}

	_, _, err = s.AddSeriesPost(ctx, SeriesPostChange{Slug: "tour", PostID: p.ID})
	must(err)
	evs = f.events()
	if !slices.Equal(typesOf(evs), []EventType{EventPostEdited, EventSeriesUpdated}) {
		t.Errorf("joining a series: %v", typesOf(evs))
	}
	for _, e := range evs {
		if e.Type == EventPostEdited && (!slices.Contains(e.Data.Paths, "/series/tour") || !slices.Contains(e.Data.CacheTags, frontend.TagSeries("tour"))) {
			t.Errorf("the post's event names not its series: %+v", e.Data)
		}
	}

	cur, err := s.GetPost(ctx, p.ID)
	must(err)
	_, err = s.UpdatePost(ctx, PostPatch{ID: p.ID, ExpectedVersion: cur.Version, Title: ptr("Hello again"), EditorID: "ada"})
	must(err)
	if evs := f.events(); !slices.Equal(typesOf(evs), []EventType{EventPostEdited}) {
		t.Errorf("an edit with its revision: %v", typesOf(evs))
	}

	must(errOf(s.DeleteSeries(ctx, "tour", 0)))
	evs = f.events()
	if !slices.Equal(typesOf(evs), []EventType{EventPostEdited, EventSeriesUpdated}) {
		t.Errorf("deleting the series: %v", typesOf(evs))
	}
	bad, err := s.Check(ctx)
	must(err)
	for _, b := range bad {
		t.Error(b)
	}
}

func errOf[T any](_ T, err error) error { return err }
