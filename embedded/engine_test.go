package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Tests of the engine itself, without a reference: durability, locking,
// concurrency, the commit order, TTL and tokens.

func engineClient(e *Engine) *dynamodb.Client { return sdkClient("http://embedded.invalid", e) }

func blogTable(t *testing.T, db *dynamodb.Client, name string) {
	t.Helper()
	_, err := db.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("PK"), AttributeType: "S"}, {AttributeName: aws.String("SK"), AttributeType: "S"},
			{AttributeName: aws.String("GSI1PK"), AttributeType: "S"}, {AttributeName: aws.String("GSI1SK"), AttributeType: "S"},
		},
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: "HASH"}, {AttributeName: aws.String("SK"), KeyType: "RANGE"}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{IndexName: aws.String("GSI1"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("GSI1PK"), KeyType: "HASH"}, {AttributeName: aws.String("GSI1SK"), KeyType: "RANGE"}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDataSurvivesReopening(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "blog.db")
	e, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	db := engineClient(e)
	ctx := context.Background()
	blogTable(t, db, "blog")
	if _, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("blog"),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("expiresAt"), Enabled: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("blog"), Item: avM("PK", avS("a"), "SK", avS("b"), "GSI1PK", avS("g"), "GSI1SK", avS("1"), "m", avM2())}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("blog"), Key: key("a", "b")}); err == nil {
		t.Error("a closed engine answered")
	}

	e, err = Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db = engineClient(e)
	out, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("blog"), IndexName: aws.String("GSI1"), KeyConditionExpression: aws.String("GSI1PK = :g"),
		ExpressionAttributeValues: avM(":g", avS("g"))})
	if err != nil || len(out.Items) != 1 || render(&types.AttributeValueMemberM{Value: out.Items[0]["m"].(*types.AttributeValueMemberM).Value}) != "{}" {
		t.Fatalf("after reopening: %v, %v", out, err)
	}
	ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String("blog")})
	if err != nil || ttl.TimeToLiveDescription.TimeToLiveStatus != types.TimeToLiveStatusEnabled {
		t.Fatalf("TTL after reopening: %v, %v", ttl, err)
	}
	list, err := db.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil || len(list.TableNames) != 1 || list.TableNames[0] != "blog" {
		t.Fatalf("tables after reopening: %v, %v", list, err)
	}
}

func TestSecondOpenIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "blog.db")
	e, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	start := time.Now()
	_, err = Open(Options{Path: path, LockTimeout: 200 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("the second open waited %s", time.Since(start))
	}
	// The first is unharmed.
	blogTable(t, engineClient(e), "blog")
}

func TestMemoryEngineLeavesNoFile(t *testing.T) {
	dir := memoryDir()
	before, _ := filepath.Glob(filepath.Join(dir, "dynamodb-*.db"))
	e, err := OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	blogTable(t, engineClient(e), "blog")
	after, _ := filepath.Glob(filepath.Join(dir, "dynamodb-*.db"))
	if len(after) > len(before) {
		t.Errorf("an in-memory engine left %v", after)
	}
	if e.Path() != "" {
		t.Errorf("Path() = %q", e.Path())
	}
	e.Close()
}

// TestConcurrentWriters runs many writers at once: every increment counts
// (group commit loses none), and every transaction's items move together.
func TestConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "blog.db")
	e, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := engineClient(e)
	blogTable(t, db, "blog")
	ctx := context.Background()
	const writers, each = 16, 25
	var wg sync.WaitGroup
	var failed atomic.Int32
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
					{Update: &types.Update{TableName: aws.String("blog"), Key: key("counter", "c"), UpdateExpression: aws.String("ADD n :one"), ExpressionAttributeValues: avM(":one", avN("1"))}},
					{Put: &types.Put{TableName: aws.String("blog"), Item: avM("PK", avS("w"), "SK", avS(fmt.Sprintf("%02d-%02d", w, i)), "GSI1PK", avS("all"), "GSI1SK", avS(fmt.Sprintf("%02d-%02d", w, i)))}},
				}})
				if err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d writes failed", failed.Load())
	}
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("blog"), Key: key("counter", "c")})
	if err != nil || out.Item["n"].(*types.AttributeValueMemberN).Value != fmt.Sprint(writers*each) {
		t.Fatalf("counter: %v, %v", out.Item, err)
	}
	q, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("blog"), IndexName: aws.String("GSI1"), KeyConditionExpression: aws.String("GSI1PK = :a"),
		ExpressionAttributeValues: avM(":a", avS("all")), Select: types.SelectCount})
	if err != nil || q.Count != writers*each {
		t.Fatalf("index entries: %v, %v", q.Count, err)
	}
}

