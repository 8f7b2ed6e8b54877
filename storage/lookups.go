package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Reads by id, slug or key, of one item or of a batch (what the loaders
// call). Get* reads are eventually consistent, as every page is; Read*
// reads are consistent, for the check a caller makes before a write.

// GetPost returns the post with id, whatever its status, or ErrNotFound.
// It reads the post item with its count item (the exact comment counts)
// and its body item in one BatchGetItem.
func (s *Store) GetPost(ctx context.Context, id string) (*Post, error) {
	it, err := s.readPostParts(ctx, id, false)
	if err != nil {
		return nil, err
	}
	return it.post(), nil
}

// absentPostID is a post id no post has: new ids are UUIDs.
const absentPostID = "-"

// GetPostBySlug returns the post that holds slug, or ErrNotFound. It makes
// the same two reads whether or not a post holds the slug: for a free slug
// it reads a post that does not exist. A caller that hides some posts (a
// draft from anyone but its author) then answers a hidden post and a free
// slug alike, in time as in words.
func (s *Store) GetPostBySlug(ctx context.Context, slug string) (*Post, error) {
	id, err := s.PostIDBySlug(ctx, slug)
	if err != nil {
		return nil, err
	}
	return s.GetPost(ctx, id)
}

// PostIDBySlug returns the id of the post that holds slug, as its current
// slug or one it held before, from the slug's reservation: one GetItem.
// For a slug no post holds it returns an id no post has, so that what a
// caller reads next with it (GetPost: ErrNotFound; Comments: none) costs
// the same requests as for a post it may not show. A string that cannot
// be a slug is a *ValidationError.
func (s *Store) PostIDBySlug(ctx context.Context, slug string) (string, error) {
	if err := validateSlug("slug", slug); err != nil {
		return "", err
	}
	var sl slugItem
	err := s.db.Get(ctx, s.ks.Slug(slug), false, &sl)
	switch {
	case errors.Is(err, ErrNotFound):
		return absentPostID, nil
	case err != nil:
		return "", fmt.Errorf("slug %q: %w", slug, err)
	}
	if sl.PostID == "" {
		// A page's slug (pages.go): no post's.
		return absentPostID, nil
	}
	return sl.PostID, nil
}

// PostSlug is what the reservation of a post's slug tells of its holder.
type PostSlug struct {
	// ID is the post that holds the slug, or for a slug no post holds an
	// id no post has (as PostIDBySlug returns it).
	ID string
	// Prev is the post whose redirect the slug was when a draft took it
	// from that post, "" otherwise. A reader who cannot see the holder (a
	// draft) is shown Prev, which leads to its current slug as any
	// redirect does, until the holder is public.
	Prev string
	// PublicAt is when the holder is public from, as its current slug
	// records it, written with the post: zero when the holder is not
	// published, when the slug is a redirect, or when its reservation was
	// written before reservations recorded it. Like the read of the post
	// after it, the read is eventually consistent: a caller may use it to
	// decide what to read next, never to decide what a reader sees.
	PublicAt time.Time
}

// PostSlugOf returns what the reservation of slug tells of the post that
// holds it: one GetItem. A string that cannot be a slug is a
// *ValidationError.
func (s *Store) PostSlugOf(ctx context.Context, slug string) (PostSlug, error) {
	if err := validateSlug("slug", slug); err != nil {
		return PostSlug{}, err
	}
	var sl slugItem
	err := s.db.Get(ctx, s.ks.Slug(slug), false, &sl)
	switch {
	case errors.Is(err, ErrNotFound):
		return PostSlug{ID: absentPostID}, nil
	case err != nil:
		return PostSlug{}, fmt.Errorf("slug %q: %w", slug, err)
	}
	if sl.PostID == "" {
		return PostSlug{ID: absentPostID}, nil
	}
	return PostSlug{ID: sl.PostID, Prev: sl.PrevPostID, PublicAt: keys.ParseTime(sl.PublicAt)}, nil
}

// GetPosts returns the posts with ids in order, with ErrNotFound in errs
// for each missing one: each post item with its count item and body item,
// all in one BatchGetItem for up to 33 posts.
func (s *Store) GetPosts(ctx context.Context, ids []string) ([]*Post, []error) {
	out := make([]*Post, len(ids))
	errs := make([]error, len(ids))
	var ks []key
	for _, id := range ids {
		ks = append(ks, s.ks.PostParts(id)...)
	}
	found, err := s.db.BatchGet(ctx, ks, false)
	for i, id := range ids {
		if err != nil {
			errs[i] = err
			continue
		}
		p, perr := decodePost(s.ks, found, id)
		if perr != nil {
			errs[i] = perr
			continue
		}
		out[i] = p.post()
	}
	return out, errs
}

// GetAuthor returns the author with id, or ErrNotFound.
func (s *Store) GetAuthor(ctx context.Context, id string) (*Author, error) {
	var it authorItem
	if err := s.db.Get(ctx, s.ks.Author(id), false, &it); err != nil {
		return nil, fmt.Errorf("author %q: %w", id, err)
	}
	return it.author(s.nowKey()), nil
}

// GetAuthors returns the authors with ids in order, with ErrNotFound in
// errs for each missing one.
func (s *Store) GetAuthors(ctx context.Context, ids []string) ([]*Author, []error) {
	now := s.nowKey()
	return dynamo.BatchDecode(ctx, s.db, mapKeys(ids, s.ks.Author), func(it *authorItem) *Author { return it.author(now) })
}

// GetCategory returns the category with slug, or ErrNotFound; a string
// that cannot be a slug is a *ValidationError.
func (s *Store) GetCategory(ctx context.Context, slug string) (*Category, error) {
	if err := validateSlug("slug", slug); err != nil {
		return nil, err
	}
	var it categoryItem
	if err := s.db.Get(ctx, s.ks.Category(slug), false, &it); err != nil {
		return nil, fmt.Errorf("category %q: %w", slug, err)
	}
	return it.category(s.nowKey()), nil
}

// GetCategories returns the categories with slugs in order, with
// ErrNotFound in errs for each missing one.
func (s *Store) GetCategories(ctx context.Context, slugs []string) ([]*Category, []error) {
	now := s.nowKey()
	return dynamo.BatchDecode(ctx, s.db, mapKeys(slugs, s.ks.Category), func(it *categoryItem) *Category { return it.category(now) })
}

// GetComments returns the comments named by keys in order, published or
// held, with ErrNotFound (or a ValidationError for a malformed id) in
// errs. Each comment is looked for where it is published and where it is
// held, both in the same BatchGetItem.
func (s *Store) GetComments(ctx context.Context, ks []CommentKey) ([]*Comment, []error) {
	out := make([]*Comment, len(ks))
	errs := make([]error, len(ks))
	var read []key
	cids := make([]*keys.CommentID, len(ks))
	for i, ck := range ks {
		cid, err := parseCommentID(ck.CommentID)
		if err != nil {
			errs[i] = err
			continue
		}
		cids[i] = &cid
		read = append(read, s.ks.Comment(ck.PostID, cid), s.ks.Held(ck.PostID, cid))
	}
	if len(read) == 0 {
		return out, errs
	}
	found, err := s.db.BatchGet(ctx, read, false)
	for i, ck := range ks {
		switch {
		case cids[i] == nil:
		case err != nil:
			errs[i] = err
		default:
			out[i], errs[i] = decodeComment(s.ks, found, ck.PostID, *cids[i])
		}
	}
	return out, errs
}

// decodeComment returns the comment cid of postID from found, published
// (a tombstone too) or held, or ErrNotFound.
func decodeComment(ks keys.Space, found map[key]item, postID string, cid keys.CommentID) (*Comment, error) {
	for _, k := range []key{ks.Comment(postID, cid), ks.Held(postID, cid)} {
		var c commentItem
		err := dynamo.DecodeFound(found, k, &c)
		switch {
		case err == nil:
			return c.comment(), nil
		case !errors.Is(err, ErrNotFound):
			return nil, fmt.Errorf("decode comment %q: %w", cid, err)
		}
	}
	return nil, fmt.Errorf("comment %q: %w", cid, ErrNotFound)
}

// ReadPost returns the post with id like GetPost, but read with
// ConsistentRead: a check made before a write must see every write that
// returned before it. It returns ErrNotFound when there is no such post.
func (s *Store) ReadPost(ctx context.Context, id string) (*Post, error) {
	it, err := s.readPostParts(ctx, id, true)
	if err != nil {
		return nil, err
	}
	return it.post(), nil
}

// ReadComment returns the comment k names, published or held, and its
// post, read together in one request with ConsistentRead, for a check
// made before a write. It returns ErrNotFound when either is missing, or
// a *ValidationError for a malformed comment id.
func (s *Store) ReadComment(ctx context.Context, k CommentKey) (*Comment, *Post, error) {
	cid, err := parseCommentID(k.CommentID)
	if err != nil {
		return nil, nil, err
	}
	found, err := s.db.ReadTogether(ctx, []key{s.ks.Comment(k.PostID, cid), s.ks.Held(k.PostID, cid), s.ks.Post(k.PostID), s.ks.PostCount(k.PostID)})
	if err != nil {
		return nil, nil, err
	}
	c, err := decodeComment(s.ks, found, k.PostID, cid)
	if err != nil {
		return nil, nil, err
	}
	p, err := decodePost(s.ks, found, k.PostID)
	if err != nil {
		return nil, nil, err
	}
	return c, p.post(), nil
}

// GetCommenters returns who wrote comments, for writers in order, authors
// and readers in one BatchGetItem, with ErrNotFound in errs for each
// missing one.
func (s *Store) GetCommenters(ctx context.Context, writers []Writer) ([]*Commenter, []error) {
	out := make([]*Commenter, len(writers))
	errs := make([]error, len(writers))
	ks := make([]key, len(writers))
	for i, w := range writers {
		if w.AuthorID != "" {
			ks[i] = s.ks.Author(w.AuthorID)
		} else {
			ks[i] = keys.Reader(w.ReaderID)
		}
	}
	found, err := s.db.BatchGet(ctx, ks, false)
	now := s.nowKey()
	for i, w := range writers {
		it, ok := found[ks[i]]
		switch {
		case err != nil:
			errs[i] = err
		case !ok:
			errs[i] = fmt.Errorf("writer %+v: %w", w, ErrNotFound)
		case w.AuthorID != "":
			var a authorItem
			if errs[i] = attributevalue.UnmarshalMap(it, &a); errs[i] == nil {
				out[i] = &Commenter{Author: a.author(now)}
			}
		default:
			var r readerItem
			if errs[i] = attributevalue.UnmarshalMap(it, &r); errs[i] == nil {
				reader := r.reader()
				// A picture kept before refreshReader checked it as it
				// does now is not shown either.
				if validateURL("avatarUrl", reader.AvatarURL) != nil || s.checkLinkHosts([2]string{"avatarUrl", reader.AvatarURL}) != nil {
					reader.AvatarURL = ""
				}
				out[i] = &Commenter{Reader: reader}
			}
		}
	}
	return out, errs
}
