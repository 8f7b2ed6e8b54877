package storage_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage"
)

// TestReaderProfiles checks how a reader's name and picture come from
// their token's claims: stored with the first comment, written again only
// when the claims change, never emptied by a missing or invalid claim.
func TestReaderProfiles(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	p := e.publish(e.post("ada", "profiles"), time.Time{})
	n := 0
	comment := func(profile storage.ReaderProfile) *storage.Commenter {
		t.Helper()
		n++
		e.clock.Advance(time.Second)
		c := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, Reader: &profile, Body: fmt.Sprintf("comment %d", n)}))
		equal(t, "writer", c.Writer(), storage.Writer{ReaderID: profile.ID})
		got, errs := e.store.GetCommenters(ctx, []storage.Writer{c.Writer()})
		if errs[0] != nil {
			t.Fatal(errs[0])
		}
		return got[0]
	}
	sub := "google-oauth2|1092837465"
	r := comment(storage.ReaderProfile{ID: sub, Name: "  Lin Reader ", AvatarURL: "https://id.example.com/lin.png"}).Reader
	equal(t, "name", r.Name, "Lin Reader")
	equal(t, "picture", r.AvatarURL, "https://id.example.com/lin.png")
	created := r.UpdatedAt

	r = comment(storage.ReaderProfile{ID: sub}).Reader
	equal(t, "name kept without a claim", r.Name, "Lin Reader")
	equal(t, "picture kept without a claim", r.AvatarURL, "https://id.example.com/lin.png")
	equal(t, "not written again", r.UpdatedAt, created)

	r = comment(storage.ReaderProfile{ID: sub, Name: "Lin\x1b[31m", AvatarURL: "javascript:alert(1)"}).Reader
	equal(t, "invalid name ignored", r.Name, "Lin Reader")
	equal(t, "invalid picture ignored", r.AvatarURL, "https://id.example.com/lin.png")
	equal(t, "not written for invalid claims", r.UpdatedAt, created)

	r = comment(storage.ReaderProfile{ID: sub, Name: "Lin R.", AvatarURL: "https://id.example.com/lin-2.png"}).Reader
	equal(t, "new name", r.Name, "Lin R.")
	equal(t, "new picture", r.AvatarURL, "https://id.example.com/lin-2.png")
	if !r.UpdatedAt.After(created) {
		t.Errorf("updatedAt %v, want after %v", r.UpdatedAt, created)
	}

	r = comment(storage.ReaderProfile{ID: "no-name"}).Reader
	equal(t, "default name", r.Name, storage.DefaultReaderName)
	r = comment(storage.ReaderProfile{ID: "long-name", Name: strings.Repeat("é", storage.MaxNameLength+20)}).Reader
	equal(t, "long name cut", r.Name, strings.Repeat("é", storage.MaxNameLength))

	for _, bad := range []string{"", "tab\tsub", strings.Repeat("x", storage.MaxReaderIDLength+1)} {
		_, err := e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, Reader: &storage.ReaderProfile{ID: bad}, Body: "x"})
		if ve, ok := errors.AsType[*storage.ValidationError](err); !ok || ve.Field != "readerId" {
			t.Errorf("reader id %q: err = %v, want invalid readerId", bad, err)
		}
	}

	// An author id that names no author falls back to the reader.
	c := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, AuthorID: "nobody", Reader: &storage.ReaderProfile{ID: "nobody", Name: "No Body"}, Body: "fallback"}))
	equal(t, "fallback writer", c.Writer(), storage.Writer{ReaderID: "nobody"})
	c = must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, AuthorID: "ada", Reader: &storage.ReaderProfile{ID: "ada"}, Body: "as an author"}))
	equal(t, "author writer", c.Writer(), storage.Writer{AuthorID: "ada"})
	e.consistent()
}

