package main

import (
	"net/http"
	"testing"
)

// TestMediaRoutes starts the server with the embedded media store and
// checks its routes as a browser meets them: a page of an allowed origin
// may send uploads to /s3/ (its preflight is answered), a page of another
// may not, the store answers nothing else, and renditions of no media
// item are 404.
func TestMediaRoutes(t *testing.T) {
	base, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-host", "127.0.0.1"},
		map[string]string{"CORS_ORIGINS": "https://app.example.com"})
	defer stop()
	upload := base + "/s3/media/uploads/01a22642-734f-7f0e-bece-dc9144b75e3b"
	preflight := func(origin string) (int, http.Header) {
		code, h, _ := request{method: http.MethodOptions, url: upload, headers: []string{"Origin: " + origin,
			"Access-Control-Request-Method: PUT", "Access-Control-Request-Headers: content-type"}}.do(t)
		return code, h
	}
	code, h := preflight("https://app.example.com")
	if code != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "https://app.example.com" || h.Get("Access-Control-Allow-Methods") != "PUT" {
		t.Errorf("preflight of an allowed origin: %d, %v", code, h)
	}
	code, h = preflight("https://evil.example")
	if code == http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight of another origin: %d, %v", code, h)
	}
	for _, r := range []request{
		{method: http.MethodGet, url: base + "/s3/media/"},
		{method: http.MethodGet, url: upload},
		{method: http.MethodPut, url: upload, body: "unsigned", headers: []string{"Content-Type: image/png"}},
		{method: http.MethodDelete, url: upload},
	} {
		if code, _, _ := r.do(t); code != http.StatusForbidden {
			t.Errorf("%s %s: %d, want 403", r.method, r.url, code)
		}
	}
	if code, _, _ := (request{url: base + "/media/01a22642-734f-7f0e-bece-dc9144b75e3b/640.webp"}).do(t); code != http.StatusNotFound {
		t.Errorf("rendition of no item: %d, want 404", code)
	}
}
