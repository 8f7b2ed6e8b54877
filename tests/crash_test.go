package tests

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/blogql/blog/embedded"
	"github.com/blogql/blog/internal/longtest"
	"github.com/blogql/blog/storage"
)

// TestCrashKeepsAcknowledgedWrites kills the server with SIGKILL in the
// middle of a concurrent write load and starts it again on the same data
// directory: every write it acknowledged is there, the invariant checker
// finds the table consistent, and the table's stream has a record of every
// write (its replay gives the table).
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	longtest.Skip(t, "the server killed with SIGKILL under a write load")
	data := t.TempDir()
	quiet := []string{"-log-format", "json", "-log-level", "warn"}
	srv := startBinary(t, data, quiet...)
	admin := srv.devHeader(t, "ada-lovelace")
	var posts struct {
		Posts struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	srv.graphql(t, admin, `{ posts(first: 4) { edges { node { id } } } }`, &posts)
	if len(posts.Posts.Edges) < 4 {
		t.Fatalf("demo posts: %+v", posts)
	}

	// Writers add comments and create posts until the server dies; each
	// write it answered is recorded.
	var mu sync.Mutex
	var acked []string // global ids of what was acknowledged
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				var id string
				if w%4 == 3 {
					var out struct {
						CreatePost struct{ Post struct{ ID string } }
					}
					q := fmt.Sprintf(`mutation { createPost(input: {title: "Crash %d-%d", slug: "crash-%d-%d", categories: ["dynamodb"]}) { post { id } } }`, w, i, w, i)
					if srv.try(admin, q, &out) != nil {
						return
					}
					id = out.CreatePost.Post.ID
				} else {
					var out struct {
						AddComment struct{ Comment struct{ ID string } }
					}
					q := fmt.Sprintf(`mutation { addComment(input: {postId: %q, body: "comment %d-%d"}) { comment { id } } }`, posts.Posts.Edges[w%4].Node.ID, w, i)
					if srv.try(admin, q, &out) != nil {
						return
					}
					id = out.AddComment.Comment.ID
				}
				if id == "" {
					return
				}
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
			}
		}()
	}
	// Kill it once enough writes were acknowledged, while the writers go on.
	deadline := time.After(60 * time.Second)
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 150 {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("only %d writes acknowledged in 60 s", n)
		case err := <-srv.exited:
			t.Fatalf("the server exited under load: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-srv.exited
	cancel()
	wg.Wait()
	mu.Lock()
	ids := append([]string(nil), acked...)
	mu.Unlock()
	t.Logf("%d writes acknowledged before SIGKILL", len(ids))

	// Restarted on the same directory, it has every acknowledged write.
	srv = startBinary(t, data, quiet...)
	for chunk := range chunks(ids, 20) { // 20 root fields a request at most
		var q strings.Builder
		q.WriteString("{")
		for i, id := range chunk {
			fmt.Fprintf(&q, " n%d: node(id: %q) { id }", i, id)
		}
		q.WriteString(" }")
		var out map[string]*struct{ ID string }
		srv.graphql(t, admin, q.String(), &out)
		for i, id := range chunk {
			if n := out[fmt.Sprintf("n%d", i)]; n == nil || n.ID != id {
				t.Errorf("acknowledged write %s is gone after the crash", id)
			}
		}
	}
	// The counts worker carries on from its checkpoint: the lists'
	// comment counts catch up with the posts' (a busy machine may take
	// longer than the checker's lag allows once the server is stopped).
	caughtUp := func() bool {
		var list struct {
			Posts struct {
				Edges []struct {
					Node struct {
						ID           string
						CommentCount int
					}
				}
			}
		}
		srv.graphql(t, admin, `{ posts(first: 4) { edges { node { id commentCount } } } }`, &list)
		for _, e := range list.Posts.Edges {
			var one struct{ Post struct{ CommentCount int } }
			srv.graphql(t, admin, fmt.Sprintf(`{ post(id: %q) { commentCount } }`, e.Node.ID), &one)
			if one.Post.CommentCount != e.Node.CommentCount {
				return false
			}
		}
		return true
	}
	for wait := time.Now().Add(30 * time.Second); !caughtUp(); {
		if time.Now().After(wait) {
			t.Fatal("the lists' comment counts did not catch up with the posts' in 30 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-srv.exited; err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}

	// And every copy and counter agrees.
	e, err := embedded.Open(embedded.Options{Path: filepath.Join(data, "blog.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db, err := storage.NewClient(context.Background(), storage.ClientConfig{Embedded: true, HTTPClient: &http.Client{Transport: e}})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := storage.New(db, "blog").Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error("invariant: " + b)
	}

	// Every write has its stream record, written with it: replaying the
	// stream from its start gives the table as it is, item for item.
	replayed := replayStream(t, e, "blog")
	table := scanAll(t, db, "blog")
	t.Logf("the stream replays the table's %d items", len(table))
	if len(replayed) != len(table) {
		t.Errorf("the stream replays %d items, the table holds %d", len(replayed), len(table))
	}
	for k, item := range table {
		if got, ok := replayed[k]; !ok {
			t.Errorf("item %s has no stream record", k)
		} else if !reflect.DeepEqual(got, item) {
			t.Errorf("item %s: the stream's last image differs from the table's", k)
		}
	}
}

// replayStream reads every record of table's stream from its start, in
// each shard's order with parents first (one shard at a time is open),
// and returns the items they leave, by key.
func replayStream(t *testing.T, e *embedded.Engine, table string) map[string]map[string]any {
	t.Helper()
	ctx := context.Background()
	sc := dynamodbstreams.New(dynamodbstreams.Options{
		Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String("http://embedded"), HTTPClient: &http.Client{Transport: e},
	})
	streams, err := sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String(table)})
	if err != nil || len(streams.Streams) != 1 {
		t.Fatalf("streams of %s: %v %v", table, streams, err)
	}
	arn := streams.Streams[0].StreamArn
	var shards []streamtypes.Shard
	for start := (*string)(nil); ; {
		d, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn, ExclusiveStartShardId: start})
		if err != nil {
			t.Fatal(err)
		}
		shards = append(shards, d.StreamDescription.Shards...)
		if start = d.StreamDescription.LastEvaluatedShardId; start == nil {
			break
		}
	}
	items := map[string]map[string]any{}
	for _, sh := range shards { // DescribeStream lists a parent before its child
		it, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn, ShardId: sh.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			t.Fatal(err)
		}
		for next := it.ShardIterator; next != nil; {
			out, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: next})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range out.Records {
				k := streamKey(r.Dynamodb.Keys)
				if r.EventName == streamtypes.OperationTypeRemove {
					delete(items, k)
				} else {
					items[k] = plainStream(r.Dynamodb.NewImage)
				}
			}
			if len(out.Records) == 0 {
				break // the open shard's end: nothing more was written
			}
			next = out.NextShardIterator
		}
	}
	return items
}

