package storage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// sentTx is one TransactWriteItems as sent: its actions and its bytes.
type sentTx struct{ actions, bytes int }

// recordTransactions returns a client configuration that records every
// TransactWriteItems sent, and the list it records into.
func recordTransactions() (func(*storage.ClientConfig), func() []sentTx) {
	var mu sync.Mutex
	var sent []sentTx
	configure := func(cfg *storage.ClientConfig) {
		next := dynamotest.Transport(*cfg)
		cfg.HTTPClient = &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".TransactWriteItems") {
				body, err := io.ReadAll(r.Body)
				if err != nil {
					return nil, err
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
				var in struct{ TransactItems []json.RawMessage }
				if err := json.Unmarshal(body, &in); err != nil {
					return nil, err
				}
				mu.Lock()
				sent = append(sent, sentTx{len(in.TransactItems), len(body)})
				mu.Unlock()
			}
			return next.RoundTrip(r)
		})}
	}
	return configure, func() []sentTx {
		mu.Lock()
		defer mu.Unlock()
		return append([]sentTx(nil), sent...)
	}
}

// TestWorstCaseCoAuthorsTagsCategoriesFitOneTransaction writes a post
// with the most of everything: 10 authors, 10 categories and 10 tags
// whose names are at their limits in four-byte runes, the largest body,
// title and excerpt. Its creation, publication, a schedule to another
// month, an edit that replaces all its tags while taking another post's
// redirect, a rename of one of its authors and its deletion each fit one
// transaction of at most 100 actions and far less than 4 MB; a change of
// its categories and tags at once would not, and is refused as bad input
// with nothing written.
func TestWorstCaseCoAuthorsTagsCategoriesFitOneTransaction(t *testing.T) {
	configure, sent := recordTransactions()
	e := newEnv(t, configure)
	ctx := context.Background()
	long := func(n int) string { return strings.Repeat("𝔸", n) }
	var coAuthors, cats, otherCats, tags, otherTags []string
	e.author("ada", long(storage.MaxNameLength))
	for i := range storage.MaxAuthors - 1 {
		coAuthors = append(coAuthors, must[*storage.Author](t)(e.store.CreateAuthor(ctx, storage.NewAuthor{
			ID: fmt.Sprintf("co%d", i), Name: long(storage.MaxNameLength-1) + fmt.Sprint(i),
		})).ID)
	}
	for i := range 2 * storage.MaxCategories {
		slug := fmt.Sprintf("c%02d-%s", i, strings.Repeat("x", storage.MaxSlugLength-4))
		must[*storage.Category](t)(e.store.CreateCategory(ctx, storage.NewCategory{Slug: slug, Name: long(storage.MaxNameLength)}))
		if i < storage.MaxCategories {
			cats = append(cats, slug)
		} else {
			otherCats = append(otherCats, slug)
		}
	}
	for i := range 2 * storage.MaxTags {
		name := fmt.Sprintf("t%02d %s", i, strings.Repeat("x", storage.MaxTagNameLength-4))
		if i < storage.MaxTags {
			tags = append(tags, name)
		} else {
			otherTags = append(otherTags, name)
		}
	}
	last := func() sentTx { s := sent(); return s[len(s)-1] }
	figures := map[string]sentTx{}
	other := e.slug(e.post("ada", "taken"), "other")

	p := must[*storage.Post](t)(e.store.CreatePost(ctx, storage.NewPost{
		AuthorID: "ada", Title: long(storage.MaxTitleLength), Slug: strings.Repeat("s", storage.MaxSlugLength),
		Excerpt: long(storage.MaxExcerptLength), Body: largestBody(t),
		CoAuthors: coAuthors, Categories: cats, Tags: tags, IdempotencyKey: "worst-create",
	}))
	// post, slug, author and 9 co-authors and 10 categories (their names'
	// guards), 10 tags made, record.
	figures["create"] = last()
	// And the body and count items, and the publication's posts' counter.
	equal(t, "create actions", last().actions, 1+1+10+10+10+1+2+1)

	p = must[*storage.Post](t)(e.store.Publish(ctx, storage.PublishPost{ID: p.ID, At: start.Add(-time.Hour), IdempotencyKey: "worst-publish"}))
	// post; 10 author copies, 10 category copies, 10 tag copies; 10
	// authors, 10 categories, 10 tags, STATS; record.
	figures["publish"] = last()
	equal(t, "publish actions", last().actions, 1+30+31+1+1+1) // and the count item, and the slug's publicAt

	p = must[*storage.Post](t)(e.store.Publish(ctx, storage.PublishPost{ID: p.ID, At: start.AddDate(0, 1, 0), IdempotencyKey: "worst-schedule"}))
	// post, its schedule item; 10 author copies put and 10 deleted (their
	// keys hold the time), 10 category and 10 tag copies; 31 counters;
	// record; the count item; the tombstones over its 3 popular entries;
	// the slug's publicAt.
	figures["schedule"] = last()
	equal(t, "schedule actions", last().actions, 1+1+20+20+31+1+1+3+1)
	e.consistent()

	p = must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{
		ID: p.ID, ExpectedVersion: p.Version, Slug: ptr("taken"), Tags: &otherTags, IdempotencyKey: "worst-edit",
	}))
	// post, new slug, old slug as a redirect, the other post's slugs; 10
	// author and 10 category copies, 10 tag copies put and 10 deleted; 10
	// authors and 10 categories (guards), 10 old tags, 10 tags made;
	// record.
	figures["edit"] = last()
	equal(t, "edit actions", last().actions, 1+3+10+10+20+20+20+1)
	e.consistent()

	before := len(sent())
	_, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, Tags: &tags, Categories: &otherCats})
	if !errors.Is(err, storage.ErrInvalidInput) {
		t.Errorf("categories and tags replaced at once: %v, want invalid input", err)
	}
	equal(t, "transactions sent for the refused change", len(sent()), before)

	must[*storage.Author](t)(e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: "co3", Name: ptr(long(storage.MaxNameLength))}))
	// The author's own update, then the post and its 30 copies.
	figures["rename"] = last()
	equal(t, "rename actions", last().actions, 1+30)
	e.consistent()

	must[*storage.Post](t)(e.store.DeletePost(ctx, storage.PostRef{ID: p.ID, IdempotencyKey: "worst-delete"}))
	// post, schedule item, slug and redirect, 30 copies, 31 counters,
	// record.
	figures["delete"] = last()
	// And the body and count items, and the publication's posts' counter.
	equal(t, "delete actions", last().actions, 1+1+2+30+31+1+2+1)
	e.consistent()
	equal(t, "other post's slug", must[*storage.Post](t)(e.store.GetPost(ctx, other.ID)).Slug, "other")

	for _, op := range []string{"create", "publish", "schedule", "edit", "rename", "delete"} {
		f := figures[op]
		t.Logf("%-8s %3d actions, %7d bytes", op, f.actions, f.bytes)
	}
	for _, s := range sent() {
		if s.actions > 100 || s.bytes > 4<<20 {
			t.Errorf("a transaction of %d actions, %d bytes", s.actions, s.bytes)
		}
	}
}
