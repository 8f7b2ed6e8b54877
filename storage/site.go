package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	// The time zones a site may name are the same on every host, whether
	// or not it has a zoneinfo database (about 450 KB in the binary).
	_ "time/tzdata"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Site settings: one item, SITE/SITE, written by admins with a version.
// Fields left empty there take the server's defaults (its flags), which
// the caller overlays. A server keeps the item in memory once read
// (siteCache): feeds, sitemaps and the site query read it with no request
// until the change feed's site.updated event (ForgetSite) or the server's
// own write replaces it, so a setting changed on another server shows
// here within the change feed's delay (about a second).

// Bounds of the site settings.
const (
	MaxMenus          = 5
	MaxMenuItems      = 50
	MaxSocialAccounts = 20
	MaxLabelLength    = 100
)

// LinkKind is what a menu item links to. New kinds may be added; a client
// shows an item of a kind it does not know by its label alone.
type LinkKind string

// Link kinds.
const (
	LinkPage     LinkKind = "PAGE"     // a static page, by slug
	LinkCategory LinkKind = "CATEGORY" // a category, by slug
	LinkTag      LinkKind = "TAG"      // a tag, by slug
	LinkURL      LinkKind = "URL"      // any URL, or a path of the site
)

// Values of Site.SlugTransliteration.
const (
	SlugsKeepScript = "NONE"  // "Привет мир": привет-мир
	SlugsInLatin    = "LATIN" // "Привет мир": privet-mir
)

// latinSlugs reports whether slugs made from texts are to be written in
// Latin letters: only a text with a character past ASCII asks for the
// site's setting (no request once the server holds the settings), since
// transliteration leaves ASCII as it is.
func (s *Store) latinSlugs(ctx context.Context, texts ...string) (bool, error) {
	for _, t := range texts {
		if strings.ContainsFunc(t, func(r rune) bool { return r >= utf8.RuneSelf }) {
			site, err := s.Site(ctx)
			if err != nil {
				return false, err
			}
			return site.SlugTransliteration == SlugsInLatin, nil
		}
	}
	return false, nil
}

// Site is the blog's settings. Version is 0 while they were never written.
type Site struct {
	Title, Description string
	LogoURL, IconURL   string
	// Logo and Icon are the logo and the icon from the media library, nil
	// when LogoURL and IconURL are external or empty.
	Logo, Icon       *Image
	Locale, Timezone string
	// URL is the frontend's public address; PostPath the pattern of a
	// post's path on it (Paths.Post).
	URL, PostPath string
	Menus         []Menu
	Social        []SocialAccount
	// SlugTransliteration is how slugs made from titles and names write
	// other scripts than Latin: SlugsKeepScript ("" too) or SlugsInLatin.
	SlugTransliteration string
	// Locales are the locales the site publishes in, canonical BCP 47
	// tags; the first is the default (DefaultLocale).
	Locales []string
	// Localized are the title, description and menus per locale (In).
	Localized []SiteText
	UpdatedAt time.Time
	Version   int64
}

// Menu is a named navigation menu ("main", "footer").
type Menu struct {
	Name  string
	Items []MenuItem
}

// MenuItem is one link of a menu: Slug names the page, category or tag,
// URL the address of a LinkURL.
type MenuItem struct {
	Label string
	Kind  LinkKind
	Slug  string
	URL   string
}

// SitePatch is the input of UpdateSite: nil fields are left unchanged, an
// empty string clears one (the server's default stands for it).
// ExpectedVersion must be the version read (0 for settings never
// written).
type SitePatch struct {
	ExpectedVersion    int64
	Title, Description *string
	LogoURL, IconURL   *string
	// LogoMedia and IconMedia, when not nil, are the logo and the icon
	// from the media library (LogoURL and IconURL must be nil then).
	LogoMedia, IconMedia *Image
	Locale, Timezone     *string
	URL, PostPath        *string
	Menus                *[]Menu
	Social               *[]SocialAccount
	SlugTransliteration  *string
	// Locales, when not nil, replaces the site's locales; Localized its
	// settings per locale.
	Locales        *[]string
	Localized      *[]SiteText
	IdempotencyKey string
}

