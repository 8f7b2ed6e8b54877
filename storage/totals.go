package storage

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Totals of lists that keep no counter: an author's drafts and the
// moderation queues. Each is a Query of the list's partition with Select
// COUNT: one request while the partition holds less than 1 MB (DynamoDB
// counts what a 1 MB page of items holds, so a partition past it takes a
// request per MB), read units as for the items, and no item in the
// answer. The GraphQL layer asks only when totalCount is selected.

// CountDrafts returns the number of drafts of the author authorID.
func (s *Store) CountDrafts(ctx context.Context, authorID string) (int64, error) {
	return s.count(ctx, "drafts of "+authorID, true,
		expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.DraftPartition(authorID))))
}

// CountPending returns the number of comments in the moderation queue of
// the author authorID, or in the admins' queue of the whole blog when
// authorID is empty.
func (s *Store) CountPending(ctx context.Context, authorID string) (int64, error) {
	if authorID == "" {
		return s.count(ctx, "queue", false, expression.Key(keys.AttrPK).Equal(expression.Value(s.ks.Partition(keys.QueuePartition))))
	}
	return s.count(ctx, "queue of "+authorID, true,
		expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.AuthorQueue(authorID))))
}

// count counts the items of one partition of the table or of GSI1.
func (s *Store) count(ctx context.Context, what string, index bool, cond expression.KeyConditionBuilder) (int64, error) {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(cond))
	if err != nil {
		return 0, err
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		Select:                    types.SelectCount,
	}
	if index {
		in.IndexName = aws.String(keys.IndexGSI1)
	}
	var n int64
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return 0, fmt.Errorf("count %s: %w", what, err)
		}
		n += int64(out.Count)
		if out.LastEvaluatedKey == nil {
			return n, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
