// Package mailer sends the emails of the table's outbox (storage's
// mail.go): by SMTP when one is configured, else into the local outbox,
// where an admin reads them (the outboxEmails query) and the log shows
// them. It composes the sign-in email too.
package mailer

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"net/url"
	"strconv"
	"sync"
	"time"

	gomail "github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"

	"github.com/blogql/blog/storage"
)

// Sender sends one email. An error wrapping ErrPermanent will fail the
// same way on every attempt; any other is tried again later.
type Sender interface {
	Send(ctx context.Context, e storage.Email) error
	// Transport names how it sends: "smtp" or "local".
	Transport() string
}

// ErrPermanent marks a failure that no retry mends: the server refused
// the recipient or the message (a 5xx reply).
var ErrPermanent = errors.New("permanent failure")

// TLS modes of SMTP.
const (
	// TLSStartTLS upgrades the connection with STARTTLS, and refuses a
	// server that does not offer it.
	TLSStartTLS = "starttls"
	// TLSImplicit speaks TLS from the start (smtps, port 465).
	TLSImplicit = "tls"
	// TLSNone sends in clear: for a relay on loopback only.
	TLSNone = "none"
)

// SMTPConfig configures the SMTP sender.
type SMTPConfig struct {
	Host     string
	Port     int
	Username string
	Password string
	// From is the sender's address, "Blog <no-reply@example.com>".
	From string
	// TLS is TLSStartTLS (the default), TLSImplicit or TLSNone.
	TLS string
	// TLSConfig, when set, verifies the server (its RootCAs); nil means
	// the system's roots and Host as the server's name.
	TLSConfig *tls.Config
	// Timeout bounds connecting and each command; zero means 15 s.
	Timeout time.Duration
}

// ParseSMTPURL returns the configuration of an SMTP URL:
// smtp://user:password@host:587 (STARTTLS), smtps://user:password@host:465
// (implicit TLS) or smtp://host:25?tls=none (clear, loopback only), with
// the sender's address in the query as from=.
func ParseSMTPURL(raw string) (SMTPConfig, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return SMTPConfig{}, fmt.Errorf("SMTP URL: %w", err)
	}
	c := SMTPConfig{Host: u.Hostname(), From: u.Query().Get("from"), TLS: TLSStartTLS}
	switch u.Scheme {
	case "smtp":
		c.Port = 587
		if t := u.Query().Get("tls"); t != "" {
			c.TLS = t
		}
	case "smtps":
		c.Port, c.TLS = 465, TLSImplicit
	default:
		return SMTPConfig{}, errors.New("SMTP URL: the scheme must be smtp or smtps")
	}
	if p := u.Port(); p != "" {
		if c.Port, err = strconv.Atoi(p); err != nil {
			return SMTPConfig{}, fmt.Errorf("SMTP URL: port %q", p)
		}
	}
	if u.User != nil {
		c.Username = u.User.Username()
		c.Password, _ = u.User.Password()
	}
	return c, c.check()
}

func (c SMTPConfig) check() error {
	switch {
	case c.Host == "":
		return errors.New("SMTP: no host")
	case c.From == "":
		return errors.New("SMTP: no sender address (from)")
	case c.TLS != TLSStartTLS && c.TLS != TLSImplicit && c.TLS != TLSNone:
		return fmt.Errorf("SMTP: tls must be %s, %s or %s", TLSStartTLS, TLSImplicit, TLSNone)
	case c.TLS == TLSNone && !loopback(c.Host):
		return errors.New("SMTP: tls=none only to a relay on loopback: passwords and sign-in links would cross the network in clear")
	case c.Username != "" && c.TLS == TLSNone:
		return errors.New("SMTP: no password is sent without TLS")
	}
	return nil
}

func loopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// maxIdle is how many sessions an SMTP sender keeps open between
// messages: one for each of the worker's lanes.
const maxIdle = 2

// SMTP sends by SMTP. It is safe for concurrent use.
type SMTP struct {
	cfg  SMTPConfig
	opts []gomail.Option

	mu   sync.Mutex
	pool []*smtp.Client // sessions whose last message went, for the next
}

// NewSMTP returns the sender of cfg, or an error when cfg is incomplete.
func NewSMTP(cfg SMTPConfig) (*SMTP, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Second
	}
	opts := []gomail.Option{gomail.WithPort(cfg.Port), gomail.WithTimeout(cfg.Timeout)}
	switch cfg.TLS {
	case TLSImplicit:
		opts = append(opts, gomail.WithSSL())
	case TLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	tc := cfg.TLSConfig
	if tc == nil {
		tc = &tls.Config{ServerName: cfg.Host, MinVersion: tls.VersionTLS12}
	}
	opts = append(opts, gomail.WithTLSConfig(tc))
	if cfg.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthPlain), gomail.WithUsername(cfg.Username), gomail.WithPassword(cfg.Password))
	}
	return &SMTP{cfg: cfg, opts: opts}, nil
}

// Transport returns "smtp".
func (s *SMTP) Transport() string { return "smtp" }

// Send sends e in one SMTP session. Its Message-ID is made of e's id, so
// a copy sent twice (a server stopped between sending and recording it)
// is recognisably the same message.
func (s *SMTP) Send(ctx context.Context, e storage.Email) error {
	m, err := message(s.cfg.From, s.cfg.Host, e)
	if err != nil {
		return err
	}
	c, err := gomail.NewClient(s.cfg.Host, s.opts...)
	if err != nil {
		return fmt.Errorf("%w: SMTP client: %w", ErrPermanent, err)
	}
	err = c.DialAndSendWithContext(ctx, m)
	if se, ok := errors.AsType[*gomail.SendError](err); ok && !se.IsTemp() && se.ErrorCode() >= 500 {
		return fmt.Errorf("%w: %w", ErrPermanent, err)
	}
	if err != nil {
		return fmt.Errorf("smtp %s:%d: %w", s.cfg.Host, s.cfg.Port, err)
	}
	return nil
}