// TestHeldComments follows pending comments from the reader who writes
// them to the moderators who approve or reject them: out of every public
// list and count until approved, in the queues of the post's author and
// of the admins, newest first.
func TestHeldComments(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.author("bob", "Bob")
	e.category("go", "Go")
	adas := e.publish(e.post("ada", "adas", "go"), time.Time{})
	bobs := e.publish(e.post("bob", "bobs"), time.Time{})
	lin := &storage.ReaderProfile{ID: "lin", Name: "Lin"}
	hold := storage.ReaderRules{Hold: true}
	add := func(post, parent, body string) *storage.Comment {
		t.Helper()
		e.clock.Advance(time.Second)
		return must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: post, ParentID: parent, Reader: lin, Rules: hold, Body: body}))
	}
	published := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: adas.ID, AuthorID: "bob", Body: "published"}))
	first := add(adas.ID, "", "first held")
	reply := add(adas.ID, published.ID, "held reply")
	onBobs := add(bobs.ID, "", "on bob's post")
	equal(t, "status", first.Status, storage.CommentPending)
	e.consistent()

	counts := func(post string) (int64, int64) {
		p := must[*storage.Post](t)(e.store.GetPost(ctx, post))
		return p.CommentCount, p.ThreadCount
	}
	comments, threads := counts(adas.ID)
	equal(t, "comment count", comments, int64(1))
	equal(t, "thread count", threads, int64(1))
	list := must[*storage.Result[*storage.Comment]](t)(e.store.Comments(ctx, adas.ID, storage.PageArgs{Limit: 50}))
	equalSlices(t, "public list", commentIDs(list.Items), []string{published.ID})
	equal(t, "no carried replies", len(list.Items[0].Replies), 0)
	equal(t, "reply count", list.Items[0].ReplyCount, int64(0))
	copyCount := must[*storage.Result[*storage.Post]](t)(e.store.CategoryPosts(ctx, "go", storage.PageArgs{Limit: 5}, storage.Period{})).Items[0].CommentCount
	// The copies' counts follow from the change feed (the counts worker,
	// which e.consistent stands in for), and count only published comments.
	equal(t, "count on the category copy", copyCount, int64(1))

	queue := func(author string, p storage.PageArgs) *storage.Result[*storage.Comment] {
		return must[*storage.Result[*storage.Comment]](t)(e.store.ModerationQueue(ctx, author, p))
	}
	equalSlices(t, "ada's queue", commentIDs(queue("ada", storage.PageArgs{Limit: 10}).Items), []string{reply.ID, first.ID})
	equalSlices(t, "bob's queue", commentIDs(queue("bob", storage.PageArgs{Limit: 10}).Items), []string{onBobs.ID})
	all := queue("", storage.PageArgs{Limit: 2})
	equalSlices(t, "admins' queue", commentIDs(all.Items), []string{onBobs.ID, reply.ID})
	equal(t, "more in the admins' queue", all.HasNext, true)
	rest := queue("", storage.PageArgs{Limit: 2, After: all.Cursors[1]})
	equalSlices(t, "admins' queue, page 2", commentIDs(rest.Items), []string{first.ID})
	equal(t, "queue entry body", rest.Items[0].Body, "first held")

	got, errs := e.store.GetComments(ctx, []storage.CommentKey{{PostID: adas.ID, CommentID: first.ID}})
	if errs[0] != nil || got[0].Status != storage.CommentPending {
		t.Errorf("GetComments of a pending comment = %+v, %v", got[0], errs[0])
	}

	t.Run("editing a pending comment edits its queue entry", func(t *testing.T) {
		e.clock.Advance(time.Second)
		c := must[*storage.Comment](t)(e.store.UpdateComment(ctx, storage.CommentEdit{PostID: adas.ID, CommentID: first.ID, Body: "first held, edited"}))
		equal(t, "edited at", c.EditedAt, e.clock.Now().Truncate(time.Millisecond))
		equal(t, "queue body", queue("", storage.PageArgs{Limit: 10}).Items[2].Body, "first held, edited")
		e.consistent()
	})

	t.Run("approving moves a comment into the lists and counts", func(t *testing.T) {
		n := counted(func(ctx context.Context) {
			c := must[*storage.Comment](t)(e.store.ApproveComment(ctx, storage.CommentRef{PostID: adas.ID, CommentID: reply.ID}))
			equal(t, "status", c.Status, storage.CommentPublished)
		})
		equal(t, "approval transactions", n["TransactWriteItems"], 1)
		must[*storage.Comment](t)(e.store.ApproveComment(ctx, storage.CommentRef{PostID: adas.ID, CommentID: first.ID}))
		e.consistent()
		comments, threads := counts(adas.ID)
		equal(t, "comment count", comments, int64(3))
		equal(t, "thread count", threads, int64(2))
		list := must[*storage.Result[*storage.Comment]](t)(e.store.Comments(ctx, adas.ID, storage.PageArgs{Limit: 50}))
		equalSlices(t, "public list", commentIDs(list.Items), []string{published.ID, first.ID})
		equalSlices(t, "carried reply", commentIDs(list.Items[0].Replies), []string{reply.ID})
		equal(t, "ada's queue", len(queue("ada", storage.PageArgs{Limit: 10}).Items), 0)
		if _, err := e.store.ApproveComment(ctx, storage.CommentRef{PostID: adas.ID, CommentID: first.ID}); !errors.Is(err, storage.ErrNotPending) {
			t.Errorf("approving a published comment: err = %v, want ErrNotPending", err)
		}
		if _, err := e.store.RejectComment(ctx, storage.CommentRef{PostID: adas.ID, CommentID: first.ID}); !errors.Is(err, storage.ErrNotPending) {
			t.Errorf("rejecting a published comment: err = %v, want ErrNotPending", err)
		}
		e.consistent()
	})

	t.Run("rejecting keeps a comment out of every list", func(t *testing.T) {
		c := must[*storage.Comment](t)(e.store.RejectComment(ctx, storage.CommentRef{PostID: bobs.ID, CommentID: onBobs.ID}))
		equal(t, "status", c.Status, storage.CommentRejected)
		equal(t, "bob's queue", len(queue("bob", storage.PageArgs{Limit: 10}).Items), 0)
		equal(t, "admins' queue", len(queue("", storage.PageArgs{Limit: 10}).Items), 0)
		equal(t, "bob's comments", len(must[*storage.Result[*storage.Comment]](t)(e.store.Comments(ctx, bobs.ID, storage.PageArgs{Limit: 10})).Items), 0)
		got, errs := e.store.GetComments(ctx, []storage.CommentKey{{PostID: bobs.ID, CommentID: onBobs.ID}})
		if errs[0] != nil || got[0].Status != storage.CommentRejected {
			t.Errorf("GetComments of a rejected comment = %+v, %v", got[0], errs[0])
		}
		if _, err := e.store.UpdateComment(ctx, storage.CommentEdit{PostID: bobs.ID, CommentID: onBobs.ID, Body: "let me in"}); !errors.Is(err, storage.ErrInvalidInput) {
			t.Errorf("editing a rejected comment: err = %v, want invalid input", err)
		}
		e.consistent()
		ref := storage.CommentRef{PostID: bobs.ID, CommentID: onBobs.ID}
		if _, err := e.store.RejectComment(ctx, ref); !errors.Is(err, storage.ErrNotPending) {
			t.Errorf("rejecting a rejected comment: err = %v, want ErrNotPending", err)
		}
		if _, err := e.store.ApproveComment(ctx, ref); !errors.Is(err, storage.ErrNotPending) {
			t.Errorf("approving a rejected comment without overturning: err = %v, want ErrNotPending", err)
		}
		ref.OverturnRejection = true
		c = must[*storage.Comment](t)(e.store.ApproveComment(ctx, ref))
		equal(t, "a rejected comment approved after all", c.Status, storage.CommentPublished)
		if _, err := e.store.ApproveComment(ctx, ref); !errors.Is(err, storage.ErrNotPending) {
			t.Errorf("overturning a rejection twice: err = %v, want ErrNotPending", err)
		}
		comments, _ := counts(bobs.ID)
		equal(t, "bob's comment count", comments, int64(1))
		e.consistent()
	})

	t.Run("deleting held comments and posts with held comments", func(t *testing.T) {
		gone := add(bobs.ID, "", "soon deleted")
		must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: bobs.ID, CommentID: gone.ID}))
		rejected := add(bobs.ID, "", "soon rejected")
		must[*storage.Comment](t)(e.store.RejectComment(ctx, storage.CommentRef{PostID: bobs.ID, CommentID: rejected.ID}))
		must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: bobs.ID, CommentID: rejected.ID}))
		e.consistent()
		add(bobs.ID, "", "pending with the post")
		must[*storage.Post](t)(e.store.DeletePost(ctx, storage.PostRef{ID: bobs.ID}))
		equal(t, "admins' queue", len(queue("", storage.PageArgs{Limit: 10}).Items), 0)
		e.consistent()
	})

	t.Run("a reply whose parent was deleted cannot be approved", func(t *testing.T) {
		lone := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: adas.ID, AuthorID: "bob", Body: "lonely"}))
		r := add(adas.ID, lone.ID, "too late")
		must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: adas.ID, CommentID: lone.ID}))
		if _, err := e.store.ApproveComment(ctx, storage.CommentRef{PostID: adas.ID, CommentID: r.ID}); !errors.Is(err, storage.ErrInvalidInput) {
			t.Errorf("approve: err = %v, want invalid input", err)
		}
		must[*storage.Comment](t)(e.store.RejectComment(ctx, storage.CommentRef{PostID: adas.ID, CommentID: r.ID}))
		e.consistent()
	})
}

