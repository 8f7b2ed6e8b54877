package embedded

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	dynamoendpoint "github.com/blogql/blog/internal/dynamotest/endpoint"
)

// The differential suite: the same calls, through the same SDK client, on
// the engine and on the DynamoDB at DYNAMODB_ENDPOINT (DynamoDB Local, the
// reference), and every part of both answers compared. Without an endpoint
// it is skipped, unless REQUIRE_DYNAMODB=1 makes that a failure.

// pair is the two backends of a differential test.
type pair struct {
	t      *testing.T
	emb    *dynamodb.Client
	ref    *dynamodb.Client
	engine *Engine
	prefix string
}

// sdkClient returns a client of the engine (transport) or of the DynamoDB
// at endpoint. Only the latter retries, a lost connection to it.
func sdkClient(endpoint string, transport http.RoundTripper) *dynamodb.Client {
	o := dynamodb.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(endpoint),
		Credentials:      credentials.NewStaticCredentialsProvider("local", "local", ""),
		RetryMaxAttempts: 3,
	}
	if transport != nil {
		o.HTTPClient = &http.Client{Transport: transport}
		o.RetryMaxAttempts = 1
	}
	return dynamodb.New(o)
}

// newPair returns the engine and the reference, or skips the test when
// there is no reference.
func newPair(t *testing.T) *pair {
	t.Helper()
	endpoint := dynamoendpoint.Get(t)
	if endpoint == "" {
		t.Skip("the differential suite compares with DynamoDB Local: set DYNAMODB_ENDPOINT (scripts/dynamodb-local.sh)")
	}
	e, err := OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return &pair{
		t: t, engine: e,
		emb:    sdkClient("http://embedded.invalid", e),
		ref:    sdkClient(endpoint, nil),
		prefix: "diff-" + hex.EncodeToString(b) + "-",
	}
}

// table returns the name of a table of this test.
func (p *pair) table(name string) string { return p.prefix + name }

