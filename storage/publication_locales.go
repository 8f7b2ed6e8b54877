package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// PublicationLocales returns the locales of each publication of ids, in
// ids' order: its settings' locales, the default first (the one locale
// of settings that name a single locale), empty when they name none or
// it has no settings. Settings the server holds cost no request; the
// others are read in one BatchGetItem of their site items (100 a call),
// and held by the server as Site holds them. An id that is not a
// publication id fails alone; a failed read fails every id it was for.
//
// The read spans publications, as the platform's directory does: it
// names only each publication's own site item, built from that
// publication's key space, so the tenant guard of one publication is not
// the check that applies to it.
func (s *Store) PublicationLocales(ctx context.Context, ids []string) ([][]string, []error) {
	out := make([][]string, len(ids))
	errs := make([]error, len(ids))
	type miss struct {
		i     int
		k     key
		cache *siteCache
		epoch int64
	}
	var misses []miss
	var ks []key
	for i, id := range ids {
		in, err := s.In(id)
		if err != nil {
			errs[i] = err
			continue
		}
		c := in.siteCache
		c.mu.Lock()
		cached, epoch := c.site, c.epoch
		c.mu.Unlock()
		if cached != nil {
			out[i] = cached.localeList()
			continue
		}
		k := in.ks.Site()
		misses = append(misses, miss{i, k, c, epoch})
		ks = append(ks, k)
	}
	if len(misses) == 0 {
		return out, errs
	}
	found, err := s.db.Unconfined().BatchGet(ctx, ks, false)
	for _, m := range misses {
		if err != nil {
			errs[m.i] = fmt.Errorf("publication locales: %w", err)
			continue
		}
		var it siteItem
		if err := dynamo.DecodeFound(found, m.k, &it); err != nil && !errors.Is(err, ErrNotFound) {
			errs[m.i] = fmt.Errorf("publication %q's locales: %w", ids[m.i], err)
			continue
		}
		site := it.site()
		m.cache.mu.Lock()
		if m.cache.epoch == m.epoch {
			m.cache.site = site
		}
		m.cache.mu.Unlock()
		out[m.i] = site.localeList()
	}
	return out, errs
}

// localeList returns the site's locales, the default first: Locales, or
// the one Locale, or none.
func (s *Site) localeList() []string {
	switch {
	case len(s.Locales) > 0:
		return s.Locales
	case s.Locale != "":
		return []string{s.Locale}
	}
	return []string{}
}
