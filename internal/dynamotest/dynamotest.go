// Package dynamotest gives the tests of every package the DynamoDB they
// talk to, chosen in one place: the embedded engine in the test's process,
// or DynamoDB Local when DYNAMODB_ENDPOINT is set (REQUIRE_DYNAMODB=1
// makes its absence a failure; see package endpoint). It hands out the
// client configuration, a table of the test's own (deleted afterwards)
// and the test clock that the store and the engine share.
//
// Package storage cannot use it in its internal tests (it imports
// storage); those get the same configuration through storage.TestBackend,
// which the package's external tests set.
package dynamotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/embedded"
	"github.com/blogql/blog/internal/dynamotest/endpoint"
	"github.com/blogql/blog/storage"
)

// Endpoint returns the DynamoDB Local endpoint the test talks to, or ""
// for the embedded engine. With REQUIRE_DYNAMODB=1 and no endpoint it
// fails tb and does not return.
func Endpoint(tb testing.TB) string {
	tb.Helper()
	return endpoint.Get(tb)
}

// ClientConfig returns the configuration of a client of the test's
// DynamoDB: DynamoDB Local at its endpoint, or a fresh embedded engine in
// memory, carried by HTTPClient, whose clock is now (nil: time.Now). A
// store with a clock of its own (storage.WithClock) needs the same one
// here, or items expire by another time. It fails tb as Endpoint does.
//
// DynamoDB Local deletes the items its TTL finds expired by the wall
// clock, while a test's clock (now) runs months behind it: an item the
// store wrote to live a quarter of an hour by the test's clock (a
// sign-in request, a popular entry) would vanish whenever DynamoDB
// Local's sweeper passed. So with a clock of the test's own, the
// client's UpdateTimeToLive is answered without reaching DynamoDB Local
// (noTTL), and its TTL stays off: items expire by the store's own
// checks, as on AWS, whose TTL deletes days late and which the store
// never counts on.
func ClientConfig(tb testing.TB, now func() time.Time) storage.ClientConfig {
	tb.Helper()
	if e := Endpoint(tb); e != "" {
		// DynamoDB Local accepts any credentials; those of the
		// environment, when set, keep choosing its database.
		cfg := storage.ClientConfig{Endpoint: e, LocalCredentials: os.Getenv("AWS_ACCESS_KEY_ID") == ""}
		if now != nil {
			cfg.HTTPClient = &http.Client{Transport: noTTL{next: http.DefaultTransport}}
		}
		return cfg
	}
	return EmbeddedConfig(tb, now)
}

// EmbeddedConfig returns the configuration of a client of a fresh
// embedded engine in memory whose clock is now (nil: time.Now), whatever
// the environment says: for tests and benchmarks of the engine's
// behaviour alone.
func EmbeddedConfig(tb testing.TB, now func() time.Time) storage.ClientConfig {
	tb.Helper()
	e, err := embedded.Open(embedded.Options{Now: now})
	if err != nil {
		tb.Fatal(err)
	}
	return storage.ClientConfig{Embedded: true, HTTPClient: &http.Client{Transport: e}}
}

// Transport returns the transport that cfg's requests reach its DynamoDB
// through: the embedded engine, or the network. A test puts its own in
// front of it to count, delay or fail requests.
func Transport(cfg storage.ClientConfig) http.RoundTripper {
	if cfg.HTTPClient != nil && cfg.HTTPClient.Transport != nil {
		return cfg.HTTPClient.Transport
	}
	return http.DefaultTransport
}

// Table returns the name of a new table of the test's own: prefix and a
// random suffix. On DynamoDB Local the table, once made, is deleted when
// the test ends; an embedded engine's go with it.
func Table(tb testing.TB, db *dynamodb.Client, prefix string) string {
	tb.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := prefix + "-" + hex.EncodeToString(b)
	if Endpoint(tb) != "" {
		tb.Cleanup(func() {
			_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		})
	}
	return name
}
