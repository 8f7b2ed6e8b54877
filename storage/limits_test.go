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
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/markdown"
	"github.com/blogql/blog/storage"
)

// TestLargestInputsFitDynamoDB writes every field at its limit, in the
// characters that take the most room: four-byte runes, a body of
// MaxBodyBytes that renders to nearly markdown.MaxHTMLBytes of HTML with
// a full table of contents of long headings, every redirect a post keeps,
// and for the idempotency record (which holds the result but its rendered
// body) a body of backslashes, which JSON doubles. On DynamoDB Local this
// checks the limits against DynamoDB's 400 KB item.
func TestLargestInputsFitDynamoDB(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	wide := func(n int) string { return strings.Repeat("𝔸", n) }
	long := func(c string, n int) string { return strings.Repeat(c, n) }
	must[*storage.Author](t)(e.store.CreateAuthor(ctx, storage.NewAuthor{
		ID: long("a", storage.MaxIDLength), Name: wide(storage.MaxNameLength), Bio: wide(storage.MaxBioLength),
		Slug:      long("n", storage.MaxSlugLength),
		AvatarURL: "https://example.com/" + long("a", storage.MaxURLLength-20), IdempotencyKey: "largest-author",
	}))
	var cats []string
	for i := range storage.MaxCategories {
		slug := fmt.Sprintf("%s%02d", long("c", storage.MaxSlugLength-2), i)
		must[*storage.Category](t)(e.store.CreateCategory(ctx, storage.NewCategory{
			Slug: slug, Name: wide(storage.MaxNameLength), Description: wide(storage.MaxDescriptionLength),
		}))
		cats = append(cats, slug)
	}
	url := "https://example.com/" + long("u", storage.MaxURLLength-20)
	body := largestBody(t)
	p := must[*storage.Post](t)(e.store.CreatePost(ctx, storage.NewPost{
		AuthorID: long("a", storage.MaxIDLength), Title: wide(storage.MaxTitleLength),
		Slug: long("s", storage.MaxSlugLength), Excerpt: wide(storage.MaxExcerptLength),
		Body: body, Categories: cats, IdempotencyKey: "largest-post",
		CoverImage: &storage.Image{URL: url, Alt: wide(storage.MaxAltLength), Width: storage.MaxImageSide, Height: storage.MaxImageSide},
		SEO:        storage.SEO{Title: wide(storage.MaxTitleLength), Description: wide(storage.MaxSEODescription), CanonicalURL: url, OGImage: url},
	}))
	equal(t, "body bytes", len(p.Body), storage.MaxBodyBytes)
	equal(t, "toc entries", len(p.TOC), markdown.MaxHeadings)
	if len(p.BodyHTML) < markdown.MaxHTMLBytes-64 {
		t.Fatalf("HTML of %d bytes, want nearly %d", len(p.BodyHTML), markdown.MaxHTMLBytes)
	}
	p = must[*storage.Post](t)(e.store.Publish(ctx, storage.PublishPost{ID: p.ID, IdempotencyKey: "largest-publish"}))
	for i := range storage.MaxRedirects + 1 {
		p = must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{
			ID: p.ID, ExpectedVersion: p.Version, Slug: ptr(fmt.Sprintf("%s%02d", long("r", storage.MaxSlugLength-2), i)),
			IdempotencyKey: fmt.Sprintf("largest-slug-%d", i),
		}))
	}
	size := e.itemSize(t, pubPrefix+"POST#"+p.ID)
	t.Logf("largest post item: %d bytes (body %d, HTML %d, toc %d entries)", size, len(p.Body), len(p.BodyHTML), len(p.TOC))
	if size > 400*1024 {
		t.Errorf("post item of %d bytes", size)
	}
	p = must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{
		ID: p.ID, ExpectedVersion: p.Version, Body: ptr(strings.Repeat(`\`, storage.MaxBodyBytes)), IdempotencyKey: "largest-update",
	}))
	record := e.itemSize(t, pubPrefix+"IDEMPOTENCY#updatePost#largest-update")
	t.Logf("largest idempotency record: %d bytes", record)
	must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{
		PostID: p.ID, AuthorID: long("a", storage.MaxIDLength),
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

// TestWorstCasePostWritesFitOneTransaction makes the post writes with the
// most actions a transaction of them can have and counts the actions
// sent: an edit that moves a post from 10 categories to 10 others and
// changes its slug to another post's redirect while its own redirects are
// at their bound; a schedule that moves it to another month; and its
// deletion with every redirect. DynamoDB refuses more than 100 actions.
func TestWorstCasePostWritesFitOneTransaction(t *testing.T) {
	record, sent := recordTransactions()
	e := newEnv(t, record)
	ctx := context.Background()
	e.author("ada", "Ada")
	var from, to []string
	for i := range 2 * storage.MaxCategories {
		e.category(fmt.Sprintf("c%02d", i), "C")
		if i < storage.MaxCategories {
			from = append(from, fmt.Sprintf("c%02d", i))
		} else {
			to = append(to, fmt.Sprintf("c%02d", i))
		}
	}
	other := e.slug(e.post("ada", "taken"), "other")
	p := e.publish(e.post("ada", "name-0", from...), time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC))
	for i := 1; i <= storage.MaxRedirects; i++ {
		p = e.slug(p, fmt.Sprintf("name-%d", i))
	}
	last := func() int { s := sent(); return s[len(s)-1].actions }
	p = must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{
		ID: p.ID, ExpectedVersion: p.Version, Slug: ptr("taken"), Categories: &to, IdempotencyKey: "worst-edit",
	}))
	// post, new slug, the old one as a redirect, the oldest redirect, the
	// other post's slugs; author copy, 10 category copies put and 10
	// deleted; author (its name's guard), 20 categories (STATS does not
	// change); idempotency record.
	equal(t, "edit actions", last(), 1+4+1+20+21+1)
	equal(t, "other post", must[*storage.Post](t)(e.store.GetPost(ctx, other.ID)).Slug, "other")
	p = must[*storage.Post](t)(e.store.Publish(ctx, storage.PublishPost{ID: p.ID, At: start.AddDate(0, 1, 0), IdempotencyKey: "worst-schedule"}))
	// post; its schedule item; author copy put and deleted, 10 category
	// copies; author, 10 categories, STATS; idempotency record.
	// and the count item, and the tombstones over its popular entries,
	// and the slug's publicAt
	equal(t, "schedule actions", last(), 1+1+2+10+12+1+1+3+1)
	e.consistent()
	must[*storage.Post](t)(e.store.DeletePost(ctx, storage.PostRef{ID: p.ID, IdempotencyKey: "worst-delete"}))
	// post, its schedule item, its slug and 10 redirects, 11 copies, 12
	// counters, record.
	// and the body and count items, and the publication's posts'
	// counter; a scheduled post has no popular entries to hide
	equal(t, "delete actions", last(), 1+1+11+11+12+1+2+1)
	var actions []int
	for _, tx := range sent() {
		actions = append(actions, tx.actions)
	}
	t.Logf("actions of every transaction: %v", actions)
	for _, n := range actions {
		if n > 100 {
			t.Errorf("a transaction of %d actions", n)
		}
	}
	e.consistent()
}

// largestBody returns a body of MaxBodyBytes that renders to as much
// stored data as a body can: the table of contents full of headings of
// the longest text in four-byte runes, a first paragraph that makes the
// longest derived excerpt, and quotes (five bytes of HTML each) and
// plain text in the proportion that brings the HTML to its limit.
func largestBody(t *testing.T) string {
	t.Helper()
	var head strings.Builder
	for range markdown.MaxHeadings {
		head.WriteString("## " + strings.Repeat("𝔸", markdown.MaxHeadingText) + "\n\n")
	}
	head.WriteString(strings.Repeat("𝔸", markdown.ExcerptLength) + "\n\n")
	build := func(quotes int) string {
		rest := storage.MaxBodyBytes - head.Len() - quotes - 2
		return head.String() + strings.Repeat(`"`, quotes) + "\n\n" + strings.Repeat("a", rest)
	}
	lo, hi := 0, storage.MaxBodyBytes-head.Len()-2
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if _, err := markdown.Render(context.Background(), build(mid), markdown.Options{HeadingIDPrefix: markdown.DefaultHeadingIDPrefix}); err == nil {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return build(lo)
}

// itemSize returns the size of the item with key pk/pk as DynamoDB
// counts it: attribute names and values in bytes, numbers at most 21.
func (e *env) itemSize(t *testing.T, pk string) int {
	t.Helper()
	out, err := e.client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(e.table),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk},
			"SK": &types.AttributeValueMemberS{Value: strings.TrimPrefix(pk, pubPrefix)}},
	})
	if err != nil || out.Item == nil {
		t.Fatalf("item %s: %v", pk, err)
	}
	n := 0
	for name, v := range out.Item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return 21
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	}
	return 0
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
