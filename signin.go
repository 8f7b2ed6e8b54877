package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/mailer"
	"github.com/blogql/blog/storage"
)

// readerSessionKeyName names the table's key (storage.Store.Secret) that
// signs readers' session tokens when READER_JWT_SECRET is not set.
const readerSessionKeyName = "reader-session"

// checkSignIn returns what is wrong with the settings of readers' sign-in.
func (c *config) checkSignIn() error {
	switch {
	case c.signInLinkTTL < time.Minute || c.signInLinkTTL > time.Hour:
		return fmt.Errorf("sign-in link TTL %s: must be 1m to 1h", c.signInLinkTTL)
	case c.readerAccessTTL < time.Minute || c.readerAccessTTL > time.Hour:
		return fmt.Errorf("reader access TTL %s: must be 1m to 1h", c.readerAccessTTL)
	case c.signInAddresses < 1 || c.signInAddresses > 1000:
		return fmt.Errorf("sign-in client addresses %d: must be 1 to 1000", c.signInAddresses)
	case c.smtpURL != "" && c.sesRegion != "":
		return errors.New("SMTP_URL and SES_REGION: emails go one way, choose one")
	case c.smtpURL != "":
		_, err := c.smtpConfig()
		return err
	case c.sesRegion != "" && c.smtpFrom == "":
		return errors.New("SES_REGION needs SMTP_FROM, the sender verified in SES")
	case c.sesEndpoint != "" && c.sesRegion == "":
		return errors.New("SES_ENDPOINT is set without SES_REGION")
	case c.smtpFrom != "" && c.sesRegion == "":
		return errors.New("SMTP_FROM is set without SMTP_URL or SES_REGION")
	}
	return nil
}

// smtpConfig returns the SMTP settings of -smtp-url and -smtp-from.
func (c *config) smtpConfig() (mailer.SMTPConfig, error) {
	u, err := url.Parse(c.smtpURL)
	if err != nil {
		return mailer.SMTPConfig{}, errors.New("SMTP_URL: not a URL")
	}
	if c.smtpFrom != "" {
		q := u.Query()
		q.Set("from", c.smtpFrom)
		u.RawQuery = q.Encode()
	}
	return mailer.ParseSMTPURL(u.String())
}

// readerSessionKey returns the key that signs readers' session tokens:
// READER_JWT_SECRET, or else the table's own, which every server on the
// table shares. It returns the DynamoDB error when the table's key can be
// neither read nor made.
func readerSessionKey(ctx context.Context, cfg *config, store *storage.Store) ([]byte, error) {
	if cfg.readerSecret != "" {
		return []byte(cfg.readerSecret), nil
	}
	key, err := store.Secret(ctx, readerSessionKeyName)
	if err != nil {
		return nil, fmt.Errorf("reader session key: %w", err)
	}
	return key, nil
}

// newMailWorker returns the worker that sends the outbox's emails: by
// Amazon SES with -ses-region, else by SMTP when configured, else into
// the local outbox and the log.
func newMailWorker(ctx context.Context, cfg *config, store *storage.Store, logger *slog.Logger) (*mailer.Worker, error) {
	if cfg.sesRegion != "" {
		awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(cfg.sesRegion))
		if err != nil {
			return nil, fmt.Errorf("SES: %w", err)
		}
		sender, err := mailer.NewSES(awsCfg, mailer.SESConfig{Region: cfg.sesRegion, Endpoint: cfg.sesEndpoint, From: cfg.smtpFrom})
		if err != nil {
			return nil, err
		}
		logger.Info("emails go by Amazon SES", "region", cfg.sesRegion, "rate", cfg.mailRate)
		return mailer.NewWorker(store, sender, logger).Limit(float64(cfg.mailRate)), nil
	}
	if cfg.smtpURL == "" {
		logger.Info("no SMTP configured: emails stay in the local outbox (outboxEmails, admins only) and the log")
		return mailer.NewWorker(store, mailer.Local{Logger: logger}, logger).Limit(float64(cfg.mailRate)), nil
	}
	sc, err := cfg.smtpConfig()
	if err != nil {
		return nil, err
	}
	sender, err := mailer.NewSMTP(sc)
	if err != nil {
		return nil, err
	}
	logger.Info("emails go by SMTP", "host", sc.Host, "port", sc.Port, "tls", sc.TLS, "rate", cfg.mailRate)
	return mailer.NewWorker(store, sender, logger).Limit(float64(cfg.mailRate)), nil
}

// signInOptions returns the handler's settings of readers' sign-in: links
// lead to the site's origin and the CORS origins.
func (a *api) signInOptions(cfg *config) graph.SignInOptions {
	o := graph.SignInOptions{
		Key: cfg.readerSessionKey, Issuer: cfg.readerIssuer, Audience: cfg.readerAudience,
		AccessTTL: cfg.readerAccessTTL, LinkTTL: cfg.signInLinkTTL, ClientAddresses: cfg.signInAddresses,
		SiteName: cfg.siteTitle, Origins: append([]string(nil), cfg.corsOrigins...),
	}
	if o.Issuer == "" {
		o.Issuer = cfg.jwtIssuer
	}
	if o.Audience == "" {
		o.Audience = cfg.jwtAudience
	}
	if u, err := url.Parse(cfg.siteURL); err == nil && u.Host != "" {
		o.Origins = append(o.Origins, u.Scheme+"://"+u.Host)
	}
	if a.mail != nil {
		o.Enqueued = a.mail.Wake
	}
	return o
}
