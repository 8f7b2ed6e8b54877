package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// BucketConfig says where the media's bucket is and how to reach it.
type BucketConfig struct {
	// Name is the bucket's name.
	Name string
	// Region is the bucket's region.
	Region string
	// Endpoint is the S3 endpoint URL the server calls; empty: AWS's for
	// Region.
	Endpoint string
	// PublicEndpoint is the S3 endpoint URL presigned uploads name, the
	// one browsers reach; empty: Endpoint.
	PublicEndpoint string
	// PathStyle addresses the bucket in the path (endpoint/bucket/key)
	// rather than in the host name, as S3-compatible servers want.
	PathStyle bool
	// Credentials sign the requests; nil: the SDK's default chain.
	Credentials aws.CredentialsProvider
	// HTTPClient carries the server's own requests; nil: the SDK's.
	HTTPClient aws.HTTPClient
}

// Bucket is the media's S3 bucket: the server's own calls and the
// presigned uploads it hands out.
type Bucket struct {
	name    string
	client  *s3.Client
	presign *s3.PresignClient
}

// NewBucket returns the bucket cfg describes, or an error when the SDK's
// configuration cannot be loaded.
func NewBucket(ctx context.Context, cfg BucketConfig) (*Bucket, error) {
	// Given credentials mean an S3-compatible server: nothing of the
	// environment's AWS configuration applies to it.
	awsCfg := aws.Config{Region: cfg.Region, Credentials: cfg.Credentials, HTTPClient: cfg.HTTPClient}
	if cfg.Credentials == nil {
		opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(cfg.Region)}
		if cfg.HTTPClient != nil {
			opts = append(opts, awsconfig.WithHTTPClient(cfg.HTTPClient))
		}
		var err error
		if awsCfg, err = awsconfig.LoadDefaultConfig(ctx, opts...); err != nil {
			return nil, fmt.Errorf("media bucket: %w", err)
		}
	}
	at := func(endpoint string) func(*s3.Options) {
		return func(o *s3.Options) {
			if endpoint != "" {
				o.BaseEndpoint = aws.String(endpoint)
			}
			o.UsePathStyle = cfg.PathStyle
			// Checksums only where S3 requires them: S3-compatible
			// servers do not all read the trailing checksums the SDK
			// sends otherwise, and a presigned upload carries none.
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		}
	}
	public := cfg.PublicEndpoint
	if public == "" {
		public = cfg.Endpoint
	}
	return &Bucket{
		name:    cfg.Name,
		client:  s3.NewFromConfig(awsCfg, at(cfg.Endpoint)),
		presign: s3.NewPresignClient(s3.NewFromConfig(awsCfg, at(public))),
	}, nil
}

// StaticCredentials returns credentials of a fixed key, for an
// S3-compatible server.
func StaticCredentials(id, secret string) aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(id, secret, "")
}

// Ensure creates the bucket when it does not exist.
func (b *Bucket) Ensure(ctx context.Context) error {
	_, err := b.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(b.name)})
	if err == nil {
		return nil
	}
	_, err = b.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b.name)})
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return fmt.Errorf("create bucket %s: %w", b.name, err)
	}
	return nil
}

// PresignedPut is a presigned upload: the URL to PUT to, with exactly
// these headers, until Expires.
type PresignedPut struct {
	URL     string
	Headers http.Header
	Expires time.Time
}

// PresignPut returns a presigned PUT of key that holds only an object of
// contentType and exactly size bytes: both are signed headers. It is
// signed at the SDK's time, valid for ttl from then.
func (b *Bucket) PresignPut(ctx context.Context, key, contentType string, size int64, ttl time.Duration) (*PresignedPut, error) {
	req, err := b.presign.PresignPutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(b.name), Key: aws.String(key),
		ContentType: aws.String(contentType), ContentLength: aws.Int64(size),
	}, s3.WithPresignExpires(ttl))
	if err != nil {
		return nil, fmt.Errorf("presign %s: %w", key, err)
	}
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, fmt.Errorf("presign %s: %w", key, err)
	}
	signed, err := time.Parse(amzDate, u.Query().Get("X-Amz-Date"))
	if err != nil {
		return nil, fmt.Errorf("presign %s: signing time: %w", key, err)
	}
	h := req.SignedHeader.Clone()
	h.Del("Host")
	return &PresignedPut{URL: req.URL, Headers: h, Expires: signed.Add(ttl)}, nil
}

// errTooLarge means an object is larger than the read allows.
var errTooLarge = errors.New("object too large")

// Get returns the object key, or errTooLarge without reading it all when
// it holds more than limit bytes, or an error matching errNoObject when
// there is none.
func (b *Bucket) Get(ctx context.Context, key string, limit int64) ([]byte, error) {
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.name), Key: aws.String(key)})
	if err != nil {
		var none *types.NoSuchKey
		if errors.As(err, &none) {
			return nil, fmt.Errorf("get %s: %w", key, errNoObject)
		}
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	defer out.Body.Close()
	if out.ContentLength != nil && *out.ContentLength > limit {
		return nil, fmt.Errorf("get %s: %d bytes: %w", key, *out.ContentLength, errTooLarge)
	}
	data, err := io.ReadAll(io.LimitReader(out.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("get %s: %w", key, errTooLarge)
	}
	return data, nil
}

// errNoObject means the bucket has no object at the key asked for.
var errNoObject = errors.New("no such object")

// Put writes data as the object key of contentType.
func (b *Bucket) Put(ctx context.Context, key, contentType string, data []byte) error {
	_, err := b.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(b.name), Key: aws.String(key), ContentType: aws.String(contentType),
		Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
	})
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// Delete removes the object key; a missing one is no error.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if _, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b.name), Key: aws.String(key)}); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// Object is an object of a listing.
type Object struct {
	Key          string
	LastModified time.Time
}

// List calls f with every object whose key starts with prefix.
func (b *Bucket) List(ctx context.Context, prefix string, f func(Object) error) error {
	p := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{Bucket: aws.String(b.name), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list %s: %w", prefix, err)
		}
		for _, o := range page.Contents {
			if err := f(Object{Key: aws.ToString(o.Key), LastModified: aws.ToTime(o.LastModified)}); err != nil {
				return err
			}
		}
	}
	return nil
}
