package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Revisions: an edit that changes a post's title, body, excerpt, cover or
// SEO fields keeps what they were in a revision item POST#<id> /
// REV#<n>, put in the edit's own transaction (one more action, two once
// the post has MaxRevisions: the oldest is deleted). n counts the post's
// revisions ("revisions" on the post item, the only thing the post item
// gains), so the last MaxRevisions are kept and older ones deleted as new
// ones come. A revision holds the Markdown body, not its HTML: restoring
// renders it again. It holds the body only when the edit changed it: one
// that did not is marked bodyless, so a title edit does not pay for the
// body. The body before edit n is then the body of the oldest revision
// k >= n that holds one (no edit between changed it), else the post's
// current body; RevisionBodies finds it when asked. Revisions are in no
// copy and no public list; deleting the post deletes them with its
// comments. See doc_layout.go.

// MaxRevisions is how many revisions a post keeps: the last 50.
const MaxRevisions = 50

// Revision is a post's content before an edit: who made the edit, when,
// and which fields it changed.
type Revision struct {
	PostID string
	// N numbers the post's revisions from 1, oldest first.
	N        int64
	EditorID string
	At       time.Time
	// Fields are the fields the edit changed: title, body, excerpt,
	// coverImage, seo.
	Fields  []string
	Title   string
	Excerpt string
	// Body is the Markdown body before the edit; empty when BodyUnread.
	Body string
	// BodyUnread is set on a revision whose edit did not change the body
	// and so does not hold it: RevisionBodies fills Body in.
	BodyUnread bool
	CoverImage *Image
	SEO        SEO
	// Version is the post's version this content had.
	Version int64
}

type revisionItem struct {
	PK       string   `dynamodbav:"PK"`
	SK       string   `dynamodbav:"SK"`
	Type     string   `dynamodbav:"type"`
	PostID   string   `dynamodbav:"postId"`
	N        int64    `dynamodbav:"n"`
	EditorID string   `dynamodbav:"editorId,omitempty"`
	At       string   `dynamodbav:"at"`
	Fields   []string `dynamodbav:"fields"`
	Title    string   `dynamodbav:"title"`
	Excerpt  string   `dynamodbav:"excerpt,omitempty"`
	Body     string   `dynamodbav:"body,omitempty"`
	// Bodyless marks a revision whose edit left the body as it was, which
	// does not hold it (revisions written before the mark hold it).
	Bodyless bool       `dynamodbav:"bodyless,omitempty"`
	Cover    *imageItem `dynamodbav:"cover,omitempty"`
	SEO      *seoItem   `dynamodbav:"seo,omitempty"`
	Version  int64      `dynamodbav:"version"`
}

func (it *revisionItem) revision() *Revision {
	r := &Revision{PostID: it.PostID, N: it.N, EditorID: it.EditorID, At: keys.ParseTime(it.At), Fields: it.Fields,
		Title: it.Title, Excerpt: it.Excerpt, Body: it.Body, BodyUnread: it.Bodyless, Version: it.Version}
	if it.Cover != nil {
		r.CoverImage = &Image{URL: it.Cover.URL, Alt: it.Cover.Alt, Width: it.Cover.Width, Height: it.Cover.Height}
	}
	if it.SEO != nil {
		r.SEO = SEO(*it.SEO)
	}
	return r
}

// revisedFields returns the fields an edit from before to after changed
// that a revision keeps.
func revisedFields(before, after *postItem) []string {
	var out []string
	if before.Title != after.Title {
		out = append(out, "title")
	}
	if before.Body != after.Body {
		out = append(out, "body")
	}
	if before.Excerpt != after.Excerpt {
		out = append(out, "excerpt")
	}
	if !reflect.DeepEqual(before.Cover, after.Cover) {
		out = append(out, "coverImage")
	}
	if !reflect.DeepEqual(before.SEO, after.SEO) {
		out = append(out, "seo")
	}
	return out
}

