package storage_test

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// TestRequestsPerOperation pins the DynamoDB requests of every Store
// operation: each read is one request (the feed one per shard), each write
// one read and one TransactWriteItems, and a comment on items the store
// has seen its TransactWriteItems alone.
func TestRequestsPerOperation(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	e.category("aws", "AWS")
	p := e.publish(e.post("ada", "counted", "go"), time.Time{})
	c := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, AuthorID: "ada", Body: "hi"}))
	other := e.post("ada", "other")
	must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, ParentID: c.ID, AuthorID: "ada", Body: "re"}))
	c = must[*storage.Result[*storage.Comment]](t)(e.store.Comments(ctx, p.ID, storage.PageArgs{Limit: 1})).Items[0]
	replyCursor := must[*storage.Result[*storage.Comment]](t)(e.store.ReplyPage(ctx, c, storage.PageArgs{Limit: 1})).Cursors[0]
	reader := &storage.ReaderProfile{ID: "auth0|reader", Name: "Rea Der"}
	held := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, Reader: reader, Rules: storage.ReaderRules{Hold: true}, Body: "held"}))
	var byReader, rejected *storage.Comment
	page := storage.PageArgs{Limit: 20}
	var version int64 = p.Version
	cases := []struct {
		name string
		run  func(ctx context.Context) error
		want map[string]int
	}{
		{"GetPost", func(ctx context.Context) error { _, err := e.store.GetPost(ctx, p.ID); return err }, map[string]int{"Query": 1}},
		{"GetPostBySlug", func(ctx context.Context) error { _, err := e.store.GetPostBySlug(ctx, "counted"); return err }, map[string]int{"GetItem": 1, "Query": 1}},
		{"GetPosts", func(ctx context.Context) error { _, errs := e.store.GetPosts(ctx, []string{p.ID, "x"}); return errs[0] }, map[string]int{"BatchGetItem": 1}},
		{"GetCategories", func(ctx context.Context) error {
			_, errs := e.store.GetCategories(ctx, []string{"go", "aws"})
			return errs[0]
		}, map[string]int{"BatchGetItem": 1}},
		{"AuthorPosts", func(ctx context.Context) error {
			_, err := e.store.AuthorPosts(ctx, "ada", page, storage.Period{}, false)
			return err
		}, map[string]int{"Query": 1}},
		{"AuthorDrafts", func(ctx context.Context) error { _, err := e.store.AuthorDrafts(ctx, "ada", page); return err }, map[string]int{"Query": 1}},
		{"CategoryPosts", func(ctx context.Context) error {
			_, err := e.store.CategoryPosts(ctx, "go", page, storage.Period{})
			return err
		}, map[string]int{"Query": 1}},
		{"LatestPosts", func(ctx context.Context) error {
			_, err := e.store.LatestPosts(ctx, page, storage.Period{})
			return err
		}, map[string]int{"Query": 1}},
		{"Comments", func(ctx context.Context) error { _, err := e.store.Comments(ctx, p.ID, page); return err }, map[string]int{"Query": 1}},
		{"ReplyPage after a cursor", func(ctx context.Context) error {
			_, err := e.store.ReplyPage(ctx, c, storage.PageArgs{Limit: 5, After: replyCursor})
			return err
		}, map[string]int{"Query": 1}},
		{"ModerationQueue of an author", func(ctx context.Context) error { _, err := e.store.ModerationQueue(ctx, "ada", page); return err }, map[string]int{"Query": 1}},
		{"ModerationQueue of the blog", func(ctx context.Context) error { _, err := e.store.ModerationQueue(ctx, "", page); return err }, map[string]int{"Query": 1}},
		{"GetComments", func(ctx context.Context) error {
			_, errs := e.store.GetComments(ctx, []storage.CommentKey{{PostID: p.ID, CommentID: c.ID}, {PostID: p.ID, CommentID: held.ID}})
			return errors.Join(errs...)
		}, map[string]int{"BatchGetItem": 1}},
		{"GetCommenters", func(ctx context.Context) error {
			_, errs := e.store.GetCommenters(ctx, []storage.Writer{{AuthorID: "ada"}, {ReaderID: "auth0|reader"}})
			return errors.Join(errs...)
		}, map[string]int{"BatchGetItem": 1}},
		{"Authors", func(ctx context.Context) error { _, err := e.store.Authors(ctx, page); return err }, map[string]int{"Query": 1}},
		{"Categories", func(ctx context.Context) error { _, err := e.store.Categories(ctx, page); return err }, map[string]int{"Query": 1}},
		{"Stats", func(ctx context.Context) error { _, err := e.store.Stats(ctx); return err }, map[string]int{"GetItem": 1}},
		{"CreateAuthor", func(ctx context.Context) error {
			_, err := e.store.CreateAuthor(ctx, storage.NewAuthor{ID: "bob", Name: "Bob"})
			return err
		}, map[string]int{"BatchGetItem": 1, "TransactWriteItems": 1}},
		{"GetAuthorBySlug", func(ctx context.Context) error { _, err := e.store.GetAuthorBySlug(ctx, "bob"); return err }, map[string]int{"GetItem": 2}},
		{"UpdateAuthor without rename", func(ctx context.Context) error {
			_, err := e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: "bob", Bio: ptr("hi")})
			return err
		}, map[string]int{"GetItem": 1, "TransactWriteItems": 1}},
		// A new slug of an author is read with the author; the posts that
		// carry it are listed (author's partition, drafts) and rewritten,
		// between a read of the author's nameVer and the write that marks
		// it reached them all.
		{"UpdateAuthor with a new slug, no posts", func(ctx context.Context) error {
			_, err := e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: "bob", Slug: ptr("robert")})
			return err
		}, map[string]int{"BatchGetItem": 1, "TransactWriteItems": 1, "GetItem": 1, "Query": 2, "UpdateItem": 1}},
		{"CreatePost", func(ctx context.Context) error {
			_, err := e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "T", Slug: "new", Categories: []string{"go"}})
			return err
		}, map[string]int{"BatchGetItem": 1, "TransactWriteItems": 1}},
		{"UpdatePost", func(ctx context.Context) error {
			_, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: version, Title: ptr("New")})
			version++
			return err
		}, map[string]int{"Query": 1, "TransactWriteItems": 1}},
		{"UpdatePost with a new slug", func(ctx context.Context) error {
			_, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: version, Slug: ptr("counted-again")})
			version++
			return err
		}, map[string]int{"BatchGetItem": 1, "TransactWriteItems": 1}},
		// Another post's redirect: that post's slugs are read to take it.
		{"UpdatePost taking another post's redirect", func(ctx context.Context) error {
			_, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: other.ID, ExpectedVersion: other.Version, Slug: ptr("counted")})
			return err
		}, map[string]int{"BatchGetItem": 1, "GetItem": 1, "TransactWriteItems": 1}},
		{"AdjacentPost in the whole blog", func(ctx context.Context) error {
			_, err := e.store.AdjacentPost(ctx, p, "", false)
			return err
		}, map[string]int{"Query": 1}},
		{"AdjacentPost in a category", func(ctx context.Context) error {
			_, err := e.store.AdjacentPost(ctx, p, "go", true)
			return err
		}, map[string]int{"Query": 1}},
		{"LatestPosts backward in a month", func(ctx context.Context) error {
			_, err := e.store.LatestPosts(ctx, storage.PageArgs{Limit: 5, Backward: true}, storage.Period{From: start.AddDate(0, -1, 0), To: start})
			return err
		}, map[string]int{"Query": 1}},
		{"UpdatePost with new categories", func(ctx context.Context) error {
			_, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: version, Categories: &[]string{"aws", "go"}})
			version++
			return err
		}, map[string]int{"BatchGetItem": 1, "TransactWriteItems": 1}},
		{"AddComment", func(ctx context.Context) error {
			_, err := e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, AuthorID: "bob", Body: "yo"})
			return err
		}, map[string]int{"TransactWriteItems": 1}},
		{"AddComment with idempotency key", func(ctx context.Context) error {
			_, err := e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, AuthorID: "bob", Body: "once", IdempotencyKey: "k1"})
			return err
		}, map[string]int{"TransactWriteItems": 1}},
		{"DeleteComment", func(ctx context.Context) error {
			_, err := e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: c.ID})
			return err
		}, map[string]int{"TransactGetItems": 1, "TransactWriteItems": 1}},
		{"AddComment by a reader", func(ctx context.Context) error {
			var err error
			byReader, err = e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, Reader: reader, Rules: storage.ReaderRules{PerMinute: 5}, Body: "read it"})
			return err
		}, map[string]int{"TransactWriteItems": 1}},
		{"AddComment held", func(ctx context.Context) error {
			var err error
			rejected, err = e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, Reader: reader, Rules: storage.ReaderRules{Hold: true, PerMinute: 5}, Body: "hold it"})
			return err
		}, map[string]int{"TransactWriteItems": 1}},
		{"UpdateComment", func(ctx context.Context) error {
			_, err := e.store.UpdateComment(ctx, storage.CommentEdit{PostID: p.ID, CommentID: byReader.ID, Reader: reader, Body: "read it again"})
			return err
		}, map[string]int{"TransactGetItems": 1, "TransactWriteItems": 1}},
		{"ApproveComment", func(ctx context.Context) error {
			_, err := e.store.ApproveComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: held.ID})
			return err
		}, map[string]int{"TransactGetItems": 1, "TransactWriteItems": 1}},
		{"RejectComment", func(ctx context.Context) error {
			_, err := e.store.RejectComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: rejected.ID})
			return err
		}, map[string]int{"TransactGetItems": 1, "TransactWriteItems": 1}},
		{"DeleteComment of a held comment", func(ctx context.Context) error {
			_, err := e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: rejected.ID})
			return err
		}, map[string]int{"TransactGetItems": 1, "TransactWriteItems": 1}},
		{"Unpublish", func(ctx context.Context) error {
			_, err := e.store.Unpublish(ctx, storage.PostRef{ID: p.ID})
			return err
		}, map[string]int{"Query": 1, "TransactWriteItems": 1}},
		{"Publish", func(ctx context.Context) error {
			_, err := e.store.Publish(ctx, storage.PublishPost{ID: p.ID})
			return err
		}, map[string]int{"Query": 1, "TransactWriteItems": 1}},
		// Scheduling reads the counters too, to drop their entries of
		// posts whose time has come.
		{"Publish at a later time", func(ctx context.Context) error {
			_, err := e.store.Publish(ctx, storage.PublishPost{ID: p.ID, At: start.Add(time.Hour)})
			return err
		}, map[string]int{"BatchGetItem": 1, "Query": 1, "TransactWriteItems": 1}},
		{"UpdatePost taking a scheduled post out of a category", func(ctx context.Context) error {
			_, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: version + 3, Categories: &[]string{"aws"}})
			return err
		}, map[string]int{"BatchGetItem": 1, "TransactWriteItems": 1}},
		// The first read shows that the post is scheduled, so a second one
		// reads the counters.
		{"UpdatePost putting a scheduled post in a category", func(ctx context.Context) error {
			_, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: version + 4, Categories: &[]string{"go"}})
			return err
		}, map[string]int{"BatchGetItem": 2, "Query": 1, "TransactWriteItems": 1}},
	}
	for _, c := range cases {
		got := counted(func(ctx context.Context) {
			if err := c.run(ctx); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		})
		if !maps.Equal(got, c.want) {
			t.Errorf("%s: requests %v, want %v", c.name, got, c.want)
		}
	}
	e.consistent()
}

