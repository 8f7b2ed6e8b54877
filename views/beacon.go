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
		c.Record(r.Context(), Hit{PostID: r.PathValue("postId"), IP: c.ClientIP(r), UserAgent: r.UserAgent(), Referrer: ref})
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
	})
}

// ClientIP returns the address of the client of r as the counter takes
// it: the last address of the header Options.ClientIPHeader names, which
// the proxy in front of the server sets or appends to (the addresses
// before it are the client's word), or the peer address of r when there
// is no such option or header.
func (c *Counter) ClientIP(r *http.Request) string {
	if c != nil && c.opts.ClientIPHeader != "" {
		if vs := r.Header.Values(c.opts.ClientIPHeader); len(vs) > 0 {
			last := vs[len(vs)-1]
			if i := strings.LastIndexByte(last, ','); i >= 0 {
				last = last[i+1:]
			}
			if ip := net.ParseIP(strings.TrimSpace(last)); ip != nil {
				return ip.String()
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
