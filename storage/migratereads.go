package storage

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"golang.org/x/sync/errgroup"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// What the layout steps share: the ids listed in a GSI1 partition, and a
// bounded parallel loop. They use the primitives alone, and are frozen as
// the steps are: a step that needs them otherwise gets its own copy.

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
func (s *Store) partitionIDs(ctx context.Context, pk, attr string) ([]string, error) {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().
		WithKeyCondition(expression.Key("GSI1PK").Equal(expression.Value(pk))).
		WithProjection(expression.NamesList(expression.Name(attr))))
	if err != nil {
		return nil, err
	}
	pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String("GSI1"),
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
