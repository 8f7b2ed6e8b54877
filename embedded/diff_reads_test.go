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

// Differential cases of Query, Scan and BatchGetItem.

// seedReads writes partitions p0..p2 with sort keys s00..s11 (and a few
// odd ones), spread over the GSI1 partitions g0 and g1.
func seedReads(p *pair, table string) {
	p.t.Helper()
	for pk := range 3 {
		for sk := range 12 {
			it := avM("PK", avS(fmt.Sprintf("p%d", pk)), "SK", avS(fmt.Sprintf("s%02d", sk)), "n", avN(fmt.Sprint(sk)), "x", avS(strings.Repeat("v", 300*sk)))
			if sk%3 != 0 {
				it["GSI1PK"] = avS(fmt.Sprintf("g%d", sk%2))
				it["GSI1SK"] = avS(fmt.Sprintf("t%02d-%d", 11-sk, pk))
			}
			p.check("seed", put(table, it))
		}
	}
	for _, sk := range []string{"a\x00b", "s", "s0", "s00\x00", "ü", "~"} {
		p.check("seed odd key", put(table, avM("PK", avS("p0"), "SK", avS(sk), "n", avN("0"))))
	}
}

// query returns a Query call.
func query(in dynamodb.QueryInput) sdkCall {
	return func(ctx context.Context, db *dynamodb.Client) (any, error) {
		c := in
		return db.Query(ctx, &c)
	}
}

