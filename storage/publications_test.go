package storage_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/blogql/blog/storage"
)

// TestPublicationsDirectory creates publications and finds them by id,
// slug and host; a slug or a host another publication holds is refused
// with a ValidationError and writes nothing.
func TestPublicationsDirectory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := must[*storage.Publication](t)(e.store.CreatePublication(ctx, storage.NewPublication{Slug: "alpha", Title: "Alpha", Hosts: []string{"alpha.example", "www.alpha.example"}}))
	if a.ID == "" || a.Status != storage.PublicationActive || a.Version != 1 {
		t.Fatalf("created %+v", a)
	}
	if got := must[*storage.Publication](t)(e.store.GetPublication(ctx, a.ID)); got.Slug != "alpha" || got.Title != "Alpha" || len(got.Hosts) != 2 {
		t.Errorf("GetPublication = %+v", got)
	}
	if got := must[*storage.Publication](t)(e.store.PublicationBySlug(ctx, "alpha")); got.ID != a.ID {
		t.Errorf("PublicationBySlug = %+v", got)
	}
	if got := must[*storage.Publication](t)(e.store.PublicationByHost(ctx, "www.alpha.example")); got.ID != a.ID {
		t.Errorf("PublicationByHost = %+v", got)
	}
	reqs := counted(func(ctx context.Context) {
		if id, err := e.store.PublicationIDByHost(ctx, "alpha.example"); err != nil || id != a.ID {
			t.Errorf("PublicationIDByHost = %q, %v", id, err)
		}
	})
	if reqs["GetItem"] != 1 || len(reqs) != 1 {
		t.Errorf("PublicationIDByHost made %v, want one GetItem", reqs)
	}
	for _, miss := range []func() error{
		func() error { _, err := e.store.PublicationByHost(ctx, "nobody.example"); return err },
		func() error { _, err := e.store.PublicationBySlug(ctx, "nobody"); return err },
		func() error { _, err := e.store.GetPublication(ctx, "nobody"); return err },
		func() error { _, err := e.store.GetPublication(ctx, "a#b"); return err },
	} {
		if err := miss(); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("a missing publication: %v, want ErrNotFound", err)
		}
	}

	taken := []struct {
		name string
		in   storage.NewPublication
		want string
	}{
		{"slug", storage.NewPublication{Slug: "alpha", Title: "Again", Hosts: []string{"again.example"}}, "slug"},
		{"host", storage.NewPublication{Slug: "beta", Title: "Beta", Hosts: []string{"beta.example", "alpha.example"}}, "hosts"},
	}
	for _, c := range taken {
		t.Run("a taken "+c.name+" is refused", func(t *testing.T) {
			_, err := e.store.CreatePublication(ctx, c.in)
			var ve *storage.ValidationError
			if !errors.As(err, &ve) || ve.Field != c.want || !strings.Contains(ve.Reason, "taken") {
				t.Fatalf("err %v, want a ValidationError on %s saying it is taken", err, c.want)
			}
			if _, err := e.store.PublicationByHost(ctx, c.in.Hosts[0]); !errors.Is(err, storage.ErrNotFound) && c.in.Hosts[0] != "alpha.example" {
				t.Errorf("host %q claimed by a refused publication: %v", c.in.Hosts[0], err)
			}
			if c.in.Slug != "alpha" {
				if _, err := e.store.PublicationBySlug(ctx, c.in.Slug); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("slug %q claimed by a refused publication: %v", c.in.Slug, err)
				}
			}
		})
	}

	b := must[*storage.Publication](t)(e.store.CreatePublication(ctx, storage.NewPublication{Slug: "beta", Title: "Beta"}))
	b = must[*storage.Publication](t)(e.store.AddPublicationHost(ctx, storage.PublicationHost{ID: b.ID, Host: "beta.localhost"}))
	if len(b.Hosts) != 1 || b.Version != 2 {
		t.Errorf("after adding a host: %+v", b)
	}
	if _, err := e.store.AddPublicationHost(ctx, storage.PublicationHost{ID: b.ID, Host: "alpha.example"}); !isValidation(err, "host") {
		t.Errorf("adding a host alpha holds: %v, want a ValidationError", err)
	}
	a = must[*storage.Publication](t)(e.store.RemovePublicationHost(ctx, storage.PublicationHost{ID: a.ID, Host: "alpha.example"}))
	if len(a.Hosts) != 1 || a.Hosts[0] != "www.alpha.example" {
		t.Errorf("after removing a host: %+v", a)
	}
	if _, err := e.store.PublicationByHost(ctx, "alpha.example"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a removed host still names a publication: %v", err)
	}
	if _, err := e.store.RemovePublicationHost(ctx, storage.PublicationHost{ID: a.ID, Host: "alpha.example"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("removing a host twice: %v, want ErrNotFound", err)
	}
	must[*storage.Publication](t)(e.store.AddPublicationHost(ctx, storage.PublicationHost{ID: b.ID, Host: "alpha.example"}))

	page := must[*storage.Result[*storage.Publication]](t)(e.store.ListPublications(ctx, storage.PageArgs{Limit: 1}))
	if len(page.Items) != 1 || page.Items[0].Slug != "alpha" || !page.HasNext {
		t.Fatalf("first page %+v", page)
	}
	page = must[*storage.Result[*storage.Publication]](t)(e.store.ListPublications(ctx, storage.PageArgs{Limit: 5, After: page.Cursors[0]}))
	if len(page.Items) != 1 || page.Items[0].Slug != "beta" || page.HasNext {
		t.Errorf("second page %+v", page)
	}
	e.consistent()
}

