package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
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
	err := s.db.Get(ctx, keys.Layout(), true, &it)
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
		Key:                       dynamo.MustKey(keys.Layout()),
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
