package migrations

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// Layout 4 to layout 5 (see Run): the table's blog becomes one
// publication. Every item of the blog moves under the publication's
// prefix ("POST#p1" becomes "PUB#<id>#POST#p1"), its GSI1 partition too
// ("FEED" becomes "PUB#<id>#FEED"); sort keys stay. The few global items
// stay where they are. The publication gets its directory item. This step
// is frozen: the key forms below are its own copies of layout 5's.
//
// The step reads the table by a consistent Scan, a page at a time, and
// records after each page where it is in a checkpoint item beside the
// layout item: a migration stopped half-way goes on from there. Each
// item moves in one transaction: a put of the new item, on condition that
// there is none (a server of layout 5 may have written it meanwhile, and
// its write wins), and the delete of the old one. Servers of layout 4 must
// be stopped: they would go on writing the old keys.

const (
	// v5PrefixPublication starts every partition key of a publication.
	v5PrefixPublication = "PUB#"
	// v5PrefixDirectory starts a publication's directory item.
	v5PrefixDirectory = "PUBLICATION#"
	// v5DefaultSlug is the slug of the publication an old table becomes.
	v5DefaultSlug = "default"
	// v5TypePublication is the type of a directory item, and
	// v5TypeCheckpoint of the step's checkpoint.
	v5TypePublication = "publication"
	v5TypeCheckpoint  = "layoutCheckpoint"
	// v5Checkpoint is the sort key of the step's checkpoint, in the
	// layout item's partition.
	v5Checkpoint = "MIGRATION#5"
	// v5PageSize bounds the items a Scan page of the step reads.
	v5PageSize = 100
)

// v5Global are the partition keys, or their prefixes, that layout 5 keeps
// global: the layout item and the checkpoint, the directory, the server's
// secrets, persisted queries, readers, and the change feed's leases and
// event log.
var v5Global = []string{layoutPartition, v5PrefixDirectory, "SECRET#", "PERSISTED#", "READER#", "LEASES", "EVENTLOG"}

// v5Moves reports whether the item whose partition key is pk moves into
// a publication: it is neither global nor in a publication already.
func v5Moves(pk string) bool {
	if strings.HasPrefix(pk, v5PrefixPublication) {
		return false
	}
	for _, g := range v5Global {
		if strings.HasPrefix(pk, g) {
			return false
		}
	}
	return true
}

// v5Prefix is the prefix of the publication id.
func v5Prefix(id string) string { return v5PrefixPublication + id + "#" }

// v5CheckpointItem is where the step is: the last key of the last page it
// finished.
type v5CheckpointItem struct {
	PK     string `dynamodbav:"PK"`
	SK     string `dynamodbav:"SK"`
	Type   string `dynamodbav:"type"`
	LastPK string `dynamodbav:"lastPK,omitempty"`
	LastSK string `dynamodbav:"lastSK,omitempty"`
}

// v5Directory is a publication's directory item.
type v5Directory struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	ID        string `dynamodbav:"id"`
	Slug      string `dynamodbav:"slug"`
	CreatedAt string `dynamodbav:"createdAt"`
}

// v5 moves every item of the blog into the publication e.Publication, and
// counts them in m.Moved. It stops after e.stopAfter pages when that is set
// (tests stop it half-way).
func (e *Env) v5(ctx context.Context, m *Result) error {
	if e.Publication == "" || strings.Contains(e.Publication, "#") {
		return fmt.Errorf("migrate to layout 5: bad publication id %q", e.Publication)
	}
	prefix := v5Prefix(e.Publication)
	ck := key{PK: layoutPartition, SK: v5Checkpoint}
	var at v5CheckpointItem
	err := e.DB.Get(ctx, ck, true, &at)
	if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
		return fmt.Errorf("migrate to layout 5: read checkpoint: %w", err)
	}
	checkpointed := err == nil
	size := v5PageSize
	if e.PageSize > 0 {
		size = e.PageSize
	}
	in := &dynamodb.ScanInput{TableName: aws.String(e.DB.Name()), ConsistentRead: aws.Bool(true), Limit: aws.Int32(int32(size))}
	if at.LastPK != "" {
		in.ExclusiveStartKey = dynamo.MustKey(key{PK: at.LastPK, SK: at.LastSK})
	}
	for pages := 0; ; pages++ {
		if e.StopAfter > 0 && pages == e.StopAfter {
			return ErrStopped
		}
		out, err := e.DB.Scan(ctx, in)
		if err != nil {
			return fmt.Errorf("migrate to layout 5: scan: %w", err)
		}
		for _, it := range out.Items {
			moved, err := e.v5Move(ctx, prefix, it)
			if err != nil {
				return err
			}
			m.Moved += moved
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		var last key
		if err := attributevalue.UnmarshalMap(out.LastEvaluatedKey, &last); err != nil {
			return fmt.Errorf("migrate to layout 5: checkpoint: %w", err)
		}
		av, err := attributevalue.MarshalMap(v5CheckpointItem{PK: ck.PK, SK: ck.SK, Type: v5TypeCheckpoint, LastPK: last.PK, LastSK: last.SK})
		if err != nil {
			return fmt.Errorf("migrate to layout 5: checkpoint: %w", err)
		}
		if _, err := e.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: in.TableName, Item: av}); err != nil {
			return fmt.Errorf("migrate to layout 5: checkpoint: %w", err)
		}
		checkpointed = true
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	if err := e.v5Directory(ctx); err != nil {
		return err
	}
	if !checkpointed {
		return nil
	}
	if _, err := e.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: in.TableName, Key: dynamo.MustKey(ck)}); err != nil {
		return fmt.Errorf("migrate to layout 5: drop checkpoint: %w", err)
	}
	return nil
}