const typeSite = "site"

type siteItem struct {
	PK           string         `dynamodbav:"PK"`
	SK           string         `dynamodbav:"SK"`
	Type         string         `dynamodbav:"type"`
	Title        string         `dynamodbav:"title,omitempty"`
	Description  string         `dynamodbav:"description,omitempty"`
	LogoURL      string         `dynamodbav:"logoUrl,omitempty"`
	IconURL      string         `dynamodbav:"iconUrl,omitempty"`
	Logo         *imageItem     `dynamodbav:"logo,omitempty"`
	Icon         *imageItem     `dynamodbav:"icon,omitempty"`
	Locale       string         `dynamodbav:"locale,omitempty"`
	Timezone     string         `dynamodbav:"timezone,omitempty"`
	URL          string         `dynamodbav:"url,omitempty"`
	PostPath     string         `dynamodbav:"postPath,omitempty"`
	Menus        []menuItem     `dynamodbav:"menus,omitempty"`
	Social       []socialItem   `dynamodbav:"social,omitempty"`
	SlugTranslit string         `dynamodbav:"slugTransliteration,omitempty"`
	Locales      []string       `dynamodbav:"locales,omitempty"`
	Localized    []siteTextItem `dynamodbav:"l10n,omitempty"`
	UpdatedAt    string         `dynamodbav:"updatedAt"`
	Version      int64          `dynamodbav:"version"`
}

type menuItem struct {
	Name  string     `dynamodbav:"name"`
	Items []linkItem `dynamodbav:"items,omitempty"`
}

type linkItem struct {
	Label string `dynamodbav:"label"`
	Kind  string `dynamodbav:"kind"`
	Slug  string `dynamodbav:"slug,omitempty"`
	URL   string `dynamodbav:"url,omitempty"`
}

func (it *siteItem) site() *Site {
	s := &Site{
		Title: it.Title, Description: it.Description, LogoURL: it.LogoURL, IconURL: it.IconURL,
		Locale: it.Locale, Timezone: it.Timezone, URL: it.URL, PostPath: it.PostPath,
		SlugTransliteration: it.SlugTranslit, Locales: it.Locales, Localized: siteTextsOf(it.Localized),
		UpdatedAt: keys.ParseTime(it.UpdatedAt), Version: it.Version,
	}
	if it.Logo != nil {
		s.Logo = it.Logo.image()
	}
	if it.Icon != nil {
		s.Icon = it.Icon.image()
	}
	for _, m := range it.Menus {
		menu := Menu{Name: m.Name}
		for _, l := range m.Items {
			menu.Items = append(menu.Items, MenuItem{Label: l.Label, Kind: LinkKind(l.Kind), Slug: l.Slug, URL: l.URL})
		}
		s.Menus = append(s.Menus, menu)
	}
	for _, a := range it.Social {
		s.Social = append(s.Social, SocialAccount(a))
	}
	return s
}

func siteItemOf(ks keys.Space, s *Site) *siteItem {
	k := ks.Site()
	it := &siteItem{
		PK: k.PK, SK: k.SK, Type: typeSite,
		Title: s.Title, Description: s.Description, LogoURL: s.LogoURL, IconURL: s.IconURL,
		Locale: s.Locale, Timezone: s.Timezone, URL: s.URL, PostPath: s.PostPath,
		SlugTranslit: s.SlugTransliteration, Locales: s.Locales, Localized: siteTextItemsOf(s.Localized),
		UpdatedAt: keys.Time(s.UpdatedAt), Version: s.Version,
		Logo: libraryImageItem(s.Logo), Icon: libraryImageItem(s.Icon),
	}
	for _, m := range s.Menus {
		menu := menuItem{Name: m.Name}
		for _, l := range m.Items {
			menu.Items = append(menu.Items, linkItem{Label: l.Label, Kind: string(l.Kind), Slug: l.Slug, URL: l.URL})
		}
		it.Menus = append(it.Menus, menu)
	}
	for _, a := range s.Social {
		it.Social = append(it.Social, socialItem(a))
	}
	return it
}

