package storage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage"
)

// TestLargestInputsFitDynamoDB writes every field at its limit, in the
// characters that take the most room: four-byte runes, and quotes that JSON
// doubles in the idempotency record that holds a copy of the result. On
// DynamoDB Local this checks the limits against DynamoDB's 400 KB item.
func TestLargestInputsFitDynamoDB(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	wide := func(n int) string { return strings.Repeat("𝔸", n) }
	body := strings.Repeat(`"<`, storage.MaxBodyBytes/2)
	must[*storage.Author](t)(e.store.CreateAuthor(ctx, storage.NewAuthor{
		ID: strings.Repeat("a", storage.MaxIDLength), Name: wide(storage.MaxNameLength), Bio: wide(storage.MaxBioLength),
		AvatarURL: "https://example.com/" + strings.Repeat("a", storage.MaxURLLength-20), IdempotencyKey: "largest-author",
	}))
	var cats []string
	for i := range storage.MaxCategories {
		slug := fmt.Sprintf("%s%02d", strings.Repeat("c", storage.MaxSlugLength-2), i)
		must[*storage.Category](t)(e.store.CreateCategory(ctx, storage.NewCategory{
			Slug: slug, Name: wide(storage.MaxNameLength), Description: wide(storage.MaxDescriptionLength),
		}))
		cats = append(cats, slug)
	}
	p := must[*storage.Post](t)(e.store.CreatePost(ctx, storage.NewPost{
		AuthorID: strings.Repeat("a", storage.MaxIDLength), Title: wide(storage.MaxTitleLength),
		Slug: strings.Repeat("s", storage.MaxSlugLength), Excerpt: wide(storage.MaxExcerptLength),
		Body: body, Categories: cats, IdempotencyKey: "largest-post",
	}))
	p = must[*storage.Post](t)(e.store.Publish(ctx, storage.PublishPost{ID: p.ID, IdempotencyKey: "largest-publish"}))
	p = must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{
		ID: p.ID, ExpectedVersion: p.Version, Body: ptr(strings.Repeat(`\`, storage.MaxBodyBytes)), IdempotencyKey: "largest-update",
	}))
	must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{
		PostID: p.ID, AuthorID: strings.Repeat("a", storage.MaxIDLength),
		Body: strings.Repeat(`"`, storage.MaxCommentBytes), IdempotencyKey: "largest-comment",
	}))
	equal(t, "body", must[*storage.Post](t)(e.store.GetPost(ctx, p.ID)).Body, strings.Repeat(`\`, storage.MaxBodyBytes))

	// A top-level comment carries its first replies: the largest thread,
	// as readers with the longest ids write it, and its deletion, whose
	// recorded result holds the replies too.
	reader := &storage.ReaderProfile{ID: strings.Repeat("r", storage.MaxReaderIDLength), Name: wide(storage.MaxNameLength),
		AvatarURL: "https://example.com/" + strings.Repeat("a", storage.MaxURLLength-20)}
	root := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{
		PostID: p.ID, Reader: reader, Body: strings.Repeat(`\`, storage.MaxCommentBytes), IdempotencyKey: "largest-root",
	}))
	for i := range storage.MaxReplyPage + 1 {
		must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{
			PostID: p.ID, ParentID: root.ID, Reader: reader, Rules: storage.ReaderRules{Unchecked: true},
			Body: strings.Repeat(`"`, storage.MaxCommentBytes-1) + fmt.Sprint(i%10), IdempotencyKey: fmt.Sprintf("largest-reply-%d", i),
		}))
	}
	gone := must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: root.ID, IdempotencyKey: "largest-tombstone"}))
	equal(t, "replies of the tombstone", len(gone.Replies), storage.MaxReplyPage)
	e.consistent()
}

// TestRetriesAreBounded checks the retry policy against a DynamoDB that
// throttles every request: a call makes MaxAttempts requests, then fails
// with ErrUnavailable; an error no retry can fix is not retried; and the
// caller's deadline ends the retries.
func TestRetriesAreBounded(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		attempts int // ClientConfig.MaxAttempts
		want     int // requests of one call
		code     string
		status   int
		transit  bool // ErrUnavailable
	}{
		{"throttled, default attempts", 0, storage.DefaultMaxAttempts, "ThrottlingException", 400, true},
		{"throttled, one attempt", 1, 1, "ProvisionedThroughputExceededException", 400, true},
		{"server error, five attempts", 5, 5, "InternalServerError", 500, true},
		{"invalid request, not retried", 5, 1, "ValidationException", 400, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var requests atomic.Int64
			fail := roundTrip(func(r *http.Request) (*http.Response, error) {
				requests.Add(1)
				return dynamoError(c.status, c.code), nil
			})
			db, err := storage.NewClient(ctx, storage.ClientConfig{Embedded: true, MaxAttempts: c.attempts, HTTPClient: &http.Client{Transport: fail}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = storage.New(db, "t").GetAuthor(ctx, "ada")
			equal(t, "requests", int(requests.Load()), c.want)
			equal(t, "ErrUnavailable", errors.Is(err, storage.ErrUnavailable), c.transit)
		})
	}
	t.Run("the deadline ends the retries", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		var requests atomic.Int64
		fail := roundTrip(func(r *http.Request) (*http.Response, error) {
			if requests.Add(1) == 2 {
				cancel()
			}
			return dynamoError(500, "InternalServerError"), nil
		})
		db := must[*dynamodb.Client](t)(storage.NewClient(ctx, storage.ClientConfig{Embedded: true, MaxAttempts: 10, HTTPClient: &http.Client{Transport: fail}}))
		_, err := storage.New(db, "t").GetAuthor(ctx, "ada")
		equal(t, "requests", requests.Load(), 2)
		equal(t, "canceled", errors.Is(err, context.Canceled), true)
		equal(t, "ErrUnavailable", errors.Is(err, storage.ErrUnavailable), false)
	})
	t.Run("attempts out of range", func(t *testing.T) {
		for _, n := range []int{-1, storage.MaxAttemptsLimit + 1} {
			if _, err := storage.NewClient(ctx, storage.ClientConfig{Embedded: true, MaxAttempts: n}); err == nil {
				t.Errorf("MaxAttempts %d accepted", n)
			}
		}
	})
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// dynamoError is a DynamoDB error response.
func dynamoError(status int, code string) *http.Response {
	body := []byte(`{"__type":"com.amazonaws.dynamodb.v20120810#` + code + `","message":"injected"}`)
	h := http.Header{}
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("X-Amz-Crc32", fmt.Sprint(crc32.ChecksumIEEE(body)))
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: h,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
}
