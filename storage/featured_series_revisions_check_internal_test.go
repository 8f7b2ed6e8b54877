package storage

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestCheckFindsBrokenFeaturedSeriesAndRevisions breaks, one at a time,
// what the featured list, a series and a post's revisions must agree on,
// and checks that the invariant checker reports each.
func TestCheckFindsBrokenFeaturedSeriesAndRevisions(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	db, table := testBackend(t, clock, "fsrcheck")
	s := New(db, table, WithClock(clock))
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.CreateAuthor(ctx, NewAuthor{ID: "ada", Name: "Ada"})
	must(err)
	var ids []string
	for _, slug := range []string{"one", "two"} {
		p, err := s.CreatePost(ctx, NewPost{AuthorID: "ada", Title: slug, Slug: slug, Body: "Hi."})
		must(err)
		_, err = s.Publish(ctx, PublishPost{ID: p.ID})
		must(err)
		_, err = s.SetFeatured(ctx, FeaturePost{ID: p.ID, Featured: true})
		must(err)
		ids = append(ids, p.ID)
	}
	_, err = s.CreateSeries(ctx, NewSeries{Slug: "tour", Title: "Tour", OwnerID: "ada"})
	must(err)
	_, _, err = s.AddSeriesPost(ctx, SeriesPostChange{Slug: "tour", PostID: ids[0]})
	must(err)
	p, err := s.GetPost(ctx, ids[1])
	must(err)
	_, err = s.UpdatePost(ctx, PostPatch{ID: ids[1], ExpectedVersion: p.Version, Title: ptr("Two")})
	must(err)
	if bad, err := s.Check(ctx); err != nil || len(bad) > 0 {
		t.Fatalf("before breaking anything: %v %v", bad, err)
	}

	put := func(item any) {
		t.Helper()
		tx := s.db.NewTxn()
		must(tx.Put(item, nil, nil))
		must(s.db.Exec(ctx, tx))
	}
	del := func(k key) {
		t.Helper()
		tx := s.db.NewTxn()
		must(tx.Delete(k, nil, nil))
		must(s.db.Exec(ctx, tx))
	}
	series, err := s.readSeries(ctx, "tour", true)
	must(err)
	var rev revisionItem
	must(s.db.Get(ctx, s.ks.Revision(ids[1], 1), true, &rev))
	var featured postItem
	must(s.db.Get(ctx, s.ks.FeaturedCopy(ids[0]), true, &featured))

	for _, c := range []struct {
		name, want   string
		break_, mend func()
	}{
		{"a featured copy missing", "lacks its copy", func() { del(s.ks.FeaturedCopy(ids[0])) }, func() { put(featured) }},
		{"a featured copy of another title", "disagrees", func() { f := featured; f.Title = "Other"; put(f) }, func() { put(featured) }},
		{"a post listed twice", "listed twice", func() {
			x := *series
			x.Posts = []string{ids[0], ids[0]}
			put(x)
		}, func() { put(*series) }},
		{"a series listing a post that names none", "names series", func() {
			x := *series
			x.Posts = []string{ids[0], ids[1]}
			put(x)
		}, func() { put(*series) }},
		{"a post naming a series that lists it not", "does not list it", func() {
			x := *series
			x.Posts = nil
			put(x)
		}, func() { put(*series) }},
		{"a revision past the post's count", "counts", func() { r := rev; r.N = 7; r.SK = s.ks.Revision(ids[1], 7).SK; put(r) }, func() { del(s.ks.Revision(ids[1], 7)) }},
		{"a revision of a post gone", "does not exist", func() { r := rev; r.PostID = "gone"; r.PK = s.ks.Revision("gone", 1).PK; put(r) }, func() { del(s.ks.Revision("gone", 1)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.break_()
			bad, err := s.Check(ctx)
			must(err)
			if !strings.Contains(strings.Join(bad, "\n"), c.want) {
				t.Errorf("Check = %v, want a report with %q", bad, c.want)
			}
			c.mend()
			if bad, err := s.Check(ctx); err != nil || len(bad) > 0 {
				t.Fatalf("mended: %v %v", bad, err)
			}
		})
	}
}
