package storage_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage"
)

// TestIndexScheduleOfEveryPublication: schedule items written before the
// go-live index (without its GSI1 attributes), in a publication of the
// directory other than the Store's, are found by IndexSchedule, which
// makes the one due go live and adds the other to the index, once; then
// GoLive, on the default publication's Store, makes it go live at its
// time. A second IndexSchedule finds nothing: two Queries a publication
// and one of the directory.
func TestIndexScheduleOfEveryPublication(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pub := must[*storage.Publication](t)(e.store.CreatePublication(ctx, storage.NewPublication{Slug: "bee", Title: "Bee"}))
	b := must[*storage.Store](t)(e.store.In(pub.ID))
	must[*storage.Author](t)(b.CreateAuthor(ctx, storage.NewAuthor{ID: "ann", Name: "Ann"}))
	var posts []*storage.Post
	for i, at := range []time.Time{start.Add(time.Minute), start.Add(2 * time.Hour)} {
		p := must[*storage.Post](t)(b.CreatePost(ctx, storage.NewPost{AuthorID: "ann", Title: "T", Slug: fmt.Sprintf("p-%d", i), Body: "b"}))
		posts = append(posts, must[*storage.Post](t)(b.Publish(ctx, storage.PublishPost{ID: p.ID, At: at})))
		// As an earlier version wrote it: no go-live index.
		must[*dynamodb.UpdateItemOutput](t)(e.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(e.table), UpdateExpression: aws.String("REMOVE GSI1PK, GSI1SK"),
			Key: map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: "PUB#" + pub.ID + "#SCHEDULE"},
				"SK": &types.AttributeValueMemberS{Value: keyTime(at) + "#" + p.ID},
			}}))
	}
	e.clock.Advance(time.Hour)
	equal(t, "gone live without the index", must[int](t)(e.store.GoLive(ctx)), 0)
	equal(t, "items added to the index", must[int](t)(e.store.IndexSchedule(ctx)), 1)
	equal(t, "the due post gone live", must[*storage.Post](t)(b.GetPost(ctx, posts[0].ID)).Status, storage.StatusPublished)
	n := counted(func(ctx context.Context) { equal(t, "items added again", must[int](t)(e.store.IndexSchedule(ctx)), 0) })
	// Each of the two publications: its status, and two Queries.
	equal(t, "requests of an IndexSchedule with nothing to do", fmt.Sprint(n), "map[GetItem:2 Query:5]")
	e.clock.Advance(time.Hour)
	equal(t, "gone live from the index", must[int](t)(e.store.GoLive(ctx)), 1)
	equal(t, "gone live again", must[int](t)(e.store.GoLive(ctx)), 0)
	if bad := must[[]string](t)(b.Check(ctx)); len(bad) != 0 {
		t.Errorf("B's check: %q", bad)
	}
}
