package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/blogql/blog/mailer"
	"github.com/blogql/blog/newsletter"
	"github.com/blogql/blog/storage"
)

// defaultMailRate is -mail-rate's default: the most emails a second one
// server sends, below what common SMTP relays and Amazon SES accounts
// out of the sandbox take.
const defaultMailRate = 20

// checkNewsletter returns what is wrong with the settings of the
// newsletter and the mail worker.
func (c *config) checkNewsletter() error {
	if c.mailRate < 0 || c.mailRate > 10000 {
		return fmt.Errorf("mail rate %d: must be 0 to 10000", c.mailRate)
	}
	if c.publicURL != "" {
		u, err := url.Parse(c.publicURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return errors.New("PUBLIC_URL: must be an absolute http(s) URL")
		}
	}
	return nil
}

// newNewsletter returns the publication's newsletter: its unsubscribe
// links are signed with the table's key, which every server on the table
// shares, lead to -public-url (or -site-url), and its posts' links to
// the site's URL; mail is woken when a page of emails is enqueued. It
// returns the DynamoDB error when the key can be neither read nor made.
func newNewsletter(ctx context.Context, cfg *config, store *storage.Store, mail *mailer.Worker, logger *slog.Logger) (*newsletter.Service, error) {
	key, err := store.Secret(ctx, newsletter.KeyName)
	if err != nil {
		return nil, fmt.Errorf("newsletter key: %w", err)
	}
	// The handler sets -site-url in development before the feed runs.
	site := newsletterSite(cfg, store, func() (string, string) { return cfg.siteTitle, cfg.siteURL })
	base := func() string { return or(cfg.publicURL, cfg.siteURL) }
	return newsletter.New(store, newsletter.Options{Key: key, Site: site, UnsubscribeBase: base, Enqueued: mail.Wake, Logger: logger}), nil
}

// newsletterSite returns the newsletter's Site of store's publication:
// the title and post links of its settings, else those of defaults
// (its title and site URL).
func newsletterSite(cfg *config, store *storage.Store, defaults func() (title, url string)) func(context.Context, *storage.Post) (string, string, error) {
	return func(ctx context.Context, p *storage.Post) (string, string, error) {
		s, err := store.Site(ctx)
		if err != nil {
			return "", "", err
		}
		paths := cfg.paths
		if s.PostPath != "" {
			paths.Post = s.PostPath
		}
		title, url := defaults()
		base := strings.TrimSuffix(or(s.URL, url), "/")
		return or(s.Title, title), base + paths.PostPath(p.Slug, p.PublishedAt), nil
	}
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
