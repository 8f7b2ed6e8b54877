package storage

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// InternalTestBackend returns a client of the test's DynamoDB, whose
// embedded engine's clock is now, and the name of a table of the test's
// own (not yet made), for the tests that see this package's insides.
// This package may not import the embedded engine, even in its tests, so
// its external tests set it from internal/dynamotest (backend_test.go),
// which chooses the DynamoDB of every test.
var InternalTestBackend func(tb testing.TB, now func() time.Time, prefix string) (*dynamodb.Client, string)

// testBackend returns what InternalTestBackend does.
func testBackend(tb testing.TB, now func() time.Time, prefix string) (*dynamodb.Client, string) {
	tb.Helper()
	if InternalTestBackend == nil {
		tb.Fatal("storage: InternalTestBackend is not set (backend_test.go)")
	}
	return InternalTestBackend(tb, now, prefix)
}
