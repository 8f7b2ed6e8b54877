package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The low-level reads every operation is built on: one item, a batch of
// items, and items read together in one transaction. A batch retries what
// DynamoDB leaves unprocessed and a transaction what meets a conflict,
// both a bounded number of times; all three tell the table's Watcher
// what they saw.

const (
	// batchGetLimit is DynamoDB's limit of keys in one BatchGetItem.
	batchGetLimit = 100
	// MaxBatchAttempts bounds the rounds spent on unprocessed keys or items.
	MaxBatchAttempts = 8
)

// Get reads one item into out; a missing item is ErrNotFound.
func (tb *Table) Get(ctx context.Context, k Key, consistent bool, out any) error {
	res, err := tb.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(tb.name), Key: MustKey(k), ConsistentRead: aws.Bool(consistent),
	})
	if err != nil {
		return fmt.Errorf("get %s: %w", k.PK, err)
	}
	tb.watch.Saw(k, res.Item)
	if res.Item == nil {
		return ErrNotFound
	}
	if err := attributevalue.UnmarshalMap(res.Item, out); err != nil {
		return fmt.Errorf("decode %s: %w", k.PK, err)
	}
	return nil
}

// PutIf puts item (one PutItem) when cond holds of the item it replaces;
// it reports false, and no error, when it does not.
func (tb *Table) PutIf(ctx context.Context, item any, cond expression.ConditionBuilder) (bool, error) {
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		return false, fmt.Errorf("marshal item: %w", err)
	}
	expr, err := BuildExpr(expression.NewBuilder().WithCondition(cond))
	if err != nil {
		return false, err
	}
	_, err = tb.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(tb.name),
		Item:                      av,
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return false, nil
	}
	return err == nil, err
}

// UpdateIf applies upd to the item at k (one UpdateItem) when cond holds
// of it; it reports false, and no error, when it does not.
func (tb *Table) UpdateIf(ctx context.Context, k Key, upd expression.UpdateBuilder, cond expression.ConditionBuilder) (bool, error) {
	expr, err := BuildExpr(expression.NewBuilder().WithUpdate(upd).WithCondition(cond))
	if err != nil {
		return false, err
	}
	_, err = tb.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(tb.name),
		Key:                       MustKey(k),
		UpdateExpression:          expr.Update(),
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("update %s: %w", k.PK, err)
	}
	return true, nil
}

// BatchGet reads keys with as few BatchGetItem calls as DynamoDB allows
// (100 keys each), retrying UnprocessedKeys with backoff. Missing items are
// absent from the result.
func (tb *Table) BatchGet(ctx context.Context, keys []Key, consistent bool) (map[Key]Item, error) {
	found := make(map[Key]Item, len(keys))
	seen := make(map[Key]bool, len(keys))
	var pending []map[string]types.AttributeValue
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			pending = append(pending, MustKey(k))
		}
	}
	defer func() { tb.watch.Remember(keys, found) }()
	for len(pending) > 0 {
		n := min(len(pending), batchGetLimit)
		chunk := pending[:n]
		pending = pending[n:]
		for attempt := 1; len(chunk) > 0; attempt++ {
			out, err := tb.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
				RequestItems: map[string]types.KeysAndAttributes{
					tb.name: {Keys: chunk, ConsistentRead: aws.Bool(consistent)},
				},
			})
			if err != nil {
				return nil, fmt.Errorf("batch get: %w", err)
			}
			for _, it := range out.Responses[tb.name] {
				found[ItemKey(it)] = it
			}
			chunk = out.UnprocessedKeys[tb.name].Keys
			if len(chunk) == 0 {
				break
			}
			if attempt == MaxBatchAttempts {
				return nil, fmt.Errorf("batch get: %d keys still unprocessed: %w", len(chunk), ErrBusy)
			}
			if err := Sleep(ctx, attempt); err != nil {
				return nil, err
			}
		}
	}
	return found, nil
}

