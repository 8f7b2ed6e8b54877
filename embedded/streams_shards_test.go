package embedded

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// TestStreamRecordsSurviveSIGKILL: a process writing to a data file is
// killed with SIGKILL; after it, every write it had acknowledged has its
// record, every record its write, and sequence numbers go on increasing.
func TestStreamRecordsSurviveSIGKILL(t *testing.T) {
	if path := os.Getenv("EMBEDDED_STREAM_CRASH_CHILD"); path != "" {
		crashChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "blog.db")
	e, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	arn := streamTable(t, engineClient(e), "blog", types.StreamViewTypeKeysOnly)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestStreamRecordsSurviveSIGKILL$")
	cmd.Env = append(os.Environ(), "EMBEDDED_STREAM_CRASH_CHILD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	lines := bufio.NewScanner(out)
	for len(acked) < 200 && lines.Scan() {
		if pk, ok := strings.CutPrefix(lines.Text(), "acked "); ok {
			acked[pk] = true
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if len(acked) < 200 {
		t.Fatalf("the writer acknowledged %d writes before it stopped", len(acked))
	}

	e, err = Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db, sc := engineClient(e), streamsClient("http://embedded.invalid", e)
	if _, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String("blog"), Item: key("after", "1")}); err != nil {
		t.Fatal(err)
	}
	recorded := map[string]bool{}
	prev := ""
	for _, r := range readStream(t, sc, arn, 1000) {
		recorded[r.Dynamodb.Keys["PK"].(*stypes.AttributeValueMemberS).Value] = true
		if seq := aws.ToString(r.Dynamodb.SequenceNumber); seq <= prev {
			t.Errorf("sequence number %s after %s", seq, prev)
		} else {
			prev = seq
		}
	}
	for pk := range acked {
		if !recorded[pk] {
			t.Errorf("acknowledged write %s has no record", pk)
		}
	}
	scan, err := db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String("blog")})
	if err != nil {
		t.Fatal(err)
	}
	if int(scan.Count) != len(recorded) || !recorded["after"] {
		t.Errorf("%d items, %d records (after the crash: %v)", scan.Count, len(recorded), recorded["after"])
	}
	t.Logf("%d writes acknowledged before SIGKILL, %d recorded", len(acked), len(recorded))
}

// crashChild writes to the table of the data file at path from four
// writers, printing each acknowledged write, until it is killed.
func crashChild(path string) {
	e, err := Open(Options{Path: path})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	db := engineClient(e)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				pk := fmt.Sprintf("w%d-%d", w, i)
				if _, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String("blog"), Item: key(pk, "1")}); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Println("acked " + pk)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// TestStreamShardsRollOver: a stream's shard closes when it is
