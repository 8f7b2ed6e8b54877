package storage_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/legacytest"
)

// pubPrefix starts the partition key of every item of the default
// publication, which the tests' stores are in.
const pubPrefix = "PUB#" + storage.DefaultPublication + "#"

// keyTime is the table's form of a time in keys and items.
func keyTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// rawItem returns the item of pk and sk as stored, nil when there is none.
func (e *env) rawItem(pk, sk string) map[string]types.AttributeValue {
	e.t.Helper()
	out := must[*dynamodb.GetItemOutput](e.t)(e.client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(e.table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}},
	}))
	return out.Item
}

// schedule returns the go-live marker of the post id ("" for none) and
// the times of its schedule items, read from the table.
func (e *env) schedule(id string) (marker string, items []string) {
	e.t.Helper()
	if v, ok := e.rawItem(pubPrefix+"POST#"+id, "POST#"+id)["goLiveAt"].(*types.AttributeValueMemberS); ok {
		marker = v.Value
	}
	out := must[*dynamodb.QueryOutput](e.t)(e.client.Query(context.Background(), &dynamodb.QueryInput{
		TableName: aws.String(e.table), ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pubPrefix + "SCHEDULE"}},
	}))
	for _, it := range out.Items {
		sk := it["SK"].(*types.AttributeValueMemberS).Value
		if at, post, _ := strings.Cut(sk, "#"); post == id {
			items = append(items, at)
		}
	}
	return marker, items
}

// scheduled checks the post id's marker and schedule item: both at, or
// neither when at is zero.
func (e *env) scheduled(what, id string, at time.Time) {
	e.t.Helper()
	marker, items := e.schedule(id)
	want, wantItems := "", []string(nil)
	if !at.IsZero() {
		want, wantItems = keyTime(at), []string{keyTime(at)}
	}
	equal(e.t, what+": go-live marker", marker, want)
	equalSlices(e.t, what+": schedule items", items, wantItems)
}

// TestScheduleFollowsThePost schedules, edits, reschedules, unpublishes
// and deletes posts and checks the go-live marker and the schedule item
// each write leaves, and that each is still one transaction.
func TestScheduleFollowsThePost(t *testing.T) {
	e := newEnv(t)
	e.author("ada", "Ada")
	e.category("go", "Go")
	p := e.post("ada", "soon", "go")
	at := start.Add(time.Hour)

	var n map[string]int
	n = counted(func(ctx context.Context) {
		p = must[*storage.Post](t)(e.store.Publish(ctx, storage.PublishPost{ID: p.ID, At: at}))
	})
	// The post, then its author, categories and STATS (the counters'
	// scheduled-post entries), as before schedule items.
	equal(t, "requests of a schedule", fmt.Sprint(n), "map[BatchGetItem:1 Query:1 TransactWriteItems:1]")
	e.scheduled("scheduled", p.ID, at)
	e.consistent()

	n = counted(func(ctx context.Context) {
		p = must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, Title: ptr("Soon")}))
	})
	equal(t, "requests of an edit", fmt.Sprint(n), "map[Query:1 TransactWriteItems:1]")
	e.scheduled("edited", p.ID, at)

	later := start.Add(2 * time.Hour)
	n = counted(func(ctx context.Context) {
		p = must[*storage.Post](t)(e.store.Publish(ctx, storage.PublishPost{ID: p.ID, At: later}))
	})
	equal(t, "requests of a reschedule", fmt.Sprint(n), "map[BatchGetItem:1 Query:1 TransactWriteItems:1]")
	e.scheduled("rescheduled", p.ID, later)
	e.consistent()

	n = counted(func(ctx context.Context) {
		p = must[*storage.Post](t)(e.store.Unpublish(ctx, storage.PostRef{ID: p.ID}))
	})
	equal(t, "requests of an unpublish", fmt.Sprint(n), "map[Query:1 TransactWriteItems:1]")
	e.scheduled("unpublished", p.ID, time.Time{})
	e.consistent()

	p = e.publish(p, at)
	e.scheduled("scheduled again", p.ID, at)
	p = e.publish(p, start.Add(-time.Hour))
	e.scheduled("published in the past", p.ID, time.Time{})
	p = e.publish(p, at)
	n = counted(func(ctx context.Context) { must[*storage.Post](t)(e.store.DeletePost(ctx, storage.PostRef{ID: p.ID})) })
	equal(t, "transactions of a deletion", n["TransactWriteItems"], 1)
	e.scheduled("deleted", p.ID, time.Time{})

	now := e.post("ada", "now")
	now = e.publish(now, time.Time{})
	e.scheduled("published now", now.ID, time.Time{})
	e.consistent()
}

