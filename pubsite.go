package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/httpguard"
	"github.com/blogql/blog/media"
	"github.com/blogql/blog/newsletter"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/views"
)

// What a publication other than the default has of its own on its hosts
// (publicationSite): its media library, its views, its readers' sign-in
// and members, the members' and readers' exports, and the newsletter's
// unsubscribe links, each on the publication's Store and with its links
// to its own hosts.

// readers is what publicationSite serves of a publication's readers and
// media besides its GraphQL endpoint.
type readers struct {
	media   *media.Service // nil: no media library
	uploads http.Handler   // the embedded store's uploads; nil on S3
	views   *views.Counter
	signIn  graph.SignInOptions
	letters *newsletter.Service
}

// publicationReaders returns what the site of pub, whose Store is store,
// serves of its readers and media.
func (a *api) publicationReaders(ctx context.Context, cfg *config, pub *storage.Publication, store *storage.Store) (*readers, error) {
	r := &readers{views: a.workers.views.In(store), signIn: a.publicationSignIn(cfg, pub)}
	var err error
	if r.media, r.uploads, err = a.media.forPublication(ctx, pub, store); err != nil {
		return nil, err
	}
	r.letters = a.publicationNewsletter(cfg, pub, store)
	return r, nil
}

// register adds the routes of r to mux, the site of the publication
// whose Store is store and whose slug is slug: the media library's
// renditions and uploads, the view beacon, the members' CSV, a reader's
// export and the newsletter's unsubscribe links, as the default
// publication's routes (api.routes) are.
func (r *readers) register(mux *http.ServeMux, store *storage.Store, slug string, cors *httpguard.CORS, v *auth.Verifier, logger *slog.Logger) {
	if r.media != nil {
		r.media.Register(mux)
	}
	if r.uploads != nil {
		mux.Handle(embeddedS3Path+"/", uploadsCORS(cors, r.uploads))
	}
	mux.Handle(views.BeaconPath, httpguard.WithCORS(cors, views.Beacon(r.views)))
	mux.Handle("OPTIONS /v/{postId}", httpguard.WithCORS(cors, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})))
	mux.Handle("GET "+graph.MembersCSVPath, httpguard.WithCORS(cors, graph.MembersCSV(store, slug, v, logger)))
	mux.Handle("GET "+graph.ExportPath, httpguard.WithCORS(cors, graph.ExportMyData(store, slug, v, logger)))
	if r.letters != nil {
		mux.Handle("GET "+newsletter.UnsubscribePath, r.letters.Unsubscribe())
		mux.Handle("POST "+newsletter.UnsubscribePath, r.letters.Unsubscribe())
		mux.Handle("GET "+newsletter.RepliesUnsubscribePath, r.letters.UnsubscribeReplies())
		mux.Handle("POST "+newsletter.RepliesUnsubscribePath, r.letters.UnsubscribeReplies())
	}
}

// forPublication returns the media library of pub, whose Store is store,
// in the server's bucket under pub's own prefix (media.Options'
// Publication), its renditions' URLs on pub's host (publicationURL of
// the media URL), with the quota every publication has; and, when the
// bucket is the embedded store, its uploads' handler, whose presigned
// URLs lead to pub's host too. It returns nil for a server without a
// library.
func (l *mediaLibrary) forPublication(ctx context.Context, pub *storage.Publication, store *storage.Store) (*media.Service, http.Handler, error) {
	if l == nil {
		return nil, nil, nil
	}
	opts := l.options
	opts.Publication = pub.ID
	opts.BaseURL = publicationURL(l.options.BaseURL, pub)
	bucket := l.bucket
	var uploads http.Handler
	if l.embedded != nil {
		bc := l.bucketConfig
		bc.PublicEndpoint = opts.BaseURL + embeddedS3Path
		var err error
		if bucket, err = media.NewBucket(ctx, bc); err != nil {
			return nil, nil, fmt.Errorf("media library of publication %q: %w", pub.ID, err)
		}
		uploads = l.embedded.Handler(embeddedS3Path)
	}
	return media.New(store, bucket, opts), uploads, nil
}

// publicationSignIn returns the settings of readers' sign-in on pub's
// hosts: its links lead to pub's hosts (with -site-url's scheme and
// port), its host of the platform's pattern and the CORS origins, and
// its emails name pub.
func (a *api) publicationSignIn(cfg *config, pub *storage.Publication) graph.SignInOptions {
	o := a.signInOptions(cfg)
	o.SiteName = pub.Title
	o.Origins = append([]string(nil), cfg.corsOrigins...)
	hosts := pub.Hosts
	if p := cfg.platform.hostPattern.String(); p != "" {
		hosts = append(hosts[:len(hosts):len(hosts)], strings.Replace(p, "{slug}", pub.Slug, 1))
	}
	for _, h := range hosts {
		o.Origins = append(o.Origins, publicationURL(cfg.siteURL, &storage.Publication{Hosts: []string{h}}))
	}
	return o
}

// publicationNewsletter returns the newsletter of pub, whose Store is
// store, on the default publication's key, mail worker and logger
// (newsletter.Service.In of a.letters): its unsubscribe links lead to
// pub's first host (publicationURL of -public-url, or -site-url), its
// posts' links to pub's site (its settings, else pub's title and first
// host). The change feed's workers send pub's emails with the same
// (publicationLetters), so the links they carry are the ones pub's hosts
// take. It returns nil for a server without mail.
func (a *api) publicationNewsletter(cfg *config, pub *storage.Publication, store *storage.Store) *newsletter.Service {
	if a.letters == nil {
		return nil
	}
	return publicationNewsletter(cfg, a.letters, pub, store)
}

// publicationNewsletter returns the newsletter of pub, whose Store is
// store, on letters' key, mail worker and logger.
func publicationNewsletter(cfg *config, letters *newsletter.Service, pub *storage.Publication, store *storage.Store) *newsletter.Service {
	site := newsletterSite(cfg, store, func() (string, string) { return pub.Title, publicationURL(cfg.siteURL, pub) })
	base := publicationURL(or(cfg.publicURL, cfg.siteURL), pub)
	return letters.In(store, site, func() string { return base })
}