// TestReaderRateLimit counts a reader's comments across two stores on
// one table, as two servers would: the sixth in a minute is refused with
// the time to wait, and nothing is written; duplicates are refused unless
// retried with the same idempotency key.
func TestReaderRateLimit(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	p := e.publish(e.post("ada", "limited"), time.Time{})
	other := storage.New(e.client, e.table, storage.WithClock(e.clock.Now))
	lin := &storage.ReaderProfile{ID: "lin", Name: "Lin"}
	rules := storage.ReaderRules{PerMinute: 5}
	add := func(s *storage.Store, body, key string) (*storage.Comment, error) {
		return s.AddComment(ctx, storage.NewComment{PostID: p.ID, Reader: lin, Rules: rules, Body: body, IdempotencyKey: key})
	}
	for i := range 5 {
		store := e.store
		if i%2 == 1 {
			store = other
		}
		must[*storage.Comment](t)(add(store, fmt.Sprintf("comment %d", i), ""))
		e.clock.Advance(10 * time.Second)
	}
	// 50 s after the first comment: it counts for 10 s more.
	before := e.snapshotItems()
	_, err := add(other, "one too many", "")
	rl, ok := errors.AsType[*storage.RateLimitError](err)
	if !ok || !errors.Is(err, storage.ErrRateLimited) {
		t.Fatalf("sixth comment: err = %v, want a rate limit error", err)
	}
	equal(t, "retry after", rl.RetryAfter, 10*time.Second)
	if after := e.snapshotItems(); after != before {
		t.Error("a refused comment wrote something")
	}
	e.clock.Advance(9 * time.Second)
	_, err = add(e.store, "one too many", "")
	equal(t, "a second early", errors.Is(err, storage.ErrRateLimited), true)
	e.clock.Advance(time.Second)
	must[*storage.Comment](t)(add(e.store, "one too many", ""))

	t.Run("duplicates", func(t *testing.T) {
		e.clock.Advance(time.Minute)
		first := must[*storage.Comment](t)(add(e.store, "Great post!", "key-1"))
		again := must[*storage.Comment](t)(add(other, "Great post!", "key-1"))
		equal(t, "replayed with the same key", again.ID, first.ID)
		for _, k := range []string{"", "key-2"} {
			if _, err := add(other, "Great post!", k); !errors.Is(err, storage.ErrDuplicateComment) {
				t.Errorf("duplicate with key %q: err = %v, want ErrDuplicateComment", k, err)
			}
		}
		must[*storage.Comment](t)(add(e.store, "Great post, really!", ""))
		must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, ParentID: first.ID, Reader: lin, Rules: rules, Body: "Great post!"}))
		e.clock.Advance(time.Minute)
		must[*storage.Comment](t)(add(other, "Great post!", ""))
		e.consistent()
	})

	t.Run("unchecked readers are neither limited nor refused duplicates", func(t *testing.T) {
		for range 7 {
			must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, Reader: lin, Rules: storage.ReaderRules{PerMinute: 5, Unchecked: true}, Body: "same"}))
		}
		e.consistent()
	})
}

