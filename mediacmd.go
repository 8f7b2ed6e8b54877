package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/blogql/blog/httpguard"
	"github.com/blogql/blog/media"
	"github.com/blogql/blog/storage"
)

// The media library's setup: its bucket (S3, or the store embedded in the
// server) and its routes.

// mediaFile is the embedded store's file in the data directory.
const mediaFile = "media.db"

// embeddedS3Path is where the embedded store takes presigned uploads on
// the API's own listener: one origin and one port for browsers, behind
// the same proxy, host check and TLS as the API.
const embeddedS3Path = "/s3"

// embeddedBucket is the bucket's name in the embedded store.
const embeddedBucket = "media"

// sweepInterval is how often the objects of uploads never completed are
// looked for.
const sweepInterval = time.Hour

// mediaConfig is the media library's part of config.
type mediaConfig struct {
	bucket    string
	endpoint  string
	region    string
	pathStyle bool
	url       string
	maxBytes  int64
	maxPixels int64
	avif      bool
	// workers bounds the renditions made at once; 0: cores − 1, at
	// least 1.
	workers int
	// quotaBytes and quotaFiles bound each publication's library.
	quotaBytes int64
	quotaFiles int64
}

// mediaLibrary is the server's media library and, without -media-bucket,
// the store embedded in the server that keeps it.
type mediaLibrary struct {
	service  *media.Service
	embedded *media.Embedded
	// bucket, bucketConfig and options are those of service, which the
	// libraries of the other publications start from (pubsite.go).
	bucket       *media.Bucket
	bucketConfig media.BucketConfig
	options      media.Options
}

// openMedia opens the media library cfg describes for a server that
// listens on addr, and sweeps its uploads never completed until ctx is
// done.
func (a *api) openMedia(ctx context.Context, cfg *config, addr net.Addr, logger *slog.Logger) error {
	mc := cfg.media
	base := mc.url
	if base == "" {
		base = "http://" + displayAddr(addr)
	}
	region := mc.region
	if region == "" {
		region = cfg.region
	}
	bc := media.BucketConfig{Name: mc.bucket, Region: region, Endpoint: mc.endpoint, PathStyle: mc.pathStyle}
	lib := &mediaLibrary{}
	if mc.bucket == "" {
		path := ""
		if cfg.dataDir != memoryData {
			path = filepath.Join(cfg.dataDir, mediaFile)
		}
		e, err := media.OpenEmbedded(path, region, time.Now)
		if err != nil {
			return err
		}
		lib.embedded = e
		bc = media.BucketConfig{Name: embeddedBucket, Region: region, Endpoint: "http://embedded.invalid",
			PublicEndpoint: base + embeddedS3Path, PathStyle: true, Credentials: e.Credentials(),
			HTTPClient: &http.Client{Transport: e.Transport()}}
	}
	bucket, err := media.NewBucket(ctx, bc)
	if err == nil && lib.embedded != nil {
		err = bucket.Ensure(ctx)
	}
	if err != nil {
		lib.close()
		return fmt.Errorf("media library: %w", err)
	}
	lib.bucket, lib.bucketConfig = bucket, bc
	lib.options = media.Options{
		MaxBytes: mc.maxBytes, MaxPixels: mc.maxPixels, AVIF: mc.avif, Concurrency: mc.workers, BaseURL: base, Logger: logger,
		Quota: storage.MediaQuota{Bytes: mc.quotaBytes, Files: mc.quotaFiles},
	}
	lib.service = media.New(a.store, bucket, lib.options)
	go lib.service.RunSweeps(ctx, sweepInterval)
	if lib.embedded != nil {
		logger.Info("media library in the embedded S3 store; -media-bucket names an S3 bucket", "uploads", base+embeddedS3Path+"/")
	}
	a.media = lib
	return nil
}

// register adds the renditions' route and the embedded store's uploads
// to mux; pages of cors's origins may send uploads.
func (l *mediaLibrary) register(mux *http.ServeMux, cors *httpguard.CORS) {
	if l == nil {
		return
	}
	l.service.Register(mux)
	if l.embedded != nil {
		mux.Handle(embeddedS3Path+"/", uploadsCORS(cors, l.embedded.Handler(embeddedS3Path)))
	}
}

// uploadsCORS lets pages of cors's origins PUT presigned uploads to next,
// as a bucket's CORS rule does on S3: their preflights are answered, and
// the answers carry their origin.
func uploadsCORS(cors *httpguard.CORS, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		if !cors.Allows(origin) {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
			h.Set("Access-Control-Allow-Methods", "PUT")
			h.Set("Access-Control-Allow-Headers", "Content-Type")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", "ETag")
		next.ServeHTTP(w, r)
	})
}

// close closes the embedded store, if any.
func (l *mediaLibrary) close() {
	if l != nil && l.embedded != nil {
		_ = l.embedded.Close()
	}
}

// library returns the media library's service, nil when there is none.
func (l *mediaLibrary) library() *media.Service {
	if l == nil {
		return nil
	}
	return l.service
}