func TestDiffQuery(t *testing.T) {
	p := newPair(t)
	table := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("query"))})
	seedReads(p, table)
	vals := func(kv ...any) map[string]types.AttributeValue { return avM(kv...) }
	conds := []struct {
		expr string
		vals map[string]types.AttributeValue
	}{
		{"PK = :p", vals(":p", avS("p0"))},
		{"PK = :p AND SK = :s", vals(":p", avS("p0"), ":s", avS("s03"))},
		{"PK = :p AND SK < :s", vals(":p", avS("p0"), ":s", avS("s03"))},
		{"PK = :p AND SK <= :s", vals(":p", avS("p0"), ":s", avS("s03"))},
		{"PK = :p AND SK > :s", vals(":p", avS("p0"), ":s", avS("s03"))},
		{"PK = :p AND SK >= :s", vals(":p", avS("p0"), ":s", avS("s03"))},
		{"PK = :p AND SK BETWEEN :a AND :b", vals(":p", avS("p0"), ":a", avS("s02"), ":b", avS("s07"))},
		{"PK = :p AND begins_with(SK, :s)", vals(":p", avS("p0"), ":s", avS("s0"))},
		{"PK = :p AND begins_with(SK, :s)", vals(":p", avS("p0"), ":s", avS("a"))},
		{"PK = :p AND SK > :s", vals(":p", avS("p0"), ":s", avS("s00"))},
		{":p = PK AND :s < SK", vals(":p", avS("p1"), ":s", avS("s09"))},
		{"(PK = :p) AND (SK >= :s)", vals(":p", avS("p2"), ":s", avS("s10"))},
		{"PK = :p", vals(":p", avS("nobody"))},
	}
	for _, c := range conds {
		for _, forward := range []bool{true, false} {
			for _, limit := range []int32{0, 1, 2, 5, 12, 13} {
				name := fmt.Sprintf("%s %v forward %v limit %d", c.expr, c.vals, forward, limit)
				in := dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: aws.String(c.expr), ExpressionAttributeValues: c.vals,
					ScanIndexForward: aws.Bool(forward), ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes}
				if limit > 0 {
					in.Limit = aws.Int32(limit)
				}
				p.pages(name, in)
			}
		}
	}
	gsi := []struct {
		expr string
		vals map[string]types.AttributeValue
	}{
		{"GSI1PK = :g", vals(":g", avS("g0"))},
		{"GSI1PK = :g AND GSI1SK < :s", vals(":g", avS("g1"), ":s", avS("t05"))},
		{"GSI1PK = :g AND GSI1SK <= :s", vals(":g", avS("g1"), ":s", avS("t04-1"))},
		{"GSI1PK = :g AND GSI1SK BETWEEN :a AND :b", vals(":g", avS("g0"), ":a", avS("t03-0"), ":b", avS("t09-2"))},
		{"GSI1PK = :g AND begins_with(GSI1SK, :s)", vals(":g", avS("g1"), ":s", avS("t0"))},
	}
	for _, c := range gsi {
		for _, forward := range []bool{true, false} {
			for _, limit := range []int32{0, 1, 4, 7} {
				in := dynamodb.QueryInput{TableName: aws.String(table), IndexName: aws.String("GSI1"), KeyConditionExpression: aws.String(c.expr), ExpressionAttributeValues: c.vals,
					ScanIndexForward: aws.Bool(forward), ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes}
				if limit > 0 {
					in.Limit = aws.Int32(limit)
				}
				p.pages(fmt.Sprintf("GSI1 %s forward %v limit %d", c.expr, forward, limit), in)
			}
		}
	}
	p.pages("filter and projection", dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: aws.String("PK = :p"),
		FilterExpression: aws.String("n > :five"), ProjectionExpression: aws.String("SK, n"), Limit: aws.Int32(4),
		ExpressionAttributeValues: vals(":p", avS("p1"), ":five", avN("5")), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	p.pages("count", dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: aws.String("PK = :p"), Select: types.SelectCount, Limit: aws.Int32(5),
		ExpressionAttributeValues: vals(":p", avS("p1")), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	p.pages("consistent", dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: aws.String("PK = :p"), ConsistentRead: aws.Bool(true),
		ExpressionAttributeValues: vals(":p", avS("p2")), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})

	bad := []dynamodb.QueryInput{
		{KeyConditionExpression: aws.String("SK = :a"), ExpressionAttributeValues: vals(":a", avS("x"))},
		{KeyConditionExpression: aws.String("PK = :a OR SK = :b"), ExpressionAttributeValues: vals(":a", avS("x"), ":b", avS("y"))},
		{KeyConditionExpression: aws.String("PK = :a AND SK = :b AND SK = :b"), ExpressionAttributeValues: vals(":a", avS("x"), ":b", avS("y"))},
		{KeyConditionExpression: aws.String("PK < :a"), ExpressionAttributeValues: vals(":a", avS("x"))},
		{KeyConditionExpression: aws.String("PK = :a AND SK <> :b"), ExpressionAttributeValues: vals(":a", avS("x"), ":b", avS("y"))},
		{KeyConditionExpression: aws.String("PK = :a AND x = :b"), ExpressionAttributeValues: vals(":a", avS("x"), ":b", avS("y"))},
		{KeyConditionExpression: aws.String("PK = :a AND contains(SK, :b)"), ExpressionAttributeValues: vals(":a", avS("x"), ":b", avS("y"))},
		{KeyConditionExpression: aws.String("PK = :a"), ExpressionAttributeValues: vals(":a", avN("1"))},
		{KeyConditionExpression: aws.String("PK = :a AND begins_with(SK, :b)"), ExpressionAttributeValues: vals(":a", avS("x"), ":b", avN("1"))},
		{KeyConditionExpression: aws.String("PK = :a"), ExpressionAttributeValues: vals(":a", avS("x")), Limit: aws.Int32(0)},
		{KeyConditionExpression: aws.String("PK = :a"), ExpressionAttributeValues: vals(":a", avS("x")), FilterExpression: aws.String("SK = :a")},
		{KeyConditionExpression: aws.String("PK = :a"), ExpressionAttributeValues: vals(":a", avS("x")), Select: types.SelectSpecificAttributes},
		{KeyConditionExpression: aws.String("PK = :a"), ExpressionAttributeValues: vals(":a", avS("x")), Select: types.SelectAllProjectedAttributes},
		{KeyConditionExpression: aws.String("PK = :a"), ExpressionAttributeValues: vals(":a", avS("x")), Select: types.SelectAllAttributes, ProjectionExpression: aws.String("SK")},
		{KeyConditionExpression: aws.String("PK = :a AND SK > :b"), ExpressionAttributeValues: vals(":a", avS("p0"), ":b", avS("s")), ExclusiveStartKey: key("p1", "s05")},
		{KeyConditionExpression: aws.String("PK = :a AND SK > :b"), ExpressionAttributeValues: vals(":a", avS("p0"), ":b", avS("s03")), ExclusiveStartKey: key("p0", "s01")},
		{KeyConditionExpression: aws.String("PK = :a AND SK > :b"), ExpressionAttributeValues: vals(":a", avS("p0"), ":b", avS("s03")), ExclusiveStartKey: avM("PK", avS("p0"))},
		{KeyConditionExpression: aws.String("PK = :a AND SK > :b"), ExpressionAttributeValues: vals(":a", avS("p0"), ":b", avS("s03")), ExclusiveStartKey: avM("PK", avS("p0"), "SK", avN("1"))},
		{KeyConditionExpression: aws.String("PK = :a AND SK > :b"), ExpressionAttributeValues: vals(":a", avS("p0"), ":b", avS("s03")), ExclusiveStartKey: key("p0", "s05")},
		{KeyConditionExpression: aws.String("PK = :a AND SK > :b"), ExpressionAttributeValues: vals(":a", avS("p0"), ":b", avS("s03")), ExclusiveStartKey: key("p0", "s055"), ScanIndexForward: aws.Bool(false)},
		{IndexName: aws.String("GSI1"), KeyConditionExpression: aws.String("GSI1PK = :a"), ExpressionAttributeValues: vals(":a", avS("g0")), ExclusiveStartKey: key("p0", "s01")},
		{IndexName: aws.String("GSI1"), KeyConditionExpression: aws.String("GSI1PK = :a"), ExpressionAttributeValues: vals(":a", avS("g0")), ExclusiveStartKey: avM("PK", avS("p0"), "SK", avS("s04"), "GSI1PK", avS("g9"), "GSI1SK", avS("t07-0"))},
		{IndexName: aws.String("GSI1"), KeyConditionExpression: aws.String("GSI1PK = :a"), ExpressionAttributeValues: vals(":a", avS("g0")), ConsistentRead: aws.Bool(true)},
		{IndexName: aws.String("GSI9"), KeyConditionExpression: aws.String("GSI1PK = :a"), ExpressionAttributeValues: vals(":a", avS("g0"))},
		{IndexName: aws.String("GSI1"), KeyConditionExpression: aws.String("GSI1PK = :a"), ExpressionAttributeValues: vals(":a", avS("g0")), FilterExpression: aws.String("GSI1SK = :a")},
		{IndexName: aws.String("GSI1"), KeyConditionExpression: aws.String("GSI1PK = :a"), ExpressionAttributeValues: vals(":a", avS("g0")), FilterExpression: aws.String("PK = :a")},
		{KeyConditionExpression: aws.String("PK = :a"), ExpressionAttributeValues: vals(":a", avS("x")), FilterExpression: aws.String("PK.x = :a")},
	}
	for i, in := range bad {
		in.TableName = aws.String(table)
		p.check(fmt.Sprintf("query %d: %s", i, aws.ToString(in.KeyConditionExpression)), query(in))
	}
	p.check("query of a missing table", query(dynamodb.QueryInput{TableName: aws.String(p.table("nope")), KeyConditionExpression: aws.String("PK = :a"), ExpressionAttributeValues: vals(":a", avS("x"))}))
}

