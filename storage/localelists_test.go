package storage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// TestWorstCaseLocalePostFitsOneTransaction writes a post with a locale
// and the most of everything (10 authors, 10 categories, 10 tags), whose
// locale adds one copy per category and tag: its publication, a
// schedule to another month, a rename of an author and its deletion each
// fit one transaction of at most 100 actions, and an edit replacing all
// its tags, which would not, is refused as bad input with nothing sent.
func TestWorstCaseLocalePostFitsOneTransaction(t *testing.T) {
	configure, sent := recordTransactions()
	e := newEnv(t, configure)
	ctx := context.Background()
	var coAuthors, cats, tags, otherTags []string
	e.author("ada", "Ada")
	for i := range storage.MaxAuthors - 1 {
		coAuthors = append(coAuthors, must[*storage.Author](t)(e.store.CreateAuthor(ctx, storage.NewAuthor{ID: fmt.Sprintf("co%d", i), Name: fmt.Sprint("Co ", i)})).ID)
	}
	for i := range storage.MaxCategories {
		slug := fmt.Sprintf("c%02d", i)
		must[*storage.Category](t)(e.store.CreateCategory(ctx, storage.NewCategory{Slug: slug, Name: strings.ToUpper(slug)}))
		cats = append(cats, slug)
	}
	for i := range 2 * storage.MaxTags {
		if i < storage.MaxTags {
			tags = append(tags, fmt.Sprintf("t%02d", i))
		} else {
			otherTags = append(otherTags, fmt.Sprintf("t%02d", i))
		}
	}
	last := func() int { s := sent(); return s[len(s)-1].actions }
	p := must[*storage.Post](t)(e.store.CreatePost(ctx, storage.NewPost{
		AuthorID: "ada", Title: "Worst", Slug: "worst", Body: "Text", Locale: "de",
		CoAuthors: coAuthors, Categories: cats, Tags: tags,
	}))
	p = must[*storage.Post](t)(e.store.Publish(ctx, storage.PublishPost{ID: p.ID, At: start.Add(-time.Hour)}))
	// As without a locale (post, 30 copies, 31 counters, count item, the
	// slug's publicAt), with the locale's copy and 20 copies in its
	// locale's lists.
	equal(t, "publish actions", last(), 1+30+31+1+1+21)
	p = must[*storage.Post](t)(e.store.Publish(ctx, storage.PublishPost{ID: p.ID, At: start.AddDate(0, 1, 0)}))
	// Scheduled later, it also covers its entries in the day's, the
	// week's and the month's popular lists (popular.go): 99 of the 100
	// actions a transaction may hold.
	equal(t, "schedule actions", last(), 1+1+20+20+31+1+1+21+3)
	e.consistent()

	before := len(sent())
	_, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, Tags: &otherTags})
	if !errors.Is(err, storage.ErrInvalidInput) {
		t.Errorf("all tags replaced on a post with a locale: %v, want invalid input", err)
	}
	equal(t, "transactions sent for the refused change", len(sent()), before)

	must[*storage.Author](t)(e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: "co3", Name: ptr("Renamed")}))
	equal(t, "rename actions", last(), 1+30+21)
	must[*storage.Post](t)(e.store.DeletePost(ctx, storage.PostRef{ID: p.ID}))
	e.consistent()
	for _, s := range sent() {
		if s.actions > 100 {
			t.Errorf("a transaction of %d actions", s.actions)
		}
	}
}
