// Package playground serves the GraphiQL playground: its page, with the
// explorer plugin, and GraphiQL's files, from a directory where
// scripts/playground-assets.sh installed them or else from a CDN.
package playground

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"time"
)

// asset is a file GraphiQL's page loads: its path in the assets
// directory (laid out like the npm CDN, <package>@<version>/<file>) and the
// subresource integrity hash the page asks the browser to check. cdnPath
// and cdnSRI, when set, are the CDN's copy, which differs (minified).
type asset struct {
	path, sri       string
	cdnPath, cdnSRI string
}

// The files of GraphiQL with the explorer plugin, in the versions gqlgen
// pins. They are npm's files byte for byte, so the hashes are the CDN's,
// except the explorer's stylesheet: the CDN serves a minified copy, npm the
// original.
var (
	assetGraphiQLJS  = asset{path: "graphiql@4.1.2/graphiql.min.js", sri: "sha256-hnImuor1znlJkD/FOTL3jayfS/xsyNoP04abi8bFJWs="}
	assetGraphiQLCSS = asset{path: "graphiql@4.1.2/graphiql.min.css", sri: "sha256-MEh+B2NdMSpj9kexQNN3QKc8UzMrCXW/Sx/phcpuyIU="}
	assetReact       = asset{path: "react@18.2.0/umd/react.production.min.js", sri: "sha256-S0lp+k7zWUMk2ixteM6HZvu8L9Eh//OVrt+ZfbCpmgY="}
	assetReactDOM    = asset{path: "react-dom@18.2.0/umd/react-dom.production.min.js", sri: "sha256-IXWO0ITNDjfnNXIu5POVfqlgYoop36bDzhodR6LW5Pc="}
	assetExplorerJS  = asset{path: "@graphiql/plugin-explorer@4.0.6/dist/index.umd.js", sri: "sha256-UM8sWOS0Xa9yLY85q6Clh0pF4qpxX+TOcJ41flECqBs="}
	assetExplorerCSS = asset{path: "@graphiql/plugin-explorer@4.0.6/dist/style.css", sri: "sha256-aJCaSuI7+t/EWRrLTis8jU9EFTua5/o7fnwxnroxDvE=",
		cdnPath: "@graphiql/plugin-explorer@4.0.6/dist/style.min.css", cdnSRI: "sha256-b0izygy8aEMY3fCLmtNkm9PKdE3kRD4Qjn6Q8gw5xKI="}
	assets = []asset{assetGraphiQLJS, assetGraphiQLCSS, assetReact, assetReactDOM, assetExplorerJS, assetExplorerCSS}
)

// urlBase is where this server serves the assets; its own files
// (boot.js, page.css) are under ownBase.
const (
	urlBase = "/playground/"
	ownBase = urlBase + "blog/"
	// CDN is where the page loads the assets from when they are
	// not installed.
	CDN = "https://cdn.jsdelivr.net"
)

// ownFiles are the page's own script and stylesheet: no script
// or style is inline, so the page's Content-Security-Policy allows scripts
// from this server only.
//
//go:embed boot.js page.css
var ownFiles embed.FS

// DefaultQuery is what the playground shows on opening: the demo
// blog's latest posts and its categories.
const DefaultQuery = `# Latest posts and categories of the blog.
# Run it: the play button or Ctrl-Enter.
query LatestPosts {
  posts(first: 5) {
    totalCount
    edges {
      node {
        title
        slug
        publishedAt
        author { name }
        categories { name }
        commentCount
      }
    }
    pageInfo { hasNextPage endCursor }
  }
  categories { slug name postCount }
}
`

// pageAsset is an asset as the page links it.
type pageAsset struct {
	URL template.URL
	SRI string
}