// TestGoLive makes scheduled posts go live as their times pass: one Query
// of the schedule, and one transaction a post that removes its marker and
// its schedule item without a new version, so an editor's expected
// version still holds; what readers see does not change with it.
func TestGoLive(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	first := e.publish(e.post("ada", "first", "go"), start.Add(time.Hour))
	second := e.publish(e.post("ada", "second", "go"), start.Add(2*time.Hour))
	third := e.publish(e.post("ada", "third"), start.Add(2*time.Hour))

	goLive := func(what string, want int, requests string) {
		t.Helper()
		var did int
		n := counted(func(ctx context.Context) { did = must[int](t)(e.store.GoLive(ctx)) })
		equal(t, what+": posts gone live", did, want)
		equal(t, what+": requests", fmt.Sprint(n), requests)
	}
	goLive("before any time", 0, "map[Query:1]")
	e.clock.Advance(time.Hour - time.Millisecond)
	goLive("a millisecond early", 0, "map[Query:1]")

	e.clock.Advance(time.Millisecond)
	before := must[*storage.Post](t)(e.store.GetPost(ctx, first.ID))
	// With posts due, the publication's status is read (one GetItem).
	goLive("at the first's time", 1, "map[GetItem:1 Query:1 TransactWriteItems:1]")
	e.scheduled("first, gone live", first.ID, time.Time{})
	e.scheduled("second, waiting", second.ID, start.Add(2*time.Hour))
	after := must[*storage.Post](t)(e.store.GetPost(ctx, first.ID))
	equal(t, "first: the post as readers see it", fmt.Sprintf("%+v", *after), fmt.Sprintf("%+v", *before))
	goLive("again", 0, "map[Query:1]")
	must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: first.ID, ExpectedVersion: first.Version, Title: ptr("First, edited")}))

	e.clock.Advance(2 * time.Hour)
	goLive("past the others' time", 2, "map[GetItem:1 Query:1 TransactWriteItems:2]")
	e.scheduled("second, gone live", second.ID, time.Time{})
	e.scheduled("third, gone live", third.ID, time.Time{})
	feed := must[*storage.Result[*storage.Post]](t)(e.store.LatestPosts(ctx, storage.PageArgs{Limit: 10}, storage.Period{}))
	equal(t, "posts in the feed", len(feed.Items), 3)
	e.consistent()
}

// TestGoLiveSkipsWhatChanged lets a reschedule land between GoLive's
// Query and its transaction, and leaves a schedule item whose post is
// gone: the sweep makes neither go live, deletes the stale item, and
// fails for neither.
func TestGoLiveSkipsWhatChanged(t *testing.T) {
	e := newRaceEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	p := e.publish(e.post("ada", "moved"), start.Add(time.Hour))
	gone := e.publish(e.post("ada", "gone"), start.Add(time.Hour))
	// A stale item, as a write of another version could leave: its post
	// was deleted without it.
	stale := e.rawItem(pubPrefix+"SCHEDULE", keyTime(start.Add(time.Hour))+"#"+gone.ID)
	must[*storage.Post](t)(e.store.DeletePost(ctx, storage.PostRef{ID: gone.ID}))
	must[*dynamodb.PutItemOutput](t)(e.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: stale}))

	e.clock.Advance(time.Hour)
	later := start.Add(3 * time.Hour)
	e.hooks.at("TransactWriteItems", 1, e.racing("reschedule", func(ctx context.Context, s *storage.Store) error {
		_, err := s.Publish(ctx, storage.PublishPost{ID: p.ID, At: later})
		return err
	}))
	var did int
	n := counted(func(ctx context.Context) { did = must[int](t)(e.store.GoLive(ctx)) })
	equal(t, "posts gone live", did, 0)
	// The query; the publication's status, once a sweep; the go-live of
	// each, which fails its condition; and the stale item's deletion,
	// conditional on its post not being scheduled then (the rescheduled
	// post's item went with its write).
	equal(t, "requests", fmt.Sprint(n), "map[GetItem:1 Query:1 TransactWriteItems:3]")
	e.scheduled("rescheduled", p.ID, later)
	e.scheduled("deleted", gone.ID, time.Time{})
	e.consistent()
}

