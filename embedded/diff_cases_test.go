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

// Scripted differential cases: each feature the store and its tests use,
// and the errors DynamoDB gives around it.

// put returns a call of PutItem.
func put(table string, it map[string]types.AttributeValue) sdkCall {
	return func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: it, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	}
}

func get(table string, key map[string]types.AttributeValue) sdkCall {
	return func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
	}
}

func key(pk, sk string) map[string]types.AttributeValue { return avM("PK", avS(pk), "SK", avS(sk)) }

// sample is an item with a value of every type, nested ones included.
func sample(pk, sk string) map[string]types.AttributeValue {
	return avM("PK", avS(pk), "SK", avS(sk),
		"s", avS("héllo wörld"), "n", avN("42"), "f", avN("-1.50"), "b", &types.AttributeValueMemberB{Value: []byte{0, 1, 2}},
		"t", &types.AttributeValueMemberBOOL{Value: true}, "z", &types.AttributeValueMemberNULL{Value: true},
		"ss", &types.AttributeValueMemberSS{Value: []string{"a", "b", "c"}},
		"ns", &types.AttributeValueMemberNS{Value: []string{"1", "2.5", "-3"}},
		"bs", &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2, 3}}},
		"l", &types.AttributeValueMemberL{Value: []types.AttributeValue{avS("x"), avN("1"), &types.AttributeValueMemberL{Value: []types.AttributeValue{avS("deep")}}}},
		"m", &types.AttributeValueMemberM{Value: avM("k", avS("v"), "inner", &types.AttributeValueMemberM{Value: avM("x", avN("1"))}, "e", &types.AttributeValueMemberM{Value: avM()})},
		"el", &types.AttributeValueMemberL{Value: []types.AttributeValue{}},
		"em", &types.AttributeValueMemberM{Value: avM()},
		"es", avS(""),
	)
}

