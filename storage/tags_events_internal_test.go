package storage

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestEventsOfCoAuthorsAndTags checks the change feed's events of the
// writes co-authors and tags add: a co-author or a tag added to a
// published post is post.published.edited naming the pages and cache
// tags of every author and tag it had and has, a tag made, renamed or
// merged is tag.updated, and the copies and counts are no event.
func TestEventsOfCoAuthorsAndTags(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	s, f := newFeedTest(t, "coevents", &now)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []NewAuthor{{ID: "ada", Name: "Ada"}, {ID: "bob", Name: "Bob"}, {ID: "cy", Name: "Cy"}} {
		_, err := s.CreateAuthor(ctx, a)
		must(err)
	}
	f.records()
	post, err := s.CreatePost(ctx, NewPost{AuthorID: "ada", Title: "T", Slug: "t", CoAuthors: []string{"bob"}, Tags: []string{"Go"}})
	must(err)
	evs := f.events()
	if got := typesOf(evs); !slices.Equal(got, []EventType{EventTagUpdated}) {
		t.Fatalf("draft with a new tag: %v, want a tag.updated", got)
	}
	if d := evs[0].Data; d.Slug != "go" || !slices.Equal(d.Paths, []string{"/tags/go"}) || !slices.Equal(d.CacheTags, []string{"tag:go", "tags"}) {
		t.Errorf("tag.updated data = %+v", d)
	}
	post, err = s.Publish(ctx, PublishPost{ID: post.ID})
	must(err)
	evs = f.events()
	if got := typesOf(evs); !slices.Equal(got, []EventType{EventPostPublished}) {
		t.Fatalf("publishing: %v", got)
	}
	d := evs[0].Data
	for _, want := range []string{"/authors/ada", "/authors/bob", "/tags/go"} {
		if !slices.Contains(d.Paths, want) {
			t.Errorf("published: paths %v lack %s", d.Paths, want)
		}
	}
	for _, want := range []string{"author:ada", "author:bob", "tag:go"} {
		if !slices.Contains(d.CacheTags, want) {
			t.Errorf("published: cache tags %v lack %s", d.CacheTags, want)
		}
	}
	if !slices.Equal(d.CoAuthors, []string{"bob"}) || !slices.Equal(d.Tags, []string{"go"}) {
		t.Errorf("published: co-authors %v, tags %v", d.CoAuthors, d.Tags)
	}

	_, err = s.UpdatePost(ctx, PostPatch{ID: post.ID, ExpectedVersion: post.Version, CoAuthors: &[]string{"cy"}})
	must(err)
	evs = f.events()
	if got := typesOf(evs); !slices.Equal(got, []EventType{EventPostEdited}) {
		t.Fatalf("co-author changed: %v, want post.published.edited", got)
	}
	d = evs[0].Data
	if !slices.Equal(d.CoAuthors, []string{"cy"}) || !slices.Equal(d.PreviousCoAuthors, []string{"bob"}) ||
		!slices.Contains(d.CacheTags, "author:bob") || !slices.Contains(d.CacheTags, "author:cy") || !slices.Contains(d.Paths, "/authors/bob") {
		t.Errorf("co-author changed: data %+v", d)
	}

	_, err = s.RenameTag(ctx, TagRename{Slug: "go", Name: "Golang"})
	must(err)
	if got := typesOf(f.events()); !slices.Equal(got, []EventType{EventTagUpdated}) {
		t.Errorf("tag renamed: %v, want only tag.updated", got)
	}

	p2, err := s.CreatePost(ctx, NewPost{AuthorID: "ada", Title: "U", Slug: "u", Tags: []string{"Go lang"}})
	must(err)
	_, err = s.Publish(ctx, PublishPost{ID: p2.ID})
	must(err)
	f.events()
	_, err = s.MergeTags(ctx, TagMerge{From: "go-lang", Into: "go"})
	must(err)
	evs = f.events()
	if got := typesOf(evs); !slices.Equal(got, []EventType{EventPostEdited, EventTagUpdated}) {
		t.Fatalf("merge: %v, want the moved post's edit and tag.updated", got)
	}
	for _, e := range evs {
		if e.Type == EventTagUpdated && (!slices.Equal(e.Data.Tags, []string{"go"}) || !slices.Equal(e.Data.PreviousTags, []string{"go-lang"})) {
			t.Errorf("merge's tag.updated: %+v", e.Data)
		}
		if e.Type == EventPostEdited && (!slices.Equal(e.Data.PreviousTags, []string{"go-lang"}) || !slices.Contains(e.Data.CacheTags, "tag:go-lang")) {
			t.Errorf("moved post's edit: %+v", e.Data)
		}
	}
}
