package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"time"

	"github.com/99designs/gqlgen/graphql/playground"
)

// playgroundAsset is a file GraphiQL's page loads: its path in the assets
// directory (laid out like the npm CDN, <package>@<version>/<file>) and the
// subresource integrity hash the page asks the browser to check.
type playgroundAsset struct {
	path, sri string
}

// The files of gqlgen's GraphiQL page, in the versions it pins. They are
// npm's files byte for byte, so the hashes are the ones gqlgen uses for the
// CDN, except the explorer's stylesheet: the CDN serves a minified copy,
// npm the original.
var (
	assetGraphiQLJS  = playgroundAsset{"graphiql@4.1.2/graphiql.min.js", "sha256-hnImuor1znlJkD/FOTL3jayfS/xsyNoP04abi8bFJWs="}
	assetGraphiQLCSS = playgroundAsset{"graphiql@4.1.2/graphiql.min.css", "sha256-MEh+B2NdMSpj9kexQNN3QKc8UzMrCXW/Sx/phcpuyIU="}
	assetReact       = playgroundAsset{"react@18.2.0/umd/react.production.min.js", "sha256-S0lp+k7zWUMk2ixteM6HZvu8L9Eh//OVrt+ZfbCpmgY="}
	assetReactDOM    = playgroundAsset{"react-dom@18.2.0/umd/react-dom.production.min.js", "sha256-IXWO0ITNDjfnNXIu5POVfqlgYoop36bDzhodR6LW5Pc="}
	assetExplorerJS  = playgroundAsset{"@graphiql/plugin-explorer@4.0.6/dist/index.umd.js", "sha256-UM8sWOS0Xa9yLY85q6Clh0pF4qpxX+TOcJ41flECqBs="}
	assetExplorerCSS = playgroundAsset{"@graphiql/plugin-explorer@4.0.6/dist/style.css", "sha256-aJCaSuI7+t/EWRrLTis8jU9EFTua5/o7fnwxnroxDvE="}
	playgroundAssets = []playgroundAsset{assetGraphiQLJS, assetGraphiQLCSS, assetReact, assetReactDOM, assetExplorerJS, assetExplorerCSS}
)

// playgroundURLBase is where this server serves the assets.
const playgroundURLBase = "/playground/"

// defaultPlaygroundQuery is what the playground shows on opening: the demo
// blog's latest posts and its categories.
const defaultPlaygroundQuery = `# Latest posts and categories of the blog.
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

// mountPlayground serves GraphiQL at / with the explorer plugin and
// headers prefilled in its headers editor (none when headers is empty). When
// dir holds every asset with the expected hash, the page loads them from
// this server under /playground/; else from gqlgen's CDN. The log says
// which.
func mountPlayground(mux *http.ServeMux, dir string, headers map[string]string, logger *slog.Logger) {
	opts := []playground.GraphiqlConfigOption{
		playground.WithGraphiqlEnablePluginExplorer(true),
		// The query travels in the URL: that is how gqlgen's page takes
		// a query to show, and it keeps a reload on the same query.
		playground.WithGraphiqlPersistStateInURL(true),
	}
	if len(headers) > 0 {
		opts = append(opts, playground.WithGraphiqlUiHeaders(headers))
	}
	files, err := loadPlaygroundAssets(os.DirFS(dir))
	switch {
	case err == nil:
		u := func(a playgroundAsset) string { return playgroundURLBase + a.path }
		opts = append(opts,
			playground.WithGraphiqlVersion(u(assetGraphiQLJS), u(assetGraphiQLCSS), assetGraphiQLJS.sri, assetGraphiQLCSS.sri),
			playground.WithGraphiqlReactVersion(u(assetReact), u(assetReactDOM), assetReact.sri, assetReactDOM.sri),
			playground.WithGraphiqlPluginExplorerVersion(u(assetExplorerJS), u(assetExplorerCSS), assetExplorerJS.sri, assetExplorerCSS.sri),
		)
		mux.Handle("GET "+playgroundURLBase, http.StripPrefix(playgroundURLBase, serveAssets(files)))
		logger.Info("playground assets served by this server", "dir", dir)
	case errors.Is(err, fs.ErrNotExist):
		logger.Info("playground assets not installed, the playground loads GraphiQL from a CDN (install them with scripts/playground-assets.sh)", "dir", dir)
	default:
		logger.Warn("playground assets unusable, the playground loads GraphiQL from a CDN (reinstall them with scripts/playground-assets.sh)", "dir", dir, "err", err)
	}

	page := playground.Handler("Blog GraphQL", "/graphql", opts...)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery == "" {
			http.Redirect(w, r, "/?query="+url.QueryEscape(defaultPlaygroundQuery), http.StatusFound)
			return
		}
		page(w, r)
	})
}

// loadPlaygroundAssets reads every asset from fsys and checks its hash. It
// returns an error matching fs.ErrNotExist when a file is missing, and
// another error when a file differs from the expected one.
func loadPlaygroundAssets(fsys fs.FS) (map[string][]byte, error) {
	files := make(map[string][]byte, len(playgroundAssets))
	for _, a := range playgroundAssets {
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

// serveAssets serves files by path. Each path names a package version, so
// browsers may keep a file for good.
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
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		http.ServeContent(w, r, r.URL.Path, loaded, bytes.NewReader(b))
	})
}
