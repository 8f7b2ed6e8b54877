// Package s3test chooses the S3 the tests' media library keeps its bytes
// in: the store embedded in the process by default, or the S3-compatible
// server at S3_ENDPOINT (scripts/s3rver.sh starts one), with the
// credentials S3_ACCESS_KEY and S3_SECRET_KEY (S3RVER's by default).
// REQUIRE_S3=1 makes the absence of S3_ENDPOINT a failure, so CI never
// passes on the embedded store alone.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/blogql/blog/media"
)

// Region is the region the tests' buckets are signed for.
const Region = "us-east-1"

// Bucket returns a bucket of its own for t: on the server at S3_ENDPOINT,
// or on an embedded store in memory whose presigned uploads mux serves
// under /s3, mux being served at base. The embedded store checks presigned
// uploads against now.
func Bucket(t testing.TB, mux *http.ServeMux, base string, now func() time.Time) *media.Bucket {
	t.Helper()
	ctx := context.Background()
	var cfg media.BucketConfig
	if endpoint := os.Getenv("S3_ENDPOINT"); endpoint != "" {
		cfg = media.BucketConfig{Name: "test-" + randomName(), Region: Region, Endpoint: endpoint, PathStyle: true,
			Credentials: media.StaticCredentials(env("S3_ACCESS_KEY", "S3RVER"), env("S3_SECRET_KEY", "S3RVER"))}
	} else {
		if os.Getenv("REQUIRE_S3") == "1" {
			t.Fatal("REQUIRE_S3=1 but S3_ENDPOINT is not set: start an S3 server with scripts/s3rver.sh")
		}
		e, err := media.OpenEmbedded("", Region, now)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		mux.Handle("/s3/", e.Handler("/s3"))
		cfg = media.BucketConfig{Name: "media", Region: Region, Endpoint: "http://embedded.invalid", PublicEndpoint: base + "/s3",
			PathStyle: true, Credentials: e.Credentials(), HTTPClient: &http.Client{Transport: e.Transport()}}
	}
	b, err := media.NewBucket(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	return b
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func randomName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
