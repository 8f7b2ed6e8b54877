package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// Layout versions of the table. The layout item (LAYOUT) holds the version
// of the layout the table was brought to; a table without one was written
// by the version before layouts had numbers, or is new.
//
// Layout 1 (no layout item) has authors without slug, slugs and author
// slug reservations; posts and their copies without authorSlug, the
// rendered body, its table of contents, word count, reading time, derived
// excerpt and slugs; counters without month attributes and with a
// scheduled map that may hold an entry "-"; a cleared bio, avatarUrl or
// category description kept as an empty string; comments without versions, and
// top-level comments that do not carry their first replies.
//
// Layout 2 has scheduled posts without their go-live marker (goLiveAt)
// and schedule item (schedule.go).
//
// Layout 3 has posts that keep their body, its rendering and their
// comment counts on their own item, and the feed in four GSI1 partitions
// (migrate4.go).
//
// Layout 4 is the one this package writes (doc.go, doc_layout.go).
const (
	// CurrentLayout is the version of the layout this package writes.
	CurrentLayout = 4
	// layoutUnnumbered is the version of a table without a layout item.
	layoutUnnumbered = 1
)

// migrateConcurrency bounds the authors, posts or comments brought to the
// current layout at once.
const migrateConcurrency = 4

// layoutItem records the table's layout version.
type layoutItem struct {
	PK         string `dynamodbav:"PK"`
	SK         string `dynamodbav:"SK"`
	Type       string `dynamodbav:"type"`
	Version    int    `dynamodbav:"version"`
	MigratedAt string `dynamodbav:"migratedAt"`
}

// LayoutVersion returns the version of the table's layout: CurrentLayout
// once Migrate has run on it, 1 for a table without a layout item. It
// costs one GetItem and returns the DynamoDB error when that fails.
func (s *Store) LayoutVersion(ctx context.Context) (int, error) {
	var it layoutItem
	err := s.db.Get(ctx, layoutKey(), true, &it)
	switch {
	case errors.Is(err, ErrNotFound):
		return layoutUnnumbered, nil
	case err != nil:
		return 0, fmt.Errorf("layout version: %w", err)
	}
	return it.Version, nil
}

// Migrate brings a table written by an earlier version to the current
// layout, then records CurrentLayout in the layout item. A table already
// there costs one GetItem. Otherwise it reads the table by Queries (no
// Scan: the server's IAM policy has none) and writes what is missing:
//
//   - an author without a slug gets one from its name, as CreateAuthor
//     makes one, with its reservation, in one transaction that counts as
//     an edit of the author (its version and nameVer grow); authors go
//     one after another, oldest first, so of two of one name the older
//     gets the slug without a number;
//   - a post without slugs (no version of the current layout ever wrote
//     it) is written again with its copies in one transaction, as an
//     edit that changes nothing would be, but without a new version or
//     updatedAt: with its slugs, its author's slug, what is derived from
//     its body, and, when published, one more post in its month on its
//     author, its categories and STATS. Writes of the current version
//     count a post by month only once it has slugs (see
//     counterChanges), so the months are exact whatever they do
//     meanwhile. A post that has slugs already (this version wrote it)
//     gets its author's slug copied in, as a new slug is, when it has
//     not;
//   - a comment without a version gets version 1, and a top-level one
//     with replies the copies of its first MaxReplyPage replies, in one
//     transaction with checks that none of them changed;
//   - the "-" entry of a scheduled map goes, and so do the empty strings
//     layout 1 left for a cleared bio, avatarUrl or description;
//   - a post scheduled after now without a go-live marker (layouts 1 and
//     2) gets its marker and its schedule item, in one transaction
//     conditional on the post as read, without a new version; the posts
//     are found among the author copies sorted after now, so a table of
//     layout 2 costs a Query per author and little more.
//
// Every write is conditional on what was read, and one that meets a
// change made meanwhile reads again, so Migrate is safe beside live
// writes and beside other servers migrating the same table, and may be
// stopped at any point and run again: what was done is found done. It
// needs every server of the previous version stopped, as they write the
// old layout. It returns what it did, or the first error, with the
// layout item unwritten so the next run goes on.
func (s *Store) Migrate(ctx context.Context) (*Migration, error) {
	from, err := s.LayoutVersion(ctx)
	if err != nil {
		return nil, err
	}
	m := &Migration{From: from, To: from}
	if from >= CurrentLayout {
		return m, nil
	}
	if from < 2 {
		if err := s.migrateToLayout2(ctx, m); err != nil {
			return nil, err
		}
	}
	if from < 3 {
		if m.Scheduled, err = s.markScheduled(ctx); err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
	}
	if err := s.splitPosts(ctx, m); err != nil {
		return nil, err
	}
	if err := s.setLayout(ctx, CurrentLayout); err != nil {
		return nil, err
	}
	slices.Sort(m.Unrendered)
	m.To = CurrentLayout
	return m, nil
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

	authors, err := s.partitionIDs(ctx, authorsPartition, "id")
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

	cats, err := s.partitionIDs(ctx, categoriesPartition, "slug")
	if err != nil {
		return fmt.Errorf("migrate: list categories: %w", err)
	}
	counters := append(mapKeys(authors, authorKey), mapKeys(cats, categoryKey)...)
	counters = append(counters, statsItemKey())
	for _, k := range counters {
		did, err := s.tidyCounter(ctx, k)
		count(&m.Counters, did)
		if err != nil {
			return err
		}
	}
	return nil
}

