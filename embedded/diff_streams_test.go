package embedded

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	dynamoendpoint "github.com/blogql/blog/internal/dynamotest/endpoint"
)

// Differential cases of DynamoDB Streams: the same writes on both
// backends, and per item the same records in the same order, with the
// same keys, images and sizes. Shard ids, sequence number values and
// times are each backend's own, and so is the order of records of
// different items (DynamoDB promises only an item's).

// streamPair is a pair with a DynamoDB Streams client of each backend.
type streamPair struct {
	*pair
	emb, ref *dynamodbstreams.Client
}

func newStreamPair(t *testing.T) *streamPair {
	p := newPair(t)
	return &streamPair{pair: p, emb: streamsClient("http://embedded.invalid", p.engine), ref: streamsClient(dynamoendpoint.Get(t), nil)}
}

// checkStreams makes a DynamoDB Streams call on both backends and
// reports the differences of their answers.
func (p *streamPair) checkStreams(name string, c func(ctx context.Context, sc *dynamodbstreams.Client) (any, error), opts ...compareOption) {
	p.t.Helper()
	ctx := context.Background()
	rv, rerr := c(ctx, p.ref)
	ev, eerr := c(ctx, p.emb)
	if d := diff(summarize(ev, eerr, opts...), summarize(rv, rerr, opts...)); d != "" {
		p.t.Errorf("%s: the engine differs from DynamoDB Local:\n%s", name, d)
	}
}

// streamArn returns the latest stream of a table on one backend.
func streamArn(t *testing.T, db *dynamodb.Client, table string) string {
	t.Helper()
	out, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil || out.Table.LatestStreamArn == nil {
		t.Fatalf("no stream on %s: %v", table, err)
	}
	return *out.Table.LatestStreamArn
}

// recordsByItem reads a stream, limit records a call, and groups its
// records by item, each item's in stream order, with its view type and
// size; with eventsOnly, only their events.
func recordsByItem(t *testing.T, sc *dynamodbstreams.Client, arn string, limit int32, eventsOnly bool) []string {
	t.Helper()
	byItem := map[string][]string{}
	for _, r := range readStream(t, sc, arn, limit) {
		k := renderImage(r.Dynamodb.Keys)
		if eventsOnly {
			byItem[k] = append(byItem[k], string(r.EventName))
			continue
		}
		byItem[k] = append(byItem[k], fmt.Sprintf("%s %s size=%d", describeRecord(r), r.Dynamodb.StreamViewType, aws.ToInt64(r.Dynamodb.SizeBytes)))
	}
	var out []string
	for k, rs := range byItem {
		out = append(out, k+":\n    "+strings.Join(rs, "\n    "))
	}
	sort.Strings(out)
	return out
}

// streamSample is sample without its empty maps: DynamoDB Local writes an
// empty map of a stream image as something else (an empty list, nothing
// when nested, or another value of the record, such as its partition
// key); the engine writes {}, as DynamoDB does, and GetItem agrees on both.
func streamSample() map[string]types.AttributeValue {
	it := sample("a", "1")
	delete(it, "em")
	delete(it["m"].(*types.AttributeValueMemberM).Value, "e")
	return it
}

// compareStreams reports the differences of the records of a table's
// stream on both backends, item by item: their events, in order. Not
// their images: random items hold empty maps, which DynamoDB Local writes
// wrong in images (see streamSample); TestDiffStreamRecords compares
// images.
func (p *pair) compareStreams(table string) string {
	p.t.Helper()
	emb := streamsClient("http://embedded.invalid", p.engine)
	ref := streamsClient(dynamoendpoint.Get(p.t), nil)
	got := recordsByItem(p.t, emb, streamArn(p.t, p.emb, table), 1000, true)
	want := recordsByItem(p.t, ref, streamArn(p.t, p.ref, table), 1000, true)
	if fmt.Sprint(got) == fmt.Sprint(want) {
		return ""
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("engine:\n  %s\nDynamoDB Local:\n  %s", got[i], want[i])
		}
	}
	return fmt.Sprintf("%d items with records, DynamoDB Local: %d", len(got), len(want))
}

