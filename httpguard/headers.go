package httpguard

import "net/http"

// SecurityHeaders sets on every response the headers that keep browsers
// from doing with it what it is not for: no framing, no guessing of media
// types, no referrer sent on, and a Content-Security-Policy that allows
// nothing (an API answer runs no script and loads nothing); the
// playground's page sets a policy of its own.
func SecurityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}
