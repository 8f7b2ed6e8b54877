package media

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3bolt"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	bolt "go.etcd.io/bbolt"
)

// Embedded is an S3-compatible store in the process (gofakes3, on a bbolt
// file or in memory), for a server with no S3 of its own. gofakes3 checks
// no signature: the server's own calls reach it through Transport, in
// process, and the outside only through Handler, which takes nothing but
// presigned uploads whose signature it checks (presign.go).
type Embedded struct {
	s3     http.Handler
	creds  aws.Credentials
	region string
	now    func() time.Time
	close  func() error
}

// EmbeddedAccessKey is the access key id of the embedded store's
// credentials; their secret is made afresh at every start, so presigned
// uploads do not outlive the process that signed them.
const EmbeddedAccessKey = "EMBEDDED"

// OpenEmbedded opens the embedded store kept in the bbolt file path, or in
// memory when path is empty, signing in region, with the time from now.
func OpenEmbedded(path, region string, now func() time.Time) (*Embedded, error) {
	var (
		backend gofakes3.Backend
		closer  = func() error { return nil }
	)
	if path == "" {
		backend = s3mem.New()
	} else {
		// The data directory is made by the embedded engine, which a
		// server on DynamoDB does not open.
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("open media store %s: %w", path, err)
		}
		db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
		if err != nil {
			return nil, fmt.Errorf("open media store %s: %w", path, err)
		}
		backend, closer = s3bolt.New(db), db.Close
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("media store secret: %w", err)
	}
	// Presigned requests carry their time in the query, not in the
	// header gofakes3 checks; the signature check bounds them.
	fake := gofakes3.New(backend, gofakes3.WithTimeSkewLimit(0), gofakes3.WithoutVersioning())
	return &Embedded{
		s3:     fake.Server(),
		creds:  aws.Credentials{AccessKeyID: EmbeddedAccessKey, SecretAccessKey: hex.EncodeToString(secret), Source: "embedded"},
		region: region,
		now:    now,
		close:  closer,
	}, nil
}

// Close closes the store's file.
func (e *Embedded) Close() error { return e.close() }

// Credentials returns the credentials the store's presigned uploads are
// signed with.
func (e *Embedded) Credentials() aws.CredentialsProvider {
	return StaticCredentials(e.creds.AccessKeyID, e.creds.SecretAccessKey)
}

// Transport returns an http.RoundTripper that serves every request in
// process, for the server's own calls: all of the S3 API, unchecked.
func (e *Embedded) Transport() http.RoundTripper { return inProcess{e.s3} }

type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	r = r.Clone(r.Context())
	if r.Body == nil {
		r.Body = http.NoBody
	}
	// What a transport would send as headers, a server reads from them.
	if r.ContentLength >= 0 && r.Header.Get("Content-Length") == "" {
		r.Header.Set("Content-Length", strconv.FormatInt(r.ContentLength, 10))
	}
	t.h.ServeHTTP(rec, r)
	res := rec.Result()
	res.Request = r
	return res, nil
}

// uploadWindow is how long a presigned upload may take to arrive once it
// has started: the server's read timeout is for API requests.
const uploadWindow = 10 * time.Minute

// Handler returns the store as the outside reaches it under prefix (the
// path presigned URLs start with): presigned PUTs of uploads only, each
// checked against its signature, its expiry and its signed headers
// (content type and length). Everything else is 403.
func (e *Embedded) Handler(prefix string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || !strings.HasPrefix(r.URL.Path, prefix+"/") ||
			!strings.Contains(r.URL.Path, "/"+uploadPrefix) {
			s3Error(w, "AccessDenied", "only presigned uploads are accepted")
			return
		}
		if err := verifyPresigned(r, e.creds, e.region, e.now()); err != nil {
			s3Error(w, "AccessDenied", err.Error())
			return
		}
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(uploadWindow))
		// Past the check, the body can hold no more than the signed
		// length: the server reads no more than Content-Length.
		r.Body = http.MaxBytesReader(w, r.Body, r.ContentLength)
		inner := r.Clone(r.Context())
		inner.URL.Path = strings.TrimPrefix(r.URL.Path, prefix)
		inner.URL.RawPath = ""
		inner.URL.RawQuery = ""
		e.s3.ServeHTTP(w, inner)
	})
}

// s3Error writes a 403 with S3's error document.
func s3Error(w http.ResponseWriter, code, message string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code><Message>%s</Message></Error>\n", code, xmlEscape(message))
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
