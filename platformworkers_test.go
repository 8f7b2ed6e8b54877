package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage"
)

// TestScheduleTickCoversEveryPublication runs the "schedule" worker's
// tick on the default publication's Store: its first tick adds to the
// go-live index a schedule item of another publication written without
// it (by an earlier version), and the post goes live when its time
// passes; a tick with nothing due is then one Query.
func TestScheduleTickCoversEveryPublication(t *testing.T) {
	withTable(t, t.TempDir(), func(ctx context.Context, client *dynamodb.Client) {
		now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		store := storage.New(client, "blog", storage.WithClock(func() time.Time { return now }))
		if err := store.CreateTable(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		pub, err := store.CreatePublication(ctx, storage.NewPublication{Slug: "bee", Title: "Bee"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := store.In(pub.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.CreateAuthor(ctx, storage.NewAuthor{ID: "ann", Name: "Ann"}); err != nil {
			t.Fatal(err)
		}
		p, err := b.CreatePost(ctx, storage.NewPost{AuthorID: "ann", Title: "T", Slug: "t", Body: "b"})
		if err != nil {
			t.Fatal(err)
		}
		at := now.Add(time.Hour)
		if _, err := b.Publish(ctx, storage.PublishPost{ID: p.ID, At: at}); err != nil {
			t.Fatal(err)
		}
		_, err = client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String("blog"), UpdateExpression: aws.String("REMOVE GSI1PK, GSI1SK"),
			Key: map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: "PUB#" + pub.ID + "#SCHEDULE"},
				"SK": &types.AttributeValueMemberS{Value: at.Format("2006-01-02T15:04:05.000Z") + "#" + p.ID},
			}})
		if err != nil {
			t.Fatal(err)
		}

		tick := scheduleTick(store, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err := tick(ctx); err != nil {
			t.Fatal(err)
		}
		now = now.Add(2 * time.Hour)
		if bad, _ := b.Check(ctx); !strings.Contains(strings.Join(bad, "\n"), "stuck") {
			t.Fatalf("B's check before the tick: %q, want its post stuck", bad)
		}
		if err := tick(ctx); err != nil {
			t.Fatal(err)
		}
		if bad, err := b.Check(ctx); err != nil || len(bad) != 0 {
			t.Errorf("B's check after the tick: %q, %v; want its post gone live", bad, err)
		}
		counted, counter := storage.WithRequestCounter(ctx)
		if err := tick(counted); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(counter.ByOperation()); got != "map[Query:1]" {
			t.Errorf("an idle tick: %s, want one Query", got)
		}
	})
}
