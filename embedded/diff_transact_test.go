package embedded

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Differential cases of transactions, idempotency tokens and tables.

// transactOpts are the comparison options of a transaction of items:
// DynamoDB Local bills several actions as only the distinct unit counts
// among them.
func transactOpts(items []types.TransactWriteItem) []compareOption {
	if len(items) > 1 {
		return []compareOption{localCapacityBug}
	}
	return nil
}

func transact(token *string, items ...types.TransactWriteItem) sdkCall {
	return func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items, ClientRequestToken: token, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	}
}

func tPut(table string, it map[string]types.AttributeValue, cond string, vals map[string]types.AttributeValue) types.TransactWriteItem {
	p := &types.Put{TableName: aws.String(table), Item: it, ExpressionAttributeValues: vals, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}
	if cond != "" {
		p.ConditionExpression = aws.String(cond)
	}
	return types.TransactWriteItem{Put: p}
}

func tUpdate(table string, k map[string]types.AttributeValue, upd, cond string, vals map[string]types.AttributeValue) types.TransactWriteItem {
	u := &types.Update{TableName: aws.String(table), Key: k, UpdateExpression: aws.String(upd), ExpressionAttributeValues: vals}
	if cond != "" {
		u.ConditionExpression = aws.String(cond)
	}
	return types.TransactWriteItem{Update: u}
}

func tDelete(table string, k map[string]types.AttributeValue, cond string) types.TransactWriteItem {
	d := &types.Delete{TableName: aws.String(table), Key: k}
	if cond != "" {
		d.ConditionExpression = aws.String(cond)
	}
	return types.TransactWriteItem{Delete: d}
}

func tCheck(table string, k map[string]types.AttributeValue, cond string, vals map[string]types.AttributeValue) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: aws.String(table), Key: k, ConditionExpression: aws.String(cond),
		ExpressionAttributeValues: vals, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}
}

