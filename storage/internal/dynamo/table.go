package dynamo

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Key is the primary key of an item of the table.
type Key struct {
	PK string `dynamodbav:"PK"`
	SK string `dynamodbav:"SK"`
}

// Item is an item as DynamoDB carries it.
type Item = map[string]types.AttributeValue

// attrPK is the partition key attribute, which every item has; attrGSI1PK
// is GSI1's, which the tenant guard checks too (guard.go).
const (
	attrPK     = "PK"
	attrGSI1PK = "GSI1PK"
)

// Watcher is told what the calls of a Table saw of the items they read
// and wrote; the store remembers some of them (its hints). Its methods
// are called after the call, never while a request is in flight.
type Watcher interface {
	// Saw reports the item under k as a read found it, nil for none.
	Saw(k Key, it Item)
	// Remember reports what a read of keys found; a key it does not
	// hold has no item.
	Remember(keys []Key, found map[Key]Item)
	// Wrote reports the actions of a transaction that succeeded.
	Wrote(actions []types.TransactWriteItem)
	// Learn reports the actions of a transaction cancelled for a failed
	// condition, with the reasons DynamoDB gave, in action order.
	Learn(actions []types.TransactWriteItem, reasons []types.CancellationReason)
}

// Table is one table on one client. Every request of the store is made
// through it. It is safe for concurrent use.
type Table struct {
	client *dynamodb.Client
	name   string
	watch  Watcher
	// guard confines the requests to one publication's keys (guard.go);
	// nil for a Table that is not confined.
	guard *guard
}

// New returns the table called name on client; watch, which may be nil,
// is told what its calls see.
func New(client *dynamodb.Client, name string, watch Watcher) *Table {
	if watch == nil {
		watch = noWatcher{}
	}
	return &Table{client: client, name: name, watch: watch}
}

// Name returns the table's name.
func (t *Table) Name() string { return t.name }

// Client returns the SDK client the table's requests go through.
func (t *Table) Client() *dynamodb.Client { return t.client }

type noWatcher struct{}

func (noWatcher) Saw(Key, Item)                                               {}
func (noWatcher) Remember([]Key, map[Key]Item)                                {}
func (noWatcher) Wrote([]types.TransactWriteItem)                             {}
func (noWatcher) Learn([]types.TransactWriteItem, []types.CancellationReason) {}

// The requests below are the SDK's, made through the table so that every
// request passes one place. They satisfy the SDK's paginator interfaces.

// GetItem makes one GetItem request.
func (t *Table) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if err := t.guard.checkItems("GetItem", in.Key); err != nil {
		return nil, err
	}
	return t.client.GetItem(ctx, in, opts...)
}

// PutItem makes one PutItem request.
func (t *Table) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if err := t.guard.checkItems("PutItem", in.Item); err != nil {
		return nil, err
	}
	return t.client.PutItem(ctx, in, opts...)
}

// UpdateItem makes one UpdateItem request.
func (t *Table) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if err := t.guard.checkItems("UpdateItem", in.Key); err != nil {
		return nil, err
	}
	return t.client.UpdateItem(ctx, in, opts...)
}

// DeleteItem makes one DeleteItem request.
func (t *Table) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if err := t.guard.checkItems("DeleteItem", in.Key); err != nil {
		return nil, err
	}
	return t.client.DeleteItem(ctx, in, opts...)
}

// Query makes one Query request.
func (t *Table) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if err := t.guard.checkQuery(in); err != nil {
		return nil, err
	}
	return t.client.Query(ctx, in, opts...)
}

// Scan makes one Scan request.
func (t *Table) Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	out, err := t.client.Scan(ctx, in, opts...)
	t.guard.filterScan(out)
	return out, err
}

// BatchWriteItem makes one BatchWriteItem request.
func (t *Table) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	if err := t.guard.checkBatchWrite(in); err != nil {
		return nil, err
	}
	return t.client.BatchWriteItem(ctx, in, opts...)
}

// CreateTable makes one CreateTable request.
func (t *Table) CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	return t.client.CreateTable(ctx, in, opts...)
}

// DescribeTable makes one DescribeTable request.
func (t *Table) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return t.client.DescribeTable(ctx, in, opts...)
}

// UpdateTable makes one UpdateTable request.
func (t *Table) UpdateTable(ctx context.Context, in *dynamodb.UpdateTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateTableOutput, error) {
	return t.client.UpdateTable(ctx, in, opts...)
}

// UpdateTimeToLive makes one UpdateTimeToLive request.
func (t *Table) UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
	return t.client.UpdateTimeToLive(ctx, in, opts...)
}

// token returns a fresh ClientRequestToken: 32 random hex digits.
func token() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// BatchGetItem makes one BatchGetItem request.
func (t *Table) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	if err := t.guard.checkBatchGet(in); err != nil {
		return nil, err
	}
	return t.client.BatchGetItem(ctx, in, opts...)
}

// TransactGetItems makes one TransactGetItems request.
func (t *Table) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	if err := t.guard.checkTransactGet(in); err != nil {
		return nil, err
	}
	return t.client.TransactGetItems(ctx, in, opts...)
}

// TransactWriteItems makes one TransactWriteItems request.
func (t *Table) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if err := t.guard.checkTransactWrite(in); err != nil {
		return nil, err
	}
	return t.client.TransactWriteItems(ctx, in, opts...)
}
