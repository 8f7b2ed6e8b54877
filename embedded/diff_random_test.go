package embedded

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestDiffRandom runs random sequences of operations over a small key
// space on both backends and stops at the first difference, printing the
// seed that replays it. DIFF_SEED picks the seed, DIFF_OPS the number of
// operations (default 3000). At the end it compares the records of the
// table's stream, item by item.
func TestDiffRandom(t *testing.T) {
	p := newPair(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("DIFF_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("DIFF_SEED=%q: %v", s, err)
		}
		seed = v
	}
	ops := 3000
	if s := os.Getenv("DIFF_OPS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("DIFF_OPS=%q: %v", s, err)
		}
		ops = v
	}
	if testing.Short() {
		ops = min(ops, 200)
	}
	t.Logf("seed %d, %d operations (DIFF_SEED=%d replays them)", seed, ops, seed)
	table := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("random")),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}})
	g := &generator{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), table: table}
	for step := 1; step <= ops; step++ {
		op := g.next()
		if d := p.compare(op); d != "" {
			t.Fatalf("step %d: %s\n%s\nreplay: DIFF_SEED=%d DIFF_OPS=%d go test -run TestDiffRandom ./embedded", step, op.name, d, seed, step)
		}
		if step%250 == 0 || step == ops {
			if d := p.compareTables(table); d != "" {
				t.Fatalf("after step %d, the tables differ:\n%s\nreplay: DIFF_SEED=%d DIFF_OPS=%d go test -run TestDiffRandom ./embedded", step, d, seed, step)
			}
		}
		if step == ops {
			if d := p.compareStreams(table); d != "" {
				t.Fatalf("after step %d, the streams differ:\n%s\nreplay: DIFF_SEED=%d DIFF_OPS=%d go test -run TestDiffRandom ./embedded", step, d, seed, step)
			}
		}
	}
}

// randomOp is one generated operation.
type randomOp struct {
	name  string
	call  sdkCall
	opts  []compareOption
	query *dynamodb.QueryInput // a Query, compared page by page
}

// compare runs op on both backends and returns their difference.
func (p *pair) compare(op randomOp) string {
	if op.query == nil {
		got, want := p.both(op.call, op.opts...)
		return diff(got, want)
	}
	in := *op.query
	for page := 1; page < 50; page++ {
		got, want := p.both(query(in))
		if d := diff(got, want); d != "" {
			return fmt.Sprintf("page %d:\n%s", page, d)
		}
		if want.LastKey == "" || want.Err != "" {
			return ""
		}
		out, err := p.ref.Query(context.Background(), &in)
		if err != nil {
			return err.Error()
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	return ""
}

// compareTables compares everything in the table, as sets.
func (p *pair) compareTables(table string) string {
	scan := func(db *dynamodb.Client) []map[string]types.AttributeValue {
		var all []map[string]types.AttributeValue
		in := &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)}
		for {
			out, err := db.Scan(context.Background(), in)
			if err != nil {
				p.t.Fatal(err)
			}
			all = append(all, out.Items...)
			if out.LastEvaluatedKey == nil {
				return all
			}
			in.ExclusiveStartKey = out.LastEvaluatedKey
		}
	}
	return diff(summarize(&dynamodb.ScanOutput{Items: scan(p.emb)}, nil, unorderedItems), summarize(&dynamodb.ScanOutput{Items: scan(p.ref)}, nil, unorderedItems))
}

// generator makes random operations on a table of two partitions of five
// items, whose attributes are few, so that conditions often hold and
// often fail, and updates meet what earlier ones left.
type generator struct {
	r     *rand.Rand
	table string
	seq   int
}

func (g *generator) pick(options ...string) string { return options[g.r.IntN(len(options))] }
func (g *generator) chance(percent int) bool       { return g.r.IntN(100) < percent }

func (g *generator) pk() string { return g.pick("p0", "p1") }
func (g *generator) sk() string { return fmt.Sprintf("s%d", g.r.IntN(5)) }

func (g *generator) key() (string, string, map[string]types.AttributeValue) {
	pk, sk := g.pk(), g.sk()
	return pk, sk, key(pk, sk)
}

// scalar returns a small value: a number, a string, or rarely something
// else.
func (g *generator) scalar() types.AttributeValue {
	switch g.r.IntN(6) {
	case 0, 1:
		return avN(strconv.Itoa(g.r.IntN(25) - 5))
	case 2, 3:
		return avS(g.pick("", "a", "ab", "b", "héllo", "z"))
	case 4:
		return &types.AttributeValueMemberBOOL{Value: g.chance(50)}
	}
	return &types.AttributeValueMemberNULL{Value: true}
}

