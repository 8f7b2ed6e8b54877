package media

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// The check of a presigned request (SigV4 in the query string), for the
// embedded store, which checks none itself. It signs the request again
// with the SDK's signer, from what the request carries but its signature,
// and compares: any change to the path, the query (X-Amz-Expires
// included) or a signed header's value changes the signature.

// amzDate is the layout of X-Amz-Date.
const amzDate = "20060102T150405Z"

// unsignedPayload is the payload hash of a presigned S3 request.
const unsignedPayload = "UNSIGNED-PAYLOAD"

// maxPresignExpiry is the longest validity SigV4 allows.
const maxPresignExpiry = 7 * 24 * time.Hour

// clockSkew is how far in the future a signing time may be.
const clockSkew = 5 * time.Minute

// mustSign are the headers an upload's signature must cover: the
// content type and length are the upload's conditions.
var mustSign = []string{"content-length", "content-type", "host"}

// verifyPresigned returns nil when r carries a valid, unexpired SigV4
// presigned signature of creds in region for service s3, over at least
// the headers of mustSign, and otherwise an error saying what is wrong.
func verifyPresigned(r *http.Request, creds aws.Credentials, region string, now time.Time) error {
	q := r.URL.Query()
	if q.Get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" {
		return errors.New("not a presigned request (X-Amz-Algorithm)")
	}
	cred := strings.Split(q.Get("X-Amz-Credential"), "/")
	if len(cred) != 5 || cred[0] != creds.AccessKeyID || cred[2] != region || cred[3] != "s3" || cred[4] != "aws4_request" {
		return errors.New("unknown credential")
	}
	at, err := time.Parse(amzDate, q.Get("X-Amz-Date"))
	if err != nil || cred[1] != at.Format("20060102") {
		return errors.New("bad X-Amz-Date")
	}
	secs, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil || secs < 1 || time.Duration(secs)*time.Second > maxPresignExpiry {
		return errors.New("bad X-Amz-Expires")
	}
	switch {
	case at.After(now.Add(clockSkew)):
		return errors.New("signed in the future")
	case !now.Before(at.Add(time.Duration(secs) * time.Second)):
		return errors.New("request has expired")
	}
	signed := strings.Split(q.Get("X-Amz-SignedHeaders"), ";")
	for _, h := range mustSign {
		if !slices.Contains(signed, h) {
			return fmt.Errorf("%s is not signed", h)
		}
	}
	if r.ContentLength < 0 {
		return errors.New("no Content-Length")
	}

	// The request as it was presigned: its query without the signature's
	// own parameters, and its signed headers only.
	sig := q.Get("X-Amz-Signature")
	for _, p := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-SignedHeaders", "X-Amz-Signature", "X-Amz-Security-Token"} {
		q.Del(p)
	}
	u := &url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: q.Encode()}
	again, err := http.NewRequest(r.Method, u.String(), http.NoBody)
	if err != nil {
		return fmt.Errorf("bad request URL: %w", err)
	}
	again.Host = r.Host
	again.ContentLength = r.ContentLength
	for _, h := range signed {
		if h != "host" && h != "content-length" {
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	signedURL, _, err := v4.NewSigner().PresignHTTP(context.Background(), creds, again, unsignedPayload, "s3", region, at,
		func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	want, err := url.Parse(signedURL)
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(want.Query().Get("X-Amz-Signature")), []byte(sig)) != 1 {
		return errors.New("signature does not match")
	}
	return nil
}
