// Package migrations brings a table written by an earlier version of the
// blog to the layout package storage writes today, one layout step at a
// time: v2.go takes layout 1 to 2, v3.go 2 to 3, v4.go 3 to 4, v5.go 4
// to 5 (the blog becomes a publication). The steps before 5 read and
// write the keys of one blog, without a publication's prefix; v5 moves
// what they left under the prefix.
//
// A step is frozen when it ships. It uses only the table primitives
// (storage/internal/dynamo), package markdown to render bodies, and its
// own copies of the item shapes and key builders of its layout, named for
// the step (v2Post, v3PostKey…), never the domain code of package storage:
// a later change of a domain write does not change what an old step does.
// Package storage imports this one, so this one cannot import it back
// (the compiler refuses the cycle), and imports_test.go keeps it to the
// primitives. Where a step meets an item that a later version wrote, it
// leaves it to the caller (Env.Renamed).
//
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
// and schedule item.
//
// Layout 3 has posts that keep their body, its rendering and their
// comment counts on their own item, and the feed in four GSI1 partitions
// (v4.go).
//
// Layout 4 has the blog's items at the partition keys of one blog, with no
// publication prefix (v5.go).
//
// Layout 5 is the one package storage writes (its doc.go, doc_layout.go):
// every item of a publication under "PUB#<id>#", a few global items
// beside them.
package migrations

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/markdown"
	"github.com/blogql/blog/storage/internal/dynamo"
)

const (
	// Current is the version of the layout the last step brings a table to.
	Current = 5
	// unnumbered is the version of a table without a layout item.
	unnumbered = 1
)

// The layout item: its key and type, the same in every layout.
const (
	layoutPartition = "LAYOUT"
	typeLayout      = "layout"
	// keyTimeLayout is the form of times in items and keys, in every
	// layout: fixed width, so string order is time order.
	keyTimeLayout = "2006-01-02T15:04:05.000Z"
)

func layoutKey() key { return key{PK: layoutPartition, SK: layoutPartition} }

// layoutItem records the table's layout version.
type layoutItem struct {
	PK         string `dynamodbav:"PK"`
	SK         string `dynamodbav:"SK"`
	Type       string `dynamodbav:"type"`
	Version    int    `dynamodbav:"version"`
	MigratedAt string `dynamodbav:"migratedAt"`
}

// Env is what the steps work with.
type Env struct {
	// DB is the table.
	DB *dynamo.Table
	// Now is the time: which posts are scheduled, and the layout item's
	// migratedAt.
	Now func() time.Time
	// Render is how bodies are rendered.
	Render markdown.Options
	// Renamed brings the copied names of a post that a later version
	// wrote (one that has slugs) up to date, after the step gave its
	// author a slug: such a post is in a layout later than the step's,
	// which only the caller knows.
	Renamed func(ctx context.Context, postID string) error
	// Publication is the id of the publication the blog of a table of
	// layout 4 or earlier becomes (v5.go).
	Publication string
	// StopAfter, when above 0, stops the layout 5 step after that many
	// pages of its Scan with ErrStopped, as a crash would: tests resume
	// it.
	StopAfter int
	// PageSize, when above 0, is the Limit of the layout 5 step's Scan
	// pages (tests make them small).
	PageSize int
}

// nowKey returns the time in the form of keys.
func (e *Env) nowKey() string { return e.Now().UTC().Format(keyTimeLayout) }

// Result is what Run did; package storage's Migration has its fields.
type Result struct {
	// From is the table's layout version before, To after.
	From, To int
	// Authors got slugs; Posts were written in the current layout with
	// their copies and counted by month; Comments got versions, or their
	// first replies to carry; Counters (authors, categories, STATS) lost
	// the "-" entry of their scheduled map or an empty string attribute.
	Authors, Posts, Comments, Counters int
	// Scheduled posts, written before posts had a go-live marker, got
	// theirs and their schedule item.
	Scheduled int
	// Split posts got their body item and count item, and left the
	// feed's four old partitions for FEED (layout 4).
	Split int
	// Moved items went into the publication (layout 5).
	Moved int
	// Unrendered are the ids of posts whose body renders to more HTML than
	// a post may hold (MaxHTMLBytes): they were migrated without it, and
	// show it once their body is edited.
	Unrendered []string
}

// LayoutVersion returns the version of the table's layout: Current once
// Run has run on it, 1 for a table without a layout item. It costs one
// GetItem and returns the DynamoDB error when that fails.
func LayoutVersion(ctx context.Context, env *Env) (int, error) {
	var it layoutItem
	err := env.DB.Get(ctx, layoutKey(), true, &it)
	switch {
	case errors.Is(err, dynamo.ErrNotFound):
		return unnumbered, nil
	case err != nil:
		return 0, fmt.Errorf("layout version: %w", err)
	}
	return it.Version, nil
}

// Run brings the table to layout Current, step after step from the one it
// is in, then records Current in the layout item (see package storage's
// Store.Migrate for what each step writes, and how it goes beside live
// writes). A table already there costs one GetItem. It returns what it
// did, or the first error, with the layout item unwritten so the next run
// goes on.
func Run(ctx context.Context, env *Env) (*Result, error) {
	from, err := LayoutVersion(ctx, env)
	if err != nil {
		return nil, err
	}
	m := &Result{From: from, To: from}
	if from >= Current {
		return m, nil
	}
	if from < 2 {
		if err := env.v2(ctx, m); err != nil {
			return nil, err
		}
	}
	if from < 3 {
		if m.Scheduled, err = env.v3(ctx); err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
	}
	if from < 4 {
		if err := env.v4(ctx, m); err != nil {
			return nil, err
		}
	}
	if from > unnumbered || env.v5HasBlog(ctx) {
		if err := env.v5(ctx, m); err != nil {
			return nil, err
		}
	} else if err := env.v5Directory(ctx); err != nil {
		return nil, err
	}
	if err := env.setLayout(ctx, Current); err != nil {
		return nil, err
	}
	slices.Sort(m.Unrendered)
	m.To = Current
	return m, nil
}

// setLayout records the layout version v in the layout item, unless it
// holds a later one.
func (e *Env) setLayout(ctx context.Context, v int) error {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name("version"), expression.Value(v)).
			Set(expression.Name("type"), expression.Value(typeLayout)).
			Set(expression.Name("migratedAt"), expression.Value(e.nowKey()))).
		WithCondition(expression.Name("version").AttributeNotExists().
			Or(expression.Name("version").LessThan(expression.Value(v)))))
	if err != nil {
		return err
	}
	_, err = e.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(e.DB.Name()),
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