// scanAll returns every item of table, by key.
func scanAll(t *testing.T, db *dynamodb.Client, table string) map[string]map[string]any {
	t.Helper()
	items := map[string]map[string]any{}
	p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Items {
			var m map[string]any
			if err := attributevalue.UnmarshalMap(it, &m); err != nil {
				t.Fatal(err)
			}
			items[fmt.Sprint(m["PK"], "|", m["SK"])] = m
		}
	}
	return items
}

func streamKey(k map[string]streamtypes.AttributeValue) string {
	m := plainStream(k)
	return fmt.Sprint(m["PK"], "|", m["SK"])
}

// plainStream returns a stream image as Go values, as attributevalue
// unmarshals a table's item.
func plainStream(img map[string]streamtypes.AttributeValue) map[string]any {
	item, err := attributevalue.FromDynamoDBStreamsMap(img)
	var m map[string]any
	if err == nil {
		err = attributevalue.UnmarshalMap(item, &m)
	}
	if err != nil {
		panic(err)
	}
	return m
}

func chunks[T any](s []T, n int) func(func([]T) bool) {
	return func(yield func([]T) bool) {
		for len(s) > 0 {
			k := min(n, len(s))
			if !yield(s[:k]) {
				return
			}
			s = s[k:]
		}
	}
}