func TestDiffTransactions(t *testing.T) {
	p := newPair(t)
	table := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("tx"))})
	one := avM(":one", avN("1"))
	indexed := func(sk string) map[string]types.AttributeValue {
		return avM("PK", avS("t"), "SK", avS(sk), "GSI1PK", avS("g"), "GSI1SK", avS(sk), "n", avN("1"))
	}
	p.checkTx("a transaction of every action", nil,
		tPut(table, indexed("a"), "attribute_not_exists(PK)", nil),
		tUpdate(table, key("t", "b"), "ADD n :one", "", one),
		tDelete(table, key("t", "c"), ""),
		tCheck(table, key("t", "d"), "attribute_not_exists(PK)", nil))
	p.check("the items", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: aws.String("PK = :p"), ExpressionAttributeValues: avM(":p", avS("t"))})
	})
	p.checkTx("a cancelled transaction", nil,
		tPut(table, indexed("a2"), "attribute_not_exists(PK)", nil),
		tUpdate(table, key("t", "b"), "ADD n :one", "n = :one", one),
		tDelete(table, key("t", "e"), "attribute_exists(PK)"),
		tCheck(table, key("t", "a"), "n = :one", avM(":one", avN("2"))))
	p.check("nothing changed", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: aws.String("PK = :p"), ExpressionAttributeValues: avM(":p", avS("t"))})
	})
	p.checkTx("an update that cannot apply", nil,
		tPut(table, indexed("a"), "attribute_not_exists(PK)", nil),
		tUpdate(table, key("t", "z"), "SET n = n + :one", "", one))
	p.check("an update of a key", transact(nil, tUpdate(table, key("t", "b"), "SET PK = :x", "", avM(":x", avS("x")))))
	p.checkTx("an item twice", nil, tPut(table, indexed("a"), "", nil), tDelete(table, key("t", "a"), ""))
	p.check("no action", transact(nil))
	p.check("an action of none", transact(nil, types.TransactWriteItem{}))
	p.check("an action of two", transact(nil, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: indexed("a")}, Delete: &types.Delete{TableName: aws.String(table), Key: key("t", "a")}}))
	p.check("a missing table", transact(nil, tPut(p.table("nope"), indexed("a"), "", nil)))
	p.check("a bad expression", transact(nil, tPut(table, indexed("a"), "attribute_not_exists(", nil)))
	var many []types.TransactWriteItem
	for i := range 101 {
		many = append(many, tPut(table, indexed(fmt.Sprint(i)), "", nil))
	}
	p.checkTx("101 actions", nil, many...)
	p.checkTx("100 actions", nil, many[:100]...)
	var large []types.TransactWriteItem
	for i := range 11 {
		large = append(large, tPut(table, avM("PK", avS("big"), "SK", avS(fmt.Sprint(i)), "x", avS(strings.Repeat("y", 390*1024))), "", nil))
	}
	p.checkTx("over 4 MB", nil, large...)
	p.checkTx("under 4 MB", nil, large[:10]...)
	p.check("a long token", transact(aws.String(strings.Repeat("x", 37)), tPut(table, indexed("a"), "", nil)))

	// Idempotency: the same token and request succeed once; another
	// request with it is refused; a cancelled one leaves it unused.
	token := aws.String(strings.TrimPrefix(p.prefix, "diff-") + "token")
	p.check("with a token", transact(token, tUpdate(table, key("t", "counter"), "ADD n :one", "", one)))
	p.check("again", transact(token, tUpdate(table, key("t", "counter"), "ADD n :one", "", one)))
	p.check("counted once", get(table, key("t", "counter")))
	p.check("another request with the token", transact(token, tUpdate(table, key("t", "other"), "ADD n :one", "", one)))
	failing := aws.String(strings.TrimPrefix(p.prefix, "diff-") + "failing")
	p.checkTx("a cancelled request with a token", failing, tCheck(table, key("t", "nothing"), "attribute_exists(PK)", nil), tUpdate(table, key("t", "counter"), "ADD n :one", "", one))
	p.check("its token used for another", transact(failing, tUpdate(table, key("t", "counter"), "ADD n :one", "", one)))
	p.check("counted", get(table, key("t", "counter")))

	p.check("transact get", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
			{Get: &types.Get{TableName: aws.String(table), Key: key("t", "a")}},
			{Get: &types.Get{TableName: aws.String(table), Key: key("t", "nothing")}},
			{Get: &types.Get{TableName: aws.String(table), Key: key("t", "b"), ProjectionExpression: aws.String("n")}},
		}, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	})
}

// checkTx compares a transaction of items.
func (p *pair) checkTx(name string, token *string, items ...types.TransactWriteItem) {
	p.t.Helper()
	p.check(name, transact(token, items...), transactOpts(items)...)
}

// TestDiffTransactionCapacity compares what single actions bill, which
// DynamoDB Local gets right.
func TestDiffTransactionCapacity(t *testing.T) {
	p := newPair(t)
	table := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("txcap"))})
	one := avM(":one", avN("1"))
	for _, size := range []int{10, 1000, 1020, 5000, 9000} {
		it := avM("PK", avS("c"), "SK", avS("x"), "GSI1PK", avS("g"), "GSI1SK", avS("x"), "pad", avS(strings.Repeat("p", size)))
		p.checkTx(fmt.Sprintf("put of %d", size), nil, tPut(table, it, "", nil))
		p.checkTx(fmt.Sprintf("update of %d", size), nil, tUpdate(table, key("c", "x"), "ADD n :one", "", one))
		p.checkTx(fmt.Sprintf("check of %d", size), nil, tCheck(table, key("c", "x"), "attribute_exists(PK)", nil))
		p.checkTx(fmt.Sprintf("delete of %d", size), nil, tDelete(table, key("c", "x"), ""))
	}
	p.checkTx("check of nothing", nil, tCheck(table, key("c", "x"), "attribute_not_exists(PK)", nil))
	p.check("delete of nothing", transact(nil, tDelete(table, key("c", "x"), "")), localCapacityBug)
}