// pageTemplate is GraphiQL's page: the assets, then boot.js, which
// starts GraphiQL with the endpoint and the headers of the data attributes.
var pageTemplate = template.Must(template.New("playground").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Blog GraphQL</title>
<link rel="stylesheet" href="` + ownBase + `page.css">
{{- range .Styles}}
<link rel="stylesheet" href="{{.URL}}" integrity="{{.SRI}}" crossorigin="anonymous">
{{- end}}
<script src="{{.React.URL}}" integrity="{{.React.SRI}}" crossorigin="anonymous"></script>
<script src="{{.ReactDOM.URL}}" integrity="{{.ReactDOM.SRI}}" crossorigin="anonymous"></script>
</head>
<body>
<div id="graphiql" data-endpoint="/graphql"{{if .Headers}} data-headers="{{.Headers}}"{{end}}><div class="loading">Loading…</div></div>
<script src="{{.GraphiQL.URL}}" integrity="{{.GraphiQL.SRI}}" crossorigin="anonymous"></script>
<script src="{{.Explorer.URL}}" integrity="{{.Explorer.SRI}}" crossorigin="anonymous"></script>
<script src="` + ownBase + `boot.js"></script>
</body>
</html>
`))

// Mount serves GraphiQL at / with the explorer plugin and
// headers prefilled in its headers editor (none when headers is empty).
// When one of dirs, the first in order, holds every asset with the
// expected hash, the page loads them from this server under /playground/;
// else from a CDN, which its Content-Security-Policy then allows. The log
// says which, and the directory.
func Mount(mux *http.ServeMux, dirs []string, headers map[string]string, logger *slog.Logger) {
	var files map[string][]byte
	unusable := false
	for _, dir := range dirs {
		f, err := loadAssets(os.DirFS(dir))
		if err == nil {
			files = f
			logger.Info("playground assets served by this server", "dir", dir)
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			unusable = true
			logger.Warn("playground assets unusable (reinstall them with scripts/playground-assets.sh)", "dir", dir, "err", err)
		}
	}
	local := files != nil
	switch {
	case local:
	case unusable:
		logger.Warn("no usable playground assets, the playground loads GraphiQL from a CDN", "dirs", dirs)
	default:
		logger.Info("playground assets not installed, the playground loads GraphiQL from a CDN (install them with scripts/playground-assets.sh)", "dirs", dirs)
	}
	if files == nil {
		files = map[string][]byte{}
	}
	for _, name := range []string{"boot.js", "page.css"} {
		b, err := ownFiles.ReadFile(name)
		if err != nil {
			panic(err) // embedded with the binary
		}
		files[strings.TrimPrefix(ownBase, urlBase)+name] = b
	}
	mux.Handle("GET "+urlBase, http.StripPrefix(urlBase, serveAssets(files)))

	link := func(a asset) pageAsset {
		switch {
		case local:
			return pageAsset{template.URL(urlBase + a.path), a.sri}
		case a.cdnPath != "":
			return pageAsset{template.URL(CDN + "/npm/" + a.cdnPath), a.cdnSRI}
		}
		return pageAsset{template.URL(CDN + "/npm/" + a.path), a.sri}
	}
	data := struct {
		Styles                              []pageAsset
		React, ReactDOM, GraphiQL, Explorer pageAsset
		Headers                             string
	}{
		Styles: []pageAsset{link(assetGraphiQLCSS), link(assetExplorerCSS)},
		React:  link(assetReact), ReactDOM: link(assetReactDOM),
		GraphiQL: link(assetGraphiQLJS), Explorer: link(assetExplorerJS),
	}
	if len(headers) > 0 {
		b, err := json.MarshalIndent(headers, "", "  ")
		if err != nil {
			panic(err) // a map of strings always marshals
		}
		data.Headers = string(b)
	}
	var page bytes.Buffer
	if err := pageTemplate.Execute(&page, data); err != nil {
		panic(err) // the template and its data are fixed
	}
	csp := pageCSP(!local)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery == "" {
			http.Redirect(w, r, "/?query="+url.QueryEscape(DefaultQuery), http.StatusFound)
			return
		}
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(page.Bytes())
	})
}

// pageCSP returns the Content-Security-Policy of the playground's
// page: scripts, stylesheets and fonts from this server (and the CDN when
// it serves GraphiQL), nothing inline, queries to this server only, no
// frames, no forms, no plugins. e2e/playground.mjs runs GraphiQL under it
// in Chromium and fails on anything it refuses.
func pageCSP(cdn bool) string {
	src := "'self'"
	if cdn {
		src += " " + CDN
	}
	return fmt.Sprintf("default-src 'none'; script-src %[1]s; style-src %[1]s; font-src %[1]s data:; "+
		"img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'", src)
}

// loadAssets reads every asset from fsys and checks its hash. It
// returns an error matching fs.ErrNotExist when a file is missing, and
// another error when a file differs from the expected one.
func loadAssets(fsys fs.FS) (map[string][]byte, error) {
	files := make(map[string][]byte, len(assets))
	for _, a := range assets {
		b, err := fs.ReadFile(fsys, a.path)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		if got := "sha256-" + base64.StdEncoding.EncodeToString(sum[:]); got != a.sri {
			return nil, fmt.Errorf("%s: hash %s, want %s", a.path, got, a.sri)
		}
		files[a.path] = b
	}
	return files, nil
}

// serveAssets serves files by path. A path that names a package version
// never changes, so browsers may keep it for good; the page's own files
// change with the server and are revalidated.
func serveAssets(files map[string][]byte) http.Handler {
	loaded := time.Now()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		ctype := "text/javascript; charset=utf-8"
		if path.Ext(r.URL.Path) == ".css" {
			ctype = "text/css; charset=utf-8"
		}
		w.Header().Set("Content-Type", ctype)
		if strings.Contains(r.URL.Path, "@") {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		http.ServeContent(w, r, r.URL.Path, loaded, bytes.NewReader(b))
	})
}
