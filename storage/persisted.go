package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Automatic persisted queries (persisted_doc.go describes the item).

const (
	// PersistedQueryTTL is how long a persisted query stays in the table
	// after it was registered or last refreshed: a query no client sends
	// for that long goes by TTL.
	PersistedQueryTTL = 30 * 24 * time.Hour
	// PersistedQueryRefresh is how often, at most, a query in use has its
	// expiry moved on: a refresh is a write, so it is not made on every
	// use.
	PersistedQueryRefresh = 24 * time.Hour
)

// PersistedQuery is a query document registered under the hexadecimal
// SHA-256 hash of its text.
type PersistedQuery struct {
	Hash  string
	Query string
	// ExpiresAt is when the table stops serving it unless it is
	// refreshed.
	ExpiresAt time.Time
}

// RefreshAt returns when the query's expiry should next be moved on: a
// PersistedQueryRefresh after it was last moved.
func (q PersistedQuery) RefreshAt() time.Time {
	return q.ExpiresAt.Add(-PersistedQueryTTL + PersistedQueryRefresh)
}

type persistedItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	Query     string `dynamodbav:"query"`
	ExpiresAt int64  `dynamodbav:"expiresAt"`
}

// validHash reports whether h is a SHA-256 hash as APQ clients write it:
// 64 lowercase hexadecimal digits. Nothing else is looked up: the GraphQL
// handler passes on whatever hash a client sends.
func validHash(h string) bool {
	if len(h) != 2*sha256.Size {
		return false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// PersistedQuery returns the query registered under hash with one
// eventually consistent GetItem (the query of a hash never changes). It
// returns ErrNotFound when there is none, when its expiry has passed (TTL
// deletes an item up to days later; until then it is not served) and,
// without reading, when hash is not 64 lowercase hexadecimal digits.
func (s *Store) PersistedQuery(ctx context.Context, hash string) (PersistedQuery, error) {
	if !validHash(hash) {
		return PersistedQuery{}, ErrNotFound
	}
	var it persistedItem
	if err := s.db.Get(ctx, keys.Persisted(hash), false, &it); err != nil {
		return PersistedQuery{}, fmt.Errorf("persisted query %s: %w", hash, err)
	}
	exp := time.Unix(it.ExpiresAt, 0).UTC()
	if !s.Now().Before(exp) {
		return PersistedQuery{}, fmt.Errorf("persisted query %s: %w", hash, ErrNotFound)
	}
	return PersistedQuery{Hash: hash, Query: it.Query, ExpiresAt: exp}, nil
}

// PersistQuery registers query under hash, which must be the hexadecimal
// SHA-256 of query (a *ValidationError otherwise), with one conditional
// PutItem that expires PersistedQueryTTL from now. The condition keeps a
// live registration as it is: a query registered twice, by two servers at
// once, costs a failed condition and nothing else. The caller checks the
// document (it parses, validates and is within the limits) first. It
// returns the registration, or the DynamoDB error.
func (s *Store) PersistQuery(ctx context.Context, hash, query string) (PersistedQuery, error) {
	sum := sha256.Sum256([]byte(query))
	if hex.EncodeToString(sum[:]) != hash {
		return PersistedQuery{}, &ValidationError{Field: "sha256Hash", Reason: "is not the SHA-256 hash of the query"}
	}
	now := s.Now()
	k := keys.Persisted(hash)
	q := PersistedQuery{Hash: hash, Query: query, ExpiresAt: now.Add(PersistedQueryTTL).Truncate(time.Second)}
	// An expired item TTL has not deleted yet is replaced.
	cond := dynamo.CondNotExists().Or(expression.Name("expiresAt").LessThanEqual(expression.Value(now.Unix())))
	wrote, err := s.db.PutIf(ctx, persistedItem{PK: k.PK, SK: k.SK, Type: typePersisted, Query: query, ExpiresAt: q.ExpiresAt.Unix()}, cond)
	switch {
	case err != nil:
		return PersistedQuery{}, fmt.Errorf("persist query %s: %w", hash, err)
	case !wrote:
		// Registered already, live: the same text, as the hash says. Its
		// expiry is not known here; the one returned is due for a refresh
		// now, so the next use sets it.
		return PersistedQuery{Hash: hash, Query: query, ExpiresAt: now.Add(PersistedQueryTTL - PersistedQueryRefresh)}, nil
	}
	return q, nil
}

// RefreshPersistedQuery moves the expiry of the query registered under
// hash to PersistedQueryTTL from now with one conditional UpdateItem, and
// returns the new expiry. A registration gone or expired is not brought
// back (ErrNotFound): its client registers it again.
func (s *Store) RefreshPersistedQuery(ctx context.Context, hash string) (time.Time, error) {
	if !validHash(hash) {
		return time.Time{}, ErrNotFound
	}
	now := s.Now()
	exp := now.Add(PersistedQueryTTL).Truncate(time.Second)
	cond := expression.AttributeExists(expression.Name(keys.AttrPK)).And(expression.Name("expiresAt").GreaterThan(expression.Value(now.Unix())))
	upd := expression.Set(expression.Name("expiresAt"), expression.Value(exp.Unix()))
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithCondition(cond).WithUpdate(upd))
	if err != nil {
		return time.Time{}, err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       dynamo.MustKey(keys.Persisted(hash)),
		ConditionExpression:       expr.Condition(),
		UpdateExpression:          expr.Update(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	var gone *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &gone):
		return time.Time{}, fmt.Errorf("persisted query %s: %w", hash, ErrNotFound)
	case err != nil:
		return time.Time{}, fmt.Errorf("refresh persisted query %s: %w", hash, err)
	}
	return exp, nil
}
