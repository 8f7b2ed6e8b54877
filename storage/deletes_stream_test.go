package storage_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/blogql/blog/storage"
)

// TestADeletionAndItsResendAtOnceTranslateOnTheStream: a post deleted by
// a call and by its resend at once (two servers) has its comments and
// revisions removed by both, whose deletes of one item race; every record
// of the stream translates, and the post and each comment are deleted
// once. DynamoDB Local records the delete that finds the item gone, with
// its keys alone.
func TestADeletionAndItsResendAtOnceTranslateOnTheStream(t *testing.T) {
	var cfg storage.ClientConfig
	e := newEnv(t, func(c *storage.ClientConfig) { cfg = *c })
	s := newStream(e, cfg)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.category("go", "Go")
	const posts, edits, comments = 4, 30, 30
	var ids []string
	for i := range posts {
		p := e.publish(e.post("ada", fmt.Sprintf("gone-%d", i), "go"), start)
		for j := range edits {
			p = must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, Title: ptr(fmt.Sprintf("Edit %d", j))}))
		}
		for j := range comments {
			must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: p.ID, AuthorID: "ada", Body: fmt.Sprintf("Comment %d", j)}))
		}
		ids = append(ids, p.ID)
	}
	s.records()

	for _, id := range ids {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if _, err := e.store.DeletePost(ctx, storage.PostRef{ID: id, IdempotencyKey: "delete-" + id}); err != nil {
					t.Errorf("delete post %s: %v", id, err)
				}
			})
		}
		wg.Wait()
	}

	deleted := map[storage.EventType]int{}
	for _, r := range s.records() {
		evs, err := storage.EventsOf(r)
		if err != nil {
			t.Errorf("record %s %v: %v", r.EventName, r.Dynamodb.Keys, err)
		}
		for _, ev := range evs {
			deleted[ev.Type]++
		}
	}
	equal(t, "post.deleted", deleted[storage.EventPostDeleted], posts)
	equal(t, "comment.deleted", deleted[storage.EventCommentDeleted], posts*comments)
}
