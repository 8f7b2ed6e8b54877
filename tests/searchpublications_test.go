package tests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/search"
	"github.com/blogql/blog/storage"
)

// TestSearchPublicationsKeepAtMostMaxOpenIndexes: with MaxOpen 2, three
// publications searched in turns each find their own post (the same
// word in each) and no other's, no more than two indexes stay open, each
// index lives in its publication's own directory, and an index closed
// for the third opens again when its publication is searched.
func TestSearchPublicationsKeepAtMostMaxOpenIndexes(t *testing.T) {
	ctx := context.Background()
	cfg := dynamotest.ClientConfig(t, nil)
	db, err := storage.NewClient(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	table := dynamotest.Table(t, db, "searchpubs")
	store := storage.New(db, table, storage.WithStream())
	if err := store.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	var ids, posts []string
	for i := range 3 {
		pub, err := store.CreatePublication(ctx, storage.NewPublication{Slug: fmt.Sprintf("pub-%d", i), Title: fmt.Sprintf("Pub %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		in, err := store.In(pub.ID)
		if err != nil {
			t.Fatal(err)
		}
		a, err := in.CreateAuthor(ctx, storage.NewAuthor{Name: "Ada Lovelace"})
		if err != nil {
			t.Fatal(err)
		}
		p, err := in.CreatePost(ctx, storage.NewPost{AuthorID: a.ID, Title: fmt.Sprintf("Quokkas %d", i), Slug: "quokkas", Body: "Quokkas everywhere."})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.Publish(ctx, storage.PublishPost{ID: p.ID}); err != nil {
			t.Fatal(err)
		}
		ids, posts = append(ids, pub.ID), append(posts, p.ID)
	}
	dir := t.TempDir()
	pubs, err := search.NewPublications(store, search.PublicationsOptions{Options: search.Options{Dir: dir, Table: table}, MaxOpen: 2})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		pubs.Run(runCtx)
	}()
	defer func() {
		stop()
		<-done
	}()
	// A search of an index being opened or built may answer
	// ErrBuilding when the build takes longer than its time.
	find := func(i int) *search.Results {
		var res *search.Results
		waitFor(t, func() bool {
			var err error
			res, err = pubs.For(ids[i]).Search(ctx, search.Request{Query: "quokkas", First: 10})
			if err != nil && !errors.Is(err, search.ErrBuilding) {
				t.Fatalf("publication %d: %v", i, err)
			}
			return err == nil
		})
		return res
	}
	for _, i := range []int{0, 1, 2, 0} {
		res := find(i)
		if len(res.Hits) != 1 || res.Hits[0].PostID != posts[i] {
			t.Errorf("publication %d finds %+v, want its own post %s only", i, res.Hits, posts[i])
		}
		if n := pubs.Open(); n > 2 {
			t.Errorf("%d indexes open, want at most 2", n)
		}
	}
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(dir, "publications", id)); err != nil {
			t.Errorf("publication %s's index directory: %v", id, err)
		}
	}
}