// TestAddCommentRequests pins the requests of a comment by what the
// store knows of the items it depends on: nothing (a read, then the
// transaction), what it last read or wrote (the transaction alone), or
// items another server has changed since (a transaction the changed items
// cancel, and one built from the items its cancellation returned; a post
// no longer published is read before the comment is refused).
func TestAddCommentRequests(t *testing.T) {
	e := newEnv(t)
	bg := context.Background()
	e.author("ada", "Ada")
	e.author("bob", "Bob")
	e.category("go", "Go")
	p := e.publish(e.post("ada", "counted", "go"), time.Time{})
	other := storage.New(e.client, e.table, storage.WithClock(e.clock.Now))
	add := func(ctx context.Context) error {
		_, err := other.AddComment(ctx, storage.NewComment{PostID: p.ID, AuthorID: "bob", Body: "hi"})
		return err
	}
	steps := []struct {
		name    string
		before  func() error // not counted
		wantErr error
		want    map[string]int
	}{
		{"on a store that has seen nothing", nil, nil, map[string]int{"BatchGetItem": 1, "TransactWriteItems": 1}},
		{"on a store that has seen the items", nil, nil, map[string]int{"TransactWriteItems": 1}},
		// A comment depends on the post's count item, which an edit of
		// the post leaves as it is.
		{"on a post another server changed", func() error {
			_, err := e.store.UpdatePost(bg, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, Title: ptr("Changed")})
			return err
		}, nil, map[string]int{"TransactWriteItems": 1}},
		{"once more", nil, nil, map[string]int{"TransactWriteItems": 1}},
		{"on a post another server unpublished", func() error {
			_, err := e.store.Unpublish(bg, storage.PostRef{ID: p.ID})
			return err
		}, storage.ErrNotFound, map[string]int{"TransactWriteItems": 1, "BatchGetItem": 1}},
	}
	for _, s := range steps {
		if s.before != nil {
			if err := s.before(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		}
		var err error
		got := counted(func(ctx context.Context) { err = add(ctx) })
		if !errors.Is(err, s.wantErr) {
			t.Fatalf("%s: %v, want %v", s.name, err, s.wantErr)
		}
		if !maps.Equal(got, s.want) {
			t.Errorf("%s: requests %v, want %v", s.name, got, s.want)
		}
	}
	equal(t, "comments", must[*storage.Post](t)(e.store.GetPost(bg, p.ID)).CommentCount, int64(4))
	e.consistent()
}
