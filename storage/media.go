package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// The media library: pending uploads and media items (doc.go describes
// their keys). The bytes live in a bucket (package media); the table keeps
// what is known of them.

const (
	typeUpload = "upload"
	typeMedia  = "media"
)

// Upload is a presigned upload not yet completed: who asked for it, what
// it may hold, and when it expires (TTL removes it then).
type Upload struct {
	ID          string
	Owner       string
	Filename    string
	ContentType string
	ByteSize    int64
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// Media is an image of the media library.
type Media struct {
	ID       string
	Owner    string
	Filename string
	// Format is the image's format by its bytes: jpeg, png, gif, webp or
	// avif.
	Format   string
	Width    int
	Height   int
	ByteSize int64
	// Frames is an animated GIF's number of frames; 0 for a still (and
	// for a GIF completed before animations were kept).
	Frames        int
	DominantColor string
	Placeholder   string
	Alt           string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// UsedBy is where the item is used: posts' covers and bodies.
	UsedBy []MediaUse
}

type uploadItem struct {
	PK          string `dynamodbav:"PK"`
	SK          string `dynamodbav:"SK"`
	Type        string `dynamodbav:"type"`
	Owner       string `dynamodbav:"owner"`
	Filename    string `dynamodbav:"filename"`
	ContentType string `dynamodbav:"contentType"`
	ByteSize    int64  `dynamodbav:"byteSize"`
	CreatedAt   string `dynamodbav:"createdAt"`
	ExpiresAt   int64  `dynamodbav:"expiresAt"`
}

type mediaItem struct {
	PK            string `dynamodbav:"PK"`
	SK            string `dynamodbav:"SK"`
	GSI1PK        string `dynamodbav:"GSI1PK"`
	GSI1SK        string `dynamodbav:"GSI1SK"`
	Type          string `dynamodbav:"type"`
	ID            string `dynamodbav:"id"`
	Owner         string `dynamodbav:"owner"`
	Filename      string `dynamodbav:"filename"`
	Format        string `dynamodbav:"format"`
	Width         int    `dynamodbav:"width"`
	Height        int    `dynamodbav:"height"`
	ByteSize      int64  `dynamodbav:"byteSize"`
	Frames        int    `dynamodbav:"frames,omitempty"`
	DominantColor string `dynamodbav:"dominantColor"`
	Placeholder   string `dynamodbav:"placeholder"`
	Alt           string `dynamodbav:"alt"`
	CreatedAt     string `dynamodbav:"createdAt"`
	UpdatedAt     string `dynamodbav:"updatedAt"`
	// UsedBy holds "cover:<postId>" and "body:<postId>" (mediarefs.go).
	UsedBy []string `dynamodbav:"usedBy,stringset,omitempty"`
}

func (it *mediaItem) media() *Media {
	return &Media{
		ID: it.ID, Owner: it.Owner, Filename: it.Filename, Format: it.Format,
		Width: it.Width, Height: it.Height, ByteSize: it.ByteSize, Frames: it.Frames,
		DominantColor: it.DominantColor, Placeholder: it.Placeholder, Alt: it.Alt,
		CreatedAt: keys.ParseTime(it.CreatedAt), UpdatedAt: keys.ParseTime(it.UpdatedAt), UsedBy: usesOf(it.UsedBy),
	}
}

// NewUploadID returns a fresh id for an upload; the media item it
// becomes keeps it.
func NewUploadID() string { return newID() }

// CreateUpload records u, stamped now and expiring after ttl, with one
// conditional PutItem, and returns it. An id taken already is
// ErrAlreadyExists.
func (s *Store) CreateUpload(ctx context.Context, u Upload, ttl time.Duration) (*Upload, error) {
	now := s.Now()
	u.CreatedAt, u.ExpiresAt = now, now.Add(ttl).Truncate(time.Second)
	k := s.ks.Upload(u.ID)
	wrote, err := s.db.PutIf(ctx, uploadItem{PK: k.PK, SK: k.SK, Type: typeUpload, Owner: u.Owner, Filename: u.Filename,
		ContentType: u.ContentType, ByteSize: u.ByteSize, CreatedAt: keys.Time(now), ExpiresAt: u.ExpiresAt.Unix()}, dynamo.CondNotExists())
	switch {
	case err != nil:
		return nil, fmt.Errorf("create upload %s: %w", u.ID, err)
	case !wrote:
		return nil, fmt.Errorf("create upload %s: %w", u.ID, ErrAlreadyExists)
	}
	return &u, nil
}

// Upload returns the pending upload id with one strongly consistent
// GetItem, or ErrNotFound when there is none or it has expired (TTL
// deletes it up to days later).
func (s *Store) Upload(ctx context.Context, id string) (*Upload, error) {
	var it uploadItem
	if err := s.db.Get(ctx, s.ks.Upload(id), true, &it); err != nil {
		return nil, fmt.Errorf("upload %s: %w", id, err)
	}
	exp := time.Unix(it.ExpiresAt, 0).UTC()
	if !s.Now().Before(exp) {
		return nil, fmt.Errorf("upload %s: expired: %w", id, ErrNotFound)
	}
	return &Upload{ID: id, Owner: it.Owner, Filename: it.Filename, ContentType: it.ContentType, ByteSize: it.ByteSize,
		CreatedAt: keys.ParseTime(it.CreatedAt), ExpiresAt: exp}, nil
}

// DeleteUpload removes the pending upload id, whether or not it exists.
func (s *Store) DeleteUpload(ctx context.Context, id string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: dynamo.MustKey(s.ks.Upload(id))})
	if err != nil {
		return fmt.Errorf("delete upload %s: %w", id, err)
	}
	return nil
}

