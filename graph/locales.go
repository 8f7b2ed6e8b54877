package graph

import (
	"context"

	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/storage"
)

// siteIn answers Query.site: the settings as a reader of locale sees them
// (storage.Site.In), the default ones without it.
func (r *Resolver) siteIn(ctx context.Context, locale *string) (*storage.Site, error) {
	s, err := r.site(ctx)
	if err != nil || locale == nil {
		return s, err
	}
	l, err := storage.CanonicalLocale("locale", *locale)
	if err != nil {
		return nil, err
	}
	return s.In(l), nil
}

// menusOf returns the menus of an input.
func menusOf(in []*model.MenuInput) []storage.Menu {
	menus := make([]storage.Menu, 0, len(in))
	for _, m := range in {
		menu := storage.Menu{Name: m.Name}
		for _, l := range m.Items {
			menu.Items = append(menu.Items, storage.MenuItem{Label: l.Label, Kind: storage.LinkKind(l.Kind), Slug: deref(l.Slug), URL: deref(l.URL)})
		}
		menus = append(menus, menu)
	}
	return menus
}

// localizedOf returns the settings per locale of an input: nil leaves
// them.
func localizedOf(in []*model.LocalizedSiteInput) *[]storage.SiteText {
	if in == nil {
		return nil
	}
	out := make([]storage.SiteText, 0, len(in))
	for _, e := range in {
		t := storage.SiteText{Locale: e.Locale, Title: deref(e.Title), Description: deref(e.Description)}
		if e.Menus != nil {
			t.Menus = menusOf(e.Menus)
		}
		out = append(out, t)
	}
	return &out
}

// localizedSite returns the settings per locale of s.
func localizedSite(s *storage.Site) []*model.LocalizedSite {
	out := make([]*model.LocalizedSite, 0, len(s.Localized))
	for _, e := range s.Localized {
		l := &model.LocalizedSite{Locale: e.Locale, Title: nonEmpty(e.Title), Description: nonEmpty(e.Description)}
		for i := range e.Menus {
			l.Menus = append(l.Menus, &e.Menus[i])
		}
		out = append(out, l)
	}
	return out
}