func TestDiffItems(t *testing.T) {
	p := newPair(t)
	table := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("items"))})

	p.check("put a sample of every type", put(table, sample("p", "1")))
	p.check("get it back", get(table, key("p", "1")))
	p.check("get a missing item", get(table, key("p", "missing")))
	p.check("get, eventually consistent, with capacity", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("p", "1"), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	})
	for _, proj := range []string{"s", "n, m.k", "l[1], l[0], m.inner.x", "m.e, em, el", "l[2][0]", "zz", "#a", "m.#a", "l[9]", "s, s", "m, m.k", "l[0], l.x", "a b", "name", "s,"} {
		names := map[string]string(nil)
		if strings.Contains(proj, "#a") {
			names = map[string]string{"#a": "k"}
		}
		p.check("projection "+proj, func(ctx context.Context, db *dynamodb.Client) (any, error) {
			return db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("p", "1"), ProjectionExpression: aws.String(proj), ExpressionAttributeNames: names, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		})
	}
	p.check("projection with an unused name", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("p", "1"), ProjectionExpression: aws.String("s"), ExpressionAttributeNames: map[string]string{"#x": "y"}})
	})

	// Items DynamoDB refuses.
	bad := map[string]map[string]types.AttributeValue{
		"empty string set":      avM("PK", avS("p"), "SK", avS("x"), "a", &types.AttributeValueMemberSS{Value: []string{}}),
		"duplicate in set":      avM("PK", avS("p"), "SK", avS("x"), "a", &types.AttributeValueMemberSS{Value: []string{"a", "a"}}),
		"empty number set":      avM("PK", avS("p"), "SK", avS("x"), "a", &types.AttributeValueMemberNS{Value: []string{}}),
		"bad number":            avM("PK", avS("p"), "SK", avS("x"), "a", avN("1e")),
		"39 digits":             avM("PK", avS("p"), "SK", avS("x"), "a", avN("123456789012345678901234567890123456789")),
		"overflow":              avM("PK", avS("p"), "SK", avS("x"), "a", avN("1E126")),
		"underflow":             avM("PK", avS("p"), "SK", avS("x"), "a", avN("1E-131")),
		"empty partition key":   avM("PK", avS(""), "SK", avS("x")),
		"empty sort key":        avM("PK", avS("p"), "SK", avS("")),
		"number partition key":  avM("PK", avN("1"), "SK", avS("x")),
		"missing sort key":      avM("PK", avS("p")),
		"index key of a number": avM("PK", avS("p"), "SK", avS("x"), "GSI1PK", avN("1")),
		"empty index key":       avM("PK", avS("p"), "SK", avS("x"), "GSI1PK", avS("")),
		"long partition key":    avM("PK", avS(strings.Repeat("k", 2049)), "SK", avS("x")),
		"long sort key":         avM("PK", avS("p"), "SK", avS(strings.Repeat("k", 1025))),
		"largest keys":          avM("PK", avS(strings.Repeat("k", 2048)), "SK", avS(strings.Repeat("k", 1024))),
		"400 KB":                avM("PK", avS("p"), "SK", avS("big"), "a", avS(strings.Repeat("x", 400*1024-9))),
		"over 400 KB":           avM("PK", avS("p"), "SK", avS("big"), "a", avS(strings.Repeat("x", 400*1024-8))),
	}
	for _, name := range sortedKeys(bad) {
		p.check("put "+name, put(table, bad[name]))
	}
	for _, n := range []string{"1.50", "1e3", "0.001", "1E-10", "-0", "00012.3400", "1E+125", "9.9999999999999999999999999999999999999E+125", "1E-130", "-1e-130", "+.5e+2", "10000000000000000000000000000000000000000", "12345678901234567890123456789012345678"} {
		p.check("number "+n, put(table, avM("PK", avS("n"), "SK", avS(n), "v", avN(n))))
		p.check("number "+n+" back", get(table, key("n", n)))
	}

	// Capacity at the unit boundaries, of writes and reads.
	for _, size := range []int{1017, 1018, 2041, 2042, 4089, 4090, 8185, 8186} {
		name := fmt.Sprintf("item of %d bytes", size+7)
		it := avM("PK", avS("c"), "SK", avS("x"), "s", avS(strings.Repeat("y", size)))
		p.check("put "+name, put(table, it))
		p.check("get "+name, func(ctx context.Context, db *dynamodb.Client) (any, error) {
			return db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("c", "x"), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		})
		p.check("delete "+name, func(ctx context.Context, db *dynamodb.Client) (any, error) {
			return db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key("c", "x"), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		})
	}
	for _, n := range []string{"0", "10", "0.5", "1.05", "-1", "1001", "0.011", "9999999999", "1234567890123456789012345678901234567"} {
		it := avM("PK", avS("c"), "SK", avS("n"), "s", avS(strings.Repeat("y", 1000)), "n", avN(n))
		p.check("size of number "+n, put(table, it))
		p.check("size of number "+n+", delete", func(ctx context.Context, db *dynamodb.Client) (any, error) {
			return db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key("c", "n"), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		})
	}

	// Keys that do not match the schema.
	for name, k := range map[string]map[string]types.AttributeValue{
		"missing sort key": avM("PK", avS("p")),
		"extra attribute":  avM("PK", avS("p"), "SK", avS("1"), "x", avS("y")),
		"other attribute":  avM("PK", avS("p"), "XX", avS("1")),
		"wrong type":       avM("PK", avS("p"), "SK", avN("1")),
		"empty":            avM("PK", avS("p"), "SK", avS("")),
	} {
		p.check("get with key "+name, get(table, k))
	}
	p.check("get from a missing table", get(p.table("nope"), key("p", "1")))
	p.check("get from a bad table name", get("x", key("p", "1")))
}

