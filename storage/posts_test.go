package storage_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/blogql/blog/storage"
)

func TestPostLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	e.category("aws", "AWS")
	page := storage.PageArgs{Limit: 10}
	// The publication's first post counts its posts for the quota once;
	// the create measured is one after it.
	first := must[*storage.Post](t)(e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "First", Slug: "first", Body: "Hi"}))
	must[*storage.Post](t)(e.store.DeletePost(ctx, storage.PostRef{ID: first.ID}))

	var draft *storage.Post
	reqs := counted(func(ctx context.Context) {
		var err error
		draft, err = e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "Hello", Slug: "hello", Body: "Hi", Categories: []string{"go"}})
		if err != nil {
			t.Fatal(err)
		}
	})
	equal(t, "create requests", len(reqs), 2)
	equal(t, "create BatchGetItem", reqs["BatchGetItem"], 1)
	equal(t, "create TransactWriteItems", reqs["TransactWriteItems"], 1)
	equal(t, "draft status", draft.Status, storage.StatusDraft)
	e.consistent()

	t.Run("a draft is in no public list", func(t *testing.T) {
		for name, list := range map[string]func() (*storage.Result[*storage.Post], error){
			"author": func() (*storage.Result[*storage.Post], error) {
				return e.store.AuthorPosts(ctx, "ada", page, storage.Period{}, true)
			},
			"category": func() (*storage.Result[*storage.Post], error) {
				return e.store.CategoryPosts(ctx, "go", page, storage.Period{})
			},
			"feed": func() (*storage.Result[*storage.Post], error) {
				return e.store.LatestPosts(ctx, page, storage.Period{})
			},
		} {
			r, err := list()
			if err != nil {
				t.Fatal(err)
			}
			equal(t, name+" items", len(r.Items), 0)
		}
		drafts := must[*storage.Result[*storage.Post]](t)(e.store.AuthorDrafts(ctx, "ada", page))
		equalSlices(t, "drafts", ids(drafts.Items), []string{draft.ID})
	})

	var pub *storage.Post
	reqs = counted(func(ctx context.Context) {
		pub = must[*storage.Post](t)(e.store.Publish(ctx, storage.PublishPost{ID: draft.ID, ExpectedVersion: 1}))
	})
	equal(t, "publish requests", reqs["Query"]+reqs["TransactWriteItems"], 2)
	equal(t, "publish total", len(reqs), 2)
	equal(t, "published version", pub.Version, int64(2))
	e.consistent()

	t.Run("a published post is in every list, one request each", func(t *testing.T) {
		for name, c := range map[string]struct {
			list func(ctx context.Context) (*storage.Result[*storage.Post], error)
			reqs int
		}{
			"author": {func(ctx context.Context) (*storage.Result[*storage.Post], error) {
				return e.store.AuthorPosts(ctx, "ada", page, storage.Period{}, false)
			}, 1},
			"category": {func(ctx context.Context) (*storage.Result[*storage.Post], error) {
				return e.store.CategoryPosts(ctx, "go", page, storage.Period{})
			}, 1},
			"feed": {func(ctx context.Context) (*storage.Result[*storage.Post], error) {
				return e.store.LatestPosts(ctx, page, storage.Period{})
			}, 1},
		} {
			var r *storage.Result[*storage.Post]
			n := counted(func(ctx context.Context) { r = must[*storage.Result[*storage.Post]](t)(c.list(ctx)) })
			equalSlices(t, name, ids(r.Items), []string{draft.ID})
			equal(t, name+" requests", n["Query"], c.reqs)
			equal(t, name+" title", r.Items[0].Title, "Hello")
			equal(t, name+" author name", r.Items[0].AuthorName, "Ada")
		}
		var bySlug *storage.Post
		n := counted(func(ctx context.Context) { bySlug = must[*storage.Post](t)(e.store.GetPostBySlug(ctx, "hello")) })
		equal(t, "by slug", bySlug.ID, draft.ID)
		equal(t, "by slug requests", n["GetItem"]+n["Query"], 2)
		equal(t, "body", bySlug.Body, "Hi")
	})

	t.Run("an edit with a stale version conflicts and writes nothing", func(t *testing.T) {
		_, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: draft.ID, ExpectedVersion: 1, Title: ptr("Stale")})
		var conflict *storage.ConflictError
		if !errors.As(err, &conflict) || conflict.CurrentVersion != 2 {
			t.Fatalf("err = %v, want a conflict at version 2", err)
		}
		equal(t, "title", must[*storage.Post](t)(e.store.GetPost(ctx, draft.ID)).Title, "Hello")
	})

	upd := must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{
		ID: draft.ID, ExpectedVersion: 2, Title: ptr("Hello again"), Slug: ptr("hello-again"),
		Categories: &[]string{"aws"},
	}))
	equal(t, "updated slug", upd.Slug, "hello-again")
	e.consistent()
	if old := must[*storage.Post](t)(e.store.GetPostBySlug(ctx, "hello")); old.ID != draft.ID || old.Slug != "hello-again" {
		t.Errorf("old slug finds %s with slug %q, want the post with its new slug", old.ID, old.Slug)
	}
	if r := must[*storage.Result[*storage.Post]](t)(e.store.CategoryPosts(ctx, "go", page, storage.Period{})); len(r.Items) != 0 {
		t.Errorf("old category still lists the post")
	}
	if r := must[*storage.Result[*storage.Post]](t)(e.store.CategoryPosts(ctx, "aws", page, storage.Period{})); len(r.Items) != 1 || r.Items[0].Title != "Hello again" {
		t.Errorf("new category lists %v", r.Items)
	}

	t.Run("another post takes the old slug from the redirect", func(t *testing.T) {
		taker := e.post("ada", "hello")
		e.consistent()
		equal(t, "old slug now", must[*storage.Post](t)(e.store.GetPostBySlug(ctx, "hello")).ID, taker.ID)
		_, err := e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "Dup", Slug: "hello-again"})
		if !errors.Is(err, storage.ErrSlugTaken) {
			t.Errorf("err = %v, want slug taken", err)
		}
	})

	must[*storage.Post](t)(e.store.Unpublish(ctx, storage.PostRef{ID: draft.ID}))
	e.consistent()
	if r := must[*storage.Result[*storage.Post]](t)(e.store.LatestPosts(ctx, page, storage.Period{})); len(r.Items) != 0 {
		t.Errorf("unpublished post still in feed")
	}
	e.publish(upd, time.Time{})
	must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: draft.ID, AuthorID: "ada", Body: "first"}))
	must[*storage.Post](t)(e.store.DeletePost(ctx, storage.PostRef{ID: draft.ID}))
	e.consistent()
	if _, err := e.store.GetPost(ctx, draft.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("deleted post: err = %v, want not found", err)
	}
	st := must[*storage.Stats](t)(e.store.Stats(ctx))
	equal(t, "stats posts", st.PostCount, int64(0))
}

