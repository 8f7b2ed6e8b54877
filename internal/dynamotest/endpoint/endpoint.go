// Package endpoint is the one place a test learns which DynamoDB it talks
// to: the embedded engine, or the DynamoDB at DYNAMODB_ENDPOINT
// (DynamoDB Local, scripts/dynamodb-local.sh). REQUIRE_DYNAMODB=1 makes
// a missing endpoint a failure, so a run meant for DynamoDB Local cannot
// pass on the embedded engine instead.
//
// Tests use it through package dynamotest; only the embedded engine's own
// differential suite uses it directly, because dynamotest imports the
// engine.
package endpoint

import (
	"os"
	"testing"
)

// Environment variables of the choice.
const (
	// Var names the DynamoDB Local endpoint, e.g. http://127.0.0.1:8765.
	Var = "DYNAMODB_ENDPOINT"
	// RequireVar, set to 1, makes a missing endpoint fail the test.
	RequireVar = "REQUIRE_DYNAMODB"
)

// Missing is the message of a test failed by the guard.
const Missing = "REQUIRE_DYNAMODB=1 but DYNAMODB_ENDPOINT is not set: start DynamoDB Local with scripts/dynamodb-local.sh"

// Get returns the DynamoDB Local endpoint the test talks to, or "" for
// the embedded engine. With REQUIRE_DYNAMODB=1 and no endpoint it fails
// tb and does not return.
func Get(tb testing.TB) string {
	tb.Helper()
	e := os.Getenv(Var)
	if e == "" && os.Getenv(RequireVar) == "1" {
		tb.Fatal(Missing)
	}
	return e
}