// keepRevision returns the also of an edit by editor: when the edit
// changes what a revision keeps, it counts the revision on the post
// (after) and puts the revision, deleting the one MaxRevisions older.
func (s *Store) keepRevision(editor string) func(context.Context, *dynamo.Txn, *postItem, *postItem) error {
	return func(_ context.Context, t *dynamo.Txn, before, after *postItem) error {
		if after == nil {
			return nil
		}
		fields := revisedFields(before, after)
		if len(fields) == 0 {
			return nil
		}
		// after is the item postActions put already: the count goes on
		// it through the same put, so set it before that runs (see
		// UpdatePost, which counts it in its change).
		n := after.Revisions
		k := s.ks.Revision(before.ID, n)
		rev := revisionItem{PK: k.PK, SK: k.SK, Type: typeRevision, PostID: before.ID, N: n, EditorID: editor,
			At: after.UpdatedAt, Fields: fields, Title: before.Title, Excerpt: before.Excerpt, Body: before.Body,
			Cover: before.Cover, SEO: before.SEO, Version: before.Version}
		if !slices.Contains(fields, "body") {
			// The body is the one a later revision, or the post, holds.
			rev.Body, rev.Bodyless = "", true
		}
		if err := t.Put(rev, ptr(dynamo.CondNotExists()), dynamo.ErrRetry); err != nil {
			return err
		}
		if n > MaxRevisions {
			return t.Delete(s.ks.Revision(before.ID, n-MaxRevisions), nil, nil)
		}
		return nil
	}
}

// countRevision counts the revision an edit from before to p keeps, if it
// keeps one: keepRevision names it after the count.
func countRevision(before *postItem, p *postItem) {
	if len(revisedFields(before, p)) > 0 {
		p.Revisions = before.Revisions + 1
	}
}

// Revisions returns a post's revisions, newest first: one Query of the
// post's partition a page.
func (s *Store) Revisions(ctx context.Context, postID string, p PageArgs) (*Result[*Revision], error) {
	return queryPage(ctx, s, listQuery{
		list: "revisions:" + postID,
		cond: expression.Key(keys.AttrPK).Equal(expression.Value(s.ks.Post(postID).PK)).
			And(expression.Key(keys.AttrSK).BeginsWith(keys.PrefixRevision)),
	}, p, (*revisionItem).revision)
}

// RevisionBodies fills in the body of each revision of the post postID in
// revs that does not hold it (BodyUnread): the body of the next revision
// in revs that holds one; for those above the highest that does, at most
// one Query ascending from the revision after the highest in revs, in
// pages of 4, 8, 16 ... items, that stops at the first revision holding a
// body, plus one GetItem of the post's body item only when none holds it.
// latest is the post's count of revisions as the caller read it (0 when
// unknown): when revs reach it, there is no revision past them to query.
// Nothing is read when every revision holds its body.
func (s *Store) RevisionBodies(ctx context.Context, postID string, revs []*Revision, latest int64) error {
	return s.revisionBodies(ctx, postID, revs, latest, false)
}

func (s *Store) revisionBodies(ctx context.Context, postID string, revs []*Revision, latest int64, consistent bool) error {
	byN := slices.Clone(revs)
	slices.SortFunc(byN, func(a, b *Revision) int { return cmp.Compare(b.N, a.N) })
	var open []*Revision // bodyless, above every revision in revs that holds its body
	body, have := "", false
	for _, r := range byN {
		switch {
		case !r.BodyUnread:
			body, have = r.Body, true
		case have:
			r.Body, r.BodyUnread = body, false
		default:
			open = append(open, r)
		}
	}
	if len(open) == 0 {
		return nil
	}
	body, err := s.bodyFrom(ctx, postID, byN[0].N+1, byN[0].N >= latest && latest > 0, consistent)
	if err != nil {
		return err
	}
	for _, r := range open {
		r.Body, r.BodyUnread = body, false
	}
	return nil
}

// bodyFrom returns the body of the oldest revision numbered from n up
// that holds one, else the post's current body; last says there is no
// revision from n up, so only the post's body is read.
func (s *Store) bodyFrom(ctx context.Context, postID string, n int64, last, consistent bool) (string, error) {
	if !last {
		body, found, err := s.revisionBodyFrom(ctx, postID, n, consistent)
		if err != nil || found {
			return body, err
		}
	}
	var b bodyItem
	switch err := s.db.Get(ctx, s.ks.PostBody(postID), consistent, &b); {
	case err == nil:
		return b.Body, nil
	case errors.Is(err, ErrNotFound):
		// A post whose body item is gone has been deleted since, or is
		// of a layout whose post item holds its body.
		p, err := s.readPostParts(ctx, postID, consistent)
		if err != nil {
			return "", fmt.Errorf("body of post %q: %w", postID, err)
		}
		return p.Body, nil
	default:
		return "", err
	}
}