func TestScheduledPostsAppearWhenTheirTimeComes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	now := e.publish(e.post("ada", "now", "go"), time.Time{})
	later := e.publish(e.post("ada", "later", "go"), start.Add(time.Hour))
	e.consistent()
	page := storage.PageArgs{Limit: 10}
	visible := func() map[string][]string {
		return map[string][]string{
			"author":   ids(must[*storage.Result[*storage.Post]](t)(e.store.AuthorPosts(ctx, "ada", page, storage.Period{}, false)).Items),
			"category": ids(must[*storage.Result[*storage.Post]](t)(e.store.CategoryPosts(ctx, "go", page, storage.Period{})).Items),
			"feed":     ids(must[*storage.Result[*storage.Post]](t)(e.store.LatestPosts(ctx, page, storage.Period{})).Items),
		}
	}
	for name, got := range visible() {
		equalSlices(t, name+" before", got, []string{now.ID})
	}
	equal(t, "status", later.StatusAt(e.clock.Now()), storage.StatusScheduled)
	all := must[*storage.Result[*storage.Post]](t)(e.store.AuthorPosts(ctx, "ada", page, storage.Period{}, true))
	equalSlices(t, "author's own list", ids(all.Items), []string{later.ID, now.ID})
	if _, err := e.store.AddComment(ctx, storage.NewComment{PostID: later.ID, AuthorID: "ada", Body: "early"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("comment on scheduled post: err = %v, want not found", err)
	}

	e.clock.Advance(time.Hour)
	for name, got := range visible() {
		equalSlices(t, name+" after", got, []string{later.ID, now.ID})
	}
}