// CompleteUpload turns the pending upload m.ID into the media item m,
// stamped now, in one transaction: the upload must still exist (else
// ErrNotFound: completed already or expired), the media item must not,
// and the library's counter, which it adds m to, must stay within q (else
// a *QuotaError, and nothing is written).
func (s *Store) CompleteUpload(ctx context.Context, m Media, q MediaQuota) (*Media, error) {
	if err := validateAlt(m.Alt); err != nil {
		return nil, err
	}
	now := s.Now()
	m.CreatedAt, m.UpdatedAt = now, now
	at := keys.Time(now)
	k := s.ks.Media(m.ID)
	it := mediaItem{PK: k.PK, SK: k.SK, GSI1PK: s.ks.MediaLibraryPartition(), GSI1SK: keys.MediaLibrarySort(at, m.ID),
		Type: typeMedia, ID: m.ID, Owner: m.Owner, Filename: m.Filename, Format: m.Format, Width: m.Width, Height: m.Height,
		ByteSize: m.ByteSize, Frames: m.Frames, DominantColor: m.DominantColor, Placeholder: m.Placeholder, Alt: m.Alt, CreatedAt: at, UpdatedAt: at}
	t := s.db.NewTxn()
	live := dynamo.CondExists().And(expression.Name("expiresAt").GreaterThan(expression.Value(now.Unix())))
	gone := fmt.Errorf("complete upload %s: completed already or expired: %w", m.ID, ErrNotFound)
	notNew := dynamo.CondNotExists()
	if err := firstErr(t.Delete(s.ks.Upload(m.ID), &live, gone), t.Put(it, &notNew, gone), s.countMedia(t, q, 1, m.ByteSize)); err != nil {
		return nil, err
	}
	switch err := s.db.Exec(ctx, t); {
	case errors.Is(err, errOverQuota):
		return nil, s.quotaError(ctx, q, m.ByteSize)
	case err != nil:
		return nil, err
	}
	return &m, nil
}

// MediaItem returns the media item id with one GetItem, or ErrNotFound.
func (s *Store) MediaItem(ctx context.Context, id string) (*Media, error) {
	var it mediaItem
	if err := s.db.Get(ctx, s.ks.Media(id), false, &it); err != nil {
		return nil, fmt.Errorf("media %s: %w", id, err)
	}
	if it.Type != typeMedia {
		return nil, fmt.Errorf("media %s: deleted: %w", id, ErrNotFound)
	}
	return it.media(), nil
}

// MediaLibrary returns a page of the media library, newest first: one
// Query of GSI1.
func (s *Store) MediaLibrary(ctx context.Context, p PageArgs) (*Result[*Media], error) {
	return queryPage(ctx, s, listQuery{
		list: "media", index: true,
		cond: expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.MediaLibraryPartition())),
	}, p, (*mediaItem).media)
}

// UpdateMediaAlt sets the alt text of the media item id with one
// conditional UpdateItem and returns the item; ErrNotFound when there is
// none.
func (s *Store) UpdateMediaAlt(ctx context.Context, id, alt string) (*Media, error) {
	if err := validateAlt(alt); err != nil {
		return nil, err
	}
	upd := expression.Set(expression.Name("alt"), expression.Value(alt)).
		Set(expression.Name("updatedAt"), expression.Value(keys.Time(s.Now())))
	wrote, err := s.db.UpdateIf(ctx, s.ks.Media(id), upd, expression.Name("type").Equal(expression.Value(typeMedia)))
	switch {
	case err != nil:
		return nil, fmt.Errorf("update media %s: %w", id, err)
	case !wrote:
		return nil, fmt.Errorf("update media %s: %w", id, ErrNotFound)
	}
	var it mediaItem
	if err := s.db.Get(ctx, s.ks.Media(id), true, &it); err != nil {
		return nil, fmt.Errorf("media %s: %w", id, err)
	}
	return it.media(), nil
}

// DeleteMedia removes the media item m and takes its bytes from the
// library's counter in one transaction; ErrNotFound when there is none.
// An item in use is a *MediaInUseError, unless force: then it leaves the
// library but stays as a tombstone while posts name it (mediarefs.go).
func (s *Store) DeleteMedia(ctx context.Context, m *Media, force bool) error {
	if len(m.UsedBy) > 0 {
		if !force {
			return &MediaInUseError{Uses: m.UsedBy}
		}
		return s.deleteUsedMedia(ctx, m)
	}
	id := m.ID
	t := s.db.NewTxn()
	unused := expression.Name("type").Equal(expression.Value(typeMedia)).
		And(expression.Name("byteSize").Equal(expression.Value(m.ByteSize))).
		And(expression.Name("usedBy").AttributeNotExists())
	if err := firstErr(t.Delete(s.ks.Media(id), &unused, errRaced), s.countMedia(t, MediaQuota{}, -1, -m.ByteSize)); err != nil {
		return err
	}
	switch err := s.db.Exec(ctx, t); {
	case errors.Is(err, errRaced):
		// A post started using it since it was read, or it is gone.
		fresh, err := s.MediaItem(ctx, id)
		if err != nil {
			return err
		}
		return s.DeleteMedia(ctx, fresh, force)
	case err != nil:
		return fmt.Errorf("delete media %s: %w", id, err)
	}
	return nil
}

// errRaced is a deletion whose item changed since it was read.
var errRaced = errors.New("media item changed")

func validateAlt(alt string) error { return validateOptLine("alt", alt, MaxAltLength) }