// snapshotItems returns every item of the table as text, in order: two
// equal snapshots mean nothing was written in between.
func (e *env) snapshotItems() string {
	e.t.Helper()
	var items []string
	pages := dynamodb.NewScanPaginator(e.client, &dynamodb.ScanInput{TableName: aws.String(e.table), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			e.t.Fatal(err)
		}
		for _, it := range page.Items {
			var m map[string]any
			if err := attributevalue.UnmarshalMap(it, &m); err != nil {
				e.t.Fatal(err)
			}
			items = append(items, fmt.Sprint(m))
		}
	}
	slices.Sort(items)
	return strings.Join(items, "\n")
}

// TestCarriedReplies checks the replies a top-level comment carries: its
// first MaxReplyPage, whatever is added, approved out of order, edited or
// deleted, so the first page of a thread never needs a read.
func TestCarriedReplies(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	p := e.publish(e.post("ada", "long-thread"), time.Time{})
	root := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, AuthorID: "ada", Body: "root"}))
	e.clock.Advance(time.Second)
	early := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, ParentID: root.ID, Reader: &storage.ReaderProfile{ID: "lin"}, Rules: storage.ReaderRules{Hold: true}, Body: "early, held"}))
	var replies []string
	for i := range 2*storage.MaxReplyPage + 3 {
		e.clock.Advance(time.Second)
		r := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, ParentID: root.ID, AuthorID: "ada", Body: fmt.Sprintf("reply %d", i)}))
		replies = append(replies, r.ID)
	}
	e.consistent()
	read := func() *storage.Comment {
		return must[*storage.Result[*storage.Comment]](t)(e.store.Comments(ctx, p.ID, storage.PageArgs{Limit: 5})).Items[0]
	}
	all := func() []string {
		parent := read()
		var ids []string
		page := storage.PageArgs{Limit: 4}
		for {
			res := must[*storage.Result[*storage.Comment]](t)(e.store.ReplyPage(ctx, parent, page))
			ids = append(ids, commentIDs(res.Items)...)
			if !res.HasNext {
				return ids
			}
			page.After = res.Cursors[len(res.Cursors)-1]
		}
	}
	equalSlices(t, "carried", commentIDs(read().Replies), replies[:storage.MaxReplyPage])
	equalSlices(t, "all replies", all(), replies)

	must[*storage.Comment](t)(e.store.ApproveComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: early.ID}))
	replies = append([]string{early.ID}, replies...)
	e.consistent()
	equalSlices(t, "carried after an early reply is approved", commentIDs(read().Replies), replies[:storage.MaxReplyPage])

	n := counted(func(ctx context.Context) {
		must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: replies[2]}))
	})
	equal(t, "a carried reply deleted: the next is read", n["Query"], 1)
	replies = append(replies[:2], replies[3:]...)
	e.consistent()
	equalSlices(t, "carried after a delete", commentIDs(read().Replies), replies[:storage.MaxReplyPage])

	must[*storage.Comment](t)(e.store.UpdateComment(ctx, storage.CommentEdit{PostID: p.ID, CommentID: replies[4], Body: "edited"}))
	must[*storage.Comment](t)(e.store.UpdateComment(ctx, storage.CommentEdit{PostID: p.ID, CommentID: replies[15], Body: "edited too"}))
	e.consistent()
	equal(t, "carried edit", read().Replies[4].Body, "edited")

	must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: root.ID}))
	e.consistent()
	tomb := read()
	equal(t, "tombstone", tomb.Deleted, true)
	equalSlices(t, "a tombstone carries its replies", commentIDs(tomb.Replies), replies[:storage.MaxReplyPage])
	for _, id := range replies {
		must[*storage.Comment](t)(e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: id}))
	}
	e.consistent()
	equal(t, "tombstone gone with its last reply", len(must[*storage.Result[*storage.Comment]](t)(e.store.Comments(ctx, p.ID, storage.PageArgs{Limit: 5})).Items), 0)

	if _, err := e.store.ReplyPage(ctx, tomb, storage.PageArgs{Limit: storage.MaxReplyPage + 1}); !errors.Is(err, storage.ErrInvalidInput) {
		t.Errorf("a page of %d replies: err = %v, want invalid input", storage.MaxReplyPage+1, err)
	}
}

