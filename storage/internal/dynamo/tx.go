package dynamo

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

const (
	maxTxAttempts = 6
	// MaxWriteAttempts bounds the rounds of RetryWrite.
	MaxWriteAttempts = 8
)

// Txn collects the actions of one TransactWriteItems. onFail[i] is what a
// failed condition on action i means to the caller: nil means ErrRetry.
type Txn struct {
	table  string
	items  []types.TransactWriteItem
	onFail []error
	// reasons are the cancellation reasons of the last attempt that
	// failed a condition, in action order.
	reasons []types.CancellationReason
}

// NewTxn returns an empty transaction on the table.
func (tb *Table) NewTxn() *Txn { return &Txn{table: tb.name} }

// Len returns the number of actions of t.
func (t *Txn) Len() int { return len(t.items) }

// Actions returns the actions of t, in order.
func (t *Txn) Actions() []types.TransactWriteItem { return t.items }

// Reasons returns the cancellation reasons of the last attempt of t that
// failed a condition, in action order, or nil.
func (t *Txn) Reasons() []types.CancellationReason { return t.reasons }

// BuildExpr builds b, wrapping its error.
func BuildExpr(b expression.Builder) (expression.Expression, error) {
	expr, err := b.Build()
	if err != nil {
		return expr, fmt.Errorf("build expression: %w", err)
	}
	return expr, nil
}

// Put adds a put of item, under cond when it is not nil.
func (t *Txn) Put(item any, cond *expression.ConditionBuilder, onFail error) error {
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		return fmt.Errorf("marshal item: %w", err)
	}
	p := &types.Put{TableName: aws.String(t.table), Item: av}
	if cond != nil {
		expr, err := BuildExpr(expression.NewBuilder().WithCondition(*cond))
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

// Update adds upd of the item at k, under cond when it is not nil.
func (t *Txn) Update(k Key, upd expression.UpdateBuilder, cond *expression.ConditionBuilder, onFail error) error {
	b := expression.NewBuilder().WithUpdate(upd)
	if cond != nil {
		b = b.WithCondition(*cond)
	}
	expr, err := BuildExpr(b)
	if err != nil {
		return err
	}
	t.items = append(t.items, types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(t.table),
		Key:                       MustKey(k),
		UpdateExpression:          expr.Update(),
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	}})
	t.onFail = append(t.onFail, onFail)
	return nil
}

// Delete adds a deletion of the item at k, under cond when it is not nil.
func (t *Txn) Delete(k Key, cond *expression.ConditionBuilder, onFail error) error {
	d := &types.Delete{TableName: aws.String(t.table), Key: MustKey(k)}
	if cond != nil {
		expr, err := BuildExpr(expression.NewBuilder().WithCondition(*cond))
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

// Check adds a check of cond on the item at k.
func (t *Txn) Check(k Key, cond expression.ConditionBuilder, onFail error) error {
	expr, err := BuildExpr(expression.NewBuilder().WithCondition(cond))
	if err != nil {
		return err
	}
	t.items = append(t.items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:                 aws.String(t.table),
		Key:                       MustKey(k),
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	}})
	t.onFail = append(t.onFail, onFail)
	return nil
}

// Exec runs the transaction. A cancellation for a failed condition returns
// the onFail error of that action (the idempotency record's first, as it
// explains every other failure). Transaction conflicts with concurrent
// writers, and a transaction with the same token still in progress, are
// retried with jittered backoff and end in ErrBusy; a transaction that
// DynamoDB cancelled for throttling is retried the same way and ends in an
// error matching ErrUnavailable.
func (tb *Table) Exec(ctx context.Context, t *Txn) error {
	in := &dynamodb.TransactWriteItemsInput{TransactItems: t.items, ClientRequestToken: aws.String(token())}
	for attempt := 1; ; attempt++ {
		_, err := tb.TransactWriteItems(ctx, in)
		if err == nil {
			tb.watch.Wrote(t.items)
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
				tb.watch.Learn(t.items, t.reasons)
				return failed
			}
			throttled = HasReason(canceled.CancellationReasons, ThrottledReasons...)
			if !throttled && !HasReason(canceled.CancellationReasons, "TransactionConflict") {
				return fmt.Errorf("transaction canceled: %w", err)
			}
		case errors.As(err, &mismatch):
			// Each transaction has a token of its own, so this is another
			// transaction's token: idempotent reads the record again, and
			// writes again while there is none.
			return ErrIdempotencyUsed
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
			in.ClientRequestToken = aws.String(token())
		}
		if attempt == maxTxAttempts {
			if throttled {
				return fmt.Errorf("transaction throttled on every attempt: %w", errors.Join(ErrUnavailable, err))
			}
			return ErrBusy
		}
		if err := Sleep(ctx, attempt); err != nil {
			return err
		}
	}
}

// ReturnOld makes every action of t with a condition return the item as
// it is when its condition fails (ReturnValuesOnConditionCheckFailure
// ALL_OLD), in the cancellation reasons: a write built from what it
// remembered learns what changed without reading it.
func (t *Txn) ReturnOld() {
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

// ThrottledReasons are the cancellation reasons of a transaction that
// DynamoDB refused for capacity: the same transaction can pass later.
var ThrottledReasons = []string{"ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded"}

func (t *Txn) failure(reasons []types.CancellationReason) error {
	var first error
	for i, r := range reasons {
		if aws.ToString(r.Code) != "ConditionalCheckFailed" || i >= len(t.onFail) {
			continue
		}
		if errors.Is(t.onFail[i], ErrIdempotencyUsed) {
			return t.onFail[i]
		}
		if first == nil {
			first = t.onFail[i]
			if first == nil {
				first = ErrRetry
			}
		}
	}
	return first
}

// HasReason reports whether any action was cancelled with one of codes.
func HasReason(reasons []types.CancellationReason, codes ...string) bool {
	for _, r := range reasons {
		if slices.Contains(codes, aws.ToString(r.Code)) {
			return true
		}
	}
	return false
}

// Sleep waits a jittered, growing backoff before attempt+1.
func Sleep(ctx context.Context, attempt int) error {
	d := time.Duration(1<<min(attempt, 6)) * 5 * time.Millisecond
	d = d/2 + rand.N(d/2+1)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// RetryWrite runs one read-build-write round until it succeeds, fails with
// anything but ErrRetry, or runs out of attempts (ErrBusy).
func RetryWrite[T any](ctx context.Context, round func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		v, err := round()
		if !errors.Is(err, ErrRetry) {
			return v, err
		}
		if attempt == MaxWriteAttempts {
			return v, ErrBusy
		}
		if err := Sleep(ctx, attempt); err != nil {
			return v, err
		}
	}
}

// MustKey marshals a key; a struct of two strings cannot fail to marshal.
func MustKey(k Key) map[string]types.AttributeValue {
	av, err := attributevalue.MarshalMap(k)
	if err != nil {
		panic(err)
	}
	return av
}

// CondExists holds when the item exists.
func CondExists() expression.ConditionBuilder {
	return expression.AttributeExists(expression.Name(attrPK))
}

// CondNotExists holds when there is no item.
func CondNotExists() expression.ConditionBuilder {
	return expression.AttributeNotExists(expression.Name(attrPK))
}
