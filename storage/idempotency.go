package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// idempotencyTTL is how long a key protects against a repeated request.
const idempotencyTTL = 24 * time.Hour

var idempotencyKeyPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// ValidIdempotencyKey reports whether k is a key a write accepts: 1 to 64
// characters of A-Z a-z 0-9 . _ : -.
func ValidIdempotencyKey(k string) bool { return idempotencyKeyPattern.MatchString(k) }

// idem is one write's idempotency: its record key and the hash of its
// input.
type idem struct {
	key  key
	hash string
}

// idempotent runs write at most once per (op, key). With an empty key it
// just runs write. Otherwise a record of the key, the input's hash and the
// result is written in write's own transaction (write calls record); a
// repeated call with the same input returns the recorded result, with
// other input ErrIdempotencyMismatch. A post's record holds no rendered
// body: a replay renders it again from the recorded body (restorer).
//
// A repeat can race the first call: it finds no record, then the first
// call's write lands before its own. Its transaction then fails on the
// record, or its read already sees the first call's effect and refuses
// (the post is gone, its version moved on, the comment was deleted); in
// both cases the record is read again and its result returned. When the
// transaction failed on a record that the read then does not find (it
// expired in between), or on a token DynamoDB saw with another
// transaction, the write runs again, a bounded number of times (then
// ErrBusy).
func idempotent[T any](ctx context.Context, s *Store, op, k string, input any, write func(id *idem) (T, error)) (T, error) {
	return idempotentRun(ctx, s, op, k, input, true, write)
}

// idempotentWrite is idempotent for a write that makes no read of its own
// it could share with the record's: it writes at once, and reads the
// record only when the write's transaction fails on it (or the write
// fails), so a key's first use costs no request of its own.
func idempotentWrite[T any](ctx context.Context, s *Store, op, k string, input any, write func(id *idem) (T, error)) (T, error) {
	return idempotentRun(ctx, s, op, k, input, false, write)
}

func idempotentRun[T any](ctx context.Context, s *Store, op, k string, input any, readFirst bool, write func(id *idem) (T, error)) (T, error) {
	var zero T
	if k == "" {
		return write(nil)
	}
	if !ValidIdempotencyKey(k) {
		return zero, &ValidationError{Field: "idempotencyKey", Reason: "must be 1 to 64 characters of A-Z a-z 0-9 . _ : -"}
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return zero, fmt.Errorf("hash input: %w", err)
	}
	sum := sha256.Sum256(raw)
	id := &idem{key: s.ks.Idempotency(op, k), hash: hex.EncodeToString(sum[:])}

	for attempt := 1; ; attempt++ {
		if readFirst || attempt > 1 {
			if v, found, err := replay[T](ctx, s, id); found || err != nil {
				return v, err
			}
		}
		v, err := write(id)
		switch {
		case err == nil:
			return v, nil
		case errors.Is(err, dynamo.ErrIdempotencyUsed):
			// Read the record again at the top.
		case ctx.Err() != nil:
			return v, err
		default:
			if v, found, rerr := replay[T](ctx, s, id); found || errors.Is(rerr, ErrIdempotencyMismatch) {
				return v, rerr
			}
			return v, err
		}
		if attempt == dynamo.MaxWriteAttempts {
			return zero, fmt.Errorf("idempotency record %s: %w", id.key.PK, ErrBusy)
		}
		if err := dynamo.Sleep(ctx, attempt); err != nil {
			return zero, err
		}
	}
}

// replay returns the recorded result of id, if there is a live record.
func replay[T any](ctx context.Context, s *Store, id *idem) (T, bool, error) {
	var zero T
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: dynamo.MustKey(id.key), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return zero, false, fmt.Errorf("read idempotency record: %w", err)
	}
	if out.Item == nil {
		return zero, false, nil
	}
	var rec idempotencyItem
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return zero, false, fmt.Errorf("decode idempotency record: %w", err)
	}
	if rec.ExpiresAt < s.Now().Unix() {
		return zero, false, nil
	}
	if rec.Hash != id.hash {
		return zero, false, ErrIdempotencyMismatch
	}
	var v T
	if err := json.Unmarshal([]byte(rec.Result), &v); err != nil {
		return zero, false, fmt.Errorf("decode idempotent result: %w", err)
	}
	if r, ok := any(v).(restorer); ok {
		if err := r.restore(ctx, s); err != nil {
			return zero, false, err
		}
	}
	return v, true, nil
}

// restorer is a result whose record leaves out what can be derived again
// from the rest (a post's rendered body): the record stays far below
// DynamoDB's item size, and a replay still returns the same result.
type restorer interface {
	restore(context.Context, *Store) error
}

// record adds the idempotency record of id with result to t; a nil id adds
// nothing. That a key takes effect once is the record's condition's doing;
// exec gives every transaction a ClientRequestToken of its own.
func (s *Store) record(t *dynamo.Txn, id *idem, result any) error {
	if id == nil {
		return nil
	}
	// Without HTML escaping, < > and & take one byte each instead of six,
	// so the record of a post stays within DynamoDB's item size whatever
	// its body holds.
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(result); err != nil {
		return fmt.Errorf("encode idempotent result: %w", err)
	}
	now := s.Now()
	cond := dynamo.CondNotExists().Or(expression.Name("expiresAt").LessThan(expression.Value(now.Unix())))
	err := t.Put(idempotencyItem{
		PK: id.key.PK, SK: id.key.SK, Type: typeIdempotency,
		Hash: id.hash, Result: raw.String(), ExpiresAt: now.Add(idempotencyTTL).Unix(),
	}, &cond, dynamo.ErrIdempotencyUsed)
	return err
}

// execRecord runs t with the idempotency record of result.
func execRecord[T any](ctx context.Context, s *Store, t *dynamo.Txn, rec *idem, result T) (T, error) {
	var zero T
	if err := s.record(t, rec, result); err != nil {
		return zero, err
	}
	if err := s.db.Exec(ctx, t); err != nil {
		return zero, err
	}
	return result, nil
}