// TestGoLiveOnManyServers sweeps with two servers at once: every post
// goes live once, so the two together count each once.
func TestGoLiveOnManyServers(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	const posts = 6
	ids := make([]string, posts)
	for i := range posts {
		ids[i] = e.publish(e.post("ada", fmt.Sprintf("p-%d", i)), start.Add(time.Duration(1+i%2)*time.Minute)).ID
	}
	e.clock.Advance(time.Hour)
	other := storage.New(e.client, e.table, storage.WithClock(e.clock.Now))
	var wg sync.WaitGroup
	counts := make([]int, 2)
	for i, s := range []*storage.Store{e.store, other} {
		wg.Go(func() { counts[i] = must[int](t)(s.GoLive(ctx)) })
	}
	wg.Wait()
	equal(t, "posts gone live, both servers together", counts[0]+counts[1], posts)
	for _, id := range ids {
		e.scheduled("post "+id, id, time.Time{})
	}
	equal(t, "a third sweep", must[int](t)(e.store.GoLive(ctx)), 0)
	e.consistent()
}

// TestGoLivePages sweeps more due posts than one Query reads: it reads the
// schedule on, a page at a time.
func TestGoLivePages(t *testing.T) {
	e := newEnv(t)
	e.author("ada", "Ada")
	for i := range 103 {
		e.publish(e.post("ada", fmt.Sprintf("p-%d", i)), start.Add(time.Minute))
	}
	e.clock.Advance(time.Hour)
	var did int
	n := counted(func(ctx context.Context) { did = must[int](t)(e.store.GoLive(ctx)) })
	equal(t, "posts gone live", did, 103)
	// The publication's status is read once, however many of its posts.
	equal(t, "requests", fmt.Sprint(n), "map[GetItem:1 Query:2 TransactWriteItems:103]")
}

// TestCheckFindsScheduleFaults breaks the schedule in each way the
// checker knows: a marker without its item, an item without its marker,
// an item due for long.
func TestCheckFindsScheduleFaults(t *testing.T) {
	e := newRaceEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	p := e.publish(e.post("ada", "soon"), start.Add(time.Hour))
	q := e.publish(e.post("ada", "later"), start.Add(2*time.Hour))
	key := func(pk, sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}}
	}
	must[*dynamodb.DeleteItemOutput](t)(e.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(e.table), Key: key(pubPrefix+"SCHEDULE", keyTime(start.Add(time.Hour))+"#"+p.ID)}))
	must[*dynamodb.UpdateItemOutput](t)(e.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(e.table), Key: key(pubPrefix+"POST#"+q.ID, "POST#"+q.ID), UpdateExpression: aws.String("REMOVE goLiveAt")}))
	e.clock.Advance(3 * time.Hour)
	bad := must[[]string](t)(e.store.Check(ctx))
	for _, want := range []string{
		"post " + p.ID + " is marked to go live at " + keyTime(start.Add(time.Hour)) + " and has no schedule item",
		"names post " + q.ID + ", which is not scheduled at",
	} {
		if !strings.Contains(strings.Join(bad, "\n"), want) {
			t.Errorf("the checker finds nothing like %q in %q", want, bad)
		}
	}

	// A sweep that keeps failing leaves its item due: stuck after a minute.
	r := e.publish(e.post("ada", "stuck"), e.clock.Now().Add(time.Minute))
	e.hooks.every("TransactWriteItems", answer(http.StatusBadRequest, "ValidationException", ""))
	e.clock.Advance(2 * time.Minute)
	if _, err := e.store.GoLive(ctx); err == nil {
		t.Error("GoLive whose transaction failed succeeded")
	}
	e.hooks.clear()
	bad = must[[]string](t)(e.store.Check(ctx))
	if want := r.ID + " is due since"; !strings.Contains(strings.Join(bad, "\n"), want) {
		t.Errorf("the checker finds nothing like %q in %q", want, bad)
	}
}

