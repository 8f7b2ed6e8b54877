package embedded

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/smithy-go"
	bolt "go.etcd.io/bbolt"
)

// Tests of DynamoDB Streams on the engine, through the SDK's
// dynamodbstreams client, as a consumer of the change feed reads it.

// streamsClient returns a DynamoDB Streams client of the engine (through
// transport) or of the DynamoDB at endpoint.
func streamsClient(endpoint string, transport http.RoundTripper) *dynamodbstreams.Client {
	o := dynamodbstreams.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(endpoint),
		Credentials:      credentials.NewStaticCredentialsProvider("local", "local", ""),
		RetryMaxAttempts: 3,
	}
	if transport != nil {
		o.HTTPClient = &http.Client{Transport: transport}
		o.RetryMaxAttempts = 1
	}
	return dynamodbstreams.New(o)
}

// streamTable creates a table of keys PK and SK with a stream of view.
func streamTable(t *testing.T, db *dynamodb.Client, name string, view types.StreamViewType) string {
	t.Helper()
	out, err := db.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: "S"}, {AttributeName: aws.String("SK"), AttributeType: "S"}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: "HASH"}, {AttributeName: aws.String("SK"), KeyType: "RANGE"}},
		StreamSpecification:  &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: view},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.TableDescription.LatestStreamArn == nil {
		t.Fatal("CreateTable did not return the stream's ARN")
	}
	return *out.TableDescription.LatestStreamArn
}

// readStream reads every record of the stream's shards from TRIM_HORIZON,
// limit records a call.
func readStream(t *testing.T, sc *dynamodbstreams.Client, arn string, limit int32) []stypes.Record {
	t.Helper()
	ctx := context.Background()
	desc, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	var out []stypes.Record
	for _, sh := range desc.StreamDescription.Shards {
		it, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: sh.ShardId, ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			t.Fatal(err)
		}
		iter := it.ShardIterator
		for iter != nil {
			page, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter, Limit: aws.Int32(limit)})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, page.Records...)
			if len(page.Records) == 0 {
				break // an open shard read to its end
			}
			iter = page.NextShardIterator
		}
	}
	return out
}

// describeRecord renders a record's event, keys and images.
func describeRecord(r stypes.Record) string {
	s := string(r.EventName) + " " + renderImage(r.Dynamodb.Keys)
	if r.Dynamodb.NewImage != nil {
		s += " new=" + renderImage(r.Dynamodb.NewImage)
	}
	if r.Dynamodb.OldImage != nil {
		s += " old=" + renderImage(r.Dynamodb.OldImage)
	}
	if r.UserIdentity != nil {
		s += " by=" + aws.ToString(r.UserIdentity.Type) + ":" + aws.ToString(r.UserIdentity.PrincipalId)
	}
	return s
}

func renderImage(m map[string]stypes.AttributeValue) string {
	out := map[string]types.AttributeValue{}
	for k, v := range m {
		out[k] = fromStream(v)
	}
	return render(&types.AttributeValueMemberM{Value: out})
}

// fromStream converts a DynamoDB Streams attribute value to DynamoDB's.
func fromStream(v stypes.AttributeValue) types.AttributeValue {
	switch x := v.(type) {
	case *stypes.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: x.Value}
	case *stypes.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: x.Value}
	case *stypes.AttributeValueMemberB:
		return &types.AttributeValueMemberB{Value: x.Value}
	case *stypes.AttributeValueMemberBOOL:
		return &types.AttributeValueMemberBOOL{Value: x.Value}
	case *stypes.AttributeValueMemberNULL:
		return &types.AttributeValueMemberNULL{Value: x.Value}
	case *stypes.AttributeValueMemberSS:
		return &types.AttributeValueMemberSS{Value: x.Value}
	case *stypes.AttributeValueMemberNS:
		return &types.AttributeValueMemberNS{Value: x.Value}
	case *stypes.AttributeValueMemberBS:
		return &types.AttributeValueMemberBS{Value: x.Value}
	case *stypes.AttributeValueMemberL:
		l := make([]types.AttributeValue, len(x.Value))
		for i, e := range x.Value {
			l[i] = fromStream(e)
		}
		return &types.AttributeValueMemberL{Value: l}
	case *stypes.AttributeValueMemberM:
		m := map[string]types.AttributeValue{}
		for k, e := range x.Value {
			m[k] = fromStream(e)
		}
		return &types.AttributeValueMemberM{Value: m}
	}
	return nil
}

