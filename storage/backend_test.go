package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// The internal tests talk to the DynamoDB that internal/dynamotest
// chooses, as these do.
func init() {
	storage.InternalTestBackend = func(tb testing.TB, now func() time.Time, prefix string) (*dynamodb.Client, string) {
		tb.Helper()
		db, err := storage.NewClient(context.Background(), dynamotest.ClientConfig(tb, now))
		if err != nil {
			tb.Fatal(err)
		}
		return db, dynamotest.Table(tb, db, prefix)
	}
}