func TestDiffStreamRecords(t *testing.T) {
	p := newStreamPair(t)
	for _, view := range []types.StreamViewType{types.StreamViewTypeNewAndOldImages, types.StreamViewTypeKeysOnly, types.StreamViewTypeNewImage, types.StreamViewTypeOldImage} {
		t.Run(string(view), func(t *testing.T) {
			p.t = t
			table := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("streams-" + strings.ToLower(string(view)))),
				StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: view}})
			tb := aws.String(table)
			p.check("put", put(table, streamSample()))
			p.check("put the same", put(table, streamSample()))
			p.check("put another", put(table, avM("PK", avS("b"), "SK", avS("1"), "GSI1PK", avS("g"), "GSI1SK", avS("1"))))
			p.check("update", func(ctx context.Context, db *dynamodb.Client) (any, error) {
				return db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: tb, Key: key("a", "1"), UpdateExpression: aws.String("SET n = n + :one, m.k = :v REMOVE ss"),
					ExpressionAttributeValues: avM(":one", avN("1"), ":v", avS("w"))})
			})
			p.check("update to what is there", func(ctx context.Context, db *dynamodb.Client) (any, error) {
				return db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: tb, Key: key("a", "1"), UpdateExpression: aws.String("SET n = :n"),
					ExpressionAttributeValues: avM(":n", avN("43"))})
			})
			p.check("update that creates", func(ctx context.Context, db *dynamodb.Client) (any, error) {
				return db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: tb, Key: key("c", "1"), UpdateExpression: aws.String("ADD hits :one"),
					ExpressionAttributeValues: avM(":one", avN("1"))})
			})
			p.check("failed condition", func(ctx context.Context, db *dynamodb.Client) (any, error) {
				return db.PutItem(ctx, &dynamodb.PutItemInput{TableName: tb, Item: key("a", "1"), ConditionExpression: aws.String("attribute_not_exists(PK)")})
			})
			p.check("delete a missing item", func(ctx context.Context, db *dynamodb.Client) (any, error) {
				return db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: tb, Key: key("zz", "1")})
			}, localCapacityBug)
			p.check("transaction", func(ctx context.Context, db *dynamodb.Client) (any, error) {
				return db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Delete: &types.Delete{TableName: tb, Key: key("b", "1")}},
					{Update: &types.Update{TableName: tb, Key: key("c", "1"), UpdateExpression: aws.String("ADD hits :one"), ExpressionAttributeValues: avM(":one", avN("1"))}},
					{Put: &types.Put{TableName: tb, Item: avM("PK", avS("d"), "SK", avS("1"), "l", &types.AttributeValueMemberL{Value: []types.AttributeValue{avS("x")}})}},
					{ConditionCheck: &types.ConditionCheck{TableName: tb, Key: key("a", "1"), ConditionExpression: aws.String("attribute_exists(PK)")}},
				}})
			})
			p.check("cancelled transaction", func(ctx context.Context, db *dynamodb.Client) (any, error) {
				return db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Put: &types.Put{TableName: tb, Item: key("e", "1")}},
					{ConditionCheck: &types.ConditionCheck{TableName: tb, Key: key("zz", "1"), ConditionExpression: aws.String("attribute_exists(PK)")}},
				}})
			})
			p.check("batch", func(ctx context.Context, db *dynamodb.Client) (any, error) {
				return db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: {
					{PutRequest: &types.PutRequest{Item: avM("PK", avS("a"), "SK", avS("1"))}},
					{DeleteRequest: &types.DeleteRequest{Key: key("d", "1")}},
					{PutRequest: &types.PutRequest{Item: avM("PK", avS("b"), "SK", avS("1"), "n", avN("1.50"))}},
				}}})
			})
			p.check("delete", func(ctx context.Context, db *dynamodb.Client) (any, error) {
				return db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: tb, Key: key("a", "1")})
			})

			got := recordsByItem(t, p.emb, streamArn(t, p.pair.emb, table), 3, false)
			want := recordsByItem(t, p.ref, streamArn(t, p.pair.ref, table), 3, false)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("records per item:\nengine:\n  %s\nDynamoDB Local:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

// describeStreamOf renders what DescribeStream says of a table's latest
// stream that both backends share: not its ARN, label or shard ids.
func describeStreamOf(ctx context.Context, sc *dynamodbstreams.Client, table string) (any, error) {
	list, err := sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String(table)})
	if err != nil || len(list.Streams) == 0 {
		return nil, err
	}
	latest := list.Streams[0]
	for _, s := range list.Streams {
		if aws.ToString(s.StreamLabel) > aws.ToString(latest.StreamLabel) {
			latest = s
		}
	}
	out, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: latest.StreamArn})
	if err != nil {
		return nil, err
	}
	d := out.StreamDescription
	s := fmt.Sprintf("%s %s %s", d.StreamStatus, d.StreamViewType, aws.ToString(d.TableName))
	for _, k := range d.KeySchema {
		s += fmt.Sprintf(" %s:%s", aws.ToString(k.AttributeName), k.KeyType)
	}
	for _, sh := range d.Shards {
		s += fmt.Sprintf(" shard(starts %v, ends %v, parent %v)", sh.SequenceNumberRange.StartingSequenceNumber != nil, sh.SequenceNumberRange.EndingSequenceNumber != nil, sh.ParentShardId != nil)
	}
	return s, nil
}

