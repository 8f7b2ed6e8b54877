package dynamo

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestTxnFailureMeaning cancels a transaction of three actions with the
// reasons DynamoDB gives: a failed condition means what its action says
// (nothing said: ErrRetry), the idempotency record's failure explains
// every other one, and a cancellation without a failed condition means
// nothing to the caller.
func TestTxnFailureMeaning(t *testing.T) {
	errTaken := errors.New("taken")
	tx := New(nil, "t", nil).NewTxn()
	cond := CondNotExists()
	if err := errors.Join(
		tx.Put(Key{PK: "A", SK: "A"}, &cond, errTaken),
		tx.Update(Key{PK: "B", SK: "B"}, expression.Set(expression.Name("n"), expression.Value(1)), &cond, nil),
		tx.Check(Key{PK: "C", SK: "C"}, cond, ErrIdempotencyUsed),
	); err != nil {
		t.Fatal(err)
	}
	reason := func(codes ...string) []types.CancellationReason {
		var out []types.CancellationReason
		for _, c := range codes {
			out = append(out, types.CancellationReason{Code: aws.String(c)})
		}
		return out
	}
	for _, c := range []struct {
		name    string
		reasons []types.CancellationReason
		want    error
	}{
		{"first failed", reason("ConditionalCheckFailed", "ConditionalCheckFailed", "None"), errTaken},
		{"nothing said", reason("None", "ConditionalCheckFailed", "None"), ErrRetry},
		{"idempotency first", reason("ConditionalCheckFailed", "None", "ConditionalCheckFailed"), ErrIdempotencyUsed},
		{"conflict", reason("None", "TransactionConflict", "None"), nil},
	} {
		if got := tx.failure(c.reasons); !errors.Is(got, c.want) || (c.want == nil && got != nil) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestReturnOld asks for the item as it is of every action with a
// condition, and of no other.
func TestReturnOld(t *testing.T) {
	tx := New(nil, "t", nil).NewTxn()
	cond := CondExists()
	if err := errors.Join(
		tx.Put(Key{PK: "A", SK: "A"}, nil, nil),
		tx.Delete(Key{PK: "B", SK: "B"}, &cond, nil),
		tx.Check(Key{PK: "C", SK: "C"}, cond, nil),
	); err != nil {
		t.Fatal(err)
	}
	tx.ReturnOld()
	a := tx.Actions()
	const old = types.ReturnValuesOnConditionCheckFailureAllOld
	if a[0].Put.ReturnValuesOnConditionCheckFailure != "" || a[1].Delete.ReturnValuesOnConditionCheckFailure != old ||
		a[2].ConditionCheck.ReturnValuesOnConditionCheckFailure != old {
		t.Errorf("return values: put %q, delete %q, check %q", a[0].Put.ReturnValuesOnConditionCheckFailure,
			a[1].Delete.ReturnValuesOnConditionCheckFailure, a[2].ConditionCheck.ReturnValuesOnConditionCheckFailure)
	}
}
