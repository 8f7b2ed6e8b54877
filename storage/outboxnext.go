package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// NextOutbox returns when the earliest pending delivery of the Store's
// publication is next due, and false when none is pending: one Query of
// the outbox's GSI1 partition (outbox.go) with Limit 1, which reads one
// item's projection, or nothing. The index is eventually consistent: a
// delivery written a moment ago may be missing, and one just claimed may
// show its time before the claim. The webhooks worker asks it of each
// publication once when it takes its lease, and of a publication after
// its due deliveries were claimed, to know when to look again.
func (s *Store) NextOutbox(ctx context.Context) (time.Time, bool, error) {
	kc := expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.Partition(outboxIndex)))
	proj := expression.NamesList(expression.Name(keys.AttrGSI1SK), expression.Name("nextAttemptAt"))
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(kc).WithProjection(proj))
	if err != nil {
		return time.Time{}, false, err
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String(keys.IndexGSI1), KeyConditionExpression: expr.KeyCondition(),
		ProjectionExpression: expr.Projection(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		Limit: aws.Int32(1),
	})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next outbox delivery: %w", err)
	}
	if len(out.Items) == 0 {
		return time.Time{}, false, nil
	}
	var it struct {
		Next string `dynamodbav:"nextAttemptAt"`
	}
	if err := attributevalue.UnmarshalMap(out.Items[0], &it); err != nil {
		return time.Time{}, false, fmt.Errorf("decode outbox: %w", err)
	}
	return keys.ParseTime(it.Next), true, nil
}