// ReadTogether reads keys, at most 100, as they all are at one moment
// (TransactGetItems). An item that a transaction moves from one key to
// another (a comment approved, from held to published) is found at
// exactly one of them, where BatchGetItem, which reads keys one by one,
// can miss it at both. A read that meets a transaction in progress on its
// items is tried again with jittered backoff, and ends in ErrBusy; one
// throttled on every attempt in an error matching ErrUnavailable.
func (tb *Table) ReadTogether(ctx context.Context, keys []Key) (map[Key]Item, error) {
	var gets []types.TransactGetItem
	seen := make(map[Key]bool, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			gets = append(gets, types.TransactGetItem{Get: &types.Get{TableName: aws.String(tb.name), Key: MustKey(k)}})
		}
	}
	for attempt := 1; ; attempt++ {
		out, err := tb.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: gets})
		if err == nil {
			found := make(map[Key]Item, len(keys))
			for _, r := range out.Responses {
				if len(r.Item) > 0 {
					found[ItemKey(r.Item)] = r.Item
				}
			}
			tb.watch.Remember(keys, found)
			return found, nil
		}
		canceled, ok := errors.AsType[*types.TransactionCanceledException](err)
		throttled := ok && HasReason(canceled.CancellationReasons, ThrottledReasons...)
		switch {
		case !ok || !throttled && !HasReason(canceled.CancellationReasons, "TransactionConflict"):
			return nil, fmt.Errorf("transact get: %w", err)
		case attempt == maxTxAttempts && throttled:
			return nil, fmt.Errorf("read throttled on every attempt: %w", errors.Join(ErrUnavailable, err))
		case attempt == maxTxAttempts:
			return nil, ErrBusy
		}
		if err := Sleep(ctx, attempt); err != nil {
			return nil, err
		}
	}
}

// ItemKey returns the key of it.
func ItemKey(it Item) Key {
	var k Key
	_ = attributevalue.UnmarshalMap(it, &k)
	return k
}

// BatchDecode reads keys and decodes each found item with conv, in key
// order; a missing item gets ErrNotFound in its slot.
func BatchDecode[T any, I any](ctx context.Context, tb *Table, keys []Key, conv func(*I) T) ([]T, []error) {
	out := make([]T, len(keys))
	errs := make([]error, len(keys))
	found, err := tb.BatchGet(ctx, keys, false)
	for i, k := range keys {
		switch it, ok := found[k]; {
		case err != nil:
			errs[i] = err
		case !ok:
			errs[i] = ErrNotFound
		default:
			var v I
			if derr := attributevalue.UnmarshalMap(it, &v); derr != nil {
				errs[i] = fmt.Errorf("decode %s: %w", k.PK, derr)
				continue
			}
			out[i] = conv(&v)
		}
	}
	return out, errs
}

// DecodeFound decodes the item of found under k into out; a missing one
// is ErrNotFound.
func DecodeFound(found map[Key]Item, k Key, out any) error {
	it, ok := found[k]
	if !ok {
		return ErrNotFound
	}
	return attributevalue.UnmarshalMap(it, out)
}

// QueryAll runs the Query in page by page, following LastEvaluatedKey,
// and calls f with every item, in order. It stops at the first error.
func (tb *Table) QueryAll(ctx context.Context, in *dynamodb.QueryInput, f func(Item) error) error {
	pages := dynamodb.NewQueryPaginator(tb, in)
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

// KeyQuery returns the Query of the key condition cond on the table, with
// ConsistentRead, for QueryAll.
func (tb *Table) KeyQuery(cond expression.KeyConditionBuilder) (*dynamodb.QueryInput, error) {
	expr, err := BuildExpr(expression.NewBuilder().WithKeyCondition(cond))
	if err != nil {
		return nil, err
	}
	return &dynamodb.QueryInput{
		TableName:                 aws.String(tb.name),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ConsistentRead:            aws.Bool(true),
	}, nil
}
