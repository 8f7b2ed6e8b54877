package syndication

import (
	"context"
	"errors"
	"fmt"
	"net/http"

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
