package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// The media library's quota: a counter item in the publication's space
// (keys.MediaUsage) holds the bytes and files of its media items. The
// transaction that makes a media item adds to it under the condition that
// the sums stay within the quota, and the one that deletes an item takes
// its bytes back, so concurrent uploads never pass the quota and the
// counter always equals the library. Each of them adds one to the
// counter's "changes", which a recount conditions its write on
// (mediarecount.go).

const typeMediaUsage = "mediaUsage"

// ErrQuotaExceeded means a write would take the publication past one of
// its quotas: the media library's (an upload), its posts' or its
// webhooks' (quotas.go). A *QuotaError tells which limit.
var ErrQuotaExceeded = errors.New("a quota of the publication is exceeded")

// MediaQuota bounds a publication's media library: the bytes and the
// number of files of its items. A zero field bounds nothing.
type MediaQuota struct {
	Bytes int64
	Files int64
}

// MediaUsage is what a publication's media library holds.
type MediaUsage struct {
	Bytes int64
	Files int64
}

// QuotaError is a write refused by a quota: Limit is "bytes" or "files"
// (the media library's), "posts" or "webhooks" (the publication's), Usage
// what the publication holds of it now, Max its quota.
type QuotaError struct {
	Limit string
	Usage int64
	Max   int64
	// Adding is what the write would add: an upload's bytes, or one.
	Adding int64
}

func (e *QuotaError) Error() string {
	switch e.Limit {
	case "posts", "webhooks":
		return fmt.Sprintf("the publication has %d %s, its quota is %d: delete some to create more", e.Usage, e.Limit, e.Max)
	case "files":
		return fmt.Sprintf("the media library holds %d files, its quota is %d: delete some to upload more", e.Usage, e.Max)
	}
	return fmt.Sprintf("the media library holds %d bytes, %d more would pass its quota of %d bytes: delete some to upload more", e.Usage, e.Adding, e.Max)
}

// Unwrap makes a QuotaError match ErrQuotaExceeded.
func (e *QuotaError) Unwrap() error { return ErrQuotaExceeded }

type mediaUsageItem struct {
	PK    string `dynamodbav:"PK"`
	SK    string `dynamodbav:"SK"`
	Type  string `dynamodbav:"type"`
	Bytes int64  `dynamodbav:"bytes"`
	Files int64  `dynamodbav:"files"`
}

// MediaUsage returns what the media library holds, with one strongly
// consistent GetItem; an empty library (no counter yet) holds nothing.
func (s *Store) MediaUsage(ctx context.Context) (*MediaUsage, error) {
	var it mediaUsageItem
	err := s.db.Get(ctx, s.ks.MediaUsage(), true, &it)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("media usage: %w", err)
	}
	return &MediaUsage{Bytes: it.Bytes, Files: it.Files}, nil
}

// CheckMediaQuota returns a *QuotaError when one more file of size bytes
// would take the library past q (one GetItem; none when q bounds nothing),
// else nil. It is advice for an upload about to start: the transaction
// that completes it checks again.
func (s *Store) CheckMediaQuota(ctx context.Context, q MediaQuota, size int64) error {
	if q == (MediaQuota{}) {
		return nil
	}
	u, err := s.MediaUsage(ctx)
	if err != nil {
		return err
	}
	return q.check(u, size)
}

// check returns the *QuotaError of adding a file of size to u, or nil.
func (q MediaQuota) check(u *MediaUsage, size int64) error {
	switch {
	case q.Files > 0 && u.Files+1 > q.Files:
		return &QuotaError{Limit: "files", Usage: u.Files, Max: q.Files, Adding: 1}
	case q.Bytes > 0 && u.Bytes+size > q.Bytes:
		return &QuotaError{Limit: "bytes", Usage: u.Bytes, Max: q.Bytes, Adding: size}
	}
	return nil
}

// countMedia adds to t the change of the library's counter by files and
// bytes; with q, under the condition that the counts stay within it. Its
// failure is errOverQuota.
func (s *Store) countMedia(t *dynamo.Txn, q MediaQuota, files, bytes int64) error {
	upd := expression.Set(expression.Name("type"), expression.Value(typeMediaUsage)).
		Add(expression.Name("bytes"), expression.Value(bytes)).
		Add(expression.Name("files"), expression.Value(files)).
		Add(expression.Name("changes"), expression.Value(1))
	var cond *expression.ConditionBuilder
	if files > 0 && q != (MediaQuota{}) {
		c := dynamo.CondNotExists()
		within := expression.Name("type").Equal(expression.Value(typeMediaUsage))
		if q.Bytes > 0 {
			within = within.And(expression.Name("bytes").LessThanEqual(expression.Value(q.Bytes - bytes)))
		}
		if q.Files > 0 {
			within = within.And(expression.Name("files").LessThanEqual(expression.Value(q.Files - files)))
		}
		c = c.Or(within)
		cond = &c
	}
	return t.Update(s.ks.MediaUsage(), upd, cond, errOverQuota)
}

// errOverQuota is the failure of countMedia's condition: the caller reads
// the counter to say which limit.
var errOverQuota = errors.New("over the media quota")

// quotaError returns the *QuotaError of a file of size refused by q, as
// the counter says now.
func (s *Store) quotaError(ctx context.Context, q MediaQuota, size int64) error {
	u, err := s.MediaUsage(ctx)
	if err != nil {
		return err
	}
	if err := q.check(u, size); err != nil {
		return err
	}
	// Deleted meanwhile: the upload may be tried again.
	return &QuotaError{Limit: "bytes", Usage: u.Bytes, Max: q.Bytes, Adding: size}
}