// writeSequence makes the writes of the stream tests on table: every kind
// of change, and writes that change nothing.
func writeSequence(t *testing.T, db *dynamodb.Client, table string) {
	t.Helper()
	ctx := context.Background()
	tb := aws.String(table)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.PutItem(ctx, &dynamodb.PutItemInput{TableName: tb, Item: avM("PK", avS("a"), "SK", avS("1"), "n", avN("1"))}))
	must(db.PutItem(ctx, &dynamodb.PutItemInput{TableName: tb, Item: avM("PK", avS("a"), "SK", avS("1"), "n", avN("1"))})) // the same: no record
	must(db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: tb, Key: key("a", "1"), UpdateExpression: aws.String("SET n = n + :one, s = :s"),
		ExpressionAttributeValues: avM(":one", avN("1"), ":s", &types.AttributeValueMemberSS{Value: []string{"x", "y"}})}))
	must(db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: tb, Key: key("a", "1"), UpdateExpression: aws.String("SET n = :two"),
		ExpressionAttributeValues: avM(":two", avN("2"))})) // what is there: no record
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: tb, Item: key("a", "1"), ConditionExpression: aws.String("attribute_not_exists(PK)")}); err == nil {
		t.Fatal("the condition held")
	}
	must(db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: tb, Key: key("zz", "1")})) // nothing: no record
	must(db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: tb, Key: key("a", "1")}},
		{Put: &types.Put{TableName: tb, Item: avM("PK", avS("b"), "SK", avS("1"), "m", avM2("k", avS("v")))}},
	}}))
	must(db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: {
		{PutRequest: &types.PutRequest{Item: avM("PK", avS("c"), "SK", avS("1"))}},
		{DeleteRequest: &types.DeleteRequest{Key: key("b", "1")}},
	}}}))
}

// wantSequence is what writeSequence leaves in a NEW_AND_OLD_IMAGES
// stream, in order.
var wantSequence = []string{
	`INSERT {"PK": S"a", "SK": S"1"} new={"PK": S"a", "SK": S"1", "n": N1}`,
	`MODIFY {"PK": S"a", "SK": S"1"} new={"PK": S"a", "SK": S"1", "n": N2, "s": SS["x" "y"]} old={"PK": S"a", "SK": S"1", "n": N1}`,
	`REMOVE {"PK": S"a", "SK": S"1"} old={"PK": S"a", "SK": S"1", "n": N2, "s": SS["x" "y"]}`,
	`INSERT {"PK": S"b", "SK": S"1"} new={"PK": S"b", "SK": S"1", "m": {"k": S"v"}}`,
	`INSERT {"PK": S"c", "SK": S"1"} new={"PK": S"c", "SK": S"1"}`,
	`REMOVE {"PK": S"b", "SK": S"1"} old={"PK": S"b", "SK": S"1", "m": {"k": S"v"}}`,
}

