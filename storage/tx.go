package storage

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Internal outcomes of a cancelled transaction that callers turn into a
// retry or a domain error.
var (
	// errRetry means state read before the transaction changed under it;
	// the caller reads again and rebuilds the transaction.
	errRetry = errors.New("state changed during write")
	// errIdempotencyUsed means the idempotency record already exists.
	errIdempotencyUsed = errors.New("idempotency key used")
)

const (
	maxTxAttempts    = 6
	maxWriteAttempts = 8
)

// txn collects the actions of one TransactWriteItems. onFail[i] is what a
// failed condition on action i means to the caller.
type txn struct {
	table  string
	items  []types.TransactWriteItem
	onFail []error
	// reasons are the cancellation reasons of the last attempt that
	// failed a condition, in action order.
	reasons []types.CancellationReason
}

func (s *Store) newTxn() *txn { return &txn{table: s.table} }

func buildExpr(b expression.Builder) (expression.Expression, error) {
	expr, err := b.Build()
	if err != nil {
		return expr, fmt.Errorf("build expression: %w", err)
	}
	return expr, nil
}

func (t *txn) put(item any, cond *expression.ConditionBuilder, onFail error) error {
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		return fmt.Errorf("marshal item: %w", err)
	}
	p := &types.Put{TableName: aws.String(t.table), Item: av}
	if cond != nil {
		expr, err := buildExpr(expression.NewBuilder().WithCondition(*cond))
		if err != nil {
			return err
		}
		p.ConditionExpression = expr.Condition()
		p.ExpressionAttributeNames = expr.Names()
		p.ExpressionAttributeValues = expr.Values()
	}
	t.items = append(t.items, types.TransactWriteItem{Put: p})
	t.onFail = append(t.onFail, onFail)
	return nil
}

func (t *txn) update(k key, upd expression.UpdateBuilder, cond *expression.ConditionBuilder, onFail error) error {
	b := expression.NewBuilder().WithUpdate(upd)
	if cond != nil {
		b = b.WithCondition(*cond)
	}
	expr, err := buildExpr(b)
	if err != nil {
		return err
	}
	t.items = append(t.items, types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(t.table),
		Key:                       mustKey(k),
		UpdateExpression:          expr.Update(),
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	}})
	t.onFail = append(t.onFail, onFail)
	return nil
}

func (t *txn) delete(k key, cond *expression.ConditionBuilder, onFail error) error {
	d := &types.Delete{TableName: aws.String(t.table), Key: mustKey(k)}
	if cond != nil {
		expr, err := buildExpr(expression.NewBuilder().WithCondition(*cond))
		if err != nil {
			return err
		}
		d.ConditionExpression = expr.Condition()
		d.ExpressionAttributeNames = expr.Names()
		d.ExpressionAttributeValues = expr.Values()
	}
	t.items = append(t.items, types.TransactWriteItem{Delete: d})
	t.onFail = append(t.onFail, onFail)
	return nil
}

func (t *txn) check(k key, cond expression.ConditionBuilder, onFail error) error {
	expr, err := buildExpr(expression.NewBuilder().WithCondition(cond))
	if err != nil {
		return err
	}
	t.items = append(t.items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:                 aws.String(t.table),
		Key:                       mustKey(k),
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	}})
	t.onFail = append(t.onFail, onFail)
	return nil
}