// eachLimited runs f for every id, migrateConcurrency at a time, and
// returns the first error.
func eachLimited(ctx context.Context, ids []string, f func(context.Context, string) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(migrateConcurrency)
	for _, id := range ids {
		g.Go(func() error { return f(gctx, id) })
	}
	return g.Wait()
}

// partitionIDs returns the attribute attr of every item of the GSI1
// partition pk: the ids of all authors, the slugs of all categories.
func (s *Store) partitionIDs(ctx context.Context, pk, attr string) ([]string, error) {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().
		WithKeyCondition(expression.Key(attrGSI1PK).Equal(expression.Value(pk))).
		WithProjection(expression.NamesList(expression.Name(attr))))
	if err != nil {
		return nil, err
	}
	pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(indexGSI1),
		KeyConditionExpression:    expr.KeyCondition(),
		ProjectionExpression:      expr.Projection(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	var out []string
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		var rows []map[string]string
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &rows); err != nil {
			return nil, err
		}
		for _, r := range rows {
			out = append(out, r[attr])
		}
	}
	return out, nil
}

// slugAuthor gives the author id a slug when it has none. It reports
// whether it gave one.
func (s *Store) slugAuthor(ctx context.Context, id string) (bool, error) {
	did, err := dynamo.RetryWrite(ctx, func() (bool, error) {
		var a authorItem
		if err := s.db.Get(ctx, authorKey(id), true, &a); err != nil {
			if errors.Is(err, ErrNotFound) {
				return false, nil
			}
			return false, fmt.Errorf("author %q: %w", id, err)
		}
		if a.Slug != "" {
			return false, nil
		}
		candidates := slugsFromName(a.Name)
		found, err := s.db.BatchGet(ctx, mapKeys(candidates, authorSlugKey), true)
		if err != nil {
			return false, err
		}
		slug, _, err := pickSlug(found, candidates, false)
		if err != nil {
			return false, err
		}
		upd := expression.Set(expression.Name("slug"), expression.Value(slug)).
			Set(expression.Name("slugs"), expression.Value([]string{slug})).
			Set(expression.Name("version"), expression.Value(a.Version+1)).
			Set(expression.Name("nameVer"), expression.Value(a.NameVer+1))
		cond := condVersion(a.Version).And(expression.Name("slug").AttributeNotExists())
		t := s.db.NewTxn()
		err = firstErr(
			t.Update(authorKey(id), upd, &cond, dynamo.ErrRetry),
			authorSlugs.moveSlug(t, id, nil, []string{slug}, nil),
		)
		if err != nil {
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
	for _, prefix := range []string{prefixComment, prefixThread} {
		var unversioned []*commentItem
		err := s.queryAll(ctx, expression.Key(attrPK).Equal(expression.Value(prefixPost+postID)).
			And(expression.Key(attrSK).BeginsWith(prefix)), func(it item) error {
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

// queryAll runs the Query of the key condition cond on the table with
// ConsistentRead, page by page, and calls f with every item.
func (s *Store) queryAll(ctx context.Context, cond expression.KeyConditionBuilder, f func(item) error) error {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(cond))
	if err != nil {
		return err
	}
	pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ConsistentRead:            aws.Bool(true),
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			if err := f(it); err != nil {
				return err
			}
		}
	}
	return nil
}

// scheduledKeep is the entry with no time that layout 1 kept in every
// scheduled map.
const scheduledKeep = "-"

// clearedAttrs are, by item type, the optional attributes that layout 1
// kept as empty strings once cleared, and that this layout removes.
var clearedAttrs = map[string][]string{
	typeAuthor:   {"bio", "avatarUrl"},
	typeCategory: {"description"},
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
			path := scheduledPath(scheduledKeep)
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

// setLayout records the layout version v in the layout item, unless it
// holds a later one.
func (s *Store) setLayout(ctx context.Context, v int) error {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name("version"), expression.Value(v)).
			Set(expression.Name("type"), expression.Value(typeLayout)).
			Set(expression.Name("migratedAt"), expression.Value(s.nowKey()))).
		WithCondition(expression.Name("version").AttributeNotExists().
			Or(expression.Name("version").LessThan(expression.Value(v)))))
	if err != nil {
		return err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       dynamo.MustKey(layoutKey()),
		UpdateExpression:          expr.Update(),
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	var failed *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &failed) {
		return fmt.Errorf("record layout %d: %w", v, err)
	}
	return nil
}