// TestCountsFollowScheduledPosts checks the post counts readers see while
// posts are scheduled, moved, rescheduled and unpublished, and as their
// time comes with no write; and that the entries recording scheduled posts
// do not pile up.
func TestCountsFollowScheduledPosts(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	e.category("aws", "AWS")
	e.publish(e.post("ada", "now", "go"), time.Time{})
	soon := e.publish(e.post("ada", "soon", "go", "aws"), start.Add(time.Hour))
	later := e.publish(e.post("ada", "later", "go"), start.Add(2*time.Hour))
	type counts struct{ ada, adaScheduled, goPosts, awsPosts, blog int64 }
	check := func(name string, want counts) {
		t.Helper()
		a := must[*storage.Author](t)(e.store.GetAuthor(ctx, "ada"))
		cats := map[string]int64{}
		for _, c := range must[*storage.Result[*storage.Category]](t)(e.store.Categories(ctx, storage.PageArgs{Limit: 10})).Items {
			cats[c.Slug] = c.PostCount
		}
		got := counts{a.PostCount, a.ScheduledCount, cats["go"], cats["aws"], must[*storage.Stats](t)(e.store.Stats(ctx)).PostCount}
		equal(t, name, got, want)
		batch, _ := e.store.GetAuthors(ctx, []string{"ada"})
		equal(t, name+": author read in a batch", batch[0].PostCount, want.ada)
		e.consistent()
	}
	check("two scheduled", counts{1, 2, 1, 0, 1})

	moved := []string{"aws"}
	later = must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: later.ID, ExpectedVersion: later.Version, Categories: &moved}))
	check("scheduled post moved to another category", counts{1, 2, 1, 0, 1})
	e.publish(soon, start.Add(3*time.Hour))
	check("rescheduled", counts{1, 2, 1, 0, 1})
	must[*storage.Post](t)(e.store.Unpublish(ctx, storage.PostRef{ID: later.ID}))
	check("scheduled post unpublished", counts{1, 1, 1, 0, 1})

	e.clock.Advance(3*time.Hour + time.Second)
	check("its time came", counts{2, 0, 2, 1, 2})

	// Scheduling another post removes the entries whose time has passed.
	entries := func() int {
		out, err := e.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(e.table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pubPrefix + "AUTHOR#ada"}, "SK": &types.AttributeValueMemberS{Value: "AUTHOR#ada"}}})
		if err != nil {
			t.Fatal(err)
		}
		m, _ := out.Item["scheduled"].(*types.AttributeValueMemberM)
		if m == nil {
			return 0
		}
		return len(m.Value)
	}
	equal(t, "entries before", entries(), 1)
	e.publish(e.post("ada", "next", "go"), e.clock.Now().Add(time.Hour))
	equal(t, "entries after scheduling another post", entries(), 1)
	check("one more scheduled", counts{2, 1, 2, 1, 2})
}

func TestBadInputWritesNothing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = "c" + string(rune('a'+i))
	}
	valid := storage.NewPost{AuthorID: "ada", Title: "T", Slug: "s", Categories: []string{"go"}}
	cases := []struct {
		name  string
		edit  func(*storage.NewPost)
		field string
	}{
		{"empty title", func(p *storage.NewPost) { p.Title = "  " }, "title"},
		{"title too long", func(p *storage.NewPost) { p.Title = strings.Repeat("x", 201) }, "title"},
		{"slug with bad characters", func(p *storage.NewPost) { p.Slug = "Hello World!" }, "slug"},
		{"slug with a trailing hyphen", func(p *storage.NewPost) { p.Slug = "hello-" }, "slug"},
		{"eleven categories", func(p *storage.NewPost) { p.Categories = eleven }, "categories"},
		{"unknown category", func(p *storage.NewPost) { p.Categories = []string{"nope"} }, "categories"},
		{"unknown author", func(p *storage.NewPost) { p.AuthorID = "nobody" }, "authorId"},
		{"body over the item limit", func(p *storage.NewPost) { p.Body = strings.Repeat("x", 400_001) }, "body"},
		{"invalid UTF-8", func(p *storage.NewPost) { p.Excerpt = "\xff" }, "excerpt"},
		{"bad idempotency key", func(p *storage.NewPost) { p.IdempotencyKey = "has space" }, "idempotencyKey"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := valid
			c.edit(&in)
			_, err := e.store.CreatePost(ctx, in)
			var ve *storage.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, storage.ErrInvalidInput) || ve.Field != c.field {
				t.Fatalf("err = %v, want invalid input on %s", err, c.field)
			}
		})
	}
	drafts := must[*storage.Result[*storage.Post]](t)(e.store.AuthorDrafts(ctx, "ada", storage.PageArgs{Limit: 10}))
	equal(t, "posts written", len(drafts.Items), 0)
	for _, p := range []storage.PageArgs{{Limit: 0}, {Limit: 101}, {Limit: 5, After: "garbage"}} {
		if _, err := e.store.LatestPosts(ctx, p, storage.Period{}); !errors.Is(err, storage.ErrInvalidInput) {
			t.Errorf("page %+v: err = %v, want invalid input", p, err)
		}
	}
	e.consistent()
}