func (g *generator) stringSet() types.AttributeValue {
	var s []string
	for _, e := range []string{"a", "b", "c", "d"} {
		if g.chance(40) {
			s = append(s, e)
		}
	}
	if len(s) == 0 {
		s = []string{"a"}
	}
	return &types.AttributeValueMemberSS{Value: s}
}

func (g *generator) list() types.AttributeValue {
	l := []types.AttributeValue{}
	for range g.r.IntN(4) {
		l = append(l, g.scalar())
	}
	return &types.AttributeValueMemberL{Value: l}
}

func (g *generator) mapValue(depth int) types.AttributeValue {
	m := map[string]types.AttributeValue{}
	for _, k := range []string{"a", "b", "c"} {
		if g.chance(45) {
			if depth > 0 && g.chance(30) {
				m[k] = g.mapValue(depth - 1)
			} else {
				m[k] = g.scalar()
			}
		}
	}
	return &types.AttributeValueMemberM{Value: m}
}

// item returns a random item of the key.
func (g *generator) item(pk, sk string) map[string]types.AttributeValue {
	it := key(pk, sk)
	if g.chance(70) {
		it["n"] = avN(strconv.Itoa(g.r.IntN(20)))
	}
	if g.chance(50) {
		it["s"] = avS(g.pick("", "a", "ab", "abc", "b", "héllo"))
	}
	if g.chance(50) {
		it["m"] = g.mapValue(2)
	}
	if g.chance(40) {
		it["l"] = g.list()
	}
	if g.chance(40) {
		it["ss"] = g.stringSet()
	}
	if g.chance(50) {
		it["GSI1PK"] = avS(g.pick("g0", "g1"))
		it["GSI1SK"] = avS(fmt.Sprintf("x%d#%s#%s", g.r.IntN(3), pk, sk))
	}
	if g.chance(10) {
		it["big"] = avS(strings.Repeat("y", 500+g.r.IntN(6000)))
	}
	return it
}

// values collects the expression attribute values of one expression.
type values map[string]types.AttributeValue

func (v values) add(av types.AttributeValue) string {
	name := fmt.Sprintf(":v%d", len(v))
	v[name] = av
	return name
}

// condition returns a random condition on the item.
func (g *generator) condition(v values) string {
	var c string
	switch g.r.IntN(14) {
	case 0:
		c = "attribute_exists(PK)"
	case 1:
		c = "attribute_not_exists(PK)"
	case 2:
		c = "n = " + v.add(avN(strconv.Itoa(g.r.IntN(20))))
	case 3:
		c = "n > " + v.add(avN(strconv.Itoa(g.r.IntN(20))))
	case 4:
		lo := g.r.IntN(15)
		c = fmt.Sprintf("n BETWEEN %s AND %s", v.add(avN(strconv.Itoa(lo))), v.add(avN(strconv.Itoa(lo+g.r.IntN(8)))))
	case 5:
		c = "size(l) >= " + v.add(avN(strconv.Itoa(g.r.IntN(3))))
	case 6:
		c = "contains(ss, " + v.add(avS(g.pick("a", "b", "c"))) + ")"
	case 7:
		c = "begins_with(s, " + v.add(avS(g.pick("a", "h", ""))) + ")"
	case 8:
		c = "attribute_exists(m." + g.pick("a", "b", "c") + ")"
	case 9:
		c = "m.a = " + v.add(g.scalar())
	case 10:
		c = "attribute_type(m, " + v.add(avS(g.pick("M", "L", "S"))) + ")"
	case 11:
		c = "s IN (" + v.add(avS("a")) + ", " + v.add(avS("ab")) + ")"
	case 12:
		c = "size(m) = " + v.add(avN(strconv.Itoa(g.r.IntN(3))))
	default:
		c = "attribute_not_exists(m.b.c)"
	}
	switch g.r.IntN(8) {
	case 0:
		return "NOT " + c
	case 1:
		return c + " AND " + g.condition(v)
	case 2:
		return "(" + c + " OR " + g.condition(v) + ")"
	}
	return c
}