// TestChangesInCommitOrder checks the one place a change feed reads: it
// sees every change of an item, with the images before and after, in the
// order the writes committed, a failed write's none.
func TestChangesInCommitOrder(t *testing.T) {
	clock := time.Unix(1_000_000, 0)
	e, err := Open(Options{Now: func() time.Time { return clock }, TTLInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var mu sync.Mutex
	var seen []string
	onCommit := func(cs []itemChange) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range cs {
			img := func(it item) string {
				if it == nil {
					return "-"
				}
				return string(canonicalJSON(mapOf(it)))
			}
			seen = append(seen, fmt.Sprintf("%s %s -> %s ttl=%v", c.def.Name, img(c.old), img(c.new), c.ttl))
		}
	}
	e.s.onCommit.Store(&onCommit)
	db := engineClient(e)
	ctx := context.Background()
	blogTable(t, db, "blog")
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("blog"), Item: avM("PK", avS("a"), "SK", avS("1"))}))
	must(db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("blog"), Key: key("a", "1"), UpdateExpression: aws.String("SET n = :n"), ExpressionAttributeValues: avM(":n", avN("2"))}))
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("blog"), Item: key("a", "1"), ConditionExpression: aws.String("attribute_not_exists(PK)")}); err == nil {
		t.Fatal("the condition held")
	}
	must(db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: aws.String("blog"), Key: key("a", "1")}},
		{Put: &types.Put{TableName: aws.String("blog"), Item: avM("PK", avS("b"), "SK", avS("1"), "expiresAt", avN("999999"))}},
	}}))
	must(db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("blog"),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("expiresAt"), Enabled: aws.Bool(true)}}))
	if n, err := e.SweepExpired(); err != nil || n != 1 {
		t.Fatalf("swept %d, %v", n, err)
	}
	want := []string{
		`blog - -> {"M":{"PK":{"S":"a"},"SK":{"S":"1"}}} ttl=false`,
		`blog {"M":{"PK":{"S":"a"},"SK":{"S":"1"}}} -> {"M":{"PK":{"S":"a"},"SK":{"S":"1"},"n":{"N":"2"}}} ttl=false`,
		`blog {"M":{"PK":{"S":"a"},"SK":{"S":"1"},"n":{"N":"2"}}} -> - ttl=false`,
		`blog - -> {"M":{"PK":{"S":"b"},"SK":{"S":"1"},"expiresAt":{"N":"999999"}}} ttl=false`,
		`blog {"M":{"PK":{"S":"b"},"SK":{"S":"1"},"expiresAt":{"N":"999999"}}} -> - ttl=true`,
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("changes:\n%s\nwant:\n%s", join(seen), join(want))
	}
}

func join(s []string) string {
	out := ""
	for _, l := range s {
		out += "  " + l + "\n"
	}
	return out
}

// TestTTLDeletesExpiredItems: the sweeper deletes items whose time has
// passed, keeps the others, those written meanwhile with a new time, and
// those expired more than five years ago, as DynamoDB does.
func TestTTLDeletesExpiredItems(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var clock atomic.Int64
	clock.Store(now.Unix())
	e, err := Open(Options{Now: func() time.Time { return time.Unix(clock.Load(), 0) }, TTLInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	expired := make(chan string, 10)
	onCommit := func(cs []itemChange) {
		for _, c := range cs {
			if c.ttl {
				expired <- c.old["SK"].s
			}
		}
	}
	e.s.onCommit.Store(&onCommit)
	db := engineClient(e)
	ctx := context.Background()
	blogTable(t, db, "blog")
	put := func(sk string, exp types.AttributeValue) {
		it := avM("PK", avS("p"), "SK", avS(sk))
		if exp != nil {
			it["exp"] = exp
		}
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("blog"), Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	unix := func(d time.Duration) types.AttributeValue { return avN(fmt.Sprint(now.Add(d).Unix())) }
	put("past", unix(-time.Hour))
	put("fraction", avN(fmt.Sprintf("%d.75", now.Add(-time.Minute).Unix())))
	put("future", unix(time.Hour))
	put("ancient", unix(-6*365*24*time.Hour))
	put("string", avS("1"))
	put("none", nil)
	put("moved", unix(-time.Hour))
	put("moved", unix(2*time.Hour))
	// TTL on for items already there: the sweeper, every 10 ms, finds
	// them.
	if _, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("blog"),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("exp"), Enabled: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}

	remaining := func() map[string]bool {
		out, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("blog"), KeyConditionExpression: aws.String("PK = :p"), ExpressionAttributeValues: avM(":p", avS("p"))})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, it := range out.Items {
			m[it["SK"].(*types.AttributeValueMemberS).Value] = true
		}
		return m
	}
	gone := map[string]bool{}
	for len(gone) < 2 {
		select {
		case sk := <-expired:
			gone[sk] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("the sweeper deleted only %v in 10 s", gone)
		}
	}
	if !gone["past"] || !gone["fraction"] {
		t.Errorf("the sweeper deleted %v", gone)
	}
	got := remaining()
	for _, sk := range []string{"future", "ancient", "string", "none", "moved"} {
		if !got[sk] {
			t.Errorf("%s was deleted", sk)
		}
	}
	clock.Store(now.Add(3 * time.Hour).Unix())
	if _, err := e.SweepExpired(); err != nil {
		t.Fatal(err)
	}
	got = remaining()
	if got["future"] || got["moved"] {
		t.Errorf("items expired since are still there: %v", got)
	}
}

