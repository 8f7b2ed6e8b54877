package media

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a settable time for the embedded store's checks.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestEmbeddedMakesItsDirectory: a server on DynamoDB opens no embedded
// engine, which would have made the data directory, and its media store
// makes it itself.
func TestEmbeddedMakesItsDirectory(t *testing.T) {
	e, err := OpenEmbedded(filepath.Join(t.TempDir(), "data", "media.db"), "us-east-1", time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// embeddedBucket starts the embedded store under /s3 of a test server and
// returns the bucket on it and the clock its checks read.
func embeddedBucket(t *testing.T) (*Bucket, *clock) {
	t.Helper()
	c := &clock{t: time.Now()}
	e, err := OpenEmbedded("", "us-east-1", c.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	mux := http.NewServeMux()
	mux.Handle("/s3/", e.Handler("/s3"))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ctx := context.Background()
	b, err := NewBucket(ctx, BucketConfig{Name: "media", Region: "us-east-1", Endpoint: "http://embedded.invalid",
		PublicEndpoint: srv.URL + "/s3", PathStyle: true, Credentials: e.Credentials(), HTTPClient: &http.Client{Transport: e.Transport()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	return b, c
}

// put sends body to u with headers h as a browser would, and returns the
// status.
func put(t *testing.T, method, u string, h http.Header, body []byte) int {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestEmbeddedTakesOnlyValidPresignedUploads checks that the embedded
// store is no open bucket: it takes a presigned PUT as signed, and
// refuses a forged, expired or altered one, and every other request.
func TestEmbeddedTakesOnlyValidPresignedUploads(t *testing.T) {
	b, c := embeddedBucket(t)
	ctx := context.Background()
	body := []byte("0123456789")
	presign := func(key string) *PresignedPut {
		p, err := b.PresignPut(ctx, key, "image/png", int64(len(body)), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	withQuery := func(u, k, v string) string {
		p, _ := url.Parse(u)
		q := p.Query()
		q.Set(k, v)
		p.RawQuery = q.Encode()
		return p.String()
	}
	p := presign("uploads/a")
	for _, h := range []string{"content-length", "content-type", "host"} {
		if !strings.Contains(p.URL, h) {
			t.Errorf("presigned URL does not sign %s: %s", h, p.URL)
		}
	}
	cases := []struct {
		name   string
		method string
		url    string
		h      http.Header
		body   []byte
		want   int
	}{
		{"forged signature", "PUT", withQuery(p.URL, "X-Amz-Signature", strings.Repeat("0", 64)), p.Headers, body, 403},
		{"longer validity", "PUT", withQuery(p.URL, "X-Amz-Expires", "86400"), p.Headers, body, 403},
		{"other key", "PUT", strings.Replace(p.URL, "uploads/a", "uploads/b", 1), p.Headers, body, 403},
		{"other content type", "PUT", p.URL, http.Header{"Content-Type": {"text/html"}}, body, 403},
		{"more bytes than signed", "PUT", p.URL, p.Headers, append(body, 'x'), 403},
		{"fewer bytes than signed", "PUT", p.URL, p.Headers, body[:5], 403},
		{"a GET", "GET", p.URL, p.Headers, nil, 403},
		{"as signed", "PUT", p.URL, p.Headers, body, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := put(t, tc.method, tc.url, tc.h, tc.body); got != tc.want {
				t.Errorf("status %d, want %d", got, tc.want)
			}
		})
	}
	got, err := b.Get(ctx, "uploads/a", 100)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("object = %q, %v; want %q", got, err, body)
	}
	if _, err := b.Get(ctx, "uploads/b", 100); err == nil {
		t.Error("a forged upload left an object")
	}

	t.Run("expired", func(t *testing.T) {
		p := presign("uploads/c")
		c.Add(61 * time.Second)
		if got := put(t, "PUT", p.URL, p.Headers, body); got != 403 {
			t.Errorf("status %d, want 403", got)
		}
	})
}