// TestStreamRecordsOverBothTransports: the SDK's dynamodbstreams client
// reads, in the process and over HTTP, one record per change, in commit
// order, with increasing sequence numbers, and none for writes that
// change nothing or fail.
func TestStreamRecordsOverBothTransports(t *testing.T) {
	for _, viaHTTP := range []bool{false, true} {
		t.Run(map[bool]string{false: "RoundTripper", true: "Handler"}[viaHTTP], func(t *testing.T) {
			e, err := OpenMemory()
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			db, sc := engineClient(e), streamsClient("http://embedded.invalid", e)
			if viaHTTP {
				srv := httptest.NewServer(e)
				defer srv.Close()
				db, sc = sdkClient(srv.URL, nil), streamsClient(srv.URL, nil)
			}
			arn := streamTable(t, db, "blog", types.StreamViewTypeNewAndOldImages)
			writeSequence(t, db, "blog")

			ctx := context.Background()
			list, err := sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{})
			if err != nil || len(list.Streams) != 1 || aws.ToString(list.Streams[0].StreamArn) != arn || aws.ToString(list.Streams[0].TableName) != "blog" {
				t.Fatalf("ListStreams: %+v, %v", list, err)
			}
			table, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("blog")})
			if err != nil || aws.ToString(table.Table.LatestStreamArn) != arn || !strings.HasSuffix(arn, "/stream/"+aws.ToString(table.Table.LatestStreamLabel)) ||
				table.Table.StreamSpecification == nil || table.Table.StreamSpecification.StreamViewType != types.StreamViewTypeNewAndOldImages {
				t.Fatalf("DescribeTable: %+v, %v", table, err)
			}
			desc, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)})
			if err != nil {
				t.Fatal(err)
			}
			d := desc.StreamDescription
			if d.StreamStatus != stypes.StreamStatusEnabled || d.StreamViewType != stypes.StreamViewTypeNewAndOldImages || aws.ToString(d.TableName) != "blog" ||
				len(d.KeySchema) != 2 || len(d.Shards) != 1 || aws.ToString(d.Shards[0].SequenceNumberRange.StartingSequenceNumber) != "000000000000000000001" ||
				d.Shards[0].SequenceNumberRange.EndingSequenceNumber != nil {
				t.Fatalf("DescribeStream: %+v", d)
			}

			records := readStream(t, sc, arn, 2)
			var got []string
			prev := ""
			for _, r := range records {
				got = append(got, describeRecord(r))
				seq := aws.ToString(r.Dynamodb.SequenceNumber)
				if len(seq) != 21 || seq <= prev {
					t.Errorf("sequence number %q after %q", seq, prev)
				}
				prev = seq
				if aws.ToString(r.EventSource) != "aws:dynamodb" || aws.ToString(r.EventVersion) != "1.1" || aws.ToString(r.EventID) == "" ||
					r.Dynamodb.ApproximateCreationDateTime == nil || aws.ToInt64(r.Dynamodb.SizeBytes) <= 0 || r.Dynamodb.StreamViewType != stypes.StreamViewTypeNewAndOldImages {
					t.Errorf("record %+v", r)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(wantSequence) {
				t.Errorf("records:\n%s\nwant:\n%s", join(got), join(wantSequence))
			}
			// SizeBytes counts the keys and images: PK "a" SK "1" is 6 bytes,
			// n 1 is 3.
			if n := aws.ToInt64(records[0].Dynamodb.SizeBytes); n != 6+9 {
				t.Errorf("SizeBytes of the first INSERT = %d, want 15", n)
			}
		})
	}
}

// TestStreamViewTypes: each view type writes the images it names.
func TestStreamViewTypes(t *testing.T) {
	e, err := OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db, sc := engineClient(e), streamsClient("http://embedded.invalid", e)
	ctx := context.Background()
	for _, c := range []struct {
		view types.StreamViewType
		want []string
	}{
		{types.StreamViewTypeKeysOnly, []string{`INSERT {"PK": S"a", "SK": S"1"}`, `MODIFY {"PK": S"a", "SK": S"1"}`, `REMOVE {"PK": S"a", "SK": S"1"}`}},
		{types.StreamViewTypeNewImage, []string{`INSERT {"PK": S"a", "SK": S"1"} new={"PK": S"a", "SK": S"1", "n": N1}`, `MODIFY {"PK": S"a", "SK": S"1"} new={"PK": S"a", "SK": S"1", "n": N2}`, `REMOVE {"PK": S"a", "SK": S"1"}`}},
		{types.StreamViewTypeOldImage, []string{`INSERT {"PK": S"a", "SK": S"1"}`, `MODIFY {"PK": S"a", "SK": S"1"} old={"PK": S"a", "SK": S"1", "n": N1}`, `REMOVE {"PK": S"a", "SK": S"1"} old={"PK": S"a", "SK": S"1", "n": N2}`}},
	} {
		t.Run(string(c.view), func(t *testing.T) {
			table := "t-" + strings.ToLower(string(c.view))
			arn := streamTable(t, db, table, c.view)
			for _, n := range []string{"1", "2"} {
				if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: avM("PK", avS("a"), "SK", avS("1"), "n", avN(n))}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key("a", "1")}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range readStream(t, sc, arn, 100) {
				got = append(got, describeRecord(r))
				if r.Dynamodb.StreamViewType != stypes.StreamViewType(c.view) {
					t.Errorf("StreamViewType %s", r.Dynamodb.StreamViewType)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("records:\n%s\nwant:\n%s", join(got), join(c.want))
			}
		})
	}
}

