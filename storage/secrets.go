package storage

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// SecretBytes is the length of the keys Secret makes.
const SecretBytes = 32

type secretItem struct {
	PK    string `dynamodbav:"PK"`
	SK    string `dynamodbav:"SK"`
	Type  string `dynamodbav:"type"`
	Value []byte `dynamodbav:"value"`
}

// Secret returns the random key called name that the table keeps for its
// servers, making it if the table has none yet. The first server to ask
// makes it; every server on the table, and the same server after a
// restart, gets the same key from then on, so what one signs another
// verifies. name is 1 to 64 characters of A-Z a-z 0-9 _ -. It returns the
// DynamoDB error when the key can be neither read nor made.
func (s *Store) Secret(ctx context.Context, name string) ([]byte, error) {
	if err := validateID("name", name); err != nil {
		return nil, err
	}
	k := keys.Secret(name)
	var it secretItem
	err := s.db.Get(ctx, k, true, &it)
	if err == nil && len(it.Value) == SecretBytes {
		return it.Value, nil
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("secret %q: %w", name, err)
	}
	value := make([]byte, SecretBytes)
	if _, err := rand.Read(value); err != nil {
		return nil, fmt.Errorf("secret %q: %w", name, err)
	}
	wrote, err := s.db.PutIf(ctx, secretItem{PK: k.PK, SK: k.SK, Type: typeSecret, Value: value}, dynamo.CondNotExists())
	switch {
	case err != nil:
		return nil, fmt.Errorf("secret %q: %w", name, err)
	case !wrote:
		// Another server made it first: its key is the table's.
		if err := s.db.Get(ctx, k, true, &it); err != nil {
			return nil, fmt.Errorf("secret %q: %w", name, err)
		}
		return it.Value, nil
	}
	return value, nil
}

// KnownSecret returns the key called name if the table has it, without
// making one: ErrNotFound when it has none yet. What a key that does not
// exist would have signed cannot be valid, so a check needs nothing more,
// and a read never writes.
func (s *Store) KnownSecret(ctx context.Context, name string) ([]byte, error) {
	if err := validateID("name", name); err != nil {
		return nil, err
	}
	var it secretItem
	if err := s.db.Get(ctx, keys.Secret(name), true, &it); err != nil {
		return nil, fmt.Errorf("secret %q: %w", name, err)
	}
	if len(it.Value) != SecretBytes {
		return nil, fmt.Errorf("secret %q: %w", name, ErrNotFound)
	}
	return it.Value, nil
}