// streamSettings renders DescribeTable's stream settings.
func streamSettings(table string) sdkCall {
	return func(ctx context.Context, db *dynamodb.Client) (any, error) {
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			return nil, err
		}
		s := fmt.Sprintf("latest stream %v", out.Table.LatestStreamArn != nil && strings.HasSuffix(*out.Table.LatestStreamArn, "/stream/"+aws.ToString(out.Table.LatestStreamLabel)))
		if spec := out.Table.StreamSpecification; spec != nil {
			s += fmt.Sprintf(", enabled %v %s", aws.ToBool(spec.StreamEnabled), spec.StreamViewType)
		}
		return s, nil
	}
}

func TestDiffStreamSettings(t *testing.T) {
	p := newStreamPair(t)
	table := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("settings"))})
	tb := aws.String(table)
	base := func() *dynamodb.CreateTableInput {
		return &dynamodb.CreateTableInput{TableName: aws.String(p.table("refused")), BillingMode: types.BillingModePayPerRequest,
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: "S"}},
			KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: "HASH"}}}
	}
	for name, spec := range map[string]*types.StreamSpecification{
		"enabled without a view type": {StreamEnabled: aws.Bool(true)},
		"a view type but not enabled": {StreamEnabled: aws.Bool(false), StreamViewType: types.StreamViewTypeKeysOnly},
	} {
		p.check("CreateTable, "+name, func(ctx context.Context, db *dynamodb.Client) (any, error) {
			in := base()
			in.StreamSpecification = spec
			return db.CreateTable(ctx, in)
		})
	}
	update := func(spec *types.StreamSpecification) sdkCall {
		return func(ctx context.Context, db *dynamodb.Client) (any, error) {
			_, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: tb, StreamSpecification: spec})
			return nil, err
		}
	}
	p.check("no stream", streamSettings(table))
	p.check("nothing to update", update(nil))
	p.check("disable a stream that is not there", update(&types.StreamSpecification{StreamEnabled: aws.Bool(false)}))
	p.check("enable", update(&types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}))
	p.check("enabled", streamSettings(table))
	p.check("put", put(table, key("a", "1")))
	p.checkStreams("describe the stream", func(ctx context.Context, sc *dynamodbstreams.Client) (any, error) {
		return describeStreamOf(ctx, sc, table)
	})
	p.check("enable again", update(&types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly}))
	p.check("a missing table", func(ctx context.Context, db *dynamodb.Client) (any, error) {
		_, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(p.table("nope")), StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(false)}})
		return nil, err
	})
	p.check("disable", update(&types.StreamSpecification{StreamEnabled: aws.Bool(false)}))
	p.check("disabled", streamSettings(table))
	p.checkStreams("describe the disabled stream", func(ctx context.Context, sc *dynamodbstreams.Client) (any, error) {
		return describeStreamOf(ctx, sc, table)
	})
	p.check("a put writes no record", put(table, key("b", "1")))
	p.checkStreams("read the closed shard to its end", func(ctx context.Context, sc *dynamodbstreams.Client) (any, error) {
		list, err := sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: tb})
		if err != nil {
			return nil, err
		}
		arn := list.Streams[0].StreamArn
		d, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn})
		if err != nil {
			return nil, err
		}
		it, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn, ShardId: d.StreamDescription.Shards[0].ShardId, ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			return nil, err
		}
		out, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
		if err != nil {
			return nil, err
		}
		s := fmt.Sprintf("%d records, next %v", len(out.Records), out.NextShardIterator != nil)
		if out.NextShardIterator != nil {
			out, err = sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: out.NextShardIterator})
			if err != nil {
				return nil, err
			}
			s += fmt.Sprintf("; then %d records, next %v", len(out.Records), out.NextShardIterator != nil)
		}
		return s, nil
	})
	p.check("enable a new stream", update(&types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}))
	p.checkStreams("the disabled stream and the new one", func(ctx context.Context, sc *dynamodbstreams.Client) (any, error) {
		list, err := sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: tb})
		if err != nil {
			return nil, err
		}
		var s []string
		for _, st := range list.Streams {
			d, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: st.StreamArn})
			if err != nil {
				return nil, err
			}
			s = append(s, fmt.Sprint(d.StreamDescription.StreamStatus, " ", d.StreamDescription.StreamViewType))
		}
		sort.Strings(s)
		return strings.Join(s, ", "), nil
	})
	p.checkStreams("describe the new stream", func(ctx context.Context, sc *dynamodbstreams.Client) (any, error) {
		return describeStreamOf(ctx, sc, table)
	})
}

