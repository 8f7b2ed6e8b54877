package main

import (
	"io"
	"net/http"
	"strings"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
)

// A suspended publication's hosts (storage.PublicationSuspended). The
// router builds a publication's site when a request first needs it, from
// its directory item read strongly, and drops it at the change feed's
// publication.updated, which a change of status is; so every server
// serves a publication as its status now says within a second or two of
// the write. A suspended publication's site is suspendedSite.
//
// Its answer is 403 Forbidden, not 503 or 451: the refusal is the
// platform's decision about this publication, not a failure of the
// server (503 tells clients, crawlers and monitors to retry, and pages an
// operator), and it need not be a legal one (451 says it is). 403 with
// Cache-Control: no-store keeps no copy in a CDN, so reactivating serves
// the publication again at once.

// suspendedMessage is what the public reads of a suspended publication.
const suspendedMessage = "this publication is suspended"

// suspendedSite returns the site of a suspended publication, whose site
// when active is site: a request with a platform admin's token is served
// by site (an operator reads it, exports it and changes its status back);
// every other GraphQL request is 403 with PUBLICATION_SUSPENDED and no
// data, whatever it asks (its staff's writes included), and every other
// route 403 with a short text. A token that is not valid is refused as
// no token is: it learns nothing more.
func suspendedSite(site http.Handler, v *auth.Verifier) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a, err := v.Authenticate(r); err == nil && a.IsPlatformAdmin() {
			site.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		if r.URL.Path == "/graphql" || strings.HasPrefix(r.URL.Path, "/graphql/") {
			gqlhttp.WriteError(w, http.StatusForbidden, suspendedMessage, graph.CodePublicationSuspended)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, suspendedMessage+"\n")
	})
}
