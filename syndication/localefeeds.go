package syndication

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"golang.org/x/text/language"

	"github.com/blogql/blog/storage"
)

// localePage reads the limit and the locale of a request for the blog's
// feed: ?locale=<BCP 47 tag> asks for the posts in that locale alone,
// canonical ("" without it); a tag that is not one is a 400.
func localePage(r *http.Request) (storage.PageArgs, string, error) {
	q, err := query(r, "limit", "locale")
	if err != nil {
		return storage.PageArgs{}, "", err
	}
	n, err := number(q, "limit", DefaultLimit, 1, MaxLimit)
	if err != nil {
		return storage.PageArgs{}, "", err
	}
	locale := ""
	if _, ok := q["locale"]; ok {
		if locale, err = storage.CanonicalLocale("locale", q.Get("locale")); err != nil {
			return storage.PageArgs{}, "", badRequest("locale %q is not a BCP 47 language tag such as en or pt-BR", q.Get("locale"))
		}
	}
	return storage.PageArgs{Limit: n}, locale, nil
}

// latest returns the newest posts of the whole blog, or of locale alone
// (its own list: one Query either way).
func (h *Handler) latest(ctx context.Context, p storage.PageArgs, locale string) (*storage.Result[*storage.Post], error) {
	if locale == "" {
		res, err := h.store.LatestPosts(ctx, p, storage.Period{})
		if err != nil {
			return nil, fmt.Errorf("latest posts: %w", err)
		}
		return res, nil
	}
	res, err := h.store.LocalePosts(ctx, locale, p, storage.Period{})
	var invalid *storage.ValidationError
	if errors.As(err, &invalid) {
		return nil, badRequest("%s", invalid.Error())
	}
	if err != nil {
		return nil, fmt.Errorf("posts in %s: %w", locale, err)
	}
	return res, nil
}

// acceptedLocale returns the locale of the site's that best matches the
// request's Accept-Language, for the blog's feed asked for without
// ?locale=, and whether the answer depends on that header: it does on a
// site of several locales (Vary: Accept-Language), even when the header
// is absent or matches none of them (the whole blog's feed, as on a site
// of one locale, with locale ""). It reads nothing: the site's settings
// are held in memory.
func (h *Handler) acceptedLocale(r *http.Request) (locale string, varies bool) {
	if len(h.locales) < 2 {
		return "", false
	}
	header := r.Header.Get("Accept-Language")
	if header == "" {
		return "", true
	}
	accepted, _, err := language.ParseAcceptLanguage(header)
	if err != nil || len(accepted) == 0 {
		return "", true
	}
	tags := make([]language.Tag, len(h.locales))
	for i, l := range h.locales {
		tags[i] = language.Make(l)
	}
	_, i, conf := language.NewMatcher(tags).Match(accepted...)
	if conf == language.No {
		return "", true
	}
	return h.locales[i], true
}