// shardLifetime old and the next write opens its child; records are read
// shard by shard, parents first; a closed shard read to its end has no
// next iterator; shards whose records are all past the retention leave
// DescribeStream, and their children keep naming them as parents.
func TestStreamShardsRollOver(t *testing.T) {
	var clock atomic.Int64
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	clock.Store(start)
	e, err := Open(Options{Now: func() time.Time { return time.UnixMilli(clock.Load()) }, TTLInterval: -1, StreamRetention: 10 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db, sc := engineClient(e), streamsClient("http://embedded.invalid", e)
	ctx := context.Background()
	arn := streamTable(t, db, "blog", types.StreamViewTypeKeysOnly)
	idle := streamTable(t, db, "idle", types.StreamViewTypeKeysOnly)
	put := func(pks ...string) {
		t.Helper()
		for _, pk := range pks {
			if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("blog"), Item: key(pk, "1")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	put("a")
	clock.Store(start + shardLifetime.Milliseconds())
	put("b", "c")
	clock.Store(start + 2*shardLifetime.Milliseconds())
	put("d")

	// A shard without records stays open however old it is.
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("idle"), Item: key("a", "1")}); err != nil {
		t.Fatal(err)
	}
	if d := mustDescribe(t, sc, idle); len(d.Shards) != 1 || d.Shards[0].ParentShardId != nil || len(readStream(t, sc, idle, 10)) != 1 {
		t.Errorf("the stream idle until its first record: %+v", d.Shards)
	}

	shardsOf := func() []string {
		t.Helper()
		var out []string
		var from *string
		for {
			d, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn), Limit: aws.Int32(1), ExclusiveStartShardId: from})
			if err != nil {
				t.Fatal(err)
			}
			for _, sh := range d.StreamDescription.Shards {
				out = append(out, fmt.Sprintf("%s parent=%s %s-%s", aws.ToString(sh.ShardId), aws.ToString(sh.ParentShardId),
					aws.ToString(sh.SequenceNumberRange.StartingSequenceNumber), aws.ToString(sh.SequenceNumberRange.EndingSequenceNumber)))
			}
			if from = d.StreamDescription.LastEvaluatedShardId; from == nil {
				return out
			}
		}
	}
	shards := shardsOf()
	if len(shards) != 3 {
		t.Fatalf("shards: %v", shards)
	}
	id := func(i int) string { return strings.Fields(shards[i])[0] }
	want := []string{
		id(0) + " parent= 000000000000000000001-000000000000000000001",
		id(1) + " parent=" + id(0) + " 000000000000000000002-000000000000000000003",
		id(2) + " parent=" + id(1) + " 000000000000000000004-",
	}
	if fmt.Sprint(shards) != fmt.Sprint(want) {
		t.Fatalf("shards:\n%s\nwant:\n%s", join(shards), join(want))
	}
	children, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn),
		ShardFilter: &stypes.ShardFilter{Type: stypes.ShardFilterTypeChildShards, ShardId: aws.String(id(1))}})
	if err != nil || len(children.StreamDescription.Shards) != 1 || aws.ToString(children.StreamDescription.Shards[0].ShardId) != id(2) {
		t.Errorf("the children of %s: %+v, %v", id(1), children, err)
	}
	var all []string
	for _, r := range readStream(t, sc, arn, 1) {
		all = append(all, r.Dynamodb.Keys["PK"].(*stypes.AttributeValueMemberS).Value)
	}
	if strings.Join(all, "") != "abcd" {
		t.Errorf("records in shard order: %v", all)
	}

	iterator := func(shard string, kind stypes.ShardIteratorType, seq string) (*string, error) {
		in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: aws.String(shard), ShardIteratorType: kind}
		if seq != "" {
			in.SequenceNumber = aws.String(seq)
		}
		out, err := sc.GetShardIterator(ctx, in)
		if err != nil {
			return nil, err
		}
		return out.ShardIterator, nil
	}
	it, err := iterator(id(1), stypes.ShardIteratorTypeAtSequenceNumber, "000000000000000000003")
	if err != nil {
		t.Fatal(err)
	}
	out, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it})
	if err != nil || len(out.Records) != 1 || out.NextShardIterator != nil {
		t.Errorf("the end of a closed shard: %+v, %v", out, err)
	}
	if it, err = iterator(id(0), stypes.ShardIteratorTypeLatest, ""); err != nil {
		t.Fatal(err)
	}
	if out, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it}); err != nil || len(out.Records) != 0 || out.NextShardIterator != nil {
		t.Errorf("LATEST of a closed shard: %+v, %v", out, err)
	}
	if _, err := iterator(id(0), stypes.ShardIteratorTypeAtSequenceNumber, "000000000000000000002"); apiCode(err) != "ValidationException" {
		t.Errorf("a sequence number of another shard: %v", err)
	}

	// Past the retention of a (10 hours), its shard is gone; b's still
	// names it as its parent, before and after the sweep.
	clock.Store(start + (10*time.Hour + time.Minute).Milliseconds())
	for _, sweep := range []bool{false, true} {
		if sweep {
			if _, err := e.SweepExpired(); err != nil {
				t.Fatal(err)
			}
		}
		if got := shardsOf(); fmt.Sprint(got) != fmt.Sprint(want[1:]) {
			t.Errorf("sweep %v: shards after the retention:\n%s\nwant:\n%s", sweep, join(got), join(want[1:]))
		}
		if _, err := iterator(id(0), stypes.ShardIteratorTypeTrimHorizon, ""); apiCode(err) != "ResourceNotFoundException" && !(apiCode(err) == "" && !sweep) {
			t.Errorf("sweep %v: an iterator of the trimmed shard: %v", sweep, err)
		}
	}
}