func TestDiffConditions(t *testing.T) {
	p := newPair(t)
	table := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("cond"))})
	p.check("seed", put(table, sample("p", "1")))
	vals := map[string]types.AttributeValue{
		":s": avS("héllo wörld"), ":n": avN("42"), ":one": avN("1"), ":big": avN("100"), ":x": avS("x"), ":he": avS("hé"),
		":ss": &types.AttributeValueMemberSS{Value: []string{"c", "b", "a"}}, ":tS": avS("S"), ":tM": avS("M"), ":bad": avS("X"),
		":l": &types.AttributeValueMemberL{Value: []types.AttributeValue{}}, ":m": &types.AttributeValueMemberM{Value: avM("k", avS("v"))},
		":null": &types.AttributeValueMemberNULL{Value: true}, ":b": &types.AttributeValueMemberB{Value: []byte{0, 1}},
		":sn": avS("42"), ":nine": avN("9"), ":two": avN("2"), ":three": avN("3"), ":em": &types.AttributeValueMemberM{Value: avM()},
	}
	conds := []string{
		"attribute_exists(PK)", "attribute_not_exists(PK)", "attribute_exists(m.inner.x)", "attribute_exists(l[2][0])", "attribute_not_exists(m.nope)",
		"s = :s", "s <> :s", "n = :n", "n <> :sn", "n < :big", "n <= :n", "n > :big", "n >= :n", "s < :x", "s > :x",
		"n BETWEEN :one AND :big", "n BETWEEN :big AND :one", "n BETWEEN :one AND :x", "s BETWEEN :he AND :x",
		"n IN (:one, :n)", "n IN (:one)", "s IN (:s, :x, :n)",
		"begins_with(s, :he)", "begins_with(s, :x)", "begins_with(n, :sn)", "begins_with(s, :n)", "begins_with(b, :b)",
		"contains(s, :x)", "contains(s, :he)", "contains(ss, :x)", "contains(l, :one)", "contains(m, :x)",
		"size(s) = :big", "size(ss) = :three", "size(l) = :three", "size(m) = :three", "size(n) = :two", "size(n) <> :two", "size(zz) <> :one", "size(b) = :three",
		"attribute_type(s, :tS)", "attribute_type(m, :tM)", "attribute_type(s, :bad)", "attribute_type(s, :n)",
		"ss = :ss", "m.k = :s", "em = :em", "el = :l", "z = :null", "l < :l",
		"NOT n = :n", "NOT NOT n = :n", "n = :n AND s = :s", "n = :one OR s = :s", "n = :one OR s = :x AND n = :n", "(n = :one OR s = :s) AND n = :n",
		"zz = :one", "zz <> :one", "zz < :one", "NOT zz < :one", "m.inner.x = :one", "l[1] = :one", "l[7] = :one", "s.k = :one",
		"((n = :n))", "(n) = :n", "n = (:n)", ":n = :n", ":n = n", "n = n", "begins_with(s, s)", "n IN (:one, n)", "n BETWEEN n AND :big",
		"size(s)", "foo(s)", "attribute_exists(:n)", "name = :n", "s =", "s == :s", "s = :s)", "(s = :s", "s BETWEEN :one", "s IN ()",
		"n = :undefined", "n = #undefined", "a-b = :one", "1a = :one", "_a = :one", "n = :n %", "n = :n AND", "begins_with(s)", "contains(s, :x, :x)",
		"attribute_exists(s) AND foo(s)", "#n = :one AND name = :one", "n = :nine AND begins_with(s)", "begins_with(s) AND n = :nine", "",
		"sizE(s) = :big", "ATTRIBUTE_EXISTS(s)", "n between :one and :big", "n in (:n)", "not n = :one",
	}
	for _, c := range conds {
		used := map[string]types.AttributeValue{}
		for k, v := range vals {
			if containsPlaceholder(c, k) {
				used[k] = v
			}
		}
		names := map[string]string(nil)
		if strings.Contains(c, "#n") {
			names = map[string]string{"#n": "n"}
		}
		if len(used) == 0 {
			used = nil
		}
		p.check("condition "+c, func(ctx context.Context, db *dynamodb.Client) (any, error) {
			return db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: sample("p", "1"), ConditionExpression: aws.String(c),
				ExpressionAttributeNames: names, ExpressionAttributeValues: used, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
				ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		})
	}
	p.check("condition on a missing item", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: sample("p", "new"), ConditionExpression: aws.String("attribute_exists(PK)"),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	})
	p.check("unused value", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: sample("p", "1"), ConditionExpression: aws.String("n = :n"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":n": avN("42"), ":unused": avN("1")}})
	})
	p.check("values without an expression", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: sample("p", "1"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":n": avN("42")}})
	})
	p.check("names without an expression", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: sample("p", "1"),
			ExpressionAttributeNames: map[string]string{"#n": "n"}})
	})
	p.check("an invalid expression value", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: sample("p", "1"), ConditionExpression: aws.String("n = :n"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberSS{Value: []string{}}}})
	})
	p.check("delete with a failed condition", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key("p", "1"), ConditionExpression: aws.String("n = :one"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": avN("1")}, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	})
	p.check("delete with ALL_OLD", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key("p", "1"), ReturnValues: types.ReturnValueAllOld, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	})
	p.check("delete a missing item", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key("p", "1"), ReturnValues: types.ReturnValueAllOld, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	})
	p.check("put with ALL_NEW", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: sample("p", "1"), ReturnValues: types.ReturnValueAllNew})
	})
	p.check("put with ALL_OLD", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: sample("p", "1"), ReturnValues: types.ReturnValueAllOld})
	})
}

