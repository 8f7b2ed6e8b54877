package tests

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/routing"
	"github.com/blogql/blog/storage"
)

const (
	addHostMutation    = `mutation($in: AddPublicationHostInput!) { addPublicationHost(input: $in) { publication { id } } }`
	removeHostMutation = `mutation($in: RemovePublicationHostInput!) { removePublicationHost(input: $in) { publication { id } } }`
)

// TestHostsFollowTheChangeFeed: a second server holds what its hosts
// resolve to for an hour, and a write on the first that moves, removes or
// adds a host, or creates a publication under the platform's pattern, is
// served as it now is on the second once the change feed has handed it
// the publication.updated events: the feed drops what it held, not the
// hour.
func TestHostsFollowTheChangeFeed(t *testing.T) {
	s := newServerOn(t, []storage.Option{storage.WithStream()}, nil)
	platform := s.as("ops", auth.RolePlatform)
	create := func(slug, title string, hosts ...string) string {
		t.Helper()
		var out struct {
			CreatePublication struct{ Publication publicationAnswer } `json:"createPublication"`
		}
		in := map[string]any{"slug": slug, "title": title, "hosts": append([]string{}, hosts...)}
		if err := gql(platform, createPublicationMutation, map[string]any{"in": in}, &out); err != nil {
			t.Fatal(err)
		}
		return out.CreatePublication.Publication.ID
	}
	hostOp := func(mutation, id, host string) {
		t.Helper()
		if err := gql(platform, mutation, map[string]any{"in": map[string]any{"id": id, "host": host}}, &struct{}{}); err != nil {
			t.Fatal(err)
		}
	}
	pea := create("pea", "Pea Pod", "h.example")
	queue := create("queue", "Queue Notes")

	// The second server: its router holds hosts for an hour, found or
	// not, and drops them when its change feed says.
	b := s.routeWith(t, func(o *routing.Options) {
		o.HostTTL, o.UnknownTTL = time.Hour, time.Hour
		o.Pattern, _ = routing.ParsePattern("{slug}.blogs.test")
		o.LookupSlug = func(ctx context.Context, slug string) (string, error) {
			id, err := s.store.PublicationIDBySlug(ctx, slug)
			if errors.Is(err, storage.ErrNotFound) {
				return "", nil
			}
			return id, err
		}
	})
	events := s.follow(t, b.rt.Forget)
	// The creations' events first, so that none of them drops what follows.
	awaitPublicationEvents(t, events, updated(queue, "", ""))

	serves := func(host, want string) {
		t.Helper()
		a := b.send(t, host, "/feed.xml", "")
		switch {
		case want == "" && a.status != http.StatusNotFound:
			t.Errorf("%s on the second server: %d %.200s, want 404", host, a.status, a.body)
		case want != "" && (a.status != http.StatusOK || !strings.Contains(a.body, want)):
			t.Errorf("%s on the second server: %d %.200s, want %q's feed", host, a.status, a.body, want)
		}
	}
	// Held: h.example as Pea Pod's, new.example and zed.blogs.test as
	// no publication's.
	serves("h.example", "Pea Pod")
	serves("new.example", "")
	serves("zed.blogs.test", "")

	t.Run("a host moved, a host added and a publication created", func(t *testing.T) {
		hostOp(removeHostMutation, pea, "h.example")
		hostOp(addHostMutation, queue, "h.example")
		hostOp(addHostMutation, queue, "new.example")
		create("zed", "Zed Zone")
		awaitPublicationEvents(t, events, updated(pea, "", "h.example"), updated(queue, "new.example", ""), updatedSlug("zed"))
		serves("h.example", "Queue Notes")
		serves("new.example", "Queue Notes")
		serves("zed.blogs.test", "Zed Zone")
	})
	t.Run("a host removed", func(t *testing.T) {
		hostOp(removeHostMutation, queue, "new.example")
		awaitPublicationEvents(t, events, updated(queue, "", "new.example"))
		serves("new.example", "")
		serves("h.example", "Queue Notes")
	})
}

// updated matches the publication.updated of the publication id whose
// hosts include host and whose previous hosts include previous ("" for
// any).
func updated(id, host, previous string) func(storage.LoggedEvent) bool {
	return func(e storage.LoggedEvent) bool {
		return e.Type == storage.EventPublicationUpdated && e.Publication == id &&
			(host == "" || slices.Contains(e.Data.Hosts, host)) &&
			(previous == "" || slices.Contains(e.Data.PreviousHosts, previous))
	}
}

// updatedSlug matches the publication.updated of the publication whose
// slug is slug.
func updatedSlug(slug string) func(storage.LoggedEvent) bool {
	return func(e storage.LoggedEvent) bool {
		return e.Type == storage.EventPublicationUpdated && e.Data.Slug == slug
	}
}

// awaitPublicationEvents returns once events has handed over an event
// each match accepts, in any order: the stream's shards are logged in no
// order among themselves. What handled the batches has handled them by
// then.
func awaitPublicationEvents(t *testing.T, events <-chan storage.LoggedEvent, match ...func(storage.LoggedEvent) bool) {
	t.Helper()
	deadline := time.After(time.Minute) // a guard against a hang, not a measure
	var seen []storage.LoggedEvent
	for len(match) > 0 {
		select {
		case e := <-events:
			seen = append(seen, e)
			match = slices.DeleteFunc(match, func(m func(storage.LoggedEvent) bool) bool { return m(e) })
		case <-deadline:
			t.Fatalf("%d events not handed over; seen %+v", len(match), seen)
		}
	}
}