func TestDiffStreamErrors(t *testing.T) {
	p := newStreamPair(t)
	table := p.createTable(&dynamodb.CreateTableInput{TableName: aws.String(p.table("errors")),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly}})
	p.check("put", put(table, key("a", "1")))
	// shard returns the stream's ARN and shard on one backend.
	shard := func(ctx context.Context, sc *dynamodbstreams.Client) (arn, id *string, err error) {
		list, err := sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String(table)})
		if err != nil {
			return nil, nil, err
		}
		d, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: list.Streams[0].StreamArn})
		if err != nil {
			return nil, nil, err
		}
		return list.Streams[0].StreamArn, d.StreamDescription.Shards[0].ShardId, nil
	}
	iterator := func(kind stypes.ShardIteratorType, seq *string, shardID *string) func(context.Context, *dynamodbstreams.Client) (any, error) {
		return func(ctx context.Context, sc *dynamodbstreams.Client) (any, error) {
			arn, id, err := shard(ctx, sc)
			if err != nil {
				return nil, err
			}
			if shardID != nil {
				id = shardID
			}
			_, err = sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn, ShardId: id, ShardIteratorType: kind, SequenceNumber: seq})
			return nil, err
		}
	}
	p.checkStreams("a short sequence number", iterator(stypes.ShardIteratorTypeAtSequenceNumber, aws.String("1"), nil))
	p.checkStreams("AT_SEQUENCE_NUMBER without one", iterator(stypes.ShardIteratorTypeAtSequenceNumber, nil, nil))
	p.checkStreams("an unknown shard", iterator(stypes.ShardIteratorTypeLatest, nil, aws.String("shardId-00000000000000000000-00000000")))
	p.checkStreams("an unknown stream", func(ctx context.Context, sc *dynamodbstreams.Client) (any, error) {
		return sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String("x")})
	})
	p.checkStreams("a stream of another label", func(ctx context.Context, sc *dynamodbstreams.Client) (any, error) {
		arn, _, err := shard(ctx, sc)
		if err != nil {
			return nil, err
		}
		return sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(*arn + "0")})
	}, errorCodeOnly)
	p.checkStreams("the streams of a missing table", func(ctx context.Context, sc *dynamodbstreams.Client) (any, error) {
		out, err := sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String(p.table("nope"))})
		if err != nil {
			return nil, err
		}
		return fmt.Sprint(len(out.Streams), " streams"), nil
	})
	for _, limit := range []int32{0, 101} {
		p.checkStreams(fmt.Sprint("ListStreams, limit ", limit), func(ctx context.Context, sc *dynamodbstreams.Client) (any, error) {
			return sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{Limit: aws.Int32(limit)})
		})
		p.checkStreams(fmt.Sprint("DescribeStream, limit ", limit), func(ctx context.Context, sc *dynamodbstreams.Client) (any, error) {
			arn, _, err := shard(ctx, sc)
			if err != nil {
				return nil, err
			}
			return sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn, Limit: aws.Int32(limit)})
		})
	}
	for _, kind := range []stypes.ShardFilterType{stypes.ShardFilterTypeChildShards, "BOGUS"} {
		p.checkStreams("the children of the shard, filter "+string(kind), func(ctx context.Context, sc *dynamodbstreams.Client) (any, error) {
			arn, id, err := shard(ctx, sc)
			if err != nil {
				return nil, err
			}
			out, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn, ShardFilter: &stypes.ShardFilter{Type: kind, ShardId: id}})
			if err != nil {
				return nil, err
			}
			return fmt.Sprint(len(out.StreamDescription.Shards), " shards"), nil
		})
	}
	p.checkStreams("an iterator that is not one", func(ctx context.Context, sc *dynamodbstreams.Client) (any, error) {
		return sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String("garbage")})
	})
	p.checkStreams("a limit over 1000", func(ctx context.Context, sc *dynamodbstreams.Client) (any, error) {
		arn, id, err := shard(ctx, sc)
		if err != nil {
			return nil, err
		}
		it, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn, ShardId: id, ShardIteratorType: stypes.ShardIteratorTypeLatest})
		if err != nil {
			return nil, err
		}
		return sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator, Limit: aws.Int32(1001)})
	})
}
