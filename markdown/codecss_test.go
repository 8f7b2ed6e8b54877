package markdown

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCodeCSSServesAChromaTheme(t *testing.T) {
	h := CodeCSS()
	for _, c := range []struct {
		query string
		code  int
		want  string
	}{
		{"", http.StatusOK, ".chroma .kd {"},
		{"?style=monokai", http.StatusOK, ".chroma .kd {"},
		{"?style=no-such-style", http.StatusNotFound, "no such style"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/code.css"+c.query, nil))
		if w.Code != c.code || !strings.Contains(w.Body.String(), c.want) {
			t.Errorf("%s: %d %.200s", c.query, w.Code, w.Body.String())
		}
		if c.code == http.StatusOK && w.Header().Get("Content-Type") != "text/css; charset=utf-8" {
			t.Errorf("%s: content type %q", c.query, w.Header().Get("Content-Type"))
		}
	}
}
