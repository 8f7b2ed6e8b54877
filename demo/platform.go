package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/blogql/blog/storage"
)

// The demo platform: the demo blog is the default publication, served at
// DefaultHost too, and a second publication, Field Notes, with authors,
// a category and posts of its own, is served at NotesHost. Browsers
// resolve names under localhost to this machine, so a development server
// on port 8080 serves them at http://demo.localhost:8080 and
// http://notes.localhost:8080. NotesOwner, an author of Field Notes, is
// its owner: a token bound to it administers Field Notes, which the
// default publication's tokens may not.
const (
	DefaultHost = "demo.localhost"
	NotesSlug   = "field-notes"
	NotesHost   = "notes.localhost"
	NotesOwner  = "mae-jemison"
)

// notes is the second publication's content.
var notes = struct {
	authors    []storage.NewAuthor
	categories []storage.NewCategory
	posts      []storage.NewPost
}{
	authors: []storage.NewAuthor{
		{ID: "mae-jemison", Slug: "mae-jemison", Name: "Mae Jemison", Bio: "Keeps a notebook of every trail she walks."},
	},
	categories: []storage.NewCategory{
		{Slug: "trails", Name: "Trails", Description: "Walks, with maps and the time they took."},
	},
	posts: []storage.NewPost{
		{AuthorID: "mae-jemison", Slug: "a-ridge-walk-in-the-rain", Title: "A ridge walk in the rain", Categories: []string{"trails"}, Tags: []string{"weather"},
			Body: "# A ridge walk in the rain\n\nSix hours along the ridge, four of them wet.\n\n## What worked\n\nA map in a bag, and turning back early."},
		{AuthorID: "mae-jemison", Slug: "packing-light", Title: "Packing light", Categories: []string{"trails"}, Tags: []string{"gear"},
			Body: "# Packing light\n\nWhat stays home, and the one thing that never does.\n\n## The list\n\nWater, a map, a jacket."},
		{AuthorID: "mae-jemison", Slug: "notes-from-the-hut", Title: "Notes from the hut", Categories: []string{"trails"}, Tags: []string{"huts"},
			Body: "# Notes from the hut\n\nA night above the clouds, and the book everyone signs.\n\n## The book\n\nThe oldest entry is from 1962."},
	},
}

// SeedPlatform makes the demo a platform of two publications: it gives
// the default publication (store's) the host DefaultHost and seeds Field
// Notes, served at NotesHost, with its owner NotesOwner (made with the
// publication), its authors, category and posts,
// published a day apart before now. Like Seed it reconciles: what exists
// is left alone, so a second run writes nothing.
func SeedPlatform(ctx context.Context, store *storage.Store, now time.Time) error {
	if _, err := store.AddPublicationHost(ctx, storage.PublicationHost{ID: store.Publication(), Host: DefaultHost}); err != nil {
		return fmt.Errorf("seed demo host %s: %w", DefaultHost, err)
	}
	pub, err := store.PublicationBySlug(ctx, NotesSlug)
	if errors.Is(err, storage.ErrNotFound) {
		pub, err = store.CreatePublication(ctx, storage.NewPublication{Slug: NotesSlug, Title: "Field Notes", Hosts: []string{NotesHost},
			Owner: &storage.NewStaff{AccountID: NotesOwner}})
	}
	if err != nil {
		return fmt.Errorf("seed demo publication %s: %w", NotesSlug, err)
	}
	in, err := store.In(pub.ID)
	if err != nil {
		return err
	}
	if err := seedAuthors(ctx, in, notes.authors); err != nil {
		return fmt.Errorf("seed %s's authors: %w", NotesSlug, err)
	}
	if err := seedCategories(ctx, in, notes.categories); err != nil {
		return fmt.Errorf("seed %s's categories: %w", NotesSlug, err)
	}
	for i, np := range notes.posts {
		at := now.Add(-time.Duration(len(notes.posts)-i) * 24 * time.Hour).Truncate(time.Minute)
		if _, err := seedPost(ctx, in, &plannedPost{NewPost: np, state: statePublished, at: at}); err != nil {
			return fmt.Errorf("seed %s's post %q: %w", NotesSlug, np.Slug, err)
		}
	}
	if err := in.SyncAllPages(ctx); err != nil {
		return fmt.Errorf("seed %s's page indexes: %w", NotesSlug, err)
	}
	return nil
}