// siteCache is a server's copy of the site item.
type siteCache struct {
	mu    sync.Mutex
	site  *Site // nil: not read yet, or forgotten
	epoch int64 // grows with every ForgetSite, so a read older than it is not kept
}

// Site returns the blog's settings as stored (empty fields unset), from
// the server's copy when it has one: no request; else one GetItem.
func (s *Store) Site(ctx context.Context) (*Site, error) {
	c := s.siteCache
	c.mu.Lock()
	cached, epoch := c.site, c.epoch
	c.mu.Unlock()
	if cached != nil {
		return cached, nil
	}
	var it siteItem
	err := s.db.Get(ctx, s.ks.Site(), false, &it)
	switch {
	case errors.Is(err, ErrNotFound):
		it = siteItem{}
	case err != nil:
		return nil, fmt.Errorf("site settings: %w", err)
	}
	site := it.site()
	c.mu.Lock()
	if c.epoch == epoch {
		c.site = site
	}
	c.mu.Unlock()
	return site, nil
}

// ForgetSite drops the server's copy of the site settings of each
// publication that events hold a site.updated of (an event without a
// publication is the default publication's), whichever publication's
// Store it is called on: the copies every Store made from one New holds
// of each publication. The change feed calls it with every batch it
// tails, which carries every publication's events.
func (s *Store) ForgetSite(events []LoggedEvent) {
	for _, e := range events {
		if e.Type != EventSiteUpdated {
			continue
		}
		pub := cmp.Or(e.Publication, DefaultPublication)
		if pub == s.ks.ID() {
			s.siteCache.forget()
		}
		if c := s.pubs.siteCacheOf(pub); c != nil {
			c.forget()
		}
	}
}

// forget drops the copy, and keeps a read begun before from being kept.
func (c *siteCache) forget() {
	c.mu.Lock()
	c.site = nil
	c.epoch++
	c.mu.Unlock()
}

// validateLabel checks a menu's name or a link's label: one line of
// plain text, which frontends put in every page; markup (< or >) is
// refused rather than kept for each of them to escape.
func validateLabel(field, v string) error {
	if err := validateLine(field, v, MaxLabelLength); err != nil {
		return err
	}
	if strings.ContainsAny(v, "<>") {
		return invalid(field, "must be plain text, without < or >")
	}
	return nil
}

func validateMenus(menus []Menu) error {
	if len(menus) > MaxMenus {
		return invalid("menus", "at most %d menus", MaxMenus)
	}
	names := map[string]bool{}
	for i, m := range menus {
		f := fmt.Sprintf("menus[%d]", i)
		if err := validateLabel(f+".name", m.Name); err != nil {
			return err
		}
		if names[m.Name] {
			return invalid(f+".name", "another menu has the name %q", m.Name)
		}
		names[m.Name] = true
		if len(m.Items) > MaxMenuItems {
			return invalid(f+".items", "at most %d items", MaxMenuItems)
		}
		for j, l := range m.Items {
			g := fmt.Sprintf("%s.items[%d]", f, j)
			if err := validateLabel(g+".label", l.Label); err != nil {
				return err
			}
			switch l.Kind {
			case LinkPage, LinkCategory, LinkTag:
				if l.URL != "" {
					return invalid(g+".url", "only a URL link has a URL")
				}
				if err := validateSlug(g+".slug", l.Slug); err != nil {
					return err
				}
			case LinkURL:
				if l.Slug != "" {
					return invalid(g+".slug", "a URL link has no slug")
				}
				if err := validateLink(g+".url", l.URL); err != nil {
					return err
				}
			default:
				return invalid(g+".kind", "unknown kind %q", l.Kind)
			}
		}
	}
	return nil
}