// TestTokensExpire: a ClientRequestToken is refused for another request
// for ten minutes, then is new again.
func TestTokensExpire(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	e, err := Open(Options{Now: func() time.Time { return time.Unix(0, clock.Load()) }, TTLInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := engineClient(e)
	ctx := context.Background()
	blogTable(t, db, "blog")
	add := func(sk string) error {
		_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String("tok"), TransactItems: []types.TransactWriteItem{
			{Update: &types.Update{TableName: aws.String("blog"), Key: key("c", sk), UpdateExpression: aws.String("ADD n :one"), ExpressionAttributeValues: avM(":one", avN("1"))}},
		}})
		return err
	}
	if err := add("a"); err != nil {
		t.Fatal(err)
	}
	if err := add("a"); err != nil {
		t.Fatalf("the same request again: %v", err)
	}
	var mismatch *types.IdempotentParameterMismatchException
	if err := add("b"); !errors.As(err, &mismatch) {
		t.Fatalf("another request with the token: %v", err)
	}
	clock.Add(int64(tokenTTL + time.Second))
	if err := add("b"); err != nil {
		t.Fatalf("after ten minutes: %v", err)
	}
	for sk, want := range map[string]string{"a": "1", "b": "1"} {
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("blog"), Key: key("c", sk)})
		if err != nil || out.Item["n"].(*types.AttributeValueMemberN).Value != want {
			t.Errorf("counter %s: %v, %v", sk, out.Item, err)
		}
	}
	if _, err := e.SweepExpired(); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptFileIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "blog.db")
	if err := os.WriteFile(path, []byte("this is not a database, and it is long enough to look like one to nobody"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Options{Path: path}); err == nil {
		t.Fatal("a file that is no database opened")
	}
}

// TestAnswerBodyAfterClose closes a Query's answer half read: its buffer
// has gone back for the next answers, so the closed body reads nothing
// more, and the next answers, written into that buffer, are whole.
func TestAnswerBodyAfterClose(t *testing.T) {
	e, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	db := engineClient(e)
	blogTable(t, db, "blog")
	ctx := context.Background()
	for i := range 3 {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("blog"), Item: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "P"}, "SK": &types.AttributeValueMemberS{Value: fmt.Sprint(i)}}}); err != nil {
			t.Fatal(err)
		}
	}
	query := func() *http.Response {
		req, err := http.NewRequest(http.MethodPost, "http://embedded.invalid/", strings.NewReader(
			`{"TableName":"blog","KeyConditionExpression":"PK = :p","ExpressionAttributeValues":{":p":{"S":"P"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810.Query")
		resp, err := e.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("Query: %v %v", resp, err)
		}
		return resp
	}
	first := query()
	want, err := io.ReadAll(first.Body)
	first.Body.Close()
	if err != nil || !strings.HasPrefix(string(want), `{"Items":[{`) {
		t.Fatalf("answer %q, %v", want, err)
	}
	half := query()
	if _, err := io.ReadFull(half.Body, make([]byte, len(want)/2)); err != nil {
		t.Fatal(err)
	}
	half.Body.Close()
	if rest, _ := io.ReadAll(half.Body); len(rest) != 0 {
		t.Errorf("a closed answer reads %q", rest)
	}
	for range 3 {
		next := query()
		got, err := io.ReadAll(next.Body)
		next.Body.Close()
		if err != nil || string(got) != string(want) {
			t.Fatalf("next answer %q, want %q", got, want)
		}
	}
}
