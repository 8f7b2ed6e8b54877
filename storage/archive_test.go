package storage_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// months renders an archive as "2026-03:2 2026-01:1".
func months(a []storage.ArchiveMonth) string {
	var parts []string
	for _, m := range a {
		parts = append(parts, fmt.Sprintf("%04d-%02d:%d", m.Year, m.Month, m.PostCount))
	}
	return strings.Join(parts, " ")
}

func TestArchiveByMonth(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.author("bob", "Bob")
	e.category("go", "Go")
	e.category("aws", "AWS")
	jan := time.Date(2026, 1, 31, 23, 59, 59, 999e6, time.UTC)
	feb := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	e.publish(e.post("ada", "a1", "go"), jan)
	e.publish(e.post("ada", "a2", "go", "aws"), feb)
	b1 := e.publish(e.post("bob", "b1", "aws"), feb.Add(time.Hour))
	// Scheduled: later today (this month) and next month.
	soon := e.publish(e.post("ada", "soon", "go"), start.Add(time.Hour))
	e.publish(e.post("bob", "later", "go"), start.AddDate(0, 1, 0))
	e.post("ada", "draft", "go")
	e.consistent()

	archive := func() map[string]string {
		st := must[*storage.Stats](t)(e.store.Stats(ctx))
		ada := must[*storage.Author](t)(e.store.GetAuthor(ctx, "ada"))
		bob := must[*storage.Author](t)(e.store.GetAuthor(ctx, "bob"))
		g := must[*storage.Category](t)(e.store.GetCategory(ctx, "go"))
		a := must[*storage.Category](t)(e.store.GetCategory(ctx, "aws"))
		return map[string]string{"blog": months(st.Archive), "ada": months(ada.Archive), "bob": months(bob.Archive), "go": months(g.Archive), "aws": months(a.Archive)}
	}
	check := func(when string, want map[string]string) {
		t.Helper()
		got := archive()
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s: %s archive = %q, want %q", when, k, got[k], w)
			}
		}
	}
	check("scheduled posts hidden", map[string]string{
		"blog": "2026-02:2 2026-01:1", "ada": "2026-02:1 2026-01:1", "bob": "2026-02:1",
		"go": "2026-02:1 2026-01:1", "aws": "2026-02:2",
	})
	e.clock.Advance(2 * time.Hour)
	check("a scheduled post appears in its month with no write", map[string]string{
		"blog": "2026-03:1 2026-02:2 2026-01:1", "ada": "2026-03:1 2026-02:1 2026-01:1", "go": "2026-03:1 2026-02:1 2026-01:1",
	})

	must[*storage.Post](t)(e.store.Publish(ctx, storage.PublishPost{ID: soon.ID, At: jan}))
	check("a post moved across months", map[string]string{
		"blog": "2026-02:2 2026-01:2", "ada": "2026-02:1 2026-01:2", "go": "2026-02:1 2026-01:2",
	})
	must[*storage.Post](t)(e.store.Unpublish(ctx, storage.PostRef{ID: b1.ID}))
	check("unpublished", map[string]string{"blog": "2026-02:1 2026-01:2", "bob": "", "aws": "2026-02:1"})
	must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: soon.ID, ExpectedVersion: 3, Categories: &[]string{"aws"}}))
	check("moved to another category", map[string]string{"go": "2026-02:1 2026-01:1", "aws": "2026-02:1 2026-01:1"})
	must[*storage.Post](t)(e.store.DeletePost(ctx, storage.PostRef{ID: soon.ID}))
	check("deleted", map[string]string{"blog": "2026-02:1 2026-01:1", "aws": "2026-02:1"})
	e.consistent()
	e.clock.Advance(31 * 24 * time.Hour)
	check("next month's post appears", map[string]string{"blog": "2026-04:1 2026-02:1 2026-01:1", "bob": "2026-04:1"})
	e.consistent()

	m := must[*storage.Stats](t)(e.store.Stats(ctx)).Archive[0]
	equal(t, "month start", m.Start(), time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC))
	equal(t, "month end", m.End(), time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
}
