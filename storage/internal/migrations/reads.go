package migrations

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"golang.org/x/sync/errgroup"

	"github.com/blogql/blog/markdown"
	"github.com/blogql/blog/storage/internal/dynamo"
)

// What the layout steps share: the ids listed in a partition, and a
// bounded parallel loop. They use the primitives alone, and are frozen as
// the steps are: a step that needs them otherwise gets its own copy.

type (
	key  = dynamo.Key
	item = dynamo.Item
)

// migrateConcurrency bounds the authors, posts or comments brought to the
// current layout at once.
const migrateConcurrency = 4

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
func (e *Env) partitionIDs(ctx context.Context, pk, attr string) ([]string, error) {
	return e.queryAttr(ctx, true, expression.Key("GSI1PK").Equal(expression.Value(pk)), attr)
}

// queryAttr returns the attribute attr of every item the key condition
// cond finds, on GSI1 with index, else on the table (eventually
// consistent either way).
func (e *Env) queryAttr(ctx context.Context, index bool, cond expression.KeyConditionBuilder, attr string) ([]string, error) {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().
		WithKeyCondition(cond).
		WithProjection(expression.NamesList(expression.Name(attr))))
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(e.DB.Name()),
		KeyConditionExpression:    expr.KeyCondition(),
		ProjectionExpression:      expr.Projection(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	}
	if index {
		in.IndexName = aws.String("GSI1")
	}
	pages := dynamodb.NewQueryPaginator(e.DB, in)
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

func ptr[T any](v T) *T { return &v }

func mapKeys(ids []string, f func(string) key) []key {
	keys := make([]key, len(ids))
	for i, id := range ids {
		keys[i] = f(id)
	}
	return keys
}

// tocEntry is a heading of a post's table of contents, as every layout
// since 2 keeps it.
type tocEntry struct {
	Level  int    `dynamodbav:"level"`
	Text   string `dynamodbav:"text"`
	Anchor string `dynamodbav:"anchor"`
}

// derived is what a step derives from a post's body: its HTML, table of
// contents, word count, reading time, the excerpt shown when none was
// written, and the renderer's version.
type derived struct {
	HTML          string
	TOC           []tocEntry
	Words         int
	Minutes       int
	AutoExcerpt   string
	RenderVersion string
}

// errUnrendered says a body passes one of package markdown's limits: the
// post is migrated without its rendering (Result.Unrendered).
var errUnrendered = errors.New("body does not render")

// derive renders body with e.Render. It fails with errUnrendered when the
// body passes one of package markdown's limits, and with ctx's error when
// ctx ends first.
func (e *Env) derive(ctx context.Context, body string) (*derived, error) {
	doc, err := markdown.Render(ctx, body, e.Render)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return nil, fmt.Errorf("render body: %w", err)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", errUnrendered, err)
	}
	d := &derived{HTML: doc.HTML, Words: doc.Words, Minutes: doc.ReadingMinutes, AutoExcerpt: doc.Excerpt,
		RenderVersion: e.Render.Version()}
	for _, h := range doc.TOC {
		d.TOC = append(d.TOC, tocEntry(h))
	}
	return d, nil
}
