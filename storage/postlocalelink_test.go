package storage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// TestWorstCaseLinkStoringALocaleFitsOneTransaction links a published
// post without a locale, with 10 authors, 10 categories and 10 tags and
// featured, to a translation: the default locale is stored with every
// copy in one transaction of at most 100 actions, the post keeps its
// version, and every copy agrees with it. The same post joining a group
// of 47 translations would pass 100 actions: it is refused as bad
// input, with nothing sent.
func TestWorstCaseLinkStoringALocaleFitsOneTransaction(t *testing.T) {
	configure, sent := recordTransactions()
	e := newEnv(t, configure)
	ctx := context.Background()
	must[*storage.Site](t)(e.store.UpdateSite(ctx, storage.SitePatch{Locales: &[]string{"en", "de"}}))
	e.author("ada", "Ada")
	var coAuthors, cats, tags []string
	for i := range storage.MaxAuthors - 1 {
		coAuthors = append(coAuthors, must[*storage.Author](t)(e.store.CreateAuthor(ctx, storage.NewAuthor{ID: fmt.Sprintf("co%d", i), Name: fmt.Sprint("Co ", i)})).ID)
	}
	for i := range storage.MaxCategories {
		cats = append(cats, e.category(fmt.Sprintf("c%d", i), fmt.Sprint("C ", i)).Slug)
	}
	for i := range storage.MaxTags {
		tags = append(tags, fmt.Sprint("t", i))
	}
	worst := func(slug string) *storage.Post {
		p := must[*storage.Post](t)(e.store.CreatePost(ctx, storage.NewPost{
			AuthorID: "ada", Title: "Title " + slug, Slug: slug, Body: "# " + slug, CoAuthors: coAuthors, Categories: cats, Tags: tags,
		}))
		p = must[*storage.Post](t)(e.store.SetFeatured(ctx, storage.FeaturePost{ID: p.ID, Featured: true}))
		return e.publish(p, time.Time{})
	}
	p := worst("worst")
	de := e.localePost("deutsch", "de")
	before := len(sent())
	linked := must[*storage.Post](t)(e.store.LinkTranslation(ctx, p.ID, de.ID))
	equal(t, "transactions of the link", len(sent())-before, 1)
	// The group, the two posts; 10 author copies, 10 category and 10 tag
	// copies and the featured copy put with the locale; the locale's copy
	// and its 10 category and 10 tag copies; the count item's check.
	equal(t, "link actions", sent()[len(sent())-1].actions, 3+31+21+1)
	equal(t, "locale stored", linked.Locale, "en")
	equal(t, "version after the link", linked.Version, p.Version)
	e.consistent()

	// A group of 47 translations, then the same post joining it.
	langs := []string{"fr", "es", "it", "nl", "pt", "sv", "da", "fi", "nb", "pl", "cs", "sk", "hu", "ro", "bg", "el",
		"tr", "ru", "uk", "he", "ar", "fa", "hi", "bn", "ta", "te", "ml", "th", "vi", "id", "ms", "ja", "ko", "zh",
		"sw", "am", "yo", "ig", "zu", "xh", "af", "is", "ga", "cy", "eu", "ca"}
	big := e.localePost("gross", "de")
	for _, l := range langs {
		must[*storage.Post](t)(e.store.LinkTranslation(ctx, big.ID, e.localePost("in-"+l, l).ID))
	}
	late := worst("late")
	before = len(sent())
	if _, err := e.store.LinkTranslation(ctx, big.ID, late.ID); !errors.Is(err, storage.ErrInvalidInput) {
		t.Errorf("a link past 100 actions: %v, want invalid input", err)
	}
	equal(t, "transactions sent for the refused link", len(sent()), before)
	equal(t, "locale of the refused post", must[*storage.Post](t)(e.store.GetPost(ctx, late.ID)).Locale, "")
	e.consistent()
	for _, s := range sent() {
		if s.actions > 100 {
			t.Errorf("a transaction of %d actions", s.actions)
		}
	}
}