func TestRenamesReachEveryCopy(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	e.category("aws", "AWS")
	for _, slug := range []string{"one", "two", "three"} {
		e.publish(e.post("ada", slug, "go", "aws"), time.Time{})
	}
	e.post("ada", "draft", "go")
	must[*storage.Author](t)(e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: "ada", Name: ptr("Ada Lovelace")}))
	must[*storage.Category](t)(e.store.UpdateCategory(ctx, storage.CategoryPatch{Slug: "go", Name: ptr("Golang")}))
	e.consistent()
	r := must[*storage.Result[*storage.Post]](t)(e.store.CategoryPosts(ctx, "aws", storage.PageArgs{Limit: 10}, storage.Period{}))
	for _, p := range r.Items {
		equal(t, "author name", p.AuthorName, "Ada Lovelace")
		equal(t, "category name", p.Categories[0].Name, "Golang")
	}
	// A post written after the rename carries the new names.
	p := e.post("ada", "four", "go")
	equal(t, "new post author", p.AuthorName, "Ada Lovelace")
	equal(t, "new post category", p.Categories[0].Name, "Golang")
	e.consistent()
}

func TestIdempotencyKeys(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	in := storage.NewPost{AuthorID: "ada", Title: "Once", Slug: "once", IdempotencyKey: "create-once-1"}
	first := must[*storage.Post](t)(e.store.CreatePost(ctx, in))
	e.clock.Advance(time.Second) // a retry comes later: its timestamps differ
	again := must[*storage.Post](t)(e.store.CreatePost(ctx, in))
	equal(t, "same post", again.ID, first.ID)
	drafts := must[*storage.Result[*storage.Post]](t)(e.store.AuthorDrafts(ctx, "ada", storage.PageArgs{Limit: 10}))
	equal(t, "posts", len(drafts.Items), 1)

	in.Title = "Different"
	if _, err := e.store.CreatePost(ctx, in); !errors.Is(err, storage.ErrIdempotencyMismatch) {
		t.Errorf("same key, other input: err = %v, want idempotency mismatch", err)
	}
	pub := storage.PublishPost{ID: first.ID, ExpectedVersion: 1, IdempotencyKey: "publish-once"}
	p1 := must[*storage.Post](t)(e.store.Publish(ctx, pub))
	p2 := must[*storage.Post](t)(e.store.Publish(ctx, pub))
	equal(t, "publish replay version", p2.Version, p1.Version)
	equal(t, "stored version", must[*storage.Post](t)(e.store.GetPost(ctx, first.ID)).Version, int64(2))
	e.consistent()
}

func ptr[T any](v T) *T { return &v }

// TestOldScheduledEntry: a table written by earlier versions holds an
// entry "-" with no time in every "scheduled" map; it counts nothing, and
// the next write that schedules a post there removes it.
func TestOldScheduledEntry(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	authorKey := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pubPrefix + "AUTHOR#ada"}, "SK": &types.AttributeValueMemberS{Value: "AUTHOR#ada"}}
	_, err := e.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(e.table), Key: authorKey,
		UpdateExpression:          aws.String("SET scheduled = :old"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":old": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"-": &types.AttributeValueMemberS{Value: ""}}}}})
	if err != nil {
		t.Fatal(err)
	}
	a := must[*storage.Author](t)(e.store.GetAuthor(ctx, "ada"))
	equal(t, "post count with the old entry", [2]int64{a.PostCount, a.ScheduledCount}, [2]int64{0, 0})

	p := e.publish(e.post("ada", "later", "go"), e.clock.Now().Add(time.Hour))
	out, err := e.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(e.table), Key: authorKey, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := out.Item["scheduled"].(*types.AttributeValueMemberM)
	if m == nil || len(m.Value) != 1 || m.Value[p.ID] == nil {
		t.Errorf("scheduled entries after scheduling a post: %v, want only the post's", out.Item["scheduled"])
	}
	a = must[*storage.Author](t)(e.store.GetAuthor(ctx, "ada"))
	equal(t, "post count", [2]int64{a.PostCount, a.ScheduledCount}, [2]int64{0, 1})
	e.consistent()
}

// TestClearedFieldIsRemoved: a profile field cleared with "" is removed
// from the item, as an item written whole leaves it out.
func TestClearedFieldIsRemoved(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	bio, empty := "Wrote the first program.", ""
	must[*storage.Author](t)(e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: "ada", Bio: &bio, AvatarURL: ptrTo("https://example.com/ada.png")}))
	a := must[*storage.Author](t)(e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: "ada", Bio: &empty}))
	equal(t, "bio", a.Bio, "")
	out, err := e.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(e.table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pubPrefix + "AUTHOR#ada"}, "SK": &types.AttributeValueMemberS{Value: "AUTHOR#ada"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.Item["bio"]; ok {
		t.Errorf("the cleared bio is still stored: %v", out.Item["bio"])
	}
	if _, ok := out.Item["avatarUrl"]; !ok {
		t.Error("the avatar URL, not cleared, is gone")
	}
	equal(t, "author read back", must[*storage.Author](t)(e.store.GetAuthor(ctx, "ada")).Bio, "")
	e.consistent()
}