func TestDiffTables(t *testing.T) {
	p := newPair(t)
	table := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("tables"))})
	p.check("create it again", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		out, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(table), BillingMode: types.BillingModePayPerRequest,
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS}},
			KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}}})
		if err != nil {
			return nil, err
		}
		return fmt.Sprint(out.TableDescription.TableStatus), nil
	})
	p.check("describe", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			return nil, err
		}
		d := out.Table
		var gsi []string
		for _, g := range d.GlobalSecondaryIndexes {
			gsi = append(gsi, fmt.Sprintf("%s %v %s %s", aws.ToString(g.IndexName), render(keySchemaAV(g.KeySchema)), g.Projection.ProjectionType, g.IndexStatus))
		}
		var defs []string
		for _, a := range d.AttributeDefinitions {
			defs = append(defs, aws.ToString(a.AttributeName)+" "+string(a.AttributeType))
		}
		return fmt.Sprintf("%s %s %v %v %s %v %d", aws.ToString(d.TableName), d.TableStatus, defs, render(keySchemaAV(d.KeySchema)), d.BillingModeSummary.BillingMode, gsi, aws.ToInt64(d.ItemCount)), nil
	})
	p.check("describe a missing table", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(p.table("nope"))})
	})
	p.check("delete a missing table", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(p.table("nope"))})
	})
	ttl := func(attr string, on bool) sdkCall {
		return func(ctx context.Context, db *dynamodb.Client) (any, error) {
			return db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(table),
				TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(attr), Enabled: aws.Bool(on)}})
		}
	}
	describeTTL := func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	}
	p.check("ttl off at first", describeTTL)
	p.check("turn ttl on", ttl("expiresAt", true))
	p.check("ttl on", describeTTL)
	p.check("turn it on again", ttl("expiresAt", true))
	p.check("turn it on for another attribute", ttl("other", true))
	p.check("turn it off for another attribute", ttl("other", false))
	p.check("turn it off", ttl("expiresAt", false))
	p.check("ttl off", describeTTL)
	for _, name := range []string{"ab", "a b", strings.Repeat("x", 256)} {
		p.check("create a table named "+name, func(ctx context.Context, db *dynamodb.Client) (any, error) {
			return db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
				AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS}},
				KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}}})
		})
	}
	// A table with a hash key only, and numbers as keys.
	numbers := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("numbers")),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeN}, {AttributeName: aws.String("at"), AttributeType: types.ScalarAttributeTypeN}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("at"), KeyType: types.KeyTypeRange}}})
	for _, at := range []string{"-10", "-1.5", "-1", "0", "0.001", "1", "1.5", "2", "10", "1E+20", "-1E+20", "1E-20"} {
		p.check("put at "+at, func(ctx context.Context, db *dynamodb.Client) (any, error) {
			return db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(numbers), Item: avM("id", avN("7"), "at", avN(at))})
		})
	}
	for _, c := range []struct{ expr, v string }{{"at > :v", "0"}, {"at < :v", "1"}, {"at BETWEEN :v AND :w", "-1.5"}, {"at >= :v", "-1E+21"}} {
		vals := avM(":id", avN("7"), ":v", avN(c.v))
		if strings.Contains(c.expr, ":w") {
			vals[":w"] = avN("1.5")
		}
		for _, forward := range []bool{true, false} {
			p.pages(fmt.Sprintf("numbers %s %s forward %v", c.expr, c.v, forward), dynamodb.QueryInput{TableName: aws.String(numbers),
				KeyConditionExpression: aws.String("id = :id AND " + c.expr), ExpressionAttributeValues: vals, ScanIndexForward: aws.Bool(forward), Limit: aws.Int32(3)})
		}
	}
	hashOnly := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("hash")),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}}})
	p.check("put by hash", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(hashOnly), Item: avM("id", avS("a"), "v", avN("1"))})
	})
	p.check("get by hash", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(hashOnly), Key: avM("id", avS("a"))})
	})
	p.check("query by hash", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(hashOnly), KeyConditionExpression: aws.String("id = :a"), ExpressionAttributeValues: avM(":a", avS("a")), Limit: aws.Int32(1)})
	})
}

func keySchemaAV(ks []types.KeySchemaElement) types.AttributeValue {
	m := map[string]types.AttributeValue{}
	for _, k := range ks {
		m[aws.ToString(k.AttributeName)] = avS(string(k.KeyType))
	}
	return &types.AttributeValueMemberM{Value: m}
}
