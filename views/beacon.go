package views

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
)

// MaxBeaconBytes is the largest beacon body read: a referrer URL. A larger
// one is refused with 413 and not counted.
const MaxBeaconBytes = 2048

// BeaconPath is the pattern of the beacon's route.
const BeaconPath = "POST /v/{postId}"

// Beacon returns the handler of BeaconPath, for navigator.sendBeacon: the
// body is empty or the referrer of the page (document.referrer) as text,
// whatever its content type, or the referrer comes as the ref parameter.
// A well-formed beacon is answered 204 whatever became of it, so a page
// never waits on it or learns why it was not counted; a body over
// MaxBeaconBytes is answered 413. CORS is the caller's (httpguard).
func Beacon(c *Counter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBeaconBytes))
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			c.opts.Observe("oversized", 1)
			http.Error(w, "beacon body too large", http.StatusRequestEntityTooLarge)
			return
		case err != nil:
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		ref := r.URL.Query().Get("ref")
		if ref == "" {
			ref = strings.TrimSpace(string(body))
		}
		c.Record(r.Context(), Hit{PostID: r.PathValue("postId"), IP: clientIP(r), UserAgent: r.UserAgent(), Referrer: ref})
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
	})
}

// clientIP returns the address of the client of r, without its port.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// ClientIP is the address Record takes as the client's for r: its peer
// address (a proxy in front passes its own; see docs/operations.md).
func ClientIP(r *http.Request) string { return clientIP(r) }