// apiCode returns the error code of an SDK error, or "".
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// TestStreamIterators: the four iterator types start where DynamoDB's
// do; an iterator expires after 15 minutes, records after the retention
// (trimmed), with DynamoDB's errors; deletions by TTL carry the service's
// identity.
func TestStreamIterators(t *testing.T) {
	var clock atomic.Int64
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	clock.Store(start)
	e, err := Open(Options{Now: func() time.Time { return time.UnixMilli(clock.Load()) }, TTLInterval: -1, StreamRetention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db, sc := engineClient(e), streamsClient("http://embedded.invalid", e)
	ctx := context.Background()
	arn := streamTable(t, db, "blog", types.StreamViewTypeKeysOnly)
	put := func(pk string) {
		t.Helper()
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("blog"), Item: avM("PK", avS(pk), "SK", avS("1"), "exp", avN("1"))}); err != nil {
			t.Fatal(err)
		}
	}
	put("a")
	put("b")
	put("c")
	desc, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	shard := desc.StreamDescription.Shards[0].ShardId
	iterator := func(kind stypes.ShardIteratorType, seq string) (*string, error) {
		in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: shard, ShardIteratorType: kind}
		if seq != "" {
			in.SequenceNumber = aws.String(seq)
		}
		out, err := sc.GetShardIterator(ctx, in)
		if err != nil {
			return nil, err
		}
		return out.ShardIterator, nil
	}
	pks := func(it *string) (string, *string) {
		t.Helper()
		out, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it})
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		for _, r := range out.Records {
			s += r.Dynamodb.Keys["PK"].(*stypes.AttributeValueMemberS).Value
		}
		return s, out.NextShardIterator
	}
	const seq2 = "000000000000000000002"
	for _, c := range []struct {
		kind stypes.ShardIteratorType
		seq  string
		want string
	}{
		{stypes.ShardIteratorTypeTrimHorizon, "", "abc"},
		{stypes.ShardIteratorTypeLatest, "", ""},
		{stypes.ShardIteratorTypeAtSequenceNumber, seq2, "bc"},
		{stypes.ShardIteratorTypeAfterSequenceNumber, seq2, "c"},
	} {
		it, err := iterator(c.kind, c.seq)
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		if got, _ := pks(it); got != c.want {
			t.Errorf("%s %s: records %q, want %q", c.kind, c.seq, got, c.want)
		}
	}

	// LATEST, then a write: the next read has it, and so on.
	latest, _ := iterator(stypes.ShardIteratorTypeLatest, "")
	put("d")
	got, next := pks(latest)
	if got != "d" || next == nil {
		t.Fatalf("after LATEST: %q, next %v", got, next)
	}
	if got, _ := pks(next); got != "" {
		t.Errorf("read again: %q", got)
	}

	for _, c := range []struct {
		name, code string
		err        error
	}{
		{"sequence number past the end", "ValidationException", errOf(iterator(stypes.ShardIteratorTypeAtSequenceNumber, "000000000000000000099"))},
		{"short sequence number", "ValidationException", errOf(iterator(stypes.ShardIteratorTypeAtSequenceNumber, "2"))},
		{"unknown shard", "ResourceNotFoundException", errOf(sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: aws.String("shardId-00000000000000000000-00000000"), ShardIteratorType: stypes.ShardIteratorTypeLatest}))},
		{"unknown stream", "ResourceNotFoundException", errOf(sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn + "x")}))},
		{"bad iterator", "ValidationException", errOf(sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String("garbage")}))},
		{"limit over 1000", "ValidationException", errOf(sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: next, Limit: aws.Int32(1001)}))},
	} {
		if apiCode(c.err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, c.err, c.code)
		}
	}

	// Fifteen minutes on, an iterator has expired.
	horizon, _ := iterator(stypes.ShardIteratorTypeTrimHorizon, "")
	clock.Add((15*time.Minute + time.Second).Milliseconds())
	if _, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: horizon}); apiCode(err) != "ExpiredIteratorException" {
		t.Errorf("an old iterator: %v", err)
	}

	// An hour on (the retention), a-d are trimmed, before the sweeper
	// deletes them and after; TTL's deletion of e is a new record, by the
	// service.
	clock.Store(start + (59 * time.Minute).Milliseconds())
	horizon, _ = iterator(stypes.ShardIteratorTypeTrimHorizon, "")
	clock.Store(start + (61 * time.Minute).Milliseconds())
	if _, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("blog"),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("exp"), Enabled: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("blog"), Item: avM("PK", avS("e"), "SK", avS("1"), "exp", avN(fmt.Sprint(clock.Load()/1000-1)))}); err != nil {
		t.Fatal(err)
	}
	for _, swept := range []bool{false, true} {
		if _, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: horizon}); apiCode(err) != "TrimmedDataAccessException" {
			t.Errorf("swept %v: a trimmed position: %v", swept, err)
		}
		if _, err := iterator(stypes.ShardIteratorTypeAtSequenceNumber, seq2); apiCode(err) != "TrimmedDataAccessException" {
			t.Errorf("swept %v: AT_SEQUENCE_NUMBER of a trimmed record: %v", swept, err)
		}
		if swept {
			break
		}
		// TTL deletes e (expired) and not a-d (expired 56 years ago: far
		// past, kept as DynamoDB keeps it).
		if n, err := e.SweepExpired(); err != nil || n != 1 {
			t.Fatalf("swept %d, %v", n, err)
		}
	}
	records := readStream(t, sc, arn, 100)
	var all []string
	for _, r := range records {
		all = append(all, describeRecord(r))
	}
	want := []string{`INSERT {"PK": S"e", "SK": S"1"}`, `REMOVE {"PK": S"e", "SK": S"1"} by=Service:dynamodb.amazonaws.com`}
	if fmt.Sprint(all) != fmt.Sprint(want) {
		t.Errorf("after trimming:\n%s\nwant:\n%s", join(all), join(want))
	}
	if err := e.s.db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket(tableBucketName("blog")).Bucket(bucketRecords).Stats().KeyN; n != 2 {
			t.Errorf("%d records kept after the sweep, want 2", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func errOf(_ any, err error) error { return err }

// TestStreamOnOffAndCost: a table without a stream stores nothing for
// one; UpdateTable enables a stream, disables it (closed, still readable,
// no new records) and enables a new one, with a new label, whose records
// start afresh; the old one stays readable, its iterators too, until the
// retention has passed since it was disabled.
func TestStreamOnOffAndCost(t *testing.T) {
	var clock atomic.Int64
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	clock.Store(start)
	e, err := Open(Options{Now: func() time.Time { return time.UnixMilli(clock.Load()) }, TTLInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db, sc := engineClient(e), streamsClient("http://embedded.invalid", e)
	ctx := context.Background()
	blogTable(t, db, "blog")
	put := func(pk string) {
		t.Helper()
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("blog"), Item: key(pk, "1")}); err != nil {
			t.Fatal(err)
		}
	}
	put("a")
	if err := e.s.db.View(func(tx *bolt.Tx) error {
		tb := tx.Bucket(tableBucketName("blog"))
		if tb.Get(keyStream) != nil || tb.Bucket(bucketRecords) != nil {
			t.Error("a table without a stream has stream data")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if list, err := sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{}); err != nil || len(list.Streams) != 0 {
		t.Fatalf("ListStreams without streams: %+v, %v", list, err)
	}

	update := func(enabled bool, view types.StreamViewType) *types.TableDescription {
		t.Helper()
		out, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("blog"), StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(enabled), StreamViewType: view}})
		if err != nil {
			t.Fatal(err)
		}
		return out.TableDescription
	}
	first := aws.ToString(update(true, types.StreamViewTypeKeysOnly).LatestStreamArn)
	put("b")
	old, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(first), ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon,
		ShardId: mustDescribe(t, sc, first).Shards[0].ShardId})
	if err != nil {
		t.Fatal(err)
	}
	if desc := update(false, ""); desc.StreamSpecification != nil || aws.ToString(desc.LatestStreamArn) != first {
		t.Fatalf("disabled: %+v", desc)
	}
	put("c")
	d := mustDescribe(t, sc, first)
	if d.StreamStatus != stypes.StreamStatusDisabled || aws.ToString(d.Shards[0].SequenceNumberRange.EndingSequenceNumber) != "000000000000000000001" {
		t.Errorf("disabled stream: %+v %+v", d, d.Shards[0].SequenceNumberRange)
	}
	if got := readStream(t, sc, first, 10); len(got) != 1 || describeRecord(got[0]) != `INSERT {"PK": S"b", "SK": S"1"}` {
		t.Errorf("disabled stream's records: %v", got)
	}

	second := aws.ToString(update(true, types.StreamViewTypeNewImage).LatestStreamArn)
	if second == first {
		t.Fatal("a stream enabled again kept its label")
	}
	put("d")
	if got := readStream(t, sc, second, 10); len(got) != 1 || describeRecord(got[0]) != `INSERT {"PK": S"d", "SK": S"1"} new={"PK": S"d", "SK": S"1"}` {
		t.Errorf("new stream's records: %v", got)
	}
	if out, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: old.ShardIterator}); err != nil || len(out.Records) != 1 || out.NextShardIterator != nil {
		t.Errorf("an iterator of the replaced stream: %+v, %v", out, err)
	}
	if list, err := sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String("blog")}); err != nil || len(list.Streams) != 2 {
		t.Errorf("ListStreams with a disabled stream and its successor: %+v, %v", list, err)
	}
	if d := mustDescribe(t, sc, first); d.StreamStatus != stypes.StreamStatusDisabled || len(readStream(t, sc, first, 10)) != 1 {
		t.Errorf("the replaced stream: %+v", d)
	}

	// A day after it was disabled, the old stream is gone, before the
	// sweep and after it.
	clock.Store(start + (DefaultStreamRetention + time.Second).Milliseconds())
	for _, sweep := range []bool{false, true} {
		if sweep {
			if _, err := e.SweepExpired(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(first)}); apiCode(err) != "ResourceNotFoundException" {
			t.Errorf("sweep %v: the old stream after the retention: %v", sweep, err)
		}
		if list, err := sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{}); err != nil || len(list.Streams) != 1 || aws.ToString(list.Streams[0].StreamArn) != second {
			t.Errorf("sweep %v: ListStreams: %+v, %v", sweep, list, err)
		}
	}
	if err := e.s.db.View(func(tx *bolt.Tx) error {
		def, err := readDef(tx, "blog")
		if err != nil || len(def.Previous) != 0 || tx.Bucket(tableBucketName("blog")).Bucket(oldStreamBucketName(def.Stream.Label)) != nil {
			t.Errorf("the old stream is still stored: %+v, %v", def, err)
		}
		n := 0
		_ = tx.Bucket(tableBucketName("blog")).ForEachBucket(func(k []byte) error {
			if strings.HasPrefix(string(k), "old:") {
				n++
			}
			return nil
		})
		if n != 0 {
			t.Errorf("%d old stream buckets left", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String("blog")}); err != nil {
		t.Fatal(err)
	}
	if list, err := sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{}); err != nil || len(list.Streams) != 0 {
		t.Fatalf("ListStreams after DeleteTable: %+v, %v", list, err)
	}
}

func mustDescribe(t *testing.T, sc *dynamodbstreams.Client, arn string) *stypes.StreamDescription {
	t.Helper()
	out, err := sc.DescribeStream(context.Background(), &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	return out.StreamDescription
}
