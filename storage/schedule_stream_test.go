package storage_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/blogql/blog/storage"
)

// stream reads a table's DynamoDB stream from its start, on the test's
// backend, and remembers which records it has returned.
type stream struct {
	t     *testing.T
	sc    *dynamodbstreams.Client
	table string
	seen  map[string]bool
}

// newStream turns on the stream of e's table (WithStream) and returns a
// reader of it through the client configuration cfg.
func newStream(e *env, cfg storage.ClientConfig) *stream {
	e.t.Helper()
	ctx := context.Background()
	if err := storage.New(e.client, e.table, storage.WithStream()).CreateTable(ctx); err != nil {
		e.t.Fatal(err)
	}
	var opts []func(*config.LoadOptions) error
	endpoint := cfg.Endpoint
	if cfg.Embedded {
		endpoint = "http://embedded.invalid"
	}
	if cfg.Embedded || cfg.LocalCredentials {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	awsCfg := must[aws.Config](e.t)(config.LoadDefaultConfig(ctx, append(opts, config.WithRegion("us-east-1"))...))
	sc := dynamodbstreams.NewFromConfig(awsCfg, func(o *dynamodbstreams.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		if cfg.HTTPClient != nil {
			o.HTTPClient = cfg.HTTPClient
		}
	})
	return &stream{t: e.t, sc: sc, table: e.table, seen: map[string]bool{}}
}

// records returns the records written since the last call, in each
// shard's order, parents first.
func (s *stream) records() []streamtypes.Record {
	s.t.Helper()
	ctx := context.Background()
	streams := must[*dynamodbstreams.ListStreamsOutput](s.t)(s.sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String(s.table)}))
	var out []streamtypes.Record
	for _, st := range streams.Streams {
		var shards []streamtypes.Shard
		for start := (*string)(nil); ; {
			d := must[*dynamodbstreams.DescribeStreamOutput](s.t)(s.sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: st.StreamArn, ExclusiveStartShardId: start}))
			shards = append(shards, d.StreamDescription.Shards...)
			if start = d.StreamDescription.LastEvaluatedShardId; start == nil {
				break
			}
		}
		for _, sh := range shards {
			it := must[*dynamodbstreams.GetShardIteratorOutput](s.t)(s.sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
				StreamArn: st.StreamArn, ShardId: sh.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon}))
			for next := it.ShardIterator; next != nil; {
				got := must[*dynamodbstreams.GetRecordsOutput](s.t)(s.sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: next}))
				for _, r := range got.Records {
					if !s.seen[aws.ToString(r.EventID)] {
						s.seen[aws.ToString(r.EventID)] = true
						out = append(out, r)
					}
				}
				if len(got.Records) == 0 {
					break // the open shard's end: nothing more was written
				}
				next = got.NextShardIterator
			}
		}
	}
	return out
}

// events returns the events of the records written since the last call,
// by type, sorted.
func (s *stream) events() ([]storage.EventType, []storage.Event) {
	s.t.Helper()
	var types []storage.EventType
	var all []storage.Event
	for _, r := range s.records() {
		evs, err := storage.EventsOf(r)
		if err != nil {
			s.t.Fatal(err)
		}
		for _, ev := range evs {
			types = append(types, ev.Type)
		}
		all = append(all, evs...)
	}
	slices.Sort(types)
	return types, all
}

// TestGoLiveOnTheStream reads the stream of a table: a post scheduled
// for later is post.scheduled when it is written and nothing else, and
// post.published once, when it goes live, although nobody writes it then.
func TestGoLiveOnTheStream(t *testing.T) {
	var cfg storage.ClientConfig
	e := newEnv(t, func(c *storage.ClientConfig) { cfg = *c })
	s := newStream(e, cfg)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	p := e.post("ada", "soon", "go")
	s.records()

	at := start.Add(time.Hour)
	e.publish(p, at)
	got, _ := s.events()
	equalSlices(t, "events of the schedule", got, []storage.EventType{storage.EventPostScheduled})

	e.clock.Advance(30 * time.Minute)
	equal(t, "posts gone live before their time", must[int](t)(e.store.GoLive(ctx)), 0)
	got, _ = s.events()
	equalSlices(t, "events before its time", got, nil)

	e.clock.Advance(30 * time.Minute)
	equal(t, "posts gone live at their time", must[int](t)(e.store.GoLive(ctx)), 1)
	got, evs := s.events()
	equalSlices(t, "events of the go-live", got, []storage.EventType{storage.EventPostPublished})
	if len(evs) == 1 {
		d := evs[0].Data
		equal(t, "post gone live", d.PostID, p.ID)
		equal(t, "its time", d.PublishedAt.Equal(at), true)
		equal(t, "its page among the paths", slices.Contains(d.Paths, "/posts/soon"), true)
	}

	equal(t, "posts gone live again", must[int](t)(e.store.GoLive(ctx)), 0)
	got, _ = s.events()
	equalSlices(t, "events of a second sweep", got, nil)
	e.consistent()
}
