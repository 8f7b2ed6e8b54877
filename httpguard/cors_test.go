package httpguard

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestWebSocketOriginsAreTheServersOwnAndTheCORSOrigins(t *testing.T) {
	check := WebSocketOrigins(NewCORS([]string{"https://app.example.com"}))
	for _, c := range []struct {
		origin string
		want   bool
	}{
		{"", true},                        // not a browser
		{"http://api.example.com", true},  // the server's own pages (the playground)
		{"https://api.example.com", true}, // behind a TLS proxy
		{"https://app.example.com", true}, // -cors-origins
		{"https://evil.example", false},
		{"null", false},
		{"https://api.example.com.evil.example", false},
	} {
		r := httptest.NewRequest(http.MethodGet, "http://api.example.com/graphql", nil)
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if got := check(r); got != c.want {
			t.Errorf("Origin %q: allowed %v, want %v", c.origin, got, c.want)
		}
	}
}
