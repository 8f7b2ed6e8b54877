package storage_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

func TestConcurrentEditsOneWinnerPerVersion(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	e.category("aws", "AWS")
	p := e.publish(e.post("ada", "race", "go"), time.Time{})

	// Each round, 20 writers race with the same expected version: exactly
	// one wins, the others get a conflict naming the winner's version.
	for round := range 3 {
		version := must[*storage.Post](t)(e.store.GetPost(ctx, p.ID)).Version
		var wg sync.WaitGroup
		results := make([]error, 20)
		titles := make([]string, 20)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				titles[i] = fmt.Sprintf("round %d writer %d", round, i)
				cats := []string{"go"}
				if i%2 == 1 {
					cats = []string{"aws", "go"}
				}
				_, results[i] = e.store.UpdatePost(ctx, storage.PostPatch{
					ID: p.ID, ExpectedVersion: version, Title: &titles[i], Categories: &cats,
				})
			}()
		}
		wg.Wait()
		winner := -1
		for i, err := range results {
			var conflict *storage.ConflictError
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both won", round, winner, i)
				}
				winner = i
			case errors.As(err, &conflict):
				if conflict.CurrentVersion != version+1 {
					t.Errorf("conflict names version %d, want %d", conflict.CurrentVersion, version+1)
				}
			default:
				t.Fatalf("writer %d: %v", i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody won", round)
		}
		got := must[*storage.Post](t)(e.store.GetPost(ctx, p.ID))
		equal(t, "title", got.Title, titles[winner])
		equal(t, "version", got.Version, version+1)
		e.consistent()
	}
}

// TestConcurrentCommentsAreAllCounted adds 20 comments and replies to one
// post at once: every one is counted on the post, its copies and its
// thread. A writer that loses the race for the post on every attempt gets
// ErrBusy, which writes nothing and which a client answered UNAVAILABLE
// sends again: so does the writer here, a few times, as on a loaded
// machine against DynamoDB Local each round takes long enough for all 20
// to collide again.
func TestConcurrentCommentsAreAllCounted(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	e.category("aws", "AWS")
	p := e.publish(e.post("ada", "popular", "go", "aws"), time.Time{})
	root := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, AuthorID: "ada", Body: "root"}))
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := storage.NewComment{PostID: p.ID, AuthorID: "ada", Body: fmt.Sprintf("comment %d", i)}
			if i%2 == 0 {
				in.ParentID = root.ID
			}
			_, errs[i] = e.store.AddComment(ctx, in)
			for resends := 0; errors.Is(errs[i], storage.ErrBusy) && resends < 3; resends++ {
				t.Logf("writer %d: %v; sending again", i, errs[i])
				_, errs[i] = e.store.AddComment(ctx, in)
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	got := must[*storage.Post](t)(e.store.GetPost(ctx, p.ID))
	equal(t, "comment count", got.CommentCount, int64(21))
	equal(t, "thread count", got.ThreadCount, int64(11))
	r := must[*storage.Result[*storage.Post]](t)(e.store.CategoryPosts(ctx, "aws", storage.PageArgs{Limit: 5}, storage.Period{}))
	// Comment writes leave the copies, summaries, to the change feed's
	// counts worker: they write the comment and the count item alone.
	equal(t, "copy comment count", r.Items[0].CommentCount, int64(0))
	e.consistent()
}