// revisionBodyFrom returns the body of the oldest revision numbered from
// n up that holds one, if one does.
func (s *Store) revisionBodyFrom(ctx context.Context, postID string, n int64, consistent bool) (string, bool, error) {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(
		expression.Key(keys.AttrPK).Equal(expression.Value(s.ks.Post(postID).PK)).
			And(expression.Key(keys.AttrSK).Between(expression.Value(s.ks.Revision(postID, n).SK), expression.Value(s.ks.Revision(postID, 9_999_999_999).SK)))))
	if err != nil {
		return "", false, err
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ConsistentRead:            aws.Bool(consistent),
		ScanIndexForward:          aws.Bool(true),
		Limit:                     aws.Int32(4),
	}
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return "", false, fmt.Errorf("query revisions of post %q: %w", postID, err)
		}
		for _, raw := range out.Items {
			var it revisionItem
			if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
				return "", false, fmt.Errorf("decode revision of post %q: %w", postID, err)
			}
			if !it.Bodyless {
				return it.Body, true, nil
			}
		}
		if out.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
		in.Limit = aws.Int32(min(*in.Limit*2, MaxRevisions))
	}
	return "", false, nil
}

// RestoreRevision is the input of RestorePostRevision.
type RestoreRevision struct {
	PostID          string
	N               int64
	ExpectedVersion int64
	EditorID        string
	IdempotencyKey  string
	Admin           bool `json:"-"`
}

// RestorePostRevision makes a new version of the post from its revision
// N: its title, excerpt, body, cover and SEO fields (the slug and
// categories stay), which keeps the content it replaces as a revision in
// turn. A revision the post does not have is ErrNotFound; a version other
// than ExpectedVersion a *ConflictError; nothing is written then.
func (s *Store) RestorePostRevision(ctx context.Context, in RestoreRevision) (*Post, error) {
	if err := validateID("postId", in.PostID); err != nil {
		return nil, err
	}
	if in.N < 1 {
		return nil, invalid("revisionId", "is not a revision of this post")
	}
	var it revisionItem
	if err := s.db.Get(ctx, s.ks.Revision(in.PostID, in.N), true, &it); err != nil {
		return nil, fmt.Errorf("revision %d of post %q: %w", in.N, in.PostID, err)
	}
	r := it.revision()
	if err := s.revisionBodies(ctx, in.PostID, []*Revision{r}, 0, true); err != nil {
		return nil, err
	}
	seo := &SEOPatch{Title: &r.SEO.Title, Description: &r.SEO.Description, CanonicalURL: &r.SEO.CanonicalURL, OGImage: &r.SEO.OGImage, NoIndex: &r.SEO.NoIndex}
	patch := PostPatch{
		ID: in.PostID, ExpectedVersion: in.ExpectedVersion, Title: &r.Title, Excerpt: &r.Excerpt, Body: &r.Body,
		CoverImage: r.CoverImage, RemoveCoverImage: r.CoverImage == nil, SEO: seo,
		IdempotencyKey: in.IdempotencyKey, Admin: in.Admin, EditorID: in.EditorID,
	}
	return s.UpdatePost(ctx, patch)
}

// checkRevisions reports a revision whose post is gone, one numbered past
// the post's count, and one the bound should have deleted.
func checkRevisions(ks keys.Space, revs []*revisionItem, posts map[string]*postItem) []string {
	var bad []string
	for _, r := range revs {
		p := posts[r.PostID]
		switch {
		case p == nil:
			bad = append(bad, fmt.Sprintf("revision %d of post %s, which does not exist", r.N, r.PostID))
		case r.N > p.Revisions || r.N <= p.Revisions-MaxRevisions:
			bad = append(bad, fmt.Sprintf("revision %d of post %s, which counts %d (the last %d are kept)", r.N, r.PostID, p.Revisions, MaxRevisions))
		case ks.Revision(r.PostID, r.N) != key{PK: r.PK, SK: r.SK}:
			bad = append(bad, fmt.Sprintf("revision %d of post %s has wrong keys", r.N, r.PostID))
		case r.Bodyless && (r.Body != "" || slices.Contains(r.Fields, "body")):
			bad = append(bad, fmt.Sprintf("revision %d of post %s is marked bodyless but its edit changed the body or it holds one", r.N, r.PostID))
		}
	}
	return bad
}