// update returns a random update expression: actions on distinct
// attributes, so that their paths never overlap.
func (g *generator) update(v values) string {
	type action struct{ clause, text string }
	var acts []action
	used := map[string]bool{}
	for range 1 + g.r.IntN(3) {
		attr := g.pick("n", "m", "l", "ss", "s", "g", "big", "b")
		if used[attr] {
			continue
		}
		used[attr] = true
		switch attr {
		case "n":
			switch g.r.IntN(5) {
			case 0:
				acts = append(acts, action{"SET", "n = n + " + v.add(avN(strconv.Itoa(g.r.IntN(5))))})
			case 1:
				acts = append(acts, action{"SET", "n = if_not_exists(n, " + v.add(avN("0")) + ") - " + v.add(avN("1"))})
			case 2:
				acts = append(acts, action{"ADD", "n " + v.add(avN(strconv.Itoa(g.r.IntN(7)-3)))})
			case 3:
				acts = append(acts, action{"REMOVE", "n"})
			default:
				acts = append(acts, action{"SET", "n = " + v.add(avN(strconv.Itoa(g.r.IntN(20))))})
			}
		case "m":
			k := g.pick("a", "b", "c")
			switch g.r.IntN(5) {
			case 0:
				acts = append(acts, action{"SET", "m." + k + " = " + v.add(g.scalar())})
			case 1:
				acts = append(acts, action{"REMOVE", "m." + k})
			case 2:
				acts = append(acts, action{"SET", "m = " + v.add(&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}})})
			case 3:
				acts = append(acts, action{"SET", "m." + k + ".c = " + v.add(g.scalar())})
			default:
				acts = append(acts, action{"SET", "m = " + v.add(g.mapValue(1))})
			}
		case "l":
			switch g.r.IntN(4) {
			case 0:
				acts = append(acts, action{"SET", "l = list_append(if_not_exists(l, " + v.add(&types.AttributeValueMemberL{Value: []types.AttributeValue{}}) + "), " + v.add(g.list()) + ")"})
			case 1:
				acts = append(acts, action{"REMOVE", fmt.Sprintf("l[%d]", g.r.IntN(3))})
			case 2:
				acts = append(acts, action{"SET", fmt.Sprintf("l[%d] = %s", g.r.IntN(4), v.add(g.scalar()))})
			default:
				acts = append(acts, action{"SET", "l = " + v.add(g.list())})
			}
		case "ss":
			if g.chance(50) {
				acts = append(acts, action{"ADD", "ss " + v.add(g.stringSet())})
			} else {
				acts = append(acts, action{"DELETE", "ss " + v.add(g.stringSet())})
			}
		case "s":
			if g.chance(70) {
				acts = append(acts, action{"SET", "s = " + v.add(avS(g.pick("", "a", "ab", "b", "héllo")))})
			} else {
				acts = append(acts, action{"REMOVE", "s"})
			}
		case "g":
			if g.chance(70) {
				acts = append(acts, action{"SET", "GSI1PK = " + v.add(avS(g.pick("g0", "g1"))) + ", GSI1SK = " + v.add(avS(fmt.Sprintf("x%d#%d", g.r.IntN(3), g.seq)))})
				g.seq++
			} else {
				acts = append(acts, action{"REMOVE", g.pick("GSI1PK", "GSI1SK")})
			}
		case "big":
			if g.chance(60) {
				acts = append(acts, action{"SET", "big = " + v.add(avS(strings.Repeat("y", 500+g.r.IntN(6000))))})
			} else {
				acts = append(acts, action{"REMOVE", "big"})
			}
		case "b":
			acts = append(acts, action{"SET", "b = " + v.add(&types.AttributeValueMemberBOOL{Value: g.chance(50)})})
		}
	}
	var clauses []string
	for _, clause := range []string{"SET", "REMOVE", "ADD", "DELETE"} {
		var parts []string
		for _, a := range acts {
			if a.clause == clause {
				parts = append(parts, a.text)
			}
		}
		if len(parts) > 0 {
			clauses = append(clauses, clause+" "+strings.Join(parts, ", "))
		}
	}
	return strings.Join(clauses, " ")
}

func orNil(v values) map[string]types.AttributeValue {
	if len(v) == 0 {
		return nil
	}
	return v
}

