package storage

import (
	"slices"

	"golang.org/x/text/language"
)

// Settings per locale: the site's title, description and menus may be
// given again for a locale (Site.Localized). Site.In returns the settings
// a reader of a locale sees: the entry of the locale, else of its parent
// (pt-BR, then pt), field by field, and the default settings (the site's
// own fields, which are the default locale's) for what no entry sets.

// SiteText is the site's title, description and menus in one locale;
// an empty field (nil menus) falls back to the default locale's.
type SiteText struct {
	Locale      string
	Title       string
	Description string
	Menus       []Menu
}

type siteTextItem struct {
	Locale      string     `dynamodbav:"locale"`
	Title       string     `dynamodbav:"title,omitempty"`
	Description string     `dynamodbav:"description,omitempty"`
	Menus       []menuItem `dynamodbav:"menus,omitempty"`
}

// In returns the settings a reader of locale sees (see above); s itself
// when no entry applies. locale must be canonical.
func (s *Site) In(locale string) *Site {
	tag, err := language.Parse(locale)
	if err != nil {
		return s
	}
	var title, description string
	var menus []Menu
	for t := tag; t != language.Und; t = t.Parent() {
		i := slices.IndexFunc(s.Localized, func(e SiteText) bool { return e.Locale == t.String() })
		if i < 0 {
			continue
		}
		e := s.Localized[i]
		title, description = cmpOr(title, e.Title), cmpOr(description, e.Description)
		if menus == nil {
			menus = e.Menus
		}
	}
	out := *s
	out.Title, out.Description = cmpOr(title, s.Title), cmpOr(description, s.Description)
	if menus != nil {
		out.Menus = menus
	}
	return &out
}

// cmpOr returns a, or b when a is empty.
func cmpOr(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// validateLocalized checks the entries per locale and canonicalises
// their locales.
func validateLocalized(in []SiteText) error {
	if len(in) > MaxLocales {
		return invalid("localized", "may hold at most %d locales", MaxLocales)
	}
	var seen []string
	for i := range in {
		e := &in[i]
		c, err := CanonicalLocale("localized.locale", e.Locale)
		if err != nil {
			return err
		}
		if slices.Contains(seen, c) {
			return invalid("localized", "holds %s twice", c)
		}
		seen, e.Locale = append(seen, c), c
		if err := firstErr(
			validateOptLine("localized.title", e.Title, MaxTitleLength),
			validateText("localized.description", e.Description, false, MaxDescriptionLength),
		); err != nil {
			return err
		}
		if e.Menus != nil {
			if err := validateMenus(e.Menus); err != nil {
				return err
			}
		}
	}
	return nil
}

func siteTextsOf(items []siteTextItem) []SiteText {
	var out []SiteText
	for _, it := range items {
		e := SiteText{Locale: it.Locale, Title: it.Title, Description: it.Description}
		for _, m := range it.Menus {
			menu := Menu{Name: m.Name}
			for _, l := range m.Items {
				menu.Items = append(menu.Items, MenuItem{Label: l.Label, Kind: LinkKind(l.Kind), Slug: l.Slug, URL: l.URL})
			}
			e.Menus = append(e.Menus, menu)
		}
		out = append(out, e)
	}
	return out
}

func siteTextItemsOf(texts []SiteText) []siteTextItem {
	var out []siteTextItem
	for _, e := range texts {
		it := siteTextItem{Locale: e.Locale, Title: e.Title, Description: e.Description}
		for _, m := range e.Menus {
			menu := menuItem{Name: m.Name}
			for _, l := range m.Items {
				menu.Items = append(menu.Items, linkItem{Label: l.Label, Kind: string(l.Kind), Slug: l.Slug, URL: l.URL})
			}
			it.Menus = append(it.Menus, menu)
		}
		out = append(out, it)
	}
	return out
}