// validateLink checks a menu's URL: an absolute http or https URL, or a
// path of the site ("/contact").
func validateLink(field, v string) error {
	if v == "" {
		return invalid(field, "must be given")
	}
	if strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "//") {
		if len(v) > MaxURLLength || strings.ContainsFunc(v, badInURL) {
			return invalid(field, "must be a path of at most %d characters without spaces, quotes or angle brackets", MaxURLLength)
		}
		return nil
	}
	return validateURL(field, v)
}

func validateSite(in *SitePatch) error {
	if in.Locales != nil {
		ls, err := canonicalLocales("locales", *in.Locales)
		if err != nil {
			return err
		}
		in.Locales = &ls
	}
	if in.Localized != nil {
		if err := validateLocalized(*in.Localized); err != nil {
			return err
		}
	}
	errs := []error{
		validateOpt(in.Title, func(v string) error { return validateOptLine("title", v, MaxTitleLength) }),
		validateOpt(in.Description, func(v string) error { return validateText("description", v, false, MaxDescriptionLength) }),
		validateOpt(in.LogoURL, func(v string) error { return validateURL("logoUrl", v) }),
		validateOpt(in.IconURL, func(v string) error { return validateURL("iconUrl", v) }),
		validateOpt(in.URL, func(v string) error { return validateURL("url", v) }),
		validateOpt(in.Locale, func(v string) error {
			if v == "" {
				return nil
			}
			c, err := CanonicalLocale("locale", v)
			*in.Locale = c
			return err
		}),
		validateOpt(in.Timezone, func(v string) error {
			if v == "" {
				return nil
			}
			if _, err := time.LoadLocation(v); err != nil || len(v) > 64 || v == "Local" {
				return invalid("timezone", "must be an IANA time zone such as Europe/Berlin or UTC")
			}
			return nil
		}),
		validateOpt(in.PostPath, func(v string) error {
			if v == "" {
				return nil
			}
			if len(v) > MaxURLLength {
				return invalid("postPath", "must be at most %d characters", MaxURLLength)
			}
			if err := (frontend.Paths{Post: v}).Check(); err != nil {
				return invalid("postPath", "%v", err)
			}
			return nil
		}),
	}
	if v := in.SlugTransliteration; v != nil && *v != "" && *v != SlugsKeepScript && *v != SlugsInLatin {
		errs = append(errs, invalid("slugTransliteration", "must be %s or %s", SlugsKeepScript, SlugsInLatin))
	}
	if in.Menus != nil {
		errs = append(errs, validateMenus(*in.Menus))
	}
	if in.Social != nil {
		errs = append(errs, validateSocial("social", *in.Social))
	}
	return firstErr(errs...)
}

// UpdateSite changes the site settings if their version is still
// ExpectedVersion (else a *ConflictError): one GetItem and one
// TransactWriteItems.
func (s *Store) UpdateSite(ctx context.Context, in SitePatch) (*Site, error) {
	if err := validateSite(&in); err != nil {
		return nil, err
	}
	var links [][2]string
	for _, l := range [][2]*string{{ptr("logoUrl"), in.LogoURL}, {ptr("iconUrl"), in.IconURL}} {
		links = append(links, [2]string{*l[0], deref(l[1])})
	}
	if in.Social != nil {
		for i, a := range *in.Social {
			links = append(links, [2]string{fmt.Sprintf("social[%d].url", i), a.URL})
		}
	}
	if err := s.checkLinkHosts(links...); err != nil {
		return nil, err
	}
	out, err := idempotent(ctx, s, "updateSite", in.IdempotencyKey, in, func(rec *idem) (*Site, error) {
		return dynamo.RetryWrite(ctx, func() (*Site, error) { return s.writeSite(ctx, rec, &in) })
	})
	if err != nil {
		return nil, err
	}
	c := s.siteCache
	c.mu.Lock()
	if c.site == nil || c.site.Version <= out.Version {
		c.site = out
	}
	c.mu.Unlock()
	return out, nil
}