// createTable creates the same table on both backends: keys PK and SK
// (strings) and GSI1 on GSI1PK/GSI1SK, as the blog's, unless in says
// otherwise. The reference's table is deleted when the test ends.
func (p *pair) createTable(in *dynamodb.CreateTableInput) string {
	p.t.Helper()
	if in.KeySchema == nil {
		in.AttributeDefinitions = []types.AttributeDefinition{
			{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("SK"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("GSI1PK"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("GSI1SK"), AttributeType: types.ScalarAttributeTypeS},
		}
		in.KeySchema = []types.KeySchemaElement{
			{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange},
		}
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{
			IndexName: aws.String("GSI1"),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String("GSI1PK"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("GSI1SK"), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}}
	}
	if in.BillingMode == "" {
		in.BillingMode = types.BillingModePayPerRequest
	}
	ctx := context.Background()
	for _, db := range []*dynamodb.Client{p.ref, p.emb} {
		if _, err := db.CreateTable(ctx, in); err != nil {
			p.t.Fatalf("create table %s: %v", *in.TableName, err)
		}
	}
	name := *in.TableName
	p.t.Cleanup(func() {
		_, _ = p.ref.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return name
}

// sdkCall is one SDK call, made on each backend.
type sdkCall func(ctx context.Context, db *dynamodb.Client) (any, error)

// check makes the call on both backends and reports every difference of
// their answers under name; it returns the engine's outcome.
func (p *pair) check(name string, c sdkCall, opts ...compareOption) outcome {
	p.t.Helper()
	got, want := p.both(c, opts...)
	if d := diff(got, want); d != "" {
		p.t.Errorf("%s: the engine differs from DynamoDB Local:\n%s", name, d)
	}
	return got
}

// both makes the call on both backends and returns their outcomes, the
// engine's first.
func (p *pair) both(c sdkCall, opts ...compareOption) (got, want outcome) {
	ctx := context.Background()
	rv, rerr := c(ctx, p.ref)
	ev, eerr := c(ctx, p.emb)
	return summarize(ev, eerr, opts...), summarize(rv, rerr, opts...)
}

// compareOption loosens a comparison where DynamoDB Local and DynamoDB are
// known to differ, or where the order is not DynamoDB's promise.
type compareOption int

const (
	// unorderedItems compares Items as a set: Scan's order is the
	// order of partition hashes, which is each engine's own.
	unorderedItems compareOption = iota + 1
	// errorCodeOnly compares an error's code, not its message.
	errorCodeOnly
	// noLastKey ignores LastEvaluatedKey (Scan pages end at different
	// items when the orders differ).
	noLastKey
	// countsOnly compares how many items, not which: a Scan's first
	// page holds the first partitions in each engine's hash order.
	countsOnly
	// localCapacityBug ignores consumed capacity where DynamoDB Local
	// bills otherwise than DynamoDB (see the package documentation,
	// Differences): a transaction of several actions, a delete of a
	// missing item in a batch or a transaction, or alone when no
	// capacity was asked for.
	localCapacityBug
)

// outcome is an answer reduced to what a caller can see, as text.
type outcome struct {
	Err         string
	Reasons     []string
	Item        string
	Items       []string
	Count       int32
	Scanned     int32
	LastKey     string
	Capacity    []string
	Responses   []string
	Unprocessed string
	Other       string
}

func diff(got, want outcome) string {
	var b strings.Builder
	line := func(field string, g, w any) {
		if fmt.Sprint(g) != fmt.Sprint(w) {
			fmt.Fprintf(&b, "  %s:\n    engine:         %v\n    DynamoDB Local: %v\n", field, g, w)
		}
	}
	line("error", got.Err, want.Err)
	line("cancellation reasons", got.Reasons, want.Reasons)
	line("item", got.Item, want.Item)
	line("items", got.Items, want.Items)
	line("count", got.Count, want.Count)
	line("scanned count", got.Scanned, want.Scanned)
	line("last evaluated key", got.LastKey, want.LastKey)
	line("consumed capacity", got.Capacity, want.Capacity)
	line("responses", got.Responses, want.Responses)
	line("unprocessed", got.Unprocessed, want.Unprocessed)
	line("other", got.Other, want.Other)
	return b.String()
}

func has(opts []compareOption, o compareOption) bool { return slices.Contains(opts, o) }

// summarize reduces an answer to an outcome.
func summarize(v any, err error, opts ...compareOption) (o outcome) {
	if err != nil {
		var apiErr smithy.APIError
		if !errors.As(err, &apiErr) {
			o.Err = "not an API error: " + err.Error()
			return o
		}
		o.Err = apiErr.ErrorCode()
		if !has(opts, errorCodeOnly) {
			o.Err += ": " + apiErr.ErrorMessage()
		}
		var canceled *types.TransactionCanceledException
		if errors.As(err, &canceled) {
			for _, r := range canceled.CancellationReasons {
				s := aws.ToString(r.Code)
				if m := aws.ToString(r.Message); m != "" {
					s += " " + m
				}
				if r.Item != nil {
					s += " " + render(&types.AttributeValueMemberM{Value: r.Item})
				}
				o.Reasons = append(o.Reasons, s)
			}
		}
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) && ccf.Item != nil {
			o.Item = render(&types.AttributeValueMemberM{Value: ccf.Item})
		}
		return o
	}
	items := func(list []map[string]types.AttributeValue) []string {
		if has(opts, countsOnly) {
			return []string{fmt.Sprint(len(list), " items")}
		}
		out := make([]string, len(list))
		for i, it := range list {
			out[i] = render(&types.AttributeValueMemberM{Value: it})
		}
		if has(opts, unorderedItems) {
			sort.Strings(out)
		}
		return out
	}
	key := func(k map[string]types.AttributeValue) string {
		if k == nil || has(opts, noLastKey) {
			return ""
		}
		return render(&types.AttributeValueMemberM{Value: k})
	}
	item := func(it map[string]types.AttributeValue) string {
		if it == nil {
			return "none"
		}
		return render(&types.AttributeValueMemberM{Value: it})
	}
	defer func() {
		if has(opts, countsOnly) || has(opts, localCapacityBug) {
			o.Capacity = nil
		}
	}()
	switch out := v.(type) {
	case *dynamodb.GetItemOutput:
		o.Item = item(out.Item)
		o.Capacity = capacity(out.ConsumedCapacity)
	case *dynamodb.PutItemOutput:
		o.Item = item(out.Attributes)
		o.Capacity = capacity(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		o.Item = item(out.Attributes)
		o.Capacity = capacity(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		o.Item = item(out.Attributes)
		o.Capacity = capacity(out.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		o.Items, o.Count, o.Scanned, o.LastKey = items(out.Items), out.Count, out.ScannedCount, key(out.LastEvaluatedKey)
		o.Capacity = capacity(out.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		o.Items, o.Count, o.Scanned, o.LastKey = items(out.Items), out.Count, out.ScannedCount, key(out.LastEvaluatedKey)
		o.Capacity = capacity(out.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		for table, list := range out.Responses {
			for _, s := range items(list) {
				o.Responses = append(o.Responses, table+" "+s)
			}
		}
		sort.Strings(o.Responses)
		if len(out.UnprocessedKeys) > 0 {
			o.Unprocessed = fmt.Sprint(len(out.UnprocessedKeys))
		}
		o.Capacity = capacityList(out.ConsumedCapacity)
	case *dynamodb.BatchWriteItemOutput:
		if len(out.UnprocessedItems) > 0 {
			o.Unprocessed = fmt.Sprint(len(out.UnprocessedItems))
		}
		o.Capacity = capacityList(out.ConsumedCapacity)
	case *dynamodb.TransactWriteItemsOutput:
		o.Capacity = capacityList(out.ConsumedCapacity)
	case *dynamodb.TransactGetItemsOutput:
		for _, r := range out.Responses {
			o.Responses = append(o.Responses, item(r.Item))
		}
		o.Capacity = capacityList(out.ConsumedCapacity)
	case *dynamodb.DescribeTimeToLiveOutput:
		o.Other = fmt.Sprintf("%s %s", out.TimeToLiveDescription.TimeToLiveStatus, aws.ToString(out.TimeToLiveDescription.AttributeName))
	case *dynamodb.UpdateTimeToLiveOutput:
		o.Other = fmt.Sprintf("%v %s", aws.ToBool(out.TimeToLiveSpecification.Enabled), aws.ToString(out.TimeToLiveSpecification.AttributeName))
	case string:
		o.Other = out
	case nil:
	default:
		o.Other = fmt.Sprintf("%T", v)
	}
	return o
}

// capacity renders consumed capacities, each table's with its parts.
func capacity(cs ...*types.ConsumedCapacity) []string {
	var out []string
	for _, c := range cs {
		if c == nil {
			continue
		}
		s := fmt.Sprintf("%s %v", aws.ToString(c.TableName), aws.ToFloat64(c.CapacityUnits))
		if c.Table != nil {
			s += fmt.Sprintf(" table %v", aws.ToFloat64(c.Table.CapacityUnits))
		}
		for _, n := range sortedKeys(c.GlobalSecondaryIndexes) {
			s += fmt.Sprintf(" %s %v", n, aws.ToFloat64(c.GlobalSecondaryIndexes[n].CapacityUnits))
		}
		for _, n := range sortedKeys(c.LocalSecondaryIndexes) {
			s += fmt.Sprintf(" %s %v", n, aws.ToFloat64(c.LocalSecondaryIndexes[n].CapacityUnits))
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// capacities renders a list of capacities from a slice of values.
func capacityList(cs []types.ConsumedCapacity) []string {
	ps := make([]*types.ConsumedCapacity, len(cs))
	for i := range cs {
		ps[i] = &cs[i]
	}
	return capacity(ps...)
}

// render writes an attribute value as canonical text: maps and sets
// sorted, numbers by value (DynamoDB Local keeps the trailing zeros of a
// sum, as in 1.00, where DynamoDB writes 1).
func render(v types.AttributeValue) string {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		if len(x.Value) > 40 {
			return fmt.Sprintf("S%q…(%d bytes)", x.Value[:20], len(x.Value))
		}
		return fmt.Sprintf("S%q", x.Value)
	case *types.AttributeValueMemberN:
		n, err := parseNumber(x.Value)
		if err != nil {
			return "N(" + x.Value + "?)"
		}
		return "N" + n.String()
	case *types.AttributeValueMemberB:
		return "B" + base64.StdEncoding.EncodeToString(x.Value)
	case *types.AttributeValueMemberBOOL:
		return fmt.Sprintf("BOOL %v", x.Value)
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberSS:
		s := slices.Clone(x.Value)
		sort.Strings(s)
		return fmt.Sprintf("SS%q", s)
	case *types.AttributeValueMemberNS:
		s := make([]string, len(x.Value))
		for i, e := range x.Value {
			n, _ := parseNumber(e)
			s[i] = n.String()
		}
		sort.Strings(s)
		return fmt.Sprintf("NS%v", s)
	case *types.AttributeValueMemberBS:
		s := make([]string, len(x.Value))
		for i, e := range x.Value {
			s[i] = base64.StdEncoding.EncodeToString(e)
		}
		sort.Strings(s)
		return fmt.Sprintf("BS%v", s)
	case *types.AttributeValueMemberL:
		parts := make([]string, len(x.Value))
		for i, e := range x.Value {
			parts[i] = render(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *types.AttributeValueMemberM:
		keys := sortedKeys(x.Value)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%q: %s", k, render(x.Value[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprintf("?%T", v)
}

// Shorthands for attribute values in tests.

func avS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
func avN(s string) types.AttributeValue { return &types.AttributeValueMemberN{Value: s} }

func avM(kv ...any) map[string]types.AttributeValue {
	m := map[string]types.AttributeValue{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(types.AttributeValue)
	}
	return m
}