func TestDiffUpdates(t *testing.T) {
	p := newPair(t)
	table := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("upd"))})
	vals := map[string]types.AttributeValue{
		":one": avN("1"), ":big": avN("1E+100"), ":max": avN("99999999999999999999999999999999999999"), ":frac": avN("0.25"), ":x": avS("x"),
		":l": &types.AttributeValueMemberL{Value: []types.AttributeValue{avN("7")}}, ":ss": &types.AttributeValueMemberSS{Value: []string{"c", "d"}},
		":ns": &types.AttributeValueMemberNS{Value: []string{"1"}}, ":sa": &types.AttributeValueMemberSS{Value: []string{"a", "b", "c"}},
		":em": &types.AttributeValueMemberM{Value: avM()}, ":el": &types.AttributeValueMemberL{Value: []types.AttributeValue{}},
		":m": &types.AttributeValueMemberM{Value: avM("a", avM2("b", avN("1")))}, ":neg": avN("-42"), ":tiny": avN("1E-130"),
	}
	updates := []string{
		"SET n = n + :one", "SET n = n - :one", "SET n = :one - n", "SET n = n + :frac", "SET q = n + :one", "SET n = q + :one", "SET s = s + :one", "SET n = :x + :one",
		"SET n = n + :big", "SET n = :max + :one", "SET f = f - f", "SET n = n + :neg", "SET n = :tiny - :tiny",
		"SET l = list_append(l, :l)", "SET l = list_append(:l, l)", "SET l = list_append(l, :one)", "SET l = list_append(q, :l)", "SET l = list_append(:el, :el)",
		"SET q = if_not_exists(q, :one)", "SET n = if_not_exists(n, :one)", "SET q = if_not_exists(q, n)", "SET q = if_not_exists(n, :one) + :one",
		"SET m.k = :x", "SET m.inner.y = :one", "SET m.nope.y = :one", "SET l[1] = :x", "SET l[10] = :x", "SET s.k = :x", "SET s[0] = :x", "SET m.e.k = :x",
		"SET em = :em, el = :el", "SET em.a = :m", "SET m.e = :m", "SET #k = :x", "SET a = :one, b = a", "SET a = :one, a = :one", "SET a = :one REMOVE a", "SET m.k = :x, m = :em", "SET l[1] = :x, l.k = :x",
		"REMOVE s", "REMOVE s, n, m.k", "REMOVE l[1], l[0]", "REMOVE l[10]", "REMOVE m.nope", "REMOVE m.nope.x", "REMOVE zz", "REMOVE s.k", "REMOVE m.inner.x",
		"REMOVE m.k, m.inner, m.e", "REMOVE ss",
		"ADD n :one", "ADD q :one", "ADD ss :ss", "ADD ss :ns", "ADD s :one", "ADD n :x", "ADD m.k2 :one", "ADD l[0] :one", "ADD ns :ns", "ADD qs :ss",
		"DELETE ss :sa", "DELETE ss :ss", "DELETE qq :ss", "DELETE ss :ns", "DELETE n :ns", "DELETE n :one",
		"SET PK = :x", "REMOVE SK", "ADD PK :one", "SET GSI1PK = :one", "SET GSI1PK = :x, GSI1SK = :x",
		"SET a = :one SET b = :one", "SET a", "SET a = ", "SET a = :one,", "SET a = :one b = :one", "SET a = :one + :one + :one", "SET a = size(s)", "SET a = foo(s)",
		"SET a = list_append(:l)", "SET a = if_not_exists(:one, a)", "ADD a :one, b", "REMOVE :one", "", "set a = :one remove b", "SET name = :one", "SET a = :undefined",
		"SET a = #undefined", "DELETE a :one",
	}
	base := sample("p", "1")
	for _, u := range updates {
		used := map[string]types.AttributeValue{}
		for k, v := range vals {
			if containsPlaceholder(u, k) {
				used[k] = v
			}
		}
		if len(used) == 0 {
			used = nil
		}
		names := map[string]string(nil)
		if strings.Contains(u, "#k") {
			names = map[string]string{"#k": "m.k"}
		}
		for _, rv := range []types.ReturnValue{types.ReturnValueAllNew, types.ReturnValueUpdatedOld, types.ReturnValueUpdatedNew} {
			p.check("reset", put(table, base))
			p.check(fmt.Sprintf("update %q returning %s", u, rv), func(ctx context.Context, db *dynamodb.Client) (any, error) {
				return db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("p", "1"), UpdateExpression: aws.String(u),
					ExpressionAttributeNames: names, ExpressionAttributeValues: used, ReturnValues: rv, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
			})
		}
	}
	p.check("update of a missing item", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("p", "new"), UpdateExpression: aws.String("SET a = if_not_exists(a, :one)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": avN("1")}, ReturnValues: types.ReturnValueAllNew})
	})
	p.check("update without an expression", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("p", "new2"), ReturnValues: types.ReturnValueAllNew})
	})
	p.check("remove on a missing item", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("p", "new3"), UpdateExpression: aws.String("REMOVE a"), ReturnValues: types.ReturnValueAllNew})
	})
	p.check("update with a failed condition", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("p", "1"), UpdateExpression: aws.String("SET a = :one"), ConditionExpression: aws.String("a = :one"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": avN("1")}, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	})
	p.check("update growing past 400 KB", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("p", "1"), UpdateExpression: aws.String("SET a = :a, b = :a"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": avS(strings.Repeat("x", 210*1024))}})
	})
	p.check("bad return values", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("p", "1"), ReturnValues: "BOGUS"})
	})
	p.check("an update that changes the index key", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("p", "1"), UpdateExpression: aws.String("SET GSI1PK = :a, GSI1SK = :a"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": avS("g")}, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	})
	p.check("then moves it", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("p", "1"), UpdateExpression: aws.String("SET GSI1SK = :a"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": avS("h")}, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	})
	p.check("then changes another attribute", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("p", "1"), UpdateExpression: aws.String("SET x = :a"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": avS("h")}, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	})
	p.check("then sets it to what it is", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("p", "1"), UpdateExpression: aws.String("SET x = :a"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": avS("h")}, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	})
	p.check("then removes it from the index", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("p", "1"), UpdateExpression: aws.String("REMOVE GSI1PK"),
			ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	})
}

func avM2(kv ...any) types.AttributeValue { return &types.AttributeValueMemberM{Value: avM(kv...)} }

// containsPlaceholder reports whether expr uses the placeholder p (and not
// just a longer one that starts with it).
func containsPlaceholder(expr, p string) bool {
	for i := 0; ; {
		j := strings.Index(expr[i:], p)
		if j < 0 {
			return false
		}
		end := i + j + len(p)
		if end == len(expr) || !isNameChar(expr[end]) {
			return true
		}
		i = end
	}
}