// TestProfileEditsKeepCounts edits an author and a category while posts of
// theirs are published and unpublished: the edits must not write back a
// postCount they read before a publish changed it.
func TestProfileEditsKeepCounts(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	posts := e.posts(8, "ada", "counted", "go")
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for _, p := range posts {
		wg.Go(func() {
			for i := range 5 {
				var err error
				if i%2 == 0 {
					_, err = e.store.Publish(ctx, storage.PublishPost{ID: p.ID})
				} else {
					_, err = e.store.Unpublish(ctx, storage.PostRef{ID: p.ID})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i := range 8 {
		wg.Go(func() {
			bio := fmt.Sprintf("bio %d", i)
			if _, err := e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: "ada", Bio: &bio}); err != nil {
				errs <- err
			}
			if _, err := e.store.UpdateCategory(ctx, storage.CategoryPatch{Slug: "go", Description: &bio}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	equal(t, "author's posts", must[*storage.Author](t)(e.store.GetAuthor(ctx, "ada")).PostCount, 8)
	equal(t, "category's posts", must[*storage.Category](t)(e.store.GetCategory(ctx, "go")).PostCount, 8)
	e.consistent()

	none := ""
	must[*storage.Author](t)(e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: "ada", Bio: &none}))
	equal(t, "cleared bio", must[*storage.Author](t)(e.store.GetAuthor(ctx, "ada")).Bio, "")
}

// TestConcurrentDeletesOfACommentAndItsReply deletes a comment and its
// only reply at the same time, again and again: whichever lands first, no
// tombstone may stay behind without replies.
func TestConcurrentDeletesOfACommentAndItsReply(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	p := e.publish(e.post("ada", "threads"), time.Time{})
	for range 30 {
		c := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, AuthorID: "ada", Body: "comment"}))
		r := must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, ParentID: c.ID, AuthorID: "ada", Body: "reply"}))
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, id := range []string{c.ID, r.ID} {
			wg.Go(func() { _, errs[i] = e.store.DeleteComment(ctx, storage.CommentRef{PostID: p.ID, CommentID: id}) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	e.consistent()
}

// TestConcurrentSchedules schedules, reschedules and unpublishes posts of
// one author and category at the same time, while their times pass: every
// count and entry stays right.
func TestConcurrentSchedules(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	posts := e.posts(8, "ada", "scheduled", "go")
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i, p := range posts {
		wg.Go(func() {
			for round := range 4 {
				at := e.clock.Now().Add(time.Duration(i+round) * time.Minute)
				if _, err := e.store.Publish(ctx, storage.PublishPost{ID: p.ID, At: at}); err != nil {
					errs <- err
					return
				}
				e.clock.Advance(30 * time.Second)
			}
			if i%2 == 0 {
				if _, err := e.store.Unpublish(ctx, storage.PostRef{ID: p.ID}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	e.consistent()
	a := must[*storage.Author](t)(e.store.GetAuthor(ctx, "ada"))
	equal(t, "published", a.PostCount+a.ScheduledCount, 4)
	e.clock.Advance(time.Hour)
	equal(t, "visible an hour later", must[*storage.Category](t)(e.store.GetCategory(ctx, "go")).PostCount, 4)
	e.consistent()
}

// TestMixedWritersKeepInvariants runs every kind of write at once, on a
// few posts, authors and categories, while time passes: creating,
// publishing now and later, unpublishing, deleting, moving posts between
// categories, comments and replies added and deleted, authors and
// categories renamed, posts and authors given slugs from a small set (so
// they take each other's redirects), bodies, covers and SEO fields edited,
// readers' comments and replies held or published at once (with a rate
// limit, and the same text sent twice), edited, approved and rejected.
// Refusals that the moment explains (a post or a comment gone, a post not
// published, a conflict, a slug held, a comment not pending, a reader over
// the limit or repeating themself) and ErrBusy are fine; the table must
// stay consistent.
func TestMixedWritersKeepInvariants(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	authors := []string{"ada", "bob"}
	cats := []string{"go", "aws", "web"}
	for _, a := range authors {
		e.author(a, a)
	}
	for _, c := range cats {
		e.category(c, c)
	}
	var posts []*storage.Post
	for i := range 6 {
		posts = append(posts, e.post(authors[i%2], fmt.Sprintf("mixed-%d", i), cats[i%3]))
	}
	var (
		mu       sync.Mutex
		comments []storage.CommentRef
	)
	expected := func(err error) bool {
		return err == nil || errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrInvalidInput) ||
			errors.Is(err, storage.ErrVersionConflict) || errors.Is(err, storage.ErrBusy) || errors.Is(err, storage.ErrSlugTaken) ||
			errors.Is(err, storage.ErrNotPending) || errors.Is(err, storage.ErrRateLimited) || errors.Is(err, storage.ErrDuplicateComment)
	}
	pickComment := func(rng *rand.Rand) storage.CommentRef {
		mu.Lock()
		defer mu.Unlock()
		if len(comments) == 0 {
			return storage.CommentRef{}
		}
		return comments[rng.IntN(len(comments))]
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := range 6 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 42))
			for n := range 40 {
				mu.Lock()
				p := posts[rng.IntN(len(posts))]
				mu.Unlock()
				reader := &storage.ReaderProfile{ID: fmt.Sprintf("reader-%d", rng.IntN(3)), Name: fmt.Sprintf("Reader %d", g)}
				var err error
				switch rng.IntN(19) {
				case 14, 15:
					// A reader's comment or reply, held or published, or
					// the same text again.
					in := storage.NewComment{PostID: p.ID, Reader: reader, Body: fmt.Sprintf("reader's %d", rng.IntN(3)),
						Rules: storage.ReaderRules{Hold: rng.IntN(2) == 0, PerMinute: 4}}
					if parent := pickComment(rng); parent.PostID == p.ID && !strings.Contains(parent.CommentID, ".") && rng.IntN(2) == 0 {
						in.ParentID = parent.CommentID
					}
					var c *storage.Comment
					if c, err = e.store.AddComment(ctx, in); err == nil {
						mu.Lock()
						comments = append(comments, storage.CommentRef{PostID: c.PostID, CommentID: c.ID})
						mu.Unlock()
					}
				case 16:
					if ref := pickComment(rng); ref.PostID != "" {
						_, err = e.store.ApproveComment(ctx, ref)
					}
				case 17:
					if ref := pickComment(rng); ref.PostID != "" {
						_, err = e.store.RejectComment(ctx, ref)
					}
				case 18:
					if ref := pickComment(rng); ref.PostID != "" {
						_, err = e.store.UpdateComment(ctx, storage.CommentEdit{PostID: ref.PostID, CommentID: ref.CommentID,
							Reader: reader, Body: fmt.Sprintf("edited %d-%d", g, n)})
					}
				case 12:
					var created *storage.Post
					created, err = e.store.CreatePost(ctx, storage.NewPost{AuthorID: authors[rng.IntN(2)], Title: "New",
						Slug: fmt.Sprintf("new-%d-%d", g, n), Categories: []string{cats[rng.IntN(3)]}})
					if err == nil {
						mu.Lock()
						posts = append(posts, created)
						mu.Unlock()
					}
				case 13:
					_, err = e.store.DeletePost(ctx, storage.PostRef{ID: p.ID})
				case 0:
					_, err = e.store.Publish(ctx, storage.PublishPost{ID: p.ID})
				case 1:
					_, err = e.store.Publish(ctx, storage.PublishPost{ID: p.ID, At: e.clock.Now().Add(time.Duration(rng.IntN(5)) * time.Minute)})
				case 2:
					_, err = e.store.Unpublish(ctx, storage.PostRef{ID: p.ID})
				case 3:
					moved := []string{cats[rng.IntN(3)], cats[rng.IntN(3)]}
					slices.Sort(moved)
					moved = slices.Compact(moved)
					cur, rerr := e.store.ReadPost(ctx, p.ID)
					if rerr == nil {
						_, err = e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: cur.Version, Categories: &moved})
					}
				case 4, 5:
					in := storage.NewComment{PostID: p.ID, AuthorID: authors[rng.IntN(2)], Body: "comment"}
					mu.Lock()
					if len(comments) > 0 && rng.IntN(2) == 0 {
						if parent := comments[rng.IntN(len(comments))]; parent.PostID == p.ID && !strings.Contains(parent.CommentID, ".") {
							in.ParentID = parent.CommentID
						}
					}
					mu.Unlock()
					var c *storage.Comment
					if c, err = e.store.AddComment(ctx, in); err == nil {
						mu.Lock()
						comments = append(comments, storage.CommentRef{PostID: c.PostID, CommentID: c.ID})
						mu.Unlock()
					}
				case 6:
					mu.Lock()
					var ref storage.CommentRef
					if len(comments) > 0 {
						ref = comments[rng.IntN(len(comments))]
					}
					mu.Unlock()
					if ref.PostID != "" {
						_, err = e.store.DeleteComment(ctx, ref)
					}
				case 7:
					name := fmt.Sprintf("%s %d-%d", authors[g%2], g, n)
					_, err = e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: authors[rng.IntN(2)], Name: &name})
				case 9:
					cur, rerr := e.store.ReadPost(ctx, p.ID)
					if rerr == nil {
						slug := fmt.Sprintf("shared-%d", rng.IntN(8))
						_, err = e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: cur.Version, Slug: &slug})
					}
				case 10:
					slug := fmt.Sprintf("writer-%d", rng.IntN(4))
					_, err = e.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: authors[rng.IntN(2)], Slug: &slug})
				case 11:
					cur, rerr := e.store.ReadPost(ctx, p.ID)
					if rerr == nil {
						body := fmt.Sprintf("# Part %d\n\nText %d of %d.", n, n, g)
						patch := storage.PostPatch{ID: p.ID, ExpectedVersion: cur.Version, Body: &body,
							SEO: &storage.SEOPatch{Description: ptr(fmt.Sprintf("edit %d", n))}}
						if n%2 == 0 {
							patch.CoverImage = &storage.Image{URL: fmt.Sprintf("https://example.com/%d.png", n)}
						} else {
							patch.RemoveCoverImage = true
						}
						_, err = e.store.UpdatePost(ctx, patch)
					}
				case 8:
					name := fmt.Sprintf("category %d-%d", g, n)
					_, err = e.store.UpdateCategory(ctx, storage.CategoryPatch{Slug: cats[rng.IntN(3)], Name: &name})
				}
				if !expected(err) {
					errs <- err
				}
				e.clock.Advance(10 * time.Second)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	e.consistent()
	e.clock.Advance(10 * time.Minute)
	e.consistent()
}
