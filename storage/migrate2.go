package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/markdown"
	"github.com/blogql/blog/storage/internal/dynamo"
)

// Layout 1 to layout 2 (see Migrate). This step is frozen: the items it
// reads and writes of authors, author slugs and counters, their keys, and
// how it makes an author's slug are its own copies below, of what the
// writes of layout 2 did when it shipped, so a later change of the
// domain's writes does not change what it does. Posts and comments are
// still written by the domain's writes (readPost, postActions,
// refreshNames, repliesFrom): they bring them to the layout of this
// version, and splitPosts (migrate4.go) takes them from there.

// The keys and item types of layout 2 that this step uses.
const (
	v2AuthorPrefix     = "AUTHOR#"
	v2AuthorSlugPrefix = "AUTHORSLUG#"
	v2CatPrefix        = "CAT#"
	v2PostPrefix       = "POST#"
	v2CommentPrefix    = "COMMENT#"
	v2ThreadPrefix     = "THREAD#"
	v2Authors          = "AUTHORS"
	v2Categories       = "CATEGORIES"
	v2Stats            = "STATS"
	v2TypeAuthor       = "author"
	v2TypeCategory     = "category"
	v2TypeAuthorSlug   = "authorSlug"
	// v2SlugCandidates and v2MaxSlugLength are how many slugs an author's
	// name gave, and how long one could be.
	v2SlugCandidates = 10
	v2MaxSlugLength  = 100
)

func v2AuthorKey(id string) key { return key{PK: v2AuthorPrefix + id, SK: v2AuthorPrefix + id} }

func v2AuthorSlugKey(slug string) key {
	return key{PK: v2AuthorSlugPrefix + slug, SK: v2AuthorSlugPrefix + slug}
}

// v2Author is what this step reads of an author.
type v2Author struct {
	Name    string `dynamodbav:"name"`
	Slug    string `dynamodbav:"slug"`
	Version int64  `dynamodbav:"version"`
	NameVer int64  `dynamodbav:"nameVer"`
}

// v2AuthorSlug is an author's slug reservation.
type v2AuthorSlug struct {
	PK       string `dynamodbav:"PK"`
	SK       string `dynamodbav:"SK"`
	Type     string `dynamodbav:"type"`
	AuthorID string `dynamodbav:"authorId"`
}

