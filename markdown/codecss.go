package markdown

import (
	"bytes"
	"net/http"
)

// defaultCodeStyle is the chroma style /code.css serves without ?style=.
const defaultCodeStyle = "github"

// CodeCSS serves the stylesheet of the classes highlighted code has
// (Options.Highlight): GET /code.css, or /code.css?style=<name> for another
// of chroma's styles (monokai, dracula, github-dark…); an unknown name is
// 404. A frontend may link it, or copy it into its own stylesheet.
func CodeCSS() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		style := r.URL.Query().Get("style")
		if style == "" {
			style = defaultCodeStyle
		}
		var b bytes.Buffer
		if err := ChromaCSS(&b, style); err != nil {
			http.Error(w, "no such style: name one of chroma's styles (github, monokai, dracula, github-dark…)", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=86400")
		_, _ = w.Write(b.Bytes())
	})
}
