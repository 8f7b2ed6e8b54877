package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/embedded"
	"github.com/blogql/blog/storage"
)

// backend is the DynamoDB a run measures, and the name of a table of its
// own there (not created yet).
type backend struct {
	client   storage.ClientConfig
	db       *dynamodb.Client
	table    string
	dataFile string // the embedded engine's, "" on DynamoDB Local
	close    func()
}

// openBackend opens cfg's backend: the embedded engine on a data file,
// synced at every commit as the server runs it, in dataDir (a temporary
// directory when empty), or DynamoDB Local at cfg.endpoint. The table is
// named prefix-<random>; close drops it from DynamoDB Local, and the
// temporary directory.
func openBackend(ctx context.Context, cfg *config, dataDir, prefix string) (*backend, error) {
	b := &backend{client: storage.ClientConfig{Embedded: cfg.backend == "embedded", Endpoint: cfg.endpoint,
		LocalCredentials: os.Getenv("AWS_ACCESS_KEY_ID") == ""}}
	var closers []func()
	b.close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	if cfg.backend == "embedded" {
		if dataDir == "" {
			tmp, err := os.MkdirTemp("", prefix+"-data-")
			if err != nil {
				return nil, err
			}
			closers = append(closers, func() { _ = os.RemoveAll(tmp) })
			dataDir = tmp
		}
		b.dataFile = filepath.Join(dataDir, "blog.db")
		engine, err := embedded.Open(embedded.Options{Path: b.dataFile})
		if err != nil {
			b.close()
			return nil, err
		}
		closers = append(closers, func() { _ = engine.Close() })
		b.client.HTTPClient = &http.Client{Transport: engine}
	}
	db, err := storage.NewClient(ctx, b.client)
	if err != nil {
		b.close()
		return nil, err
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	b.db, b.table = db, prefix+"-"+hex.EncodeToString(suffix)
	if cfg.backend == "local" {
		closers = append(closers, func() {
			_, _ = db.DeleteTable(context.WithoutCancel(ctx), &dynamodb.DeleteTableInput{TableName: aws.String(b.table)})
		})
	}
	return b, nil
}
