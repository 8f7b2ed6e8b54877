// Package endpoint is the one place a test learns which DynamoDB it talks
// to: the embedded engine, or the DynamoDB at DYNAMODB_ENDPOINT
// (DynamoDB Local, scripts/dynamodb-local.sh). REQUIRE_DYNAMODB=1 makes
// a missing endpoint a failure, so a run meant for DynamoDB Local cannot
// pass on the embedded engine instead.
//
// DYNAMODB_ENDPOINTS, a comma-separated list, spreads the tests over
// several DynamoDB Locals instead: each test talks to one, chosen by the
// name of its top-level test, so a test, its subtests and every server it
// starts share a table. A DynamoDB Local does every query in one thread,
// and each write to a table with a stream costs it more as the stream
// records of all its tables, kept a day after a table is deleted, add
// up: four instances share the work of two packages at a time, and each
// keeps a quarter of the records (scripts/test.sh).
//
// Tests use it through package dynamotest; only the embedded engine's own
// differential suite uses it directly, because dynamotest imports the
// engine.
package endpoint

import (
	"hash/fnv"
	"os"
	"strings"
	"testing"
)

// Environment variables of the choice.
const (
	// Var names the DynamoDB Local endpoint, e.g. http://127.0.0.1:8765.
	Var = "DYNAMODB_ENDPOINT"
	// ListVar names several, comma-separated, to spread the tests over;
	// it wins over Var.
	ListVar = "DYNAMODB_ENDPOINTS"
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
	if list := strings.Split(os.Getenv(ListVar), ","); list[0] != "" {
		top, _, _ := strings.Cut(tb.Name(), "/")
		h := fnv.New32a()
		h.Write([]byte(top))
		e = strings.TrimSpace(list[h.Sum32()%uint32(len(list))])
	}
	if e == "" && os.Getenv(RequireVar) == "1" {
		tb.Fatal(Missing)
	}
	return e
}