// v2SlugsFromName returns the slugs an author of name could take, in
// order of preference.
func v2SlugsFromName(name string) []string {
	base := markdown.Slugify(name, v2MaxSlugLength-len("-123456"))
	if base == "" {
		base = "author"
	}
	out := []string{base}
	for i := 2; i < v2SlugCandidates; i++ {
		out = append(out, fmt.Sprintf("%s-%d", base, i))
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return append(out, base+"-"+hex.EncodeToString(b))
}

// v2PickSlug returns the first of candidates that found holds no
// reservation of.
func v2PickSlug(found map[key]item, candidates []string) (string, error) {
	for _, c := range candidates {
		if _, ok := found[v2AuthorSlugKey(c)]; !ok {
			return c, nil
		}
	}
	return "", fmt.Errorf("slugs %s to %s: %w", candidates[0], candidates[len(candidates)-1], ErrSlugTaken)
}

// migrateToLayout2 brings a table of layout 1 to layout 2 (see Migrate)
// and counts what it did in m.
func (s *Store) migrateToLayout2(ctx context.Context, m *Migration) error {
	var mu sync.Mutex
	count := func(n *int, did bool) {
		if did {
			mu.Lock()
			*n++
			mu.Unlock()
		}
	}

	authors, err := s.partitionIDs(ctx, v2Authors, "id")
	if err != nil {
		return fmt.Errorf("migrate: list authors: %w", err)
	}
	// One author after another, oldest first (the order of the AUTHORS
	// partition), so that of two authors of one name the older gets the
	// slug without a number, whatever runs at once.
	for _, id := range authors {
		did, err := s.slugAuthor(ctx, id)
		count(&m.Authors, did)
		if err != nil {
			return err
		}
	}

	var posts []string
	for _, a := range authors {
		ids, err := s.authorPostIDs(ctx, a)
		if err != nil {
			return fmt.Errorf("migrate: list posts of author %q: %w", a, err)
		}
		posts = append(posts, ids...)
	}
	slices.Sort(posts)
	posts = slices.Compact(posts)
	// A post written here takes its author's slug with it; one written by
	// this version before (it has slugs) may carry none, as its author had
	// none then, and has it copied in as a new slug is.
	err = eachLimited(ctx, posts, func(ctx context.Context, id string) error {
		did, rendered, err := s.migratePost(ctx, id)
		count(&m.Posts, did)
		if !rendered {
			mu.Lock()
			m.Unrendered = append(m.Unrendered, id)
			mu.Unlock()
		}
		if err != nil {
			return err
		}
		if !did {
			if err := s.refreshNames(ctx, id); err != nil {
				return fmt.Errorf("migrate post %q: author's slug: %w", id, err)
			}
		}
		n, err := s.migrateComments(ctx, id)
		mu.Lock()
		m.Comments += n
		mu.Unlock()
		return err
	})
	if err != nil {
		return err
	}

	cats, err := s.partitionIDs(ctx, v2Categories, "slug")
	if err != nil {
		return fmt.Errorf("migrate: list categories: %w", err)
	}
	counters := append(mapKeys(authors, v2AuthorKey), mapKeys(cats, func(slug string) key { return key{PK: v2CatPrefix + slug, SK: v2CatPrefix + slug} })...)
	counters = append(counters, key{PK: v2Stats, SK: v2Stats})
	for _, k := range counters {
		did, err := s.tidyCounter(ctx, k)
		count(&m.Counters, did)
		if err != nil {
			return err
		}
	}
	return nil
}

// slugAuthor gives the author id a slug when it has none. It reports
// whether it gave one.
func (s *Store) slugAuthor(ctx context.Context, id string) (bool, error) {
	did, err := dynamo.RetryWrite(ctx, func() (bool, error) {
		var a v2Author
		if err := s.db.Get(ctx, v2AuthorKey(id), true, &a); err != nil {
			if errors.Is(err, ErrNotFound) {
				return false, nil
			}
			return false, fmt.Errorf("author %q: %w", id, err)
		}
		if a.Slug != "" {
			return false, nil
		}
		candidates := v2SlugsFromName(a.Name)
		found, err := s.db.BatchGet(ctx, mapKeys(candidates, v2AuthorSlugKey), true)
		if err != nil {
			return false, err
		}
		slug, err := v2PickSlug(found, candidates)
		if err != nil {
			return false, err
		}
		upd := expression.Set(expression.Name("slug"), expression.Value(slug)).
			Set(expression.Name("slugs"), expression.Value([]string{slug})).
			Set(expression.Name("version"), expression.Value(a.Version+1)).
			Set(expression.Name("nameVer"), expression.Value(a.NameVer+1))
		cond := expression.Name("version").Equal(expression.Value(a.Version)).And(expression.Name("slug").AttributeNotExists())
		k := v2AuthorSlugKey(slug)
		t := s.db.NewTxn()
		if err := t.Update(v2AuthorKey(id), upd, &cond, dynamo.ErrRetry); err != nil {
			return false, err
		}
		res := v2AuthorSlug{PK: k.PK, SK: k.SK, Type: v2TypeAuthorSlug, AuthorID: id}
		if err := t.Put(res, ptr(dynamo.CondNotExists()), ErrSlugTaken); err != nil {
			return false, err
		}
		if err := s.db.Exec(ctx, t); err != nil {
			if errors.Is(err, ErrSlugTaken) {
				// Taken meanwhile: the next candidate.
				return false, dynamo.ErrRetry
			}
			return false, err
		}
		return true, nil
	})
	if err != nil {
		return false, fmt.Errorf("migrate author %q: %w", id, err)
	}
	return did, nil
}

// migratePost writes the post id in the current layout when it has no
// slugs. It reports whether it did, and whether its body rendered.
func (s *Store) migratePost(ctx context.Context, id string) (did, rendered bool, err error) {
	rendered = true
	did, err = dynamo.RetryWrite(ctx, func() (bool, error) {
		before, r, err := s.readPost(ctx, id, nil, "", true, true, moreNames{})
		switch {
		case errors.Is(err, ErrNotFound):
			return false, nil
		case err != nil:
			return false, err
		case len(before.Slugs) > 0:
			return false, nil
		}
		after := *before
		after.Cats = slices.Clone(before.Cats)
		after.Slugs = []string{before.Slug}
		if after.HTML == "" && after.Body != "" {
			switch err := after.derive(ctx, s.render); {
			case errors.Is(err, ErrInvalidInput):
				rendered = false
			case err != nil:
				return false, err
			}
		}
		r.keep(before)
		if err := r.setNames(&after, before.catSlugs()); err != nil {
			return false, err
		}
		t := s.db.NewTxn()
		if err := postActions(t, before, &after, r, s.nowKey()); err != nil {
			return false, err
		}
		switch err := s.db.Exec(ctx, t); {
		case errors.Is(err, errStaleNames):
			return false, dynamo.ErrRetry
		case err != nil:
			return false, err
		}
		return true, nil
	})
	if err != nil {
		return false, rendered, fmt.Errorf("migrate post %q: %w", id, err)
	}
	return did, rendered, nil
}

// migrateComments gives the comments of the post id without a version
// version 1, and the top-level ones with replies the copies of their first
// replies. It returns how many comments it wrote.
func (s *Store) migrateComments(ctx context.Context, postID string) (int, error) {
	n := 0
	for _, prefix := range []string{v2CommentPrefix, v2ThreadPrefix} {
		var unversioned []*commentItem
		in, err := s.db.KeyQuery(expression.Key("PK").Equal(expression.Value(v2PostPrefix + postID)).
			And(expression.Key("SK").BeginsWith(prefix)))
		if err != nil {
			return n, err
		}
		err = s.db.QueryAll(ctx, in, func(it item) error {
			c := &commentItem{}
			if err := attributevalue.UnmarshalMap(it, c); err != nil {
				return fmt.Errorf("decode comment: %w", err)
			}
			if c.Version == 0 {
				unversioned = append(unversioned, c)
			}
			return nil
		})
		if err != nil {
			return n, fmt.Errorf("migrate comments of post %q: %w", postID, err)
		}
		for _, c := range unversioned {
			written, err := s.migrateComment(ctx, postID, c)
			n += written
			if err != nil {
				return n, fmt.Errorf("migrate comment %q: %w", c.ID, err)
			}
		}
	}
	return n, nil
}

// migrateComment gives the comment c, as read, version 1, and makes it
// carry its first replies when it has any, giving those version 1 too; a
// comment that has a version by the time of the write (a current write
// reached it first) is left as it is. It returns how many comments it
// wrote.
func (s *Store) migrateComment(ctx context.Context, postID string, c *commentItem) (int, error) {
	return dynamo.RetryWrite(ctx, func() (int, error) {
		if c.Version != 0 {
			return 0, nil
		}
		t := s.db.NewTxn()
		written := 1
		if c.ParentID != "" || c.ReplyCount == 0 {
			err := t.Update(itemKeyOf(c), expression.Set(expression.Name("version"), expression.Value(1)),
				ptr(condCommentVersion(0)), dynamo.ErrRetry)
			if err != nil {
				return 0, err
			}
		} else {
			first, err := s.repliesFrom(ctx, postID, c, nil, MaxReplyPage)
			if err != nil {
				return 0, err
			}
			carrying := *c
			carrying.Replies, carrying.Version = nil, 1
			for _, r := range first {
				carrying.Replies = append(carrying.Replies, r.replyCopy())
				if r.Version == 0 {
					written++
					err = t.Update(itemKeyOf(r), expression.Set(expression.Name("version"), expression.Value(1)),
						ptr(condCommentVersion(0)), dynamo.ErrRetry)
				} else {
					err = t.Check(itemKeyOf(r), condCommentVersion(r.Version), dynamo.ErrRetry)
				}
				if err != nil {
					return 0, err
				}
			}
			if err := t.Put(carrying, ptr(condCommentVersion(0)), dynamo.ErrRetry); err != nil {
				return 0, err
			}
		}
		err := s.db.Exec(ctx, t)
		if errors.Is(err, dynamo.ErrRetry) {
			// Read the comment again: gone, or written meanwhile.
			var again commentItem
			switch gerr := s.db.Get(ctx, itemKeyOf(c), true, &again); {
			case errors.Is(gerr, ErrNotFound):
				c.Version = -1
			case gerr != nil:
				return 0, gerr
			default:
				*c = again
			}
		}
		if err != nil {
			return 0, err
		}
		return written, nil
	})
}

// scheduledKeep is the entry with no time that layout 1 kept in every
// scheduled map.
const scheduledKeep = "-"

// clearedAttrs are, by item type, the optional attributes that layout 1
// kept as empty strings once cleared, and that this layout removes.
var clearedAttrs = map[string][]string{
	v2TypeAuthor:   {"bio", "avatarUrl"},
	v2TypeCategory: {"description"},
}

// tidyCounter removes from the counter k (an author, a category or STATS)
// what layout 1 left in it: the "-" entry of its scheduled map and the
// empty strings of its cleared attributes. The update is conditional on
// each of them being still there as read, and reads again when a write
// came between. It reports whether it changed the item.
func (s *Store) tidyCounter(ctx context.Context, k key) (bool, error) {
	did, err := dynamo.RetryWrite(ctx, func() (bool, error) {
		res, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(s.table), Key: dynamo.MustKey(k), ConsistentRead: aws.Bool(true),
		})
		if err != nil || res.Item == nil {
			return false, err
		}
		it := res.Item
		var head struct {
			Type      string            `dynamodbav:"type"`
			Scheduled map[string]string `dynamodbav:"scheduled"`
		}
		if err := attributevalue.UnmarshalMap(it, &head); err != nil {
			return false, fmt.Errorf("decode: %w", err)
		}
		var (
			upd   expression.UpdateBuilder
			cond  expression.ConditionBuilder
			conds []expression.ConditionBuilder
		)
		if _, ok := head.Scheduled[scheduledKeep]; ok {
			path := expression.Name("scheduled." + scheduledKeep)
			upd = upd.Remove(path)
			conds = append(conds, path.AttributeExists())
		}
		for _, name := range clearedAttrs[head.Type] {
			if v, ok := it[name].(*types.AttributeValueMemberS); ok && v.Value == "" {
				upd = upd.Remove(expression.Name(name))
				conds = append(conds, expression.Name(name).Equal(expression.Value("")))
			}
		}
		switch len(conds) {
		case 0:
			return false, nil
		case 1:
			cond = conds[0]
		default:
			cond = expression.And(conds[0], conds[1], conds[2:]...)
		}
		expr, err := dynamo.BuildExpr(expression.NewBuilder().WithUpdate(upd).WithCondition(cond))
		if err != nil {
			return false, err
		}
		_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(s.table),
			Key:                       dynamo.MustKey(k),
			UpdateExpression:          expr.Update(),
			ConditionExpression:       expr.Condition(),
			ExpressionAttributeNames:  expr.Names(),
			ExpressionAttributeValues: expr.Values(),
		})
		var failed *types.ConditionalCheckFailedException
		if errors.As(err, &failed) {
			// Changed since read (by another migration, or a write that
			// cleared an attribute again): read it again.
			return false, dynamo.ErrRetry
		}
		return err == nil, err
	})
	if err != nil {
		return false, fmt.Errorf("migrate %s: %w", k.PK, err)
	}
	return did, nil
}
