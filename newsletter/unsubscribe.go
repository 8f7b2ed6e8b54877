package newsletter

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/blogql/blog/storage"
)

// UnsubscribePath is where Unsubscribe is served.
const UnsubscribePath = "/newsletter/unsubscribe"

// KeyName names the table's key (storage.Store.Secret) that signs the
// unsubscribe links.
const KeyName = "newsletter-unsubscribe"

// What an unsubscribe token turns off: each is signed apart, so a link
// of one kind of email never turns off another.
const (
	purposeNewsletter = "unsubscribe"
	purposeReplies    = "unsubscribe-replies"
)

// token returns the unsubscribe token for purpose of the member
// accountID: the id and a MAC of it, the purpose and the publication, so
// a token works for one thing of one member of one publication, never
// expires, and needs no item of its own.
func (s *Service) token(purpose, accountID string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(accountID)) + "." + base64.RawURLEncoding.EncodeToString(s.mac(purpose, accountID))
}

func (s *Service) mac(purpose, accountID string) []byte {
	h := hmac.New(sha256.New, s.opts.Key)
	h.Write([]byte(purpose + "\x00" + s.store.Publication() + "\x00" + accountID))
	return h.Sum(nil)[:16]
}

// errBadToken means an unsubscribe token that this publication did not
// sign.
var errBadToken = errors.New("not an unsubscribe token of this publication")

// member returns the account id that token was signed for, for purpose.
func (s *Service) member(purpose, token string) (string, error) {
	id64, mac64, ok := strings.Cut(token, ".")
	id, err1 := base64.RawURLEncoding.DecodeString(id64)
	mac, err2 := base64.RawURLEncoding.DecodeString(mac64)
	if !ok || err1 != nil || err2 != nil || len(id) == 0 || !hmac.Equal(mac, s.mac(purpose, string(id))) {
		return "", errBadToken
	}
	return string(id), nil
}

// UnsubscribeURL returns the link that unsubscribes the member accountID
// from the newsletter.
func (s *Service) UnsubscribeURL(accountID string) string {
	return s.link(UnsubscribePath, purposeNewsletter, accountID)
}

func (s *Service) link(path, purpose, accountID string) string {
	base := strings.TrimSuffix(s.opts.UnsubscribeBase(), "/")
	return base + path + "?" + url.Values{"token": {s.token(purpose, accountID)}}.Encode()
}

var unsubscribedPage = template.Must(template.New("unsubscribed").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><meta name="robots" content="noindex"><title>{{.}}</title></head>
<body style="font-family: sans-serif"><p>{{.}}</p></body></html>
`))

// Unsubscribe returns the handler of the newsletter's unsubscribe link:
// GET (a click) and POST (RFC 8058's one-click,
// List-Unsubscribe=One-Click) both turn the newsletter off for the
// member the token names, without signing in, and answer a short page:
// 200 when done (again too), 400 for a token this publication did not
// sign, 404 when the account is no longer a member.
func (s *Service) Unsubscribe() http.Handler {
	return s.unsubscribe(purposeNewsletter, s.store.SetNewsletter, "newsletter",
		"You are unsubscribed: you will get no more newsletters.", "You are no longer a member: you get no newsletter.")
}

// unsubscribe returns the handler of the links of purpose, which turn
// off what off turns off, what names it in the log, and answer done or
// gone (no longer a member).
func (s *Service) unsubscribe(purpose string, off func(ctx context.Context, accountID string, on bool) error, what, done, gone string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private, no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		id, err := s.member(purpose, r.URL.Query().Get("token"))
		if err != nil {
			page(w, http.StatusBadRequest, "This unsubscribe link is not valid.")
			return
		}
		err = off(r.Context(), id, false)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			page(w, http.StatusNotFound, gone)
		case err != nil:
			s.opts.Logger.ErrorContext(r.Context(), "unsubscribe", "what", what, "err", err)
			page(w, http.StatusServiceUnavailable, "Something went wrong; try again in a minute.")
		default:
			s.opts.Logger.InfoContext(r.Context(), "unsubscribed", "what", what, "account", id)
			page(w, http.StatusOK, done)
		}
	})
}

func page(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = unsubscribedPage.Execute(w, msg)
}