// v5Directory writes the publication's directory item when it has none.
func (e *Env) v5Directory(ctx context.Context) error {
	k := key{PK: v5PrefixDirectory + e.Publication, SK: v5PrefixDirectory + e.Publication}
	var have v5Directory
	err := e.DB.Get(ctx, k, true, &have)
	if err == nil {
		return nil
	}
	if !errors.Is(err, dynamo.ErrNotFound) {
		return fmt.Errorf("migrate to layout 5: directory: %w", err)
	}
	dir := v5Directory{PK: k.PK, SK: k.SK, Type: v5TypePublication, ID: e.Publication, Slug: v5DefaultSlug, CreatedAt: e.nowKey()}
	if _, err := e.DB.PutIf(ctx, dir, expression.Name("PK").AttributeNotExists()); err != nil {
		return fmt.Errorf("migrate to layout 5: directory: %w", err)
	}
	return nil
}

// v5HasBlog reports whether a table without a layout item holds a blog of
// layout 1, whose items layout 5 moves: one has authors or categories
// (every post has an author). A new table has neither, and the step's
// Scan, which a server's IAM policy does not grant, is not made for it.
// It reports true when it cannot tell.
func (e *Env) v5HasBlog(ctx context.Context) bool {
	for _, part := range []string{"AUTHORS", "CATEGORIES"} {
		ids, err := e.queryAttrLimit(ctx, part)
		if err != nil || len(ids) > 0 {
			return true
		}
	}
	return false
}

// queryAttrLimit returns the first item's key of GSI1 partition part, or
// none.
func (e *Env) queryAttrLimit(ctx context.Context, part string) ([]item, error) {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(expression.Key("GSI1PK").Equal(expression.Value(part))))
	if err != nil {
		return nil, err
	}
	out, err := e.DB.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(e.DB.Name()), IndexName: aws.String("GSI1"),
		KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		Limit: aws.Int32(1)})
	if err != nil {
		return nil, err
	}
	return out.Items, nil
}

// ErrStopped means a migration stopped where Env.StopAfter told it to.
var ErrStopped = errors.New("migration stopped")

// v5Move moves the item it into the publication of prefix when it is to
// move, and reports 1 when it moved it.
func (e *Env) v5Move(ctx context.Context, prefix string, it item) (int, error) {
	pk, _ := it["PK"].(*types.AttributeValueMemberS)
	sk, _ := it["SK"].(*types.AttributeValueMemberS)
	if pk == nil || sk == nil || !v5Moves(pk.Value) {
		return 0, nil
	}
	moved := make(item, len(it))
	for k, v := range it {
		moved[k] = v
	}
	moved["PK"] = &types.AttributeValueMemberS{Value: prefix + pk.Value}
	if g, ok := it["GSI1PK"].(*types.AttributeValueMemberS); ok {
		moved["GSI1PK"] = &types.AttributeValueMemberS{Value: prefix + g.Value}
	}
	old := dynamo.MustKey(key{PK: pk.Value, SK: sk.Value})
	absent, err := dynamo.BuildExpr(expression.NewBuilder().WithCondition(expression.Name("PK").AttributeNotExists()))
	if err != nil {
		return 0, err
	}
	table := aws.String(e.DB.Name())
	_, err = e.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: table, Item: moved, ConditionExpression: absent.Condition(),
			ExpressionAttributeNames: absent.Names()}},
		{Delete: &types.Delete{TableName: table, Key: old}},
	}})
	var canceled *types.TransactionCanceledException
	switch {
	case err == nil:
		return 1, nil
	case errors.As(err, &canceled) && dynamo.HasReason(canceled.CancellationReasons, "ConditionalCheckFailed"):
		// A server of layout 5 wrote the item meanwhile: its write is
		// the newer, and the old item goes.
		if _, err := e.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: table, Key: old}); err != nil {
			return 0, fmt.Errorf("migrate to layout 5: delete %s/%s: %w", pk.Value, sk.Value, err)
		}
		return 0, nil
	default:
		return 0, fmt.Errorf("migrate to layout 5: move %s/%s: %w", pk.Value, sk.Value, err)
	}
}