// next returns the next operation.
func (g *generator) next() randomOp {
	table := g.table
	capacity := types.ReturnConsumedCapacity(g.pick("TOTAL", "INDEXES", "NONE"))
	switch n := g.r.IntN(100); {
	case n < 20:
		pk, sk, _ := g.key()
		in := &dynamodb.PutItemInput{TableName: aws.String(table), Item: g.item(pk, sk), ReturnConsumedCapacity: capacity}
		v := values{}
		if g.chance(35) {
			in.ConditionExpression = aws.String(g.condition(v))
		}
		in.ExpressionAttributeValues = orNil(v)
		if g.chance(40) {
			in.ReturnValues = types.ReturnValueAllOld
		}
		if g.chance(40) {
			in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
		}
		return randomOp{name: fmt.Sprintf("PutItem %s/%s if %s", pk, sk, aws.ToString(in.ConditionExpression)), call: func(ctx context.Context, db *dynamodb.Client) (any, error) { return db.PutItem(ctx, in) }}
	case n < 50:
		pk, sk, k := g.key()
		v := values{}
		in := &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: k, UpdateExpression: aws.String(g.update(v)), ReturnConsumedCapacity: capacity,
			ReturnValues: types.ReturnValue(g.pick("NONE", "ALL_OLD", "ALL_NEW", "UPDATED_OLD", "UPDATED_NEW"))}
		if g.chance(30) {
			in.ConditionExpression = aws.String(g.condition(v))
		}
		if g.chance(40) {
			in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
		}
		in.ExpressionAttributeValues = orNil(v)
		return randomOp{name: fmt.Sprintf("UpdateItem %s/%s %s if %s", pk, sk, *in.UpdateExpression, aws.ToString(in.ConditionExpression)), call: func(ctx context.Context, db *dynamodb.Client) (any, error) { return db.UpdateItem(ctx, in) }}
	case n < 58:
		pk, sk, k := g.key()
		in := &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: k, ReturnConsumedCapacity: capacity}
		v := values{}
		if g.chance(40) {
			in.ConditionExpression = aws.String(g.condition(v))
		}
		in.ExpressionAttributeValues = orNil(v)
		if g.chance(50) {
			in.ReturnValues = types.ReturnValueAllOld
		}
		var opts []compareOption
		if capacity == types.ReturnConsumedCapacityNone {
			// DynamoDB Local reports the capacity of deleting nothing
			// even when not asked.
			opts = append(opts, localCapacityBug)
		}
		return randomOp{name: fmt.Sprintf("DeleteItem %s/%s if %s", pk, sk, aws.ToString(in.ConditionExpression)), opts: opts, call: func(ctx context.Context, db *dynamodb.Client) (any, error) { return db.DeleteItem(ctx, in) }}
	case n < 66:
		pk, sk, k := g.key()
		in := &dynamodb.GetItemInput{TableName: aws.String(table), Key: k, ConsistentRead: aws.Bool(g.chance(50)), ReturnConsumedCapacity: capacity}
		if g.chance(40) {
			in.ProjectionExpression = aws.String(g.pick("n", "m.a, l[0]", "SK, ss, m.b.c", "l[1], s", "big, GSI1SK"))
		}
		return randomOp{name: fmt.Sprintf("GetItem %s/%s %s", pk, sk, aws.ToString(in.ProjectionExpression)), call: func(ctx context.Context, db *dynamodb.Client) (any, error) { return db.GetItem(ctx, in) }}
	case n < 80:
		in := &dynamodb.QueryInput{TableName: aws.String(table), ScanIndexForward: aws.Bool(g.chance(50)), ReturnConsumedCapacity: capacity}
		v := values{}
		if g.chance(30) {
			in.IndexName = aws.String("GSI1")
			kc := "GSI1PK = " + v.add(avS(g.pick("g0", "g1")))
			if g.chance(50) {
				kc += " AND " + g.pick("GSI1SK < ", "GSI1SK >= ", "begins_with(GSI1SK, ") + v.add(avS(fmt.Sprintf("x%d", g.r.IntN(3))))
				if strings.Contains(kc, "begins_with") {
					kc += ")"
				}
			}
			in.KeyConditionExpression = aws.String(kc)
		} else {
			kc := "PK = " + v.add(avS(g.pk()))
			switch g.r.IntN(6) {
			case 0:
				kc += " AND SK " + g.pick("<", "<=", ">", ">=", "=") + " " + v.add(avS(g.sk()))
			case 1:
				kc += " AND SK BETWEEN " + v.add(avS("s1")) + " AND " + v.add(avS(g.pick("s1", "s3", "s4")))
			case 2:
				kc += " AND begins_with(SK, " + v.add(avS(g.pick("s", "s2", "t"))) + ")"
			}
			in.KeyConditionExpression = aws.String(kc)
			in.ConsistentRead = aws.Bool(g.chance(30))
		}
		if g.chance(60) {
			in.Limit = aws.Int32(int32(1 + g.r.IntN(6)))
		}
		if g.chance(25) {
			in.FilterExpression = aws.String(g.condition(v))
			if strings.Contains(*in.FilterExpression, "PK") && in.IndexName == nil {
				in.FilterExpression = aws.String("attribute_exists(n)")
			}
		}
		if g.chance(20) {
			in.ProjectionExpression = aws.String(g.pick("SK, n", "m, ss, GSI1PK", "l[0], s"))
		}
		in.ExpressionAttributeValues = orNil(v)
		return randomOp{name: fmt.Sprintf("Query %s index %s filter %s limit %d", *in.KeyConditionExpression, aws.ToString(in.IndexName), aws.ToString(in.FilterExpression), aws.ToInt32(in.Limit)), query: in}
	case n < 90:
		var items []types.TransactWriteItem
		seen := map[string]bool{}
		var desc []string
		for range 1 + g.r.IntN(4) {
			pk, sk, k := g.key()
			if seen[pk+sk] {
				continue
			}
			seen[pk+sk] = true
			v := values{}
			var cond *string
			if g.chance(40) {
				cond = aws.String(g.condition(v))
			}
			switch g.r.IntN(4) {
			case 0:
				items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: g.item(pk, sk), ConditionExpression: cond, ExpressionAttributeValues: orNil(v),
					ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}})
				desc = append(desc, "Put "+pk+"/"+sk)
			case 1:
				upd := g.update(v)
				items = append(items, types.TransactWriteItem{Update: &types.Update{TableName: aws.String(table), Key: k, UpdateExpression: aws.String(upd), ConditionExpression: cond, ExpressionAttributeValues: orNil(v)}})
				desc = append(desc, "Update "+pk+"/"+sk+" "+upd)
			case 2:
				items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(table), Key: k, ConditionExpression: cond, ExpressionAttributeValues: orNil(v)}})
				desc = append(desc, "Delete "+pk+"/"+sk)
			default:
				if cond == nil {
					cond = aws.String("attribute_exists(PK)")
				}
				items = append(items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: aws.String(table), Key: k, ConditionExpression: cond, ExpressionAttributeValues: orNil(v),
					ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}})
				desc = append(desc, "Check "+pk+"/"+sk)
			}
			if cond != nil {
				desc[len(desc)-1] += " if " + *cond
			}
		}
		opts := transactOpts(items)
		for _, it := range items {
			if it.Delete != nil {
				opts = append(opts, localCapacityBug) // a delete of nothing
			}
		}
		in := &dynamodb.TransactWriteItemsInput{TransactItems: items, ReturnConsumedCapacity: capacity}
		return randomOp{name: "TransactWriteItems " + strings.Join(desc, "; "), opts: opts, call: func(ctx context.Context, db *dynamodb.Client) (any, error) { return db.TransactWriteItems(ctx, in) }}
	case n < 95:
		var reqs []types.WriteRequest
		seen := map[string]bool{}
		hasDelete := false
		for range 1 + g.r.IntN(5) {
			pk, sk, k := g.key()
			if seen[pk+sk] {
				continue
			}
			seen[pk+sk] = true
			if g.chance(60) {
				reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: g.item(pk, sk)}})
			} else {
				reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}})
				hasDelete = true
			}
		}
		var opts []compareOption
		if hasDelete {
			opts = append(opts, localCapacityBug)
		}
		in := &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: reqs}, ReturnConsumedCapacity: capacity}
		return randomOp{name: fmt.Sprintf("BatchWriteItem of %d", len(reqs)), opts: opts, call: func(ctx context.Context, db *dynamodb.Client) (any, error) { return db.BatchWriteItem(ctx, in) }}
	default:
		var keys []map[string]types.AttributeValue
		seen := map[string]bool{}
		for range 1 + g.r.IntN(6) {
			pk, sk, k := g.key()
			if !seen[pk+sk] {
				seen[pk+sk] = true
				keys = append(keys, k)
			}
		}
		in := &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{table: {Keys: keys, ConsistentRead: aws.Bool(g.chance(50))}}, ReturnConsumedCapacity: capacity}
		return randomOp{name: fmt.Sprintf("BatchGetItem of %d", len(keys)), call: func(ctx context.Context, db *dynamodb.Client) (any, error) { return db.BatchGetItem(ctx, in) }}
	}
}
