package storage

import (
	"slices"
	"strings"

	"github.com/blogql/blog/storage/internal/keys"
)

// The change feed's event of the publications' directory. A host's claim
// and its publication's directory item change in one transaction
// (CreatePublication, AddPublicationHost, RemovePublicationHost), and the
// directory item holds everything a host resolves by: the publication's
// hosts, its slug (the platform's pattern) and its status. So the
// directory item's record is the event of every write that changes what
// a host resolves to, written in the same transaction as the claims, and
// a server that holds hosts (package routing) drops them when it reads it.
// The directory item is global, but the event is the publication's.

// directoryItem reports whether the key and type of an item are those of
// a publication's directory item, and returns the publication's id.
func directoryItem(pk, sk, typ string) (string, bool) {
	id, ok := strings.CutPrefix(pk, keys.PrefixDirectory)
	return id, ok && id != "" && pk == sk && typ == typePublication
}

// publicationEvents translates a write of a directory item: its creation,
// its removal, or a change of its slug, title, hosts or status is
// publication.updated, with the publication's slug (before the write for
// a removal) and hosts after the write (none for a removal), the slug it
// left in PreviousSlugs and the hosts it left in PreviousHosts (every one
// for a removal). A write of the version or the time alone is none.
func publicationEvents(r *record, add func(EventType, EventData)) error {
	old, cur, err := decode[publicationItem](r)
	if err != nil {
		return err
	}
	if old != nil && cur != nil && old.Slug == cur.Slug && old.Title == cur.Title &&
		slices.Equal(old.Hosts, cur.Hosts) && old.Status == cur.Status {
		return nil
	}
	if cur == nil {
		add(EventPublicationUpdated, EventData{Slug: old.Slug, PreviousSlugs: []string{old.Slug}, PreviousHosts: slices.Clone(old.Hosts)})
		return nil
	}
	d := EventData{Slug: cur.Slug, Hosts: slices.Clone(cur.Hosts)}
	if old != nil {
		if old.Slug != cur.Slug {
			d.PreviousSlugs = []string{old.Slug}
		}
		for _, h := range old.Hosts {
			if !slices.Contains(cur.Hosts, h) {
				d.PreviousHosts = append(d.PreviousHosts, h)
			}
		}
	}
	add(EventPublicationUpdated, d)
	return nil
}