// SendCommitted sends e as Send does, and calls commit once the server
// has every byte of the message but the final dot, which makes it take
// the message for good: the outbox records the email as sent then, so a
// server killed at any moment after sends it to nobody twice. When commit
// fails, the session is cut before the dot and the server takes nothing;
// an error after commit is the server's answer to the dot, or a failure
// before it reads the dot. It returns commit's error as it is.
//
// The session of a message the server took stays open for the next one
// (MAIL FROM again on the same connection, no new greeting, STARTTLS or
// AUTH); one that failed is closed. CloseIdle closes those left open.
func (s *SMTP) SendCommitted(ctx context.Context, e storage.Email, commit func() error) error {
	m, err := message(s.cfg.From, s.cfg.Host, e)
	if err != nil {
		return err
	}
	from, err := m.GetSender(false)
	if err != nil {
		return fmt.Errorf("%w: sender: %w", ErrPermanent, err)
	}
	sc, reused, err := s.session(ctx)
	if err != nil {
		return err
	}
	err = sc.Mail(from)
	if err != nil && reused {
		// The server may have closed a session left idle: one new try.
		_ = sc.Close()
		if sc, err = s.dial(ctx); err != nil {
			return err
		}
		err = sc.Mail(from)
	}
	ok := false
	defer func() {
		if ok {
			s.idle(sc)
		} else {
			_ = sc.Close() // instead of the dot, or after a refusal
		}
	}()
	if err != nil {
		return s.failed(err)
	}
	if err := sc.Rcpt(e.To); err != nil {
		return s.failed(err)
	}
	w, err := sc.Data()
	if err != nil {
		return s.failed(err)
	}
	if _, err := m.WriteTo(w); err != nil {
		return s.failed(err)
	}
	if err := commit(); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return s.failed(err)
	}
	ok = true
	return nil
}

// session returns an open session of the pool, true, or a new one,
// false, with its deadline moved to the configured timeout from now.
func (s *SMTP) session(ctx context.Context) (*smtp.Client, bool, error) {
	s.mu.Lock()
	n := len(s.pool)
	var sc *smtp.Client
	if n > 0 {
		sc, s.pool = s.pool[n-1], s.pool[:n-1]
	}
	s.mu.Unlock()
	if sc != nil {
		if err := sc.UpdateDeadline(s.cfg.Timeout); err == nil {
			return sc, true, nil
		}
		_ = sc.Close()
	}
	sc, err := s.dial(ctx)
	return sc, false, err
}

// dial opens a session: connected, greeted, with STARTTLS and AUTH as
// configured.
func (s *SMTP) dial(ctx context.Context) (*smtp.Client, error) {
	c, err := gomail.NewClient(s.cfg.Host, s.opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: SMTP client: %w", ErrPermanent, err)
	}
	sc, err := c.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return nil, s.failed(err)
	}
	return sc, nil
}

// idle keeps sc, whose last message the server took, for the next
// message; beyond maxIdle sessions it says QUIT instead.
func (s *SMTP) idle(sc *smtp.Client) {
	s.mu.Lock()
	keep := len(s.pool) < maxIdle
	if keep {
		s.pool = append(s.pool, sc)
	}
	s.mu.Unlock()
	if !keep {
		quit(sc)
	}
}

// CloseIdle ends the sessions kept open for the next message, with QUIT:
// the worker calls it when it has nothing left to send.
func (s *SMTP) CloseIdle() {
	s.mu.Lock()
	pool := s.pool
	s.pool = nil
	s.mu.Unlock()
	for _, sc := range pool {
		_ = sc.UpdateDeadline(s.cfg.Timeout)
		quit(sc)
	}
}

// quit ends sc with QUIT, and closes its connection whatever the answer.
func quit(sc *smtp.Client) {
	_ = sc.Quit()
	_ = sc.Close()
}

// failed returns the error err of an SMTP session, wrapping ErrPermanent
// when the server answered with a 5xx reply.
func (s *SMTP) failed(err error) error {
	if te, ok := errors.AsType[*textproto.Error](err); ok && te.Code >= 500 {
		return fmt.Errorf("%w: smtp %s:%d: %w", ErrPermanent, s.cfg.Host, s.cfg.Port, err)
	}
	return fmt.Errorf("smtp %s:%d: %w", s.cfg.Host, s.cfg.Port, err)
}

// message returns e as a MIME message from the address from: a text and
// an HTML part, the one-click List-Unsubscribe headers when e has a
// link, and a Message-ID of e's id at domain. It returns an error
// wrapping ErrPermanent for an address that is not one.
func message(from, domain string, e storage.Email) (*gomail.Msg, error) {
	m := gomail.NewMsg()
	if err := m.From(from); err != nil {
		return nil, fmt.Errorf("%w: sender %q: %w", ErrPermanent, from, err)
	}
	if err := m.To(e.To); err != nil {
		return nil, fmt.Errorf("%w: recipient: %w", ErrPermanent, err)
	}
	m.Subject(e.Subject)
	m.SetMessageIDWithValue(e.ID + "@" + domain)
	m.SetDate()
	if e.ListUnsubscribe != "" {
		// RFC 8058: one POST to the link unsubscribes, no page to click.
		m.SetListUnsubscribe(e.ListUnsubscribe)
		m.SetListUnsubscribePost()
	}
	m.SetBodyString(gomail.TypeTextPlain, e.Text)
	m.AddAlternativeString(gomail.TypeTextHTML, e.HTML)
	return m, nil
}