func ptrTo[T any](v T) *T { return &v }

// TestDeletedPostsCommentsGo checks the removal of a deleted post's
// comments, which follows its transaction: a conflict with a comment's
// transaction under way is tried again, and when DynamoDB refuses every
// attempt the deletion says to try later, and sending it again with its
// idempotency key removes what is left.
func TestDeletedPostsCommentsGo(t *testing.T) {
	t.Run("a conflict with a transaction on a comment", func(t *testing.T) {
		e := newRaceEnv(t)
		e.blog()
		e.hooks.at("BatchWriteItem", 1, answer(400, "TransactionConflictException", ""))
		must[*storage.Post](t)(e.store.DeletePost(context.Background(), storage.PostRef{ID: e.published.ID}))
		e.consistent()
	})
	t.Run("refused on every attempt, then sent again", func(t *testing.T) {
		e := newRaceEnv(t)
		e.blog()
		ref := storage.PostRef{ID: e.published.ID, IdempotencyKey: "delete-once"}
		e.hooks.every("BatchWriteItem", answer(400, "ThrottlingException", ""))
		_, err := e.store.DeletePost(context.Background(), ref)
		e.hooks.clear()
		if !errors.Is(err, storage.ErrUnavailable) {
			t.Fatalf("err = %v, want unavailable", err)
		}
		if bad := must[[]string](t)(e.store.Check(context.Background())); len(bad) == 0 {
			t.Fatal("the comments went although every BatchWriteItem was refused")
		}
		p := must[*storage.Post](t)(e.store.DeletePost(context.Background(), ref))
		equal(t, "deleted post, replayed", p.ID, e.published.ID)
		e.consistent()
	})
}

// TestWriteLeavingTheBodyAnswersItUnread checks what a post write that
// cannot change the body returns: the post without its body
// (BodyUnread, not a summary), or with it when the caller asks
// (AnswerWithBody); the body stays as it was, and the revision of a title
// edit finds it.
func TestWriteLeavingTheBodyAnswersItUnread(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	p := must[*storage.Post](t)(e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "T", Slug: "t", Body: "# Hello\n\nWorld."}))
	html := p.BodyHTML

	published := must[*storage.Post](t)(e.store.Publish(ctx, storage.PublishPost{ID: p.ID, At: start.Add(-time.Hour)}))
	equal(t, "published: body unread", published.BodyUnread, true)
	equal(t, "published: summary", published.Summary, false)
	equal(t, "published: body", published.Body, "")
	equal(t, "published: title", published.Title, "T")

	edited := must[*storage.Post](t)(e.store.UpdatePost(storage.AnswerWithBody(ctx), storage.PostPatch{ID: p.ID, ExpectedVersion: published.Version, Title: ptr("U")}))
	equal(t, "asked: body unread", edited.BodyUnread, false)
	equal(t, "asked: body", edited.Body, "# Hello\n\nWorld.")
	equal(t, "asked: HTML", edited.BodyHTML, html)

	// A write that reads names with the post (categories, tags) leaves
	// the body alone too.
	e.category("go", "Go")
	tagged := must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: edited.Version,
		Categories: &[]string{"go"}, Tags: &[]string{"Databases"}}))
	equal(t, "tagged: body unread", tagged.BodyUnread, true)
	equal(t, "tagged: category", tagged.Categories[0].Slug, "go")

	got := must[*storage.Post](t)(e.store.GetPost(ctx, p.ID))
	equal(t, "body", got.Body, "# Hello\n\nWorld.")
	equal(t, "HTML", got.BodyHTML, html)
	revs := must[*storage.Result[*storage.Revision]](t)(e.store.Revisions(ctx, p.ID, storage.PageArgs{Limit: 10}))
	equal(t, "revisions", len(revs.Items), 1)
	equal(t, "revision without body", revs.Items[0].BodyUnread, true)
	if err := e.store.RevisionBodies(ctx, p.ID, revs.Items, got.Revisions); err != nil {
		t.Fatal(err)
	}
	equal(t, "revision's body", revs.Items[0].Body, "# Hello\n\nWorld.")
	e.consistent()
}
