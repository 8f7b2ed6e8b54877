package storage_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/blogql/blog/storage"
)

// TestLostAnswerTakesEffectOnce lets a transaction reach DynamoDB and
// throws its answer away, answering 500 instead, as when a connection
// drops after the write: the SDK sends the same request again, with the
// same ClientRequestToken, and DynamoDB answers it as it answered the
// first without writing again. The write succeeds and takes effect once,
// without an idempotency key of the client's.
func TestLostAnswerTakesEffectOnce(t *testing.T) {
	cases := []struct {
		name  string
		write func(ctx context.Context, e *raceEnv) error
		once  func(e *raceEnv)
	}{
		{"addComment without an idempotency key",
			func(ctx context.Context, e *raceEnv) error {
				_, err := e.store.AddComment(ctx, storage.NewComment{PostID: e.published.ID, AuthorID: "bob", Body: "once"})
				return err
			},
			func(e *raceEnv) {
				ctx := context.Background()
				equal(e.t, "comment count", must[*storage.Post](e.t)(e.store.GetPost(ctx, e.published.ID)).CommentCount, e.published.CommentCount+1)
				n := 0
				for _, c := range must[*storage.Result[*storage.Comment]](e.t)(e.store.Comments(ctx, e.published.ID, storage.PageArgs{Limit: 50})).Items {
					if c.Body == "once" {
						n++
					}
				}
				equal(e.t, "comments written", n, 1)
			}},
		{"createPost without an idempotency key",
			func(ctx context.Context, e *raceEnv) error {
				_, err := e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "Once", Slug: "once", Categories: []string{"go"}})
				return err
			},
			func(e *raceEnv) {
				ctx := context.Background()
				drafts := must[*storage.Result[*storage.Post]](e.t)(e.store.AuthorDrafts(ctx, "ada", storage.PageArgs{Limit: 10}))
				equal(e.t, "drafts, the new post and the one before", len(drafts.Items), 2)
				equal(e.t, "post by slug", must[*storage.Post](e.t)(e.store.GetPostBySlug(ctx, "once")).Title, "Once")
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newRaceEnv(t)
			e.blog()
			var (
				mu     sync.Mutex
				tokens []string
				status int
			)
			e.hooks.every("TransactWriteItems", func(r *http.Request) *http.Response {
				var in struct{ ClientRequestToken string }
				_ = json.Unmarshal(readBody(r), &in)
				mu.Lock()
				tokens = append(tokens, in.ClientRequestToken)
				mu.Unlock()
				return nil
			})
			e.hooks.at("TransactWriteItems", 1, func(r *http.Request) *http.Response {
				resp, err := e.hooks.next.RoundTrip(r)
				if err != nil {
					t.Errorf("the transaction whose answer is lost: %v", err)
				} else {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					mu.Lock()
					status = resp.StatusCode
					mu.Unlock()
				}
				return answer(http.StatusInternalServerError, "InternalServerError", "")(r)
			})
			if err := c.write(context.Background(), e); err != nil {
				t.Fatalf("write whose first answer was lost: %v", err)
			}
			e.hooks.clear()
			equal(t, "DynamoDB's answer to the transaction whose answer was lost", status, http.StatusOK)
			if len(tokens) != 2 || tokens[0] == "" || tokens[1] != tokens[0] {
				t.Fatalf("tokens of the transactions sent: %q, want one token sent twice", tokens)
			}
			c.once(e)
			e.consistent()
		})
	}
}