// writeSite reads the site item and writes in over it, on the condition
// that it is still as read (a write between makes the caller read again,
// and then meet the version it did not expect).
func (s *Store) writeSite(ctx context.Context, rec *idem, in *SitePatch) (*Site, error) {
	var it siteItem
	err := s.db.Get(ctx, s.ks.Site(), true, &it)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("site settings: %w", err)
	}
	if it.Version != in.ExpectedVersion {
		return nil, &ConflictError{CurrentVersion: it.Version}
	}
	site := it.site()
	picturesWas := site.pictureIDs()
	for _, f := range []struct {
		dst *string
		v   *string
	}{
		{&site.Title, in.Title}, {&site.Description, in.Description}, {&site.LogoURL, in.LogoURL},
		{&site.IconURL, in.IconURL}, {&site.Locale, in.Locale}, {&site.Timezone, in.Timezone},
		{&site.URL, in.URL}, {&site.PostPath, in.PostPath}, {&site.SlugTransliteration, in.SlugTransliteration},
	} {
		setOpt(f.dst, f.v)
	}
	site.setPictures(in)
	if in.Menus != nil {
		site.Menus = *in.Menus
	}
	if in.Social != nil {
		site.Social = *in.Social
	}
	if in.Locales != nil {
		site.Locales = *in.Locales
	}
	if in.Localized != nil {
		site.Localized = *in.Localized
	}
	site.Version++
	site.UpdatedAt = s.Now()
	cond := dynamo.CondNotExists()
	if it.Version > 0 {
		cond = condVersion(it.Version)
	}
	t := s.db.NewTxn()
	if err := t.Put(siteItemOf(s.ks, site), &cond, dynamo.ErrRetry); err != nil {
		return nil, err
	}
	if err := s.pictureUseActions(t, siteUser, picturesWas, site.pictureIDs(),
		map[string]string{"logo": "logoMediaId", "icon": "iconMediaId"}); err != nil {
		return nil, err
	}
	// The stored form is what a read returns: empty lists as none.
	stored := siteItemOf(s.ks, site).site()
	return execRecord(ctx, s, t, rec, stored)
}

// siteEvents translates a write of the site item: site.updated.
func siteEvents(r *record, add func(EventType, EventData)) error {
	add(EventSiteUpdated, EventData{CacheTags: []string{frontend.TagSite}})
	return nil
}

// validateSocial checks a list of accounts elsewhere: at most
// MaxSocialAccounts, each a network's name of one line and a URL.
func validateSocial(field string, accounts []SocialAccount) error {
	if len(accounts) > MaxSocialAccounts {
		return invalid(field, "at most %d accounts", MaxSocialAccounts)
	}
	for i, a := range accounts {
		f := fmt.Sprintf("%s[%d]", field, i)
		if err := validateLine(f+".network", a.Network, MaxLabelLength); err != nil {
			return err
		}
		if a.URL == "" {
			return invalid(f+".url", "must be given")
		}
		if err := validateURL(f+".url", a.URL); err != nil {
			return err
		}
	}
	return nil
}

// validateProfile checks an author's website, location and accounts
// elsewhere, each when given.
func validateProfile(website, location *string, social *[]SocialAccount) error {
	err := firstErr(
		validateOpt(website, func(v string) error { return validateURL("website", v) }),
		validateOpt(location, func(v string) error { return validateOptLine("location", v, MaxLabelLength) }),
	)
	if err == nil && social != nil {
		err = validateSocial("social", *social)
	}
	return err
}

// profileLinks returns the links of an author's profile, named as
// validation names them.
func profileLinks(website string, social []SocialAccount) [][2]string {
	links := [][2]string{{"website", website}}
	for i, a := range social {
		links = append(links, [2]string{fmt.Sprintf("social[%d].url", i), a.URL})
	}
	return links
}