// pages queries every page of in on both backends, each page from the
// ExclusiveStartKey the reference returned, and compares each.
func (p *pair) pages(name string, in dynamodb.QueryInput) {
	p.t.Helper()
	for page := 1; page < 100; page++ {
		got, want := p.both(query(in))
		if d := diff(got, want); d != "" {
			p.t.Errorf("%s, page %d: the engine differs from DynamoDB Local:\n%s", name, page, d)
			return
		}
		if want.LastKey == "" || want.Err != "" {
			return
		}
		out, err := p.ref.Query(context.Background(), &in)
		if err != nil {
			p.t.Fatal(err)
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

func TestDiffLargePages(t *testing.T) {
	p := newPair(t)
	table := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("large"))})
	for i := range 7 {
		p.check("seed", put(table, avM("PK", avS("p"), "SK", avS(fmt.Sprintf("%02d", i)), "pad", avS(strings.Repeat("x", 300*1024)),
			"GSI1PK", avS("g"), "GSI1SK", avS(fmt.Sprintf("%02d", i)))))
	}
	p.check("seed at the boundary", put(table, avM("PK", avS("q"), "SK", avS("0"), "pad", avS(strings.Repeat("x", 1<<19-7)))))
	p.check("seed at the boundary", put(table, avM("PK", avS("q"), "SK", avS("1"), "pad", avS(strings.Repeat("x", 1<<19-7)))))
	p.check("seed at the boundary", put(table, avM("PK", avS("q"), "SK", avS("2"), "pad", avS("x"))))
	for _, forward := range []bool{true, false} {
		p.pages(fmt.Sprintf("1 MB pages, forward %v", forward), dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: aws.String("PK = :p"),
			ExpressionAttributeValues: avM(":p", avS("p")), ScanIndexForward: aws.Bool(forward), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		p.pages(fmt.Sprintf("1 MB pages of GSI1, forward %v", forward), dynamodb.QueryInput{TableName: aws.String(table), IndexName: aws.String("GSI1"), KeyConditionExpression: aws.String("GSI1PK = :p"),
			ExpressionAttributeValues: avM(":p", avS("g")), ScanIndexForward: aws.Bool(forward), ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
		p.pages(fmt.Sprintf("exactly 1 MB, forward %v", forward), dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: aws.String("PK = :p"),
			ExpressionAttributeValues: avM(":p", avS("q")), ScanIndexForward: aws.Bool(forward), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	}
	p.pages("1 MB pages with a filter", dynamodb.QueryInput{TableName: aws.String(table), KeyConditionExpression: aws.String("PK = :p"), FilterExpression: aws.String("SK = :s"),
		ExpressionAttributeValues: avM(":p", avS("p"), ":s", avS("05")), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
}

func TestDiffScan(t *testing.T) {
	p := newPair(t)
	table := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("scan"))})
	seedReads(p, table)
	scan := func(in dynamodb.ScanInput) sdkCall {
		return func(ctx context.Context, db *dynamodb.Client) (any, error) {
			c := in
			c.TableName = aws.String(table)
			return db.Scan(ctx, &c)
		}
	}
	// Scan orders partitions by a hash of their keys, each engine its
	// own: whole scans compare as sets, pages by their counts.
	all := func(db *dynamodb.Client, in dynamodb.ScanInput) (items []map[string]types.AttributeValue, pages int) {
		in.TableName = aws.String(table)
		for {
			out, err := db.Scan(context.Background(), &in)
			if err != nil {
				p.t.Fatal(err)
			}
			items = append(items, out.Items...)
			pages++
			if out.LastEvaluatedKey == nil {
				return items, pages
			}
			in.ExclusiveStartKey = out.LastEvaluatedKey
		}
	}
	for _, in := range []dynamodb.ScanInput{
		{}, {Limit: aws.Int32(7)}, {ConsistentRead: aws.Bool(true)},
		{FilterExpression: aws.String("n > :n"), ExpressionAttributeValues: avM(":n", avN("6")), Limit: aws.Int32(5)},
		{IndexName: aws.String("GSI1")}, {IndexName: aws.String("GSI1"), Limit: aws.Int32(3)},
		{ProjectionExpression: aws.String("PK, SK")},
	} {
		name := fmt.Sprintf("scan %+v", in)
		got, gotPages := all(p.emb, in)
		want, wantPages := all(p.ref, in)
		if g, w := summarize(&dynamodb.ScanOutput{Items: got}, nil, unorderedItems), summarize(&dynamodb.ScanOutput{Items: want}, nil, unorderedItems); diff(g, w) != "" {
			p.t.Errorf("%s: the engine differs from DynamoDB Local:\n%s", name, diff(g, w))
		}
		if gotPages != wantPages {
			p.t.Errorf("%s: %d pages, DynamoDB Local %d", name, gotPages, wantPages)
		}
		opts := []compareOption{unorderedItems, noLastKey}
		if in.Limit != nil {
			opts = append(opts, countsOnly)
		}
		p.check(name+", first page", scan(in), opts...)
	}
	// Segments split the table between them, whatever the split.
	for _, total := range []int{1, 2, 3, 7} {
		var got, want []map[string]types.AttributeValue
		for seg := range total {
			g, _ := all(p.emb, dynamodb.ScanInput{Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(total))})
			w, _ := all(p.ref, dynamodb.ScanInput{Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(total))})
			got, want = append(got, g...), append(want, w...)
		}
		if g, w := summarize(&dynamodb.ScanOutput{Items: got}, nil, unorderedItems), summarize(&dynamodb.ScanOutput{Items: want}, nil, unorderedItems); diff(g, w) != "" {
			p.t.Errorf("%d segments: the engine differs from DynamoDB Local:\n%s", total, diff(g, w))
		}
	}
	for _, in := range []dynamodb.ScanInput{
		{Segment: aws.Int32(1)}, {TotalSegments: aws.Int32(2)}, {Segment: aws.Int32(2), TotalSegments: aws.Int32(2)},
		{Segment: aws.Int32(0), TotalSegments: aws.Int32(1000001)}, {Limit: aws.Int32(0)},
		{ExclusiveStartKey: avM("PK", avS("p0"))}, {IndexName: aws.String("GSI9")},
	} {
		p.check(fmt.Sprintf("scan %+v", in), scan(in))
	}
}

func TestDiffBatch(t *testing.T) {
	p := newPair(t)
	table := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("batch"))})
	seedReads(p, table)
	batchGet := func(keys []map[string]types.AttributeValue, proj *string, consistent bool) sdkCall {
		return func(ctx context.Context, db *dynamodb.Client) (any, error) {
			return db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
				table: {Keys: keys, ProjectionExpression: proj, ConsistentRead: aws.Bool(consistent)},
			}, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
		}
	}
	var keys []map[string]types.AttributeValue
	for i := range 12 {
		keys = append(keys, key("p1", fmt.Sprintf("s%02d", i)))
	}
	p.check("batch get", batchGet(keys, nil, false))
	p.check("batch get, consistent", batchGet(keys, nil, true))
	p.check("batch get with missing keys", batchGet([]map[string]types.AttributeValue{key("p1", "s01"), key("p9", "x"), key("p1", "zz")}, nil, false))
	p.check("batch get of missing keys", batchGet([]map[string]types.AttributeValue{key("p9", "x")}, nil, true))
	p.check("batch get with a projection", batchGet(keys, aws.String("SK, n"), false))
	p.check("batch get of a key twice", batchGet([]map[string]types.AttributeValue{key("p1", "s01"), key("p1", "s01")}, nil, false))
	p.check("batch get with a bad key", batchGet([]map[string]types.AttributeValue{avM("PK", avS("p1"))}, nil, false))
	var many []map[string]types.AttributeValue
	for i := range 101 {
		many = append(many, key("p1", fmt.Sprint(i)))
	}
	p.check("batch get of 101 keys", batchGet(many, nil, false))
	p.check("batch get of 100 keys", batchGet(many[:100], nil, false))
	p.check("batch get from a missing table", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		return db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{p.table("nope"): {Keys: keys[:1]}}})
	})

	// A batch that deletes a missing item bills it as DynamoDB Local
	// does not (localCapacityBug).
	batchWrite := func(reqs ...types.WriteRequest) sdkCall {
		return func(ctx context.Context, db *dynamodb.Client) (any, error) {
			return db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: reqs}, ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
		}
	}
	putReq := func(it map[string]types.AttributeValue) types.WriteRequest {
		return types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
	}
	delReq := func(k map[string]types.AttributeValue) types.WriteRequest {
		return types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}}
	}
	p.check("batch write", batchWrite(putReq(sample("b", "1")), putReq(avM("PK", avS("b"), "SK", avS("2"), "GSI1PK", avS("g"), "GSI1SK", avS("x"))), delReq(key("p1", "s01")), delReq(key("p1", "nothing"))), localCapacityBug)
	p.check("batch write again", batchWrite(putReq(sample("b", "1")), putReq(avM("PK", avS("b"), "SK", avS("2"), "GSI1PK", avS("g"), "GSI1SK", avS("x")))))
	p.check("batch delete of what has index entries", batchWrite(delReq(key("b", "2")), delReq(key("p1", "s02"))))
	p.check("batch delete of nothing", batchWrite(delReq(key("b", "nothing"))), localCapacityBug)
	p.check("batch write of one item twice", batchWrite(putReq(sample("b", "1")), delReq(key("b", "1"))))
	p.check("batch write of a bad item", batchWrite(putReq(avM("PK", avS("b")))))
	var lots []types.WriteRequest
	for i := range 26 {
		lots = append(lots, delReq(key("b", fmt.Sprint(i))))
	}
	p.check("batch write of 26", batchWrite(lots...))
	p.check("batch write of 25", batchWrite(lots[:25]...), localCapacityBug)
	p.check("and the result", batchGet(keys, nil, true))
}

