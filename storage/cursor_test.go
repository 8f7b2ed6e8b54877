package storage_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/blogql/blog/storage"
)

// TestCursorsAreSealedWithTheTablesKey lists posts through two stores on
// one table, as two servers would: with the table's cursor key each takes
// the other's cursors; with another key, or for another list, a cursor is
// a ValidationError on "after" before any request. A cursor shows nothing
// of the table's keys, and the same position always has the same cursor.
func TestCursorsAreSealedWithTheTablesKey(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	e.category("aws", "AWS")
	for _, slug := range []string{"one", "two", "three"} {
		p := e.post("ada", slug, "go", "aws")
		must[*storage.Post](t)(e.store.Publish(ctx, storage.PublishPost{ID: p.ID}))
		e.clock.Advance(1e9)
	}
	key := must[[]byte](t)(e.store.Secret(ctx, "cursor"))
	serverA := storage.New(e.client, e.table, storage.WithClock(e.clock.Now), storage.WithCursorKey(key))
	serverB := storage.New(e.client, e.table, storage.WithClock(e.clock.Now), storage.WithCursorKey(key))
	stranger := storage.New(e.client, e.table, storage.WithClock(e.clock.Now),
		storage.WithCursorKey([]byte("a key that is not the table's, 32 bytes+")))

	first := must[*storage.Result[*storage.Post]](t)(serverA.CategoryPosts(ctx, "go", storage.PageArgs{Limit: 1}, storage.Period{}))
	cursor := first.Cursors[0]
	next := must[*storage.Result[*storage.Post]](t)(serverB.CategoryPosts(ctx, "go", storage.PageArgs{Limit: 1, After: cursor}, storage.Period{}))
	if next.Items[0].Slug != "two" {
		t.Errorf("another server's next page starts at %s, want two", next.Items[0].Slug)
	}
	again := must[*storage.Result[*storage.Post]](t)(serverB.CategoryPosts(ctx, "go", storage.PageArgs{Limit: 1}, storage.Period{}))
	if again.Cursors[0] != cursor {
		t.Errorf("one position has two cursors: %q and %q", cursor, again.Cursors[0])
	}

	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		t.Fatal(err)
	}
	// Fragments of four bytes or more: a shorter one turns up in random
	// bytes by chance ("PK" did, once in a few hundred runs).
	for _, layout := range []string{"POST#", "CAT#", "GSI1", `"PK"`, first.Items[0].ID, "2026-"} {
		if bytes.Contains(raw, []byte(layout)) {
			t.Errorf("cursor %q shows %q", cursor, layout)
		}
	}

	refused := []struct {
		name string
		read func(context.Context) error
	}{
		{"another key's cursor", func(ctx context.Context) error {
			_, err := stranger.CategoryPosts(ctx, "go", storage.PageArgs{Limit: 1, After: cursor}, storage.Period{})
			return err
		}},
		{"another list's cursor", func(ctx context.Context) error {
			_, err := serverB.CategoryPosts(ctx, "aws", storage.PageArgs{Limit: 1, After: cursor}, storage.Period{})
			return err
		}},
		{"an altered cursor", func(ctx context.Context) error {
			b := []byte(cursor)
			b[len(b)-3] ^= 1
			_, err := serverB.CategoryPosts(ctx, "go", storage.PageArgs{Limit: 1, After: string(b)}, storage.Period{})
			return err
		}},
		{"the cursor with a line break, which base64 would skip", func(ctx context.Context) error {
			_, err := serverB.CategoryPosts(ctx, "go", storage.PageArgs{Limit: 1, After: cursor[:5] + "\n" + cursor[5:]}, storage.Period{})
			return err
		}},
	}
	for _, r := range refused {
		t.Run(r.name, func(t *testing.T) {
			var err error
			if n := counted(func(ctx context.Context) { err = r.read(ctx) }); len(n) > 0 {
				t.Errorf("requests %v before refusing the cursor", n)
			}
			if ve, ok := errors.AsType[*storage.ValidationError](err); !ok || ve.Field != "after" {
				t.Errorf("err = %v, want a ValidationError on after", err)
			}
		})
	}
}