// TestCreatePublicationRaces creates publications that want one host at
// once: one gets it, every other is told the host is taken.
func TestCreatePublicationRaces(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const n = 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = e.store.CreatePublication(ctx, storage.NewPublication{Slug: "s" + string(rune('a'+i)), Title: "T", Hosts: []string{"same.example"}})
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !isValidation(err, "hosts"):
			t.Errorf("a lost race: %v, want a ValidationError on hosts", err)
		}
	}
	if won != 1 {
		t.Errorf("%d publications got the host, want 1", won)
	}
}

// TestPublicationHostsAreDomainNames refuses hosts that are not one
// lower-case DNS name.
func TestPublicationHostsAreDomainNames(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, h := range []string{
		"", "localhost", "example", "Blog.example", "blog.example.", "blog.example:8080", "*.example", "a.*.example",
		"127.0.0.1", "[::1]", "::1", "10.0.0.1:80", "192.168.1", "a_b.example", "-a.example", "a-.example", "a..example",
		"xn--pypal-4ve.example", "xn--zz.example", "ab--cd.example", strings.Repeat("a", 64) + ".example",
		strings.Repeat("abcdefghi.", 26) + "example", "blog.éxample",
	} {
		_, err := e.store.CreatePublication(ctx, storage.NewPublication{Slug: "p", Title: "P", Hosts: []string{h}})
		if !isValidation(err, "hosts") {
			t.Errorf("host %q: %v, want a ValidationError on hosts", h, err)
		}
	}
	for i, h := range []string{"blog.example", "demo.localhost", "a-b.c-d.example", "xn--caf-dma.example", "xn--h1alffa9f.example"} {
		if _, err := e.store.CreatePublication(ctx, storage.NewPublication{Slug: "ok-" + string(rune('a'+i)), Title: "P", Hosts: []string{h}}); err != nil {
			t.Errorf("host %q: %v", h, err)
		}
	}
}

func isValidation(err error, field string) bool {
	var ve *storage.ValidationError
	return errors.As(err, &ve) && ve.Field == field
}

// TestDefaultPublicationIsInTheDirectory: a table's migration puts its
// publication in the directory, and does so once however often it runs.
func TestDefaultPublicationIsInTheDirectory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for range 2 {
		must[*storage.Migration](t)(e.store.Migrate(ctx))
	}
	p := must[*storage.Publication](t)(e.store.PublicationBySlug(ctx, "default"))
	if p.ID != storage.DefaultPublication || p.Status != storage.PublicationActive {
		t.Errorf("default publication %+v", p)
	}
	page := must[*storage.Result[*storage.Publication]](t)(e.store.ListPublications(ctx, storage.PageArgs{Limit: 10}))
	if len(page.Items) != 1 || page.Items[0].ID != storage.DefaultPublication {
		t.Errorf("publications %+v", page.Items)
	}
	e.consistent()
}