func TestDiffIndexTies(t *testing.T) {
	p := newPair(t)
	table := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("ties"))})
	for i := range 9 {
		p.check("seed", put(table, avM("PK", avS(fmt.Sprintf("p%d", i)), "SK", avS("x"), "GSI1PK", avS("g"), "GSI1SK", avS(fmt.Sprint(i%3)))))
	}
	// Items with equal index keys come in an order DynamoDB leaves open:
	// the pages of both engines hold the same items, whatever the page
	// size.
	for _, limit := range []int32{1, 2, 4, 9} {
		for _, forward := range []bool{true, false} {
			collect := func(db *dynamodb.Client) []map[string]types.AttributeValue {
				in := &dynamodb.QueryInput{TableName: aws.String(table), IndexName: aws.String("GSI1"), KeyConditionExpression: aws.String("GSI1PK = :g"),
					ExpressionAttributeValues: avM(":g", avS("g")), Limit: aws.Int32(limit), ScanIndexForward: aws.Bool(forward)}
				var all []map[string]types.AttributeValue
				for {
					out, err := db.Query(context.Background(), in)
					if err != nil {
						t.Fatal(err)
					}
					all = append(all, out.Items...)
					if out.LastEvaluatedKey == nil {
						return all
					}
					in.ExclusiveStartKey = out.LastEvaluatedKey
				}
			}
			got, want := collect(p.emb), collect(p.ref)
			if d := diff(summarize(&dynamodb.QueryOutput{Items: got}, nil, unorderedItems), summarize(&dynamodb.QueryOutput{Items: want}, nil, unorderedItems)); d != "" {
				t.Errorf("limit %d, forward %v: %s", limit, forward, d)
			}
			for i := 1; i < len(got); i++ {
				a, b := got[i-1]["GSI1SK"].(*types.AttributeValueMemberS).Value, got[i]["GSI1SK"].(*types.AttributeValueMemberS).Value
				if forward && a > b || !forward && a < b {
					t.Errorf("limit %d, forward %v: %q before %q", limit, forward, a, b)
				}
			}
		}
	}
}
