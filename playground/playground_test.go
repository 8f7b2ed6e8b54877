package playground

import (
	"bytes"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlayground(t *testing.T) {
	serve := func(t *testing.T, dir string, headers map[string]string) (http.Handler, *bytes.Buffer) {
		var logs bytes.Buffer
		mux := http.NewServeMux()
		Mount(mux, []string{dir}, headers, slog.New(slog.NewTextHandler(&logs, nil)))
		return mux, &logs
	}
	get := func(h http.Handler, target string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		return rec
	}

	t.Run("opens on the default query", func(t *testing.T) {
		h, _ := serve(t, t.TempDir(), nil)
		rec := get(h, "/")
		if rec.Code != http.StatusFound {
			t.Fatalf("status %d, want a redirect", rec.Code)
		}
		loc, err := url.Parse(rec.Header().Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		if loc.Path != "/" || loc.Query().Get("query") != DefaultQuery {
			t.Errorf("redirect to %s, want / with the default query", loc)
		}
		if rec := get(h, "/?query=%7B__typename%7D"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Blog GraphQL") {
			t.Errorf("page with a query = %d, want the playground", rec.Code)
		}
	})

	t.Run("links every asset with its hash and starts with its own script", func(t *testing.T) {
		h, _ := serve(t, t.TempDir(), nil)
		body := html.UnescapeString(get(h, "/?query=x").Body.String())
		for _, a := range assets {
			path, sri := a.path, a.sri
			if a.cdnPath != "" {
				path, sri = a.cdnPath, a.cdnSRI
			}
			if !strings.Contains(body, `"`+CDN+"/npm/"+path+`" integrity="`+sri+`"`) {
				t.Errorf("the page does not load %s with %s", path, sri)
			}
		}
		if !strings.Contains(body, `<script src="/playground/blog/boot.js"></script>`) {
			t.Error("the page does not start GraphiQL with boot.js")
		}
		if rec := get(h, "/playground/blog/boot.js"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "explorerPlugin()") {
			t.Errorf("boot.js = %d, want the script with the explorer plugin", rec.Code)
		}
	})

	t.Run("runs no inline script, under a policy that forbids them", func(t *testing.T) {
		h, _ := serve(t, t.TempDir(), nil)
		rec := get(h, "/?query=x")
		for _, tag := range strings.Split(rec.Body.String(), "<script")[1:] {
			if !strings.HasPrefix(tag, " src=") {
				t.Errorf("inline script <script%.80s", tag)
			}
		}
		csp := rec.Header().Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self' " + CDN + ";", "connect-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") {
			t.Errorf("Content-Security-Policy %q lets inline scripts or styles in", csp)
		}
	})

	t.Run("keeps headers out of the address and of localStorage", func(t *testing.T) {
		boot, err := ownFiles.ReadFile("boot.js")
		if err != nil {
			t.Fatal(err)
		}
		js := string(boot)
		if !strings.Contains(js, "shouldPersistHeaders: false") {
			t.Error("boot.js lets GraphiQL keep headers in localStorage")
		}
		if strings.Contains(js, "onEditHeaders") || strings.Contains(js, "params.get('headers')") {
			t.Error("boot.js puts headers in the address")
		}
	})

	t.Run("without assets loads GraphiQL from the CDN and says so", func(t *testing.T) {
		h, logs := serve(t, t.TempDir(), nil)
		if body := get(h, "/?query=x").Body.String(); !strings.Contains(body, `src="https://cdn.jsdelivr.net/npm/graphiql@4.1.2/graphiql.min.js"`) {
			t.Errorf("the page does not load GraphiQL from the CDN:\n%s", body)
		}
		if !strings.Contains(logs.String(), "not installed") {
			t.Errorf("log %q does not say the assets are missing", logs)
		}
		if rec := get(h, "/playground/"+assetGraphiQLJS.path); rec.Code != http.StatusNotFound {
			t.Errorf("asset without assets = %d, want 404", rec.Code)
		}
	})

	t.Run("a damaged asset is not served", func(t *testing.T) {
		dir := t.TempDir()
		for _, a := range assets {
			p := filepath.Join(dir, a.path)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("not the file"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		h, logs := serve(t, dir, nil)
		if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), assetGraphiQLJS.path) {
			t.Errorf("log %q does not warn about %s", logs, assetGraphiQLJS.path)
		}
		if body := get(h, "/?query=x").Body.String(); strings.Contains(body, `src="/playground/`+assetGraphiQLJS.path) {
			t.Error("the page loads a damaged asset")
		}
		if rec := get(h, "/playground/"+assetGraphiQLJS.path); rec.Code != http.StatusNotFound {
			t.Errorf("damaged asset = %d, want 404", rec.Code)
		}
	})

	t.Run("prefills the headers it is given", func(t *testing.T) {
		h, _ := serve(t, t.TempDir(), map[string]string{"Authorization": "Bearer dev-token"})
		if body := html.UnescapeString(get(h, "/?query=x").Body.String()); !strings.Contains(body, `"Authorization": "Bearer dev-token"`) {
			t.Errorf("the page does not prefill the Authorization header:\n%s", body)
		}
		h, _ = serve(t, t.TempDir(), nil)
		if body := get(h, "/?query=x").Body.String(); strings.Contains(body, "Authorization") {
			t.Error("the page prefills an Authorization header it was not given")
		}
	})
}

// TestPlaygroundServesInstalledAssets serves the files
// scripts/playground-assets.sh installed, as CI does before the tests.
func TestPlaygroundServesInstalledAssets(t *testing.T) {
	dir := filepath.Join("..", ".cache", "playground")
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI installs the playground assets before the tests: %v", err)
		}
		t.Skipf("no playground assets in %s: run scripts/playground-assets.sh", dir)
	}
	var logs bytes.Buffer
	mux := http.NewServeMux()
	Mount(mux, []string{dir}, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, a := range assets {
		if !strings.Contains(string(page), `"/playground/`+a.path+`"`) {
			t.Errorf("the page does not load %s from the server", a.path)
		}
		resp, err := http.Get(srv.URL + "/playground/" + a.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want, _ := os.ReadFile(filepath.Join(dir, a.path))
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, want) {
			t.Errorf("%s = %d, %d bytes, want 200 and the file", a.path, resp.StatusCode, len(body))
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/") {
			t.Errorf("%s content type %q", a.path, ct)
		}
	}
	if strings.Contains(string(page), "cdn.jsdelivr.net") {
		t.Error("the page still loads something from the CDN")
	}
}
