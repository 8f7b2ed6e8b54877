package dynamo

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func keyOf(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"PK": s(pk), "SK": s("X")}
}

// query returns a Query of partition pk (on GSI1 when index), with a sort
// key condition, as the store builds them.
func query(t *testing.T, pk string, index bool) *dynamodb.QueryInput {
	t.Helper()
	name := "PK"
	if index {
		name = "GSI1PK"
	}
	expr, err := expression.NewBuilder().WithKeyCondition(expression.Key(name).Equal(expression.Value(pk)).
		And(expression.Key("SK").BeginsWith("PUB#b#"))).Build()
	if err != nil {
		t.Fatal(err)
	}
	in := &dynamodb.QueryInput{TableName: aws.String("t"), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}
	if index {
		in.IndexName = aws.String("GSI1")
	}
	return in
}

// TestGuard refuses every kind of request that names a key of another
// publication, before it reaches DynamoDB (the table has no client: a
// request let through would panic), counts each, and lets through the
// publication's own keys and the global ones.
func TestGuard(t *testing.T) {
	tb := New(nil, "t", nil).Confine("PUB#a#", []string{"SECRET#", "LEASES"})
	ctx := context.Background()
	foreign, mine := keyOf("PUB#b#POST#1"), keyOf("PUB#a#POST#1")
	withGSI := map[string]types.AttributeValue{"PK": s("PUB#a#POST#1"), "SK": s("X"), "GSI1PK": s("PUB#b#FEED")}
	refused := map[string]func() error{
		"GetItem": func() error { _, err := tb.GetItem(ctx, &dynamodb.GetItemInput{Key: foreign}); return err },
		"PutItem": func() error { _, err := tb.PutItem(ctx, &dynamodb.PutItemInput{Item: foreign}); return err },
		"PutItem into another's GSI1 partition": func() error {
			_, err := tb.PutItem(ctx, &dynamodb.PutItemInput{Item: withGSI})
			return err
		},
		"PutItem without a PK": func() error {
			_, err := tb.PutItem(ctx, &dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"SK": s("X")}})
			return err
		},
		"UpdateItem": func() error { _, err := tb.UpdateItem(ctx, &dynamodb.UpdateItemInput{Key: foreign}); return err },
		"DeleteItem": func() error { _, err := tb.DeleteItem(ctx, &dynamodb.DeleteItemInput{Key: foreign}); return err },
		"Query":      func() error { _, err := tb.Query(ctx, query(t, "PUB#b#POST#1", false)); return err },
		"Query GSI1": func() error { _, err := tb.Query(ctx, query(t, "PUB#b#FEED", true)); return err },
		"Query GSI1 naming the table's key": func() error {
			in := query(t, "PUB#a#FEED", false)
			in.IndexName = aws.String("GSI1")
			_, err := tb.Query(ctx, in)
			return err
		},
		"Query without a key condition": func() error {
			_, err := tb.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("t")})
			return err
		},
		"BatchGetItem": func() error {
			_, err := tb.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
				"t": {Keys: []map[string]types.AttributeValue{mine, foreign}}}})
			return err
		},
		"BatchWriteItem put": func() error {
			_, err := tb.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
				"t": {{DeleteRequest: &types.DeleteRequest{Key: mine}}, {PutRequest: &types.PutRequest{Item: foreign}}}}})
			return err
		},
		"BatchWriteItem delete": func() error {
			_, err := tb.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
				"t": {{DeleteRequest: &types.DeleteRequest{Key: foreign}}}}})
			return err
		},
		"TransactGetItems": func() error {
			_, err := tb.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
				{Get: &types.Get{Key: mine}}, {Get: &types.Get{Key: foreign}}}})
			return err
		},
	}
	for name, w := range map[string]types.TransactWriteItem{
		"put":             {Put: &types.Put{Item: foreign}},
		"update":          {Update: &types.Update{Key: foreign}},
		"delete":          {Delete: &types.Delete{Key: foreign}},
		"condition check": {ConditionCheck: &types.ConditionCheck{Key: foreign}},
	} {
		refused["TransactWriteItems "+name] = func() error {
			_, err := tb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{Item: mine}}, w}})
			return err
		}
	}
	for name, call := range refused {
		t.Run("refuses "+name, func(t *testing.T) {
			before := Violations()
			if err := call(); !errors.Is(err, ErrOutsideSpace) {
				t.Fatalf("err = %v, want ErrOutsideSpace", err)
			}
			if got := Violations() - before; got != 1 {
				t.Errorf("violations grew by %d, want 1", got)
			}
		})
	}

	g := tb.guard
	for name, err := range map[string]error{
		"own key":               g.checkItems("GetItem", mine),
		"own key with GSI1":     g.checkItems("PutItem", map[string]types.AttributeValue{"PK": s("PUB#a#POST#1"), "GSI1PK": s("PUB#a#FEED")}),
		"global key":            g.checkItems("GetItem", keyOf("SECRET#cursor")),
		"global partition":      g.checkItems("PutItem", keyOf("LEASES")),
		"own partition":         g.checkQuery(query(t, "PUB#a#POST#1", false)),
		"own GSI1 partition":    g.checkQuery(query(t, "PUB#a#FEED", true)),
		"global GSI1 partition": g.checkQuery(query(t, "LEASES", true)),
	} {
		if err != nil {
			t.Errorf("%s: refused: %v", name, err)
		}
	}
	if err := New(nil, "t", nil).guard.checkItems("GetItem", foreign); err != nil {
		t.Errorf("a table that is not confined refused a key: %v", err)
	}
	if tb.Unconfined().guard != nil {
		t.Error("Unconfined kept the guard")
	}
}

// TestGuardScan cuts a Scan's answer to the items of the publication and
// the global ones.
func TestGuardScan(t *testing.T) {
	g := &guard{prefix: "PUB#a#", global: []string{"SECRET#"}}
	out := &dynamodb.ScanOutput{Items: []map[string]types.AttributeValue{
		keyOf("PUB#a#POST#1"), keyOf("PUB#b#POST#1"), keyOf("SECRET#c"), keyOf("POST#1")}, Count: 4}
	g.filterScan(out)
	if len(out.Items) != 2 || out.Count != 2 {
		t.Fatalf("kept %d items (Count %d), want 2", len(out.Items), out.Count)
	}
}