// TestMigrateMarksScheduledPosts migrates a table of layout 2, whose
// scheduled posts have no go-live marker or schedule item: Migrate gives
// them theirs, without a new version, reading only the author copies
// sorted after now, and the posts then go live as the others do once
// IndexSchedule put them in the go-live index.
func TestMigrateMarksScheduledPosts(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.author("grace", "Grace")
	soon := e.publish(e.post("ada", "soon"), start.Add(time.Hour))
	e.publish(e.post("grace", "now"), time.Time{})
	e.post("grace", "draft")
	must[int](t)(legacytest.ToLayout4(ctx, e.client, e.table))
	// What layout 2 wrote: no marker, no schedule item.
	key := func(pk, sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}}
	}
	must[*dynamodb.UpdateItemOutput](t)(e.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(e.table), Key: key("POST#"+soon.ID, "POST#"+soon.ID), UpdateExpression: aws.String("REMOVE goLiveAt")}))
	must[*dynamodb.DeleteItemOutput](t)(e.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(e.table), Key: key("SCHEDULE", keyTime(start.Add(time.Hour))+"#"+soon.ID)}))
	layout := key("LAYOUT", "LAYOUT")
	layout["type"], layout["version"] = &types.AttributeValueMemberS{Value: "layout"}, &types.AttributeValueMemberN{Value: "2"}
	must[*dynamodb.PutItemOutput](t)(e.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: layout}))

	var m *storage.Migration
	n := counted(func(ctx context.Context) { m = must[*storage.Migration](t)(e.store.Migrate(ctx)) })
	equal(t, "migration", fmt.Sprintf("%+v", *m), fmt.Sprintf("%+v", storage.Migration{From: 2, To: storage.CurrentLayout, Scheduled: 1, Moved: 21}))
	// The layout item; the authors, and the scheduled copies of each; the
	// scheduled post, and its transaction; then layout 4's pass: the
	// feed's five partitions, old and new, the authors and their drafts,
	// and each post read with its parts (all split already, as this
	// version wrote them); layout 5's move: its checkpoint read, one Scan
	// page, a transaction for each of the 21 items (the posts' counter
	// among them, which the posts' creation wrote), the directory read
	// and written; the layout recorded; the directory item and the slug's
	// claim read, and written whole for the publications' list.
	equal(t, "requests", fmt.Sprint(n), "map[BatchGetItem:3 GetItem:6 PutItem:1 Query:11 Scan:1 TransactWriteItems:23 UpdateItem:1]")
	e.scheduled("migrated", soon.ID, start.Add(time.Hour))
	equal(t, "version", must[*storage.Post](t)(e.store.GetPost(ctx, soon.ID)).Version, soon.Version)
	e.consistent()

	// The migration wrote its schedule item without the go-live index:
	// the "schedule" worker's first tick adds it (IndexSchedule).
	equal(t, "items added to the go-live index", must[int](t)(e.store.IndexSchedule(ctx)), 1)
	equal(t, "items added again", must[int](t)(e.store.IndexSchedule(ctx)), 0)
	e.clock.Advance(time.Hour)
	equal(t, "posts gone live", must[int](t)(e.store.GoLive(ctx)), 1)
	e.consistent()
}

// TestEditRacingGoLive lets a post go live between an edit's read and its
// transaction: the edit read the marker, which is gone, so its condition
// fails, it reads again and writes the post without putting the marker
// back, and keeps the version the editor expected.
func TestEditRacingGoLive(t *testing.T) {
	e := newRaceEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	p := e.publish(e.post("ada", "soon"), start.Add(time.Hour))
	e.clock.Advance(time.Hour)
	e.hooks.at("TransactWriteItems", 1, e.racing("go-live", func(ctx context.Context, s *storage.Store) error {
		n, err := s.GoLive(ctx)
		if err == nil && n != 1 {
			err = fmt.Errorf("%d posts went live, want 1", n)
		}
		return err
	}))
	var edited *storage.Post
	n := counted(func(ctx context.Context) {
		edited = must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, Title: ptr("Now")}))
	})
	equal(t, "transactions of the edit", n["TransactWriteItems"], 2)
	equal(t, "title", edited.Title, "Now")
	e.scheduled("edited after it went live", p.ID, time.Time{})
	equal(t, "posts going live again", must[int](t)(e.store.GoLive(ctx)), 0)
	e.consistent()
}
