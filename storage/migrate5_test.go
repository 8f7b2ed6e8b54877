package storage_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/internal/migrations"
	"github.com/blogql/blog/storage/legacytest"
)

// answers returns what the store answers of the blog of a layout test, as
// JSON: a post page, the feed, a category page, an author page, a post's
// comments and the categories.
func (e *env) answers(postID string) string {
	e.t.Helper()
	ctx := context.Background()
	page := storage.PageArgs{Limit: 20}
	out := []any{
		must[*storage.Post](e.t)(e.store.GetPost(ctx, postID)),
		must[*storage.Post](e.t)(e.store.GetPostBySlug(ctx, "post-0")),
		must[*storage.Result[*storage.Post]](e.t)(e.store.LatestPosts(ctx, page, storage.Period{})).Items,
		must[*storage.Result[*storage.Post]](e.t)(e.store.CategoryPosts(ctx, "go", page, storage.Period{})).Items,
		must[*storage.Result[*storage.Post]](e.t)(e.store.AuthorPosts(ctx, "ada", page, storage.Period{}, false)).Items,
		must[*storage.Result[*storage.Comment]](e.t)(e.store.Comments(ctx, postID, page)).Items,
		must[*storage.Result[*storage.Category]](e.t)(e.store.Categories(ctx, page)).Items,
	}
	b, err := json.Marshal(out)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// layout4Blog writes a blog with the store, then turns the table back to
// layout 4, before publications, and returns the id of a commented post
// and what the store answered of the blog.
func (e *env) layout4Blog() (postID, answers string) {
	e.t.Helper()
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	var ids []string
	for i, p := range e.posts(8, "ada", "post", "go") {
		ids = append(ids, e.publish(p, start.Add(-time.Duration(i+1)*time.Hour)).ID)
	}
	first := must[*storage.Comment](e.t)(e.store.AddComment(ctx, storage.NewComment{PostID: ids[0], AuthorID: "ada", Body: "first"}))
	must[*storage.Comment](e.t)(e.store.AddComment(ctx, storage.NewComment{PostID: ids[0], ParentID: first.ID, AuthorID: "ada", Body: "reply"}))
	must[*storage.Site](e.t)(e.store.UpdateSite(ctx, storage.SitePatch{Title: ptr("The blog")}))
	e.consistent()
	answers = e.answers(ids[0])
	if n := must[int](e.t)(legacytest.ToLayout4(ctx, e.client, e.table)); n < 50 {
		e.t.Fatalf("turned back %d items, want the blog's (50 or more)", n)
	}
	equal(e.t, "layout", must[int](e.t)(e.store.LayoutVersion(ctx)), 4)
	if _, err := e.store.GetPost(ctx, ids[0]); !errors.Is(err, storage.ErrNotFound) {
		e.t.Fatalf("a post of layout 4 read in the publication: %v, want ErrNotFound", err)
	}
	return ids[0], answers
}

// TestMigrateLayout4 moves a blog of layout 4 into the default
// publication: afterwards the store answers what it answered before,
// the table is consistent, no item is left outside a publication but the
// global ones, and a second run costs one GetItem.
func TestMigrateLayout4(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	postID, before := e.layout4Blog()

	m := must[*storage.Migration](t)(e.store.Migrate(ctx))
	equal(t, "from", m.From, 4)
	equal(t, "to", m.To, storage.CurrentLayout)
	if m.Moved < 50 {
		t.Errorf("moved %d items, want the blog's", m.Moved)
	}
	equal(t, "answers after", e.answers(postID), before)
	e.consistent()
	e.onlyPublicationItems()

	n := counted(func(ctx context.Context) { must[*storage.Migration](t)(e.store.Migrate(ctx)) })
	equal(t, "requests of a migration with nothing to do", len(n), 1)
	equal(t, "GetItem of a migration with nothing to do", n["GetItem"], 1)
}

// TestMigrateLayout4Resumes stops the move into the publication half-way,
// as a crash would, and runs it again: the second run goes on from the
// checkpoint, and the blog answers as before.
func TestMigrateLayout4Resumes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	postID, before := e.layout4Blog()

	stopped := storage.New(e.client, e.table, storage.WithClock(e.clock.Now), storage.WithMigrationStop(2, 10))
	if _, err := stopped.Migrate(ctx); !errors.Is(err, migrations.ErrStopped) {
		t.Fatalf("migrate = %v, want it stopped", err)
	}
	equal(t, "layout of a migration stopped half-way", must[int](t)(e.store.LayoutVersion(ctx)), 4)

	m := must[*storage.Migration](t)(e.store.Migrate(ctx))
	equal(t, "to", m.To, storage.CurrentLayout)
	if m.Moved == 0 {
		t.Error("the second run moved nothing: the first moved all, or the test's pages are too large")
	}
	equal(t, "answers after", e.answers(postID), before)
	e.consistent()
	e.onlyPublicationItems()
}

// onlyPublicationItems fails the test when an item of the table is
// neither the default publication's nor one of the global ones.
func (e *env) onlyPublicationItems() {
	e.t.Helper()
	out := must[*dynamodb.ScanOutput](e.t)(e.client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(e.table)}))
	global := []string{"LAYOUT", "PUBLICATION#", "PUBLICATIONSLUG#", "SECRET#", "PERSISTED#", "READER#", "LEASES", "EVENTLOG"}
	for _, it := range out.Items {
		pk := attrString(it["PK"])
		ok := strings.HasPrefix(pk, pubPrefix)
		for _, g := range global {
			ok = ok || strings.HasPrefix(pk, g)
		}
		if !ok {
			e.t.Errorf("item %s/%s is outside the publication", pk, attrString(it["SK"]))
		}
	}
	if out.LastEvaluatedKey != nil {
		e.t.Fatal("the table is larger than one Scan page")
	}
}

// attrString returns the string v holds, "" for another kind of value.
func attrString(v types.AttributeValue) string {
	if s, ok := v.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}