// TestModerationUnderConcurrency runs readers' comments and replies, held
// and published, edits, approvals, rejections and deletions at once, with
// two stores on the table: refusals the moment explains are fine, and the
// table must stay consistent.
func TestModerationUnderConcurrency(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.author("bob", "Bob")
	e.category("go", "Go")
	posts := []*storage.Post{
		e.publish(e.post("ada", "busy-1", "go"), time.Time{}),
		e.publish(e.post("bob", "busy-2", "go"), time.Time{}),
	}
	stores := []*storage.Store{e.store, storage.New(e.client, e.table, storage.WithClock(e.clock.Now))}
	// Approvals and rejections pick among the comments added held (the
	// only ones they apply to), the rest among all.
	var (
		mu             sync.Mutex
		comments, held []storage.CommentRef
	)
	pickOf := func(rng *rand.Rand, refs *[]storage.CommentRef) storage.CommentRef {
		mu.Lock()
		defer mu.Unlock()
		if len(*refs) == 0 {
			return storage.CommentRef{}
		}
		return (*refs)[rng.IntN(len(*refs))]
	}
	pick := func(rng *rand.Rand) storage.CommentRef { return pickOf(rng, &comments) }
	expected := func(err error) bool {
		for _, ok := range []error{storage.ErrNotFound, storage.ErrInvalidInput, storage.ErrNotPending, storage.ErrBusy, storage.ErrRateLimited, storage.ErrDuplicateComment} {
			if errors.Is(err, ok) {
				return true
			}
		}
		return err == nil
	}
	outcomes := map[string]int{}
	outcome := func(op string, err error) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			outcomes[op+" ok"]++
		case errors.Is(err, storage.ErrBusy):
			outcomes[op+" busy"]++
		default:
			outcomes[op+" refused"]++
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := range 6 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 11))
			store := stores[g%2]
			reader := &storage.ReaderProfile{ID: fmt.Sprintf("reader-%d", g%3), Name: fmt.Sprintf("Reader %d", g)}
			for n := range 40 {
				p := posts[rng.IntN(len(posts))]
				var err error
				op := [...]string{"add", "add", "add", "approve", "reject", "edit", "delete"}[rng.IntN(7)]
				switch op {
				case "add":
					in := storage.NewComment{PostID: p.ID, Reader: reader, Rules: storage.ReaderRules{Hold: rng.IntN(2) == 0, PerMinute: 20},
						Body: fmt.Sprintf("comment %d-%d", g, n)}
					if ref := pick(rng); ref.PostID == p.ID && !strings.Contains(ref.CommentID, ".") && rng.IntN(2) == 0 {
						in.ParentID = ref.CommentID
					}
					var c *storage.Comment
					if c, err = store.AddComment(ctx, in); err == nil {
						ref := storage.CommentRef{PostID: c.PostID, CommentID: c.ID}
						mu.Lock()
						comments = append(comments, ref)
						if c.Status == storage.CommentPending {
							held = append(held, ref)
						}
						mu.Unlock()
					}
				case "approve":
					if ref := pickOf(rng, &held); ref.PostID != "" {
						_, err = store.ApproveComment(ctx, ref)
					}
				case "reject":
					if ref := pickOf(rng, &held); ref.PostID != "" {
						_, err = store.RejectComment(ctx, ref)
					}
				case "edit":
					if ref := pick(rng); ref.PostID != "" {
						_, err = store.UpdateComment(ctx, storage.CommentEdit{PostID: ref.PostID, CommentID: ref.CommentID, Reader: reader, Body: fmt.Sprintf("edit %d-%d", g, n)})
					}
				default:
					if ref := pick(rng); ref.PostID != "" {
						_, err = store.DeleteComment(ctx, ref)
					}
				}
				outcome(op, err)
				if !expected(err) {
					errs <- err
				}
				e.clock.Advance(time.Second)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("outcomes: %v", outcomes)
	for _, op := range []string{"add", "approve", "reject", "edit", "delete"} {
		if outcomes[op+" ok"] == 0 {
			t.Errorf("no %s succeeded: %v", op, outcomes)
		}
	}
	e.consistent()
}