// exec runs the transaction. A cancellation for a failed condition returns
// the onFail error of that action (the idempotency record's first, as it
// explains every other failure). Transaction conflicts with concurrent
// writers, and a transaction with the same token still in progress, are
// retried with jittered backoff and end in ErrBusy; a transaction that
// DynamoDB cancelled for throttling is retried the same way and ends in an
// error matching ErrUnavailable.
func (s *Store) exec(ctx context.Context, t *txn) error {
	in := &dynamodb.TransactWriteItemsInput{TransactItems: t.items, ClientRequestToken: aws.String(randomHex(32))}
	for attempt := 1; ; attempt++ {
		_, err := s.db.TransactWriteItems(ctx, in)
		if err == nil {
			s.hints.wrote(t)
			return nil
		}
		var (
			canceled   *types.TransactionCanceledException
			mismatch   *types.IdempotentParameterMismatchException
			inProgress *types.TransactionInProgressException
			throttled  bool
		)
		switch {
		case errors.As(err, &canceled):
			if failed := t.failure(canceled.CancellationReasons); failed != nil {
				t.reasons = canceled.CancellationReasons
				s.hints.learn(t)
				return failed
			}
			throttled = hasReason(canceled.CancellationReasons, throttledReasons...)
			if !throttled && !hasReason(canceled.CancellationReasons, "TransactionConflict") {
				return fmt.Errorf("transaction canceled: %w", err)
			}
		case errors.As(err, &mismatch):
			// Each transaction has a token of its own, so this is another
			// transaction's token: idempotent reads the record again, and
			// writes again while there is none.
			return errIdempotencyUsed
		case errors.As(err, &inProgress):
			// The same transaction, sent again by the SDK after a lost
			// answer, is still running: its token asks DynamoDB for its
			// outcome, so it is kept.
		default:
			return fmt.Errorf("transact write: %w", err)
		}
		if !errors.As(err, &inProgress) {
			// The transaction was refused as a whole: sent again, it is
			// another transaction, with a token of its own.
			in.ClientRequestToken = aws.String(randomHex(32))
		}
		if attempt == maxTxAttempts {
			if throttled {
				return fmt.Errorf("transaction throttled on every attempt: %w", errors.Join(ErrUnavailable, err))
			}
			return ErrBusy
		}
		if err := sleep(ctx, attempt); err != nil {
			return err
		}
	}
}

// returnOld makes every action of t with a condition return the item as
// it is when its condition fails (ReturnValuesOnConditionCheckFailure
// ALL_OLD), in the cancellation reasons: a write built from what it
// remembered learns what changed without reading it.
func (t *txn) returnOld() {
	const old = types.ReturnValuesOnConditionCheckFailureAllOld
	for _, a := range t.items {
		switch {
		case a.Put != nil && a.Put.ConditionExpression != nil:
			a.Put.ReturnValuesOnConditionCheckFailure = old
		case a.Update != nil && a.Update.ConditionExpression != nil:
			a.Update.ReturnValuesOnConditionCheckFailure = old
		case a.Delete != nil && a.Delete.ConditionExpression != nil:
			a.Delete.ReturnValuesOnConditionCheckFailure = old
		case a.ConditionCheck != nil:
			a.ConditionCheck.ReturnValuesOnConditionCheckFailure = old
		}
	}
}

// throttledReasons are the cancellation reasons of a transaction that
// DynamoDB refused for capacity: the same transaction can pass later.
var throttledReasons = []string{"ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded"}

func (t *txn) failure(reasons []types.CancellationReason) error {
	var first error
	for i, r := range reasons {
		if aws.ToString(r.Code) != "ConditionalCheckFailed" || i >= len(t.onFail) {
			continue
		}
		if errors.Is(t.onFail[i], errIdempotencyUsed) {
			return t.onFail[i]
		}
		if first == nil {
			first = t.onFail[i]
			if first == nil {
				first = errRetry
			}
		}
	}
	return first
}

// hasReason reports whether any action was cancelled with one of codes.
func hasReason(reasons []types.CancellationReason, codes ...string) bool {
	for _, r := range reasons {
		if slices.Contains(codes, aws.ToString(r.Code)) {
			return true
		}
	}
	return false
}

// sleep waits a jittered, growing backoff before attempt+1.
func sleep(ctx context.Context, attempt int) error {
	d := time.Duration(1<<min(attempt, 6)) * 5 * time.Millisecond
	d = d/2 + rand.N(d/2+1)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// retryWrite runs one read-build-write round until it succeeds, fails with
// anything but errRetry, or runs out of attempts (ErrBusy).
func retryWrite[T any](ctx context.Context, round func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		v, err := round()
		if !errors.Is(err, errRetry) {
			return v, err
		}
		if attempt == maxWriteAttempts {
			return v, ErrBusy
		}
		if err := sleep(ctx, attempt); err != nil {
			return v, err
		}
	}
}

// mustKey marshals a key; a struct of two strings cannot fail to marshal.
func mustKey(k key) map[string]types.AttributeValue {
	av, err := attributevalue.MarshalMap(k)
	if err != nil {
		panic(err)
	}
	return av
}

func condExists() expression.ConditionBuilder {
	return expression.AttributeExists(expression.Name(attrPK))
}

func condNotExists() expression.ConditionBuilder {
	return expression.AttributeNotExists(expression.Name(attrPK))
}

func condVersion(v int64) expression.ConditionBuilder {
	return expression.Name("version").Equal(expression.Value(v))
}

func ptr[T any](v T) *T { return &v }
