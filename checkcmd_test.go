package main

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/demo"
	"github.com/blogql/blog/embedded"
	"github.com/blogql/blog/storage"
)

// withTable opens the embedded engine on the data directory dir and calls
// f with a client on it, then closes it.
func withTable(t *testing.T, dir string, f func(ctx context.Context, client *dynamodb.Client)) {
	t.Helper()
	ctx := context.Background()
	engine, err := embedded.Open(embedded.Options{Path: filepath.Join(dir, dataFile)})
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	client, err := storage.NewClient(ctx, storage.ClientConfig{Embedded: true, HTTPClient: &http.Client{Transport: engine}})
	if err != nil {
		t.Fatal(err)
	}
	f(ctx, client)
}

// TestCheckCommand runs "blog check" on the demo blog: it finds the table
// consistent and exits 0; with one author copy of a post given another
// title, it names that copy and exits 1; on a table that does not exist it
// fails (exit 2).
func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	withTable(t, dir, func(ctx context.Context, client *dynamodb.Client) {
		store := storage.New(client, "blog")
		if err := store.CreateTable(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if err := demo.Seed(ctx, store, time.Now()); err != nil {
			t.Fatal(err)
		}
		// The comment counts of the copies follow the change feed, which
		// does not run here.
		if err := store.SyncAllCounts(ctx); err != nil {
			t.Fatal(err)
		}
	})
	check := func() (int, string) {
		t.Helper()
		var out bytes.Buffer
		code, err := runCheck(context.Background(), []string{"-data", dir}, func(string) string { return "" }, &out)
		if err != nil {
			t.Fatalf("check: %v\n%s", err, out.String())
		}
		return code, out.String()
	}
	if code, out := check(); code != checkClean || !strings.Contains(out, "consistent") {
		t.Fatalf("check of the demo blog: exit %d\n%s", code, out)
	}

	var pk, sk string
	withTable(t, dir, func(ctx context.Context, client *dynamodb.Client) {
		out, err := client.Scan(ctx, &dynamodb.ScanInput{
			TableName:                 aws.String("blog"),
			FilterExpression:          aws.String("#type = :copy"),
			ExpressionAttributeNames:  map[string]string{"#type": "type"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":copy": &types.AttributeValueMemberS{Value: "authorPost"}},
		})
		if err != nil || len(out.Items) == 0 {
			t.Fatalf("no author copy: %v", err)
		}
		pk = out.Items[0]["PK"].(*types.AttributeValueMemberS).Value
		sk = out.Items[0]["SK"].(*types.AttributeValueMemberS).Value
		_, err = client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String("blog"),
			Key:                       map[string]types.AttributeValue{"PK": out.Items[0]["PK"], "SK": out.Items[0]["SK"]},
			UpdateExpression:          aws.String("SET title = :t"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberS{Value: "Drifted"}},
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	code, out := check()
	if code != checkViolation || !strings.Contains(out, "copy "+pk+"/"+sk+" disagrees with post") {
		t.Errorf("check with a drifted copy %s/%s: exit %d\n%s", pk, sk, code, out)
	}

	var none bytes.Buffer
	code, err := runCheck(context.Background(), []string{"-data", t.TempDir()}, func(string) string { return "" }, &none)
	if err == nil || code != checkFailed {
		t.Errorf("check of a missing table: exit %d, error %v", code, err)
	}
}
