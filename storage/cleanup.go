package storage

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

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Cleanup after a deleted post: its comments can outnumber a
// transaction's 100 actions, so they are removed after it, in batches,
// once no reader can reach them.

// cleanupTimeout bounds the removal of a deleted post's comments.
const cleanupTimeout = time.Minute

// deleteComments removes every comment and reply of a deleted post,
// published or held, and the admins' queue entries of the pending ones,
// its revisions, and its views, popular entries and reactions, 25 at a
// time, retrying unprocessed items.
func (s *Store) deleteComments(ctx context.Context, postID string) error {
	prefixes := append([]string{keys.PrefixComment, keys.PrefixThread, keys.PrefixHeld, keys.PrefixRevision}, keys.PostEngagementPrefixes...)
	for _, prefix := range prefixes {
		expr, err := dynamo.BuildExpr(expression.NewBuilder().
			WithKeyCondition(expression.Key(keys.AttrPK).Equal(expression.Value(s.ks.Post(postID).PK)).
				And(expression.Key(keys.AttrSK).BeginsWith(prefix))).
			WithProjection(expression.NamesList(expression.Name(keys.AttrPK), expression.Name(keys.AttrSK))))
		if err != nil {
			return err
		}
		pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			KeyConditionExpression:    expr.KeyCondition(),
			ProjectionExpression:      expr.Projection(),
			ExpressionAttributeNames:  expr.Names(),
			ExpressionAttributeValues: expr.Values(),
			ConsistentRead:            aws.Bool(true),
		})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return err
			}
			items := page.Items
			if prefix == keys.PrefixHeld {
				items = withQueueEntries(s.ks, postID, items)
			}
			for chunk := range slices.Chunk(items, 25) {
				if err := s.batchDelete(ctx, chunk); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// withQueueEntries returns the keys of held comments of postID with the
// keys of their entries in the admins' queue, which only pending ones
// have; deleting a key that holds nothing is harmless.
func withQueueEntries(ks keys.Space, postID string, held []item) []item {
	out := slices.Clone(held)
	for _, it := range held {
		if k, ok := ks.QueueEntryOfHeld(postID, dynamo.ItemKey(it).SK); ok {
			out = append(out, dynamo.MustKey(k))
		}
	}
	return out
}

func (s *Store) batchDelete(ctx context.Context, ks []item) error {
	reqs := make([]types.WriteRequest, len(ks))
	for i, k := range ks {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}}
	}
	for attempt := 1; len(reqs) > 0; attempt++ {
		out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]types.WriteRequest{s.table: reqs},
		})
		var conflict *types.TransactionConflictException
		switch {
		case errors.As(err, &conflict):
			// A transaction on one of the comments is under way (one that
			// read the post before it went, and will fail): all again.
		case err != nil:
			return fmt.Errorf("batch delete: %w", err)
		default:
			reqs = out.UnprocessedItems[s.table]
		}
		if len(reqs) > 0 {
			if attempt == dynamo.MaxBatchAttempts {
				return ErrBusy
			}
			if err := dynamo.Sleep(ctx, attempt); err != nil {
				return err
			}
		}
	}
	return nil
}
