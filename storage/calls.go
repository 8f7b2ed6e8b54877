package storage

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
// both a bounded number of times; all three tell the hints what they saw,
// so that the next comment write can skip its read.

const (
	// batchGetLimit is DynamoDB's limit of keys in one BatchGetItem.
	batchGetLimit = 100
	// maxBatchAttempts bounds the rounds spent on UnprocessedKeys.
	maxBatchAttempts = 8
)

type item = map[string]types.AttributeValue

// getItem reads one item; a missing item is ErrNotFound.
func (s *Store) getItem(ctx context.Context, k key, consistent bool, out any) error {
	res, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: mustKey(k), ConsistentRead: aws.Bool(consistent),
	})
	if err != nil {
		return fmt.Errorf("get %s: %w", k.PK, err)
	}
	s.hints.saw(k, res.Item)
	if res.Item == nil {
		return ErrNotFound
	}
	if err := attributevalue.UnmarshalMap(res.Item, out); err != nil {
		return fmt.Errorf("decode %s: %w", k.PK, err)
	}
	return nil
}

// putIf puts item (one PutItem) when cond holds of the item it replaces;
// it reports false, and no error, when it does not.
func (s *Store) putIf(ctx context.Context, item any, cond expression.ConditionBuilder) (bool, error) {
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		return false, fmt.Errorf("marshal item: %w", err)
	}
	expr, err := buildExpr(expression.NewBuilder().WithCondition(cond))
	if err != nil {
		return false, err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(s.table),
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

// updateIf applies upd to the item at k (one UpdateItem) when cond holds
// of it; it reports false, and no error, when it does not.
func (s *Store) updateIf(ctx context.Context, k key, upd expression.UpdateBuilder, cond expression.ConditionBuilder) (bool, error) {
	expr, err := buildExpr(expression.NewBuilder().WithUpdate(upd).WithCondition(cond))
	if err != nil {
		return false, err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       mustKey(k),
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

// batchGet reads keys with as few BatchGetItem calls as DynamoDB allows
// (100 keys each), retrying UnprocessedKeys with backoff. Missing items are
// absent from the result.
func (s *Store) batchGet(ctx context.Context, keys []key, consistent bool) (map[key]item, error) {
	found := make(map[key]item, len(keys))
	seen := make(map[key]bool, len(keys))
	var pending []map[string]types.AttributeValue
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			pending = append(pending, mustKey(k))
		}
	}
	defer func() { s.hints.remember(keys, found) }()
	for len(pending) > 0 {
		n := min(len(pending), batchGetLimit)
		chunk := pending[:n]
		pending = pending[n:]
		for attempt := 1; len(chunk) > 0; attempt++ {
			out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
				RequestItems: map[string]types.KeysAndAttributes{
					s.table: {Keys: chunk, ConsistentRead: aws.Bool(consistent)},
				},
			})
			if err != nil {
				return nil, fmt.Errorf("batch get: %w", err)
			}
			for _, it := range out.Responses[s.table] {
				found[itemKey(it)] = it
			}
			chunk = out.UnprocessedKeys[s.table].Keys
			if len(chunk) == 0 {
				break
			}
			if attempt == maxBatchAttempts {
				return nil, fmt.Errorf("batch get: %d keys still unprocessed: %w", len(chunk), ErrBusy)
			}
			if err := sleep(ctx, attempt); err != nil {
				return nil, err
			}
		}
	}
	return found, nil
}

// readTogether reads keys, at most 100, as they all are at one moment
// (TransactGetItems). An item that a transaction moves from one key to
// another (a comment approved, from held to published) is found at
// exactly one of them, where BatchGetItem, which reads keys one by one,
// can miss it at both. A read that meets a transaction in progress on its
// items is tried again with jittered backoff, and ends in ErrBusy; one
// throttled on every attempt in an error matching ErrUnavailable.
func (s *Store) readTogether(ctx context.Context, keys []key) (map[key]item, error) {
	var gets []types.TransactGetItem
	seen := make(map[key]bool, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			gets = append(gets, types.TransactGetItem{Get: &types.Get{TableName: aws.String(s.table), Key: mustKey(k)}})
		}
	}
	for attempt := 1; ; attempt++ {
		out, err := s.db.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: gets})
		if err == nil {
			found := make(map[key]item, len(keys))
			for _, r := range out.Responses {
				if len(r.Item) > 0 {
					found[itemKey(r.Item)] = r.Item
				}
			}
			s.hints.remember(keys, found)
			return found, nil
		}
		canceled, ok := errors.AsType[*types.TransactionCanceledException](err)
		throttled := ok && hasReason(canceled.CancellationReasons, throttledReasons...)
		switch {
		case !ok || !throttled && !hasReason(canceled.CancellationReasons, "TransactionConflict"):
			return nil, fmt.Errorf("transact get: %w", err)
		case attempt == maxTxAttempts && throttled:
			return nil, fmt.Errorf("read throttled on every attempt: %w", errors.Join(ErrUnavailable, err))
		case attempt == maxTxAttempts:
			return nil, ErrBusy
		}
		if err := sleep(ctx, attempt); err != nil {
			return nil, err
		}
	}
}

func itemKey(it item) key {
	var k key
	_ = attributevalue.UnmarshalMap(it, &k)
	return k
}

// batchDecode reads keys and decodes each found item with conv, in key
// order; a missing item gets ErrNotFound in its slot.
func batchDecode[T any, I any](ctx context.Context, s *Store, keys []key, conv func(*I) T) ([]T, []error) {
	out := make([]T, len(keys))
	errs := make([]error, len(keys))
	found, err := s.batchGet(ctx, keys, false)
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

func decodeFound(found map[key]item, k key, out any) error {
	it, ok := found[k]
	if !ok {
		return ErrNotFound
	}
	return attributevalue.UnmarshalMap(it, out)
}

func mapKeys(ids []string, f func(string) key) []key {
	keys := make([]key, len(ids))
	for i, id := range ids {
		keys[i] = f(id)
	}
	return keys
}