// TestACommentBeingApprovedIsNeverMissing reads held comments while they
// are approved: the read before a comment mutation (ReadComment) finds
// each one, held or published, at every moment. Approval moves a comment
// from its held item to its published one in a transaction, so reading
// the two items one by one could find it at neither.
func TestACommentBeingApprovedIsNeverMissing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	p := e.publish(e.post("ada", "approved"), time.Time{})
	var held []*storage.Comment
	for i := range 40 {
		reader := &storage.ReaderProfile{ID: fmt.Sprintf("reader-%d", i), Name: "Reader"}
		held = append(held, must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{
			PostID: p.ID, Reader: reader, Rules: storage.ReaderRules{Hold: true}, Body: fmt.Sprintf("held %d", i),
		})))
	}
	var missing, reads atomic.Int64
	for _, c := range held {
		key := storage.CommentKey{PostID: p.ID, CommentID: c.ID}
		approved := make(chan struct{})
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for {
					select {
					case <-approved:
						return
					default:
					}
					_, _, err := e.store.ReadComment(ctx, key)
					reads.Add(1)
					switch {
					case errors.Is(err, storage.ErrNotFound):
						missing.Add(1)
					case err != nil:
						t.Error(err)
						return
					}
				}
			})
		}
		if _, err := e.store.ApproveComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: c.ID}); err != nil {
			t.Fatal(err)
		}
		close(approved)
		wg.Wait()
	}
	if missing.Load() > 0 {
		t.Errorf("%d of %d reads found no comment while it was being approved", missing.Load(), reads.Load())
	}
	e.consistent()
}
