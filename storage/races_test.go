package storage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// The tests in this file make a race happen at a chosen moment: an
// interceptor in front of DynamoDB runs a concurrent write (through
// another client on the same table) just before a given request of the
// write under test, or answers that request itself as DynamoDB does under
// contention. Each test checks the write's outcome (a retry that succeeds,
// or a refusal with its documented error, never an unclassified one) and
// that the race did happen.

// interceptor is the HTTP transport of the Store under test.
type interceptor struct {
	next http.RoundTripper

	mu    sync.Mutex
	hooks []*hook
}

// hook acts at the left-th next request of operation op ("" for any):
// act runs before it, and its answer, when not nil, replaces DynamoDB's.
// An always hook acts on every such request until it is removed.
type hook struct {
	op     string
	left   int
	always bool
	act    func(r *http.Request) *http.Response
}

// at makes act run at the n-th next request of op (from 1).
func (i *interceptor) at(op string, n int, act func(r *http.Request) *http.Response) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.hooks = append(i.hooks, &hook{op: op, left: n, act: act})
}

// every makes act run at every request of op until clear.
func (i *interceptor) every(op string, act func(r *http.Request) *http.Response) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.hooks = append(i.hooks, &hook{op: op, always: true, act: act})
}

// clear removes every hook.
func (i *interceptor) clear() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.hooks = nil
}

func (i *interceptor) RoundTrip(r *http.Request) (*http.Response, error) {
	op := operation(r)
	var acts []func(*http.Request) *http.Response
	i.mu.Lock()
	kept := i.hooks[:0]
	for _, h := range i.hooks {
		if h.op != "" && h.op != op {
			kept = append(kept, h)
			continue
		}
		if h.always {
			acts = append(acts, h.act)
			kept = append(kept, h)
			continue
		}
		if h.left--; h.left == 0 {
			acts = append(acts, h.act)
		} else {
			kept = append(kept, h)
		}
	}
	i.hooks = kept
	i.mu.Unlock()
	for _, act := range acts {
		if resp := act(r); resp != nil {
			return resp, nil
		}
	}
	return i.next.RoundTrip(r)
}

func operation(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
}

// run returns a hook action that runs f and lets the request through.
func run(f func()) func(*http.Request) *http.Response {
	return func(*http.Request) *http.Response { f(); return nil }
}

// answer returns a hook action that answers with a DynamoDB error.
func answer(status int, code string, fields string) func(*http.Request) *http.Response {
	return func(*http.Request) *http.Response {
		body := []byte(`{"__type":"com.amazonaws.dynamodb.v20120810#` + code + `","message":"injected"` + fields + `}`)
		h := http.Header{}
		h.Set("Content-Type", "application/x-amz-json-1.0")
		h.Set("X-Amz-Crc32", fmt.Sprint(crc32.ChecksumIEEE(body)))
		return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: h,
			Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
	}
}

// cancelled returns a hook action that cancels a transaction, its first
// action for reason and the others for none, as DynamoDB words it.
func cancelled(reason string) func(*http.Request) *http.Response {
	return func(r *http.Request) *http.Response {
		var in struct{ TransactItems []json.RawMessage }
		_ = json.Unmarshal(readBody(r), &in)
		reasons := make([]string, max(len(in.TransactItems), 1))
		for i := range reasons {
			reasons[i] = `{"Code":"None"}`
		}
		reasons[0] = `{"Code":"` + reason + `","Message":"injected"}`
		return answer(400, "TransactionCanceledException", `,"CancellationReasons":[`+strings.Join(reasons, ",")+`]`)(r)
	}
}

// readBody returns the body of r and leaves it readable.
func readBody(r *http.Request) []byte {
	raw, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(raw))
	return raw
}

// raceEnv is an env whose store goes through an interceptor, with a
// second store on the same table and clock that goes around it: the
// concurrent writer.
type raceEnv struct {
	*env
	raceBlog
	hooks  *interceptor
	direct *storage.Store
}

func newRaceEnv(t *testing.T) *raceEnv {
	t.Helper()
	hooks := &interceptor{}
	var direct storage.ClientConfig
	e := newEnv(t, func(c *storage.ClientConfig) {
		hooks.next = dynamotest.Transport(*c)
		direct = *c
		c.HTTPClient = &http.Client{Transport: hooks}
	})
	direct.HTTPClient = &http.Client{Transport: hooks.next}
	client := must[*dynamodb.Client](t)(storage.NewClient(context.Background(), direct))
	return &raceEnv{env: e, hooks: hooks, direct: storage.New(client, e.table, storage.WithClock(e.clock.Now))}
}

// racing returns a hook action that runs write through the direct store
// and fails the test if it fails.
func (e *raceEnv) racing(what string, write func(ctx context.Context, s *storage.Store) error) func(*http.Request) *http.Response {
	return run(func() {
		if err := write(context.Background(), e.direct); err != nil {
			e.t.Errorf("racing %s: %v", what, err)
		}
	})
}

// TestWritesRereadWhatChangedBeforeTheirWrite lets a rename, or a write
// that changes the counters' scheduled-post entries, land between a post
// write's read and its transaction: the transaction fails its condition,
// and the write reads again and succeeds with the current names and
// entries, in a second transaction.
func TestWritesRereadWhatChangedBeforeTheirWrite(t *testing.T) {
	type post = *storage.Post
	cases := []struct {
		name  string
		race  func(ctx context.Context, s *storage.Store, e *raceEnv) error
		write func(ctx context.Context, s *storage.Store, e *raceEnv) (post, error)
	}{
		{"createPost while its author is renamed",
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.UpdateAuthor(ctx, storage.AuthorPatch{ID: "ada", Name: ptr("Ada Lovelace")})
				return err
			},
			func(ctx context.Context, s *storage.Store, e *raceEnv) (post, error) {
				return s.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "New", Slug: "new", Categories: []string{"go"}})
			}},
		{"createPost while its category is renamed",
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.UpdateCategory(ctx, storage.CategoryPatch{Slug: "go", Name: ptr("Golang")})
				return err
			},
			func(ctx context.Context, s *storage.Store, e *raceEnv) (post, error) {
				return s.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "New", Slug: "new", Categories: []string{"go"}, IdempotencyKey: "create-new"})
			}},
		{"createPost while a passed entry it removes is removed",
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				// A post write that reads the counters removes the entries
				// whose time has passed.
				_, err := s.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "Other", Slug: "other", Categories: []string{"go"}})
				return err
			},
			func(ctx context.Context, s *storage.Store, e *raceEnv) (post, error) {
				return s.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "New", Slug: "new", Categories: []string{"go"}})
			}},
		{"a schedule while a passed entry it removes is removed",
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				// A post write that reads the counters removes the entries
				// whose time has passed.
				_, err := s.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "Other", Slug: "other", Categories: []string{"go"}})
				return err
			},
			func(ctx context.Context, s *storage.Store, e *raceEnv) (post, error) {
				return s.Publish(ctx, storage.PublishPost{ID: e.draft.ID, At: e.clock.Now().Add(time.Hour)})
			}},
		{"a schedule while another post is scheduled",
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.Publish(ctx, storage.PublishPost{ID: e.passed.ID, At: e.clock.Now().Add(2 * time.Hour)})
				return err
			},
			func(ctx context.Context, s *storage.Store, e *raceEnv) (post, error) {
				return s.Publish(ctx, storage.PublishPost{ID: e.draft.ID, At: e.clock.Now().Add(time.Hour)})
			}},
		{"a move to a category that is renamed",
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.UpdateCategory(ctx, storage.CategoryPatch{Slug: "aws", Name: ptr("Amazon")})
				return err
			},
			func(ctx context.Context, s *storage.Store, e *raceEnv) (post, error) {
				return s.UpdatePost(ctx, storage.PostPatch{ID: e.published.ID, ExpectedVersion: e.published.Version, Categories: &[]string{"aws"}})
			}},
		{"an edit while the author is renamed",
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.UpdateAuthor(ctx, storage.AuthorPatch{ID: "ada", Name: ptr("Ada Lovelace")})
				return err
			},
			func(ctx context.Context, s *storage.Store, e *raceEnv) (post, error) {
				return s.UpdatePost(ctx, storage.PostPatch{ID: e.published.ID, ExpectedVersion: e.published.Version, Title: ptr("Edited")})
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newRaceEnv(t)
			e.blog()
			e.hooks.at("TransactWriteItems", 1, e.racing("write", func(ctx context.Context, s *storage.Store) error { return c.race(ctx, s, e) }))
			var p *storage.Post
			n := counted(func(ctx context.Context) { p = must[*storage.Post](t)(c.write(ctx, e.store, e)) })
			equal(t, "transactions (the first one met the race)", n["TransactWriteItems"], 2)
			current := must[*storage.Post](t)(e.store.GetPost(context.Background(), p.ID))
			equal(t, "author name returned", p.AuthorName, current.AuthorName)
			equal(t, "categories returned", fmt.Sprint(p.Categories), fmt.Sprint(current.Categories))
			e.consistent()
		})
	}
}

// raceBlog is what the race tests start from: authors ada and bob,
// categories go and aws, a published post of ada in go with a comment and
// a reply, a draft, and a post whose schedule has passed, so that its
// entry is still in the counters.
type raceBlog struct {
	published, draft, passed *storage.Post
	comment, reply           *storage.Comment
}

func (e *raceEnv) blog() {
	ctx := context.Background()
	e.author("ada", "Ada")
	e.author("bob", "Bob")
	e.category("go", "Go")
	e.category("aws", "AWS")
	e.published = e.publish(e.post("ada", "published", "go"), time.Time{})
	e.comment = must[*storage.Comment](e.t)(e.store.AddComment(ctx, storage.NewComment{PostID: e.published.ID, AuthorID: "bob", Body: "first"}))
	e.reply = must[*storage.Comment](e.t)(e.store.AddComment(ctx, storage.NewComment{PostID: e.published.ID, ParentID: e.comment.ID, AuthorID: "ada", Body: "reply"}))
	e.published = must[*storage.Post](e.t)(e.store.GetPost(ctx, e.published.ID))
	e.draft = e.post("ada", "draft", "go")
	e.passed = e.publish(e.post("ada", "passed", "go"), e.clock.Now().Add(time.Minute))
	e.clock.Advance(2 * time.Minute)
}

// TestCommentWritesRaceThePost lets the post or the comment go, or change,
// between a comment write's read and its transaction: the write reads
// again and refuses as it would have at first, or succeeds when what
// changed does not matter to it.
func TestCommentWritesRaceThePost(t *testing.T) {
	cases := []struct {
		name  string
		race  func(ctx context.Context, s *storage.Store, e *raceEnv) error
		write func(ctx context.Context, s *storage.Store, e *raceEnv) error
		want  error // nil: success
	}{
		{"a comment on a post deleted meanwhile",
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.DeletePost(ctx, storage.PostRef{ID: e.published.ID})
				return err
			},
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.AddComment(ctx, storage.NewComment{PostID: e.published.ID, AuthorID: "bob", Body: "late"})
				return err
			}, storage.ErrNotFound},
		{"a comment on a post unpublished meanwhile",
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.Unpublish(ctx, storage.PostRef{ID: e.published.ID})
				return err
			},
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.AddComment(ctx, storage.NewComment{PostID: e.published.ID, AuthorID: "bob", Body: "late"})
				return err
			}, storage.ErrNotFound},
		{"a comment on a post edited meanwhile",
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.UpdatePost(ctx, storage.PostPatch{ID: e.published.ID, ExpectedVersion: e.published.Version, Categories: &[]string{"aws"}})
				return err
			},
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.AddComment(ctx, storage.NewComment{PostID: e.published.ID, AuthorID: "bob", Body: "late"})
				return err
			}, nil},
		{"a reply to a comment deleted meanwhile",
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.DeleteComment(ctx, storage.CommentRef{PostID: e.published.ID, CommentID: e.comment.ID})
				return err
			},
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.AddComment(ctx, storage.NewComment{PostID: e.published.ID, ParentID: e.comment.ID, AuthorID: "bob", Body: "late"})
				return err
			}, storage.ErrInvalidInput},
		{"a reply to a comment whose thread went meanwhile",
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				for _, id := range []string{e.comment.ID, e.reply.ID} {
					if _, err := s.DeleteComment(ctx, storage.CommentRef{PostID: e.published.ID, CommentID: id}); err != nil {
						return err
					}
				}
				return nil
			},
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.AddComment(ctx, storage.NewComment{PostID: e.published.ID, ParentID: e.comment.ID, AuthorID: "bob", Body: "late"})
				return err
			}, storage.ErrNotFound},
		{"deleting a comment of a post deleted meanwhile",
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.DeletePost(ctx, storage.PostRef{ID: e.published.ID})
				return err
			},
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.DeleteComment(ctx, storage.CommentRef{PostID: e.published.ID, CommentID: e.reply.ID})
				return err
			}, storage.ErrNotFound},
		{"deleting a comment deleted meanwhile",
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.DeleteComment(ctx, storage.CommentRef{PostID: e.published.ID, CommentID: e.reply.ID})
				return err
			},
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.DeleteComment(ctx, storage.CommentRef{PostID: e.published.ID, CommentID: e.reply.ID})
				return err
			}, storage.ErrNotFound},
		{"deleting a comment of a post unpublished meanwhile",
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.Unpublish(ctx, storage.PostRef{ID: e.published.ID})
				return err
			},
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.DeleteComment(ctx, storage.CommentRef{PostID: e.published.ID, CommentID: e.reply.ID})
				return err
			}, nil},
		{"deleting a reply whose parent was deleted meanwhile",
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.DeleteComment(ctx, storage.CommentRef{PostID: e.published.ID, CommentID: e.comment.ID})
				return err
			},
			func(ctx context.Context, s *storage.Store, e *raceEnv) error {
				_, err := s.DeleteComment(ctx, storage.CommentRef{PostID: e.published.ID, CommentID: e.reply.ID})
				return err
			}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newRaceEnv(t)
			e.blog()
			e.hooks.at("TransactWriteItems", 1, e.racing("write", func(ctx context.Context, s *storage.Store) error { return c.race(ctx, s, e) }))
			var err error
			n := counted(func(ctx context.Context) { err = c.write(ctx, e.store, e) })
			switch {
			case c.want == nil && err != nil:
				t.Fatalf("err = %v, want success", err)
			case c.want != nil && !errors.Is(err, c.want):
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if n["TransactWriteItems"] < 1 {
				t.Fatal("the write sent no transaction: the race did not happen")
			}
			e.consistent()
		})
	}
}

// TestRenamesRaceRenames renames an author or a category while an earlier
// rename of it is half-way through its posts: both succeed, every post
// ends with the newer name, and the earlier rename's refresh, which read
// the older name, writes nothing over it.
func TestRenamesRaceRenames(t *testing.T) {
	cases := []struct {
		name   string
		rename func(ctx context.Context, s *storage.Store, name string) error
		got    func(p *storage.Post) string
	}{
		{"author", func(ctx context.Context, s *storage.Store, name string) error {
			_, err := s.UpdateAuthor(ctx, storage.AuthorPatch{ID: "ada", Name: &name})
			return err
		}, func(p *storage.Post) string { return p.AuthorName }},
		{"category", func(ctx context.Context, s *storage.Store, name string) error {
			_, err := s.UpdateCategory(ctx, storage.CategoryPatch{Slug: "go", Name: &name})
			return err
		}, func(p *storage.Post) string { return p.Categories[0].Name }},
	}
	for _, c := range cases {
		for _, at := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s, the newer rename before the older one's transaction %d", c.name, at), func(t *testing.T) {
				e := newRaceEnv(t)
				e.blog()
				more := e.posts(3, "ada", "more", "go")
				for _, p := range more {
					e.publish(p, time.Time{})
				}
				// Transaction 1 is the rename itself, the others refresh one
				// post each, read before the racing rename.
				e.hooks.at("TransactWriteItems", at, e.racing("rename", func(ctx context.Context, s *storage.Store) error {
					return c.rename(ctx, s, "Newer")
				}))
				if err := c.rename(context.Background(), e.store, "Older"); err != nil {
					t.Fatal(err)
				}
				for _, id := range append(ids(more), e.published.ID) {
					equal(t, "name of post "+id, c.got(must[*storage.Post](t)(e.store.GetPost(context.Background(), id))), "Newer")
				}
				e.consistent()
			})
		}
	}
}

// TestRenameTransactionsTouchOnlyThePost checks that the transactions
// that carry a new name into posts hold no author or category item, so a
// rename of a large category never contends with the writers of new posts
// in it, whose transactions check the category.
func TestRenameTransactionsTouchOnlyThePost(t *testing.T) {
	e := newRaceEnv(t)
	e.blog()
	var mu sync.Mutex
	var touched []string
	e.hooks.every("TransactWriteItems", func(r *http.Request) *http.Response {
		var in struct {
			TransactItems []map[string]struct {
				Key, Item map[string]struct{ S string }
			}
		}
		if err := json.Unmarshal(readBody(r), &in); err != nil {
			t.Error(err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, action := range in.TransactItems {
			for _, a := range action {
				k := a.Key
				if k == nil {
					k = a.Item
				}
				touched = append(touched, k["PK"].S+" "+k["SK"].S)
			}
		}
		return nil
	})
	must[*storage.Category](t)(e.store.UpdateCategory(context.Background(), storage.CategoryPatch{Slug: "go", Name: ptr("Golang")}))
	must[*storage.Author](t)(e.store.UpdateAuthor(context.Background(), storage.AuthorPatch{ID: "ada", Name: ptr("Ada Lovelace")}))
	e.hooks.clear()
	renames := 0
	for _, k := range touched {
		switch k {
		case pubPrefix + "CAT#go CAT#go", pubPrefix + "AUTHOR#ada AUTHOR#ada":
			renames++
		}
	}
	// The two renames themselves write their item, and nothing else does.
	equal(t, "transactions holding the author or the category", renames, 2)
	if len(touched) < 6 {
		t.Errorf("touched %v: the posts were not refreshed", touched)
	}
	e.consistent()
}

// keyedWrite is one write with an idempotency key, as a client sends it
// again: summary says what its result is, for comparing two of them.
type keyedWrite struct {
	name  string
	write func(ctx context.Context, s *storage.Store, e *raceEnv) (string, error)
}

func postSummary(p *storage.Post, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("post %s v%d %s %s %s", p.ID, p.Version, p.Status, p.Slug, p.PublishedAt.Format(time.RFC3339Nano)), nil
}

func commentSummary(c *storage.Comment, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("comment %s deleted=%v", c.ID, c.Deleted), nil
}

var keyedWrites = []keyedWrite{
	{"createPost", func(ctx context.Context, s *storage.Store, e *raceEnv) (string, error) {
		return postSummary(s.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "Once", Slug: "once", Categories: []string{"go"}, IdempotencyKey: "k"}))
	}},
	{"updatePost", func(ctx context.Context, s *storage.Store, e *raceEnv) (string, error) {
		return postSummary(s.UpdatePost(ctx, storage.PostPatch{ID: e.published.ID, ExpectedVersion: e.published.Version, Title: ptr("Once"), Slug: ptr("once"), IdempotencyKey: "k"}))
	}},
	{"publishPost at a future time", func(ctx context.Context, s *storage.Store, e *raceEnv) (string, error) {
		return postSummary(s.Publish(ctx, storage.PublishPost{ID: e.draft.ID, At: start.Add(time.Hour), IdempotencyKey: "k"}))
	}},
	{"unpublishPost", func(ctx context.Context, s *storage.Store, e *raceEnv) (string, error) {
		return postSummary(s.Unpublish(ctx, storage.PostRef{ID: e.published.ID, IdempotencyKey: "k"}))
	}},
	{"deletePost", func(ctx context.Context, s *storage.Store, e *raceEnv) (string, error) {
		return postSummary(s.DeletePost(ctx, storage.PostRef{ID: e.published.ID, IdempotencyKey: "k"}))
	}},
	{"addComment", func(ctx context.Context, s *storage.Store, e *raceEnv) (string, error) {
		return commentSummary(s.AddComment(ctx, storage.NewComment{PostID: e.published.ID, ParentID: e.comment.ID, AuthorID: "bob", Body: "once", IdempotencyKey: "k"}))
	}},
	{"deleteComment", func(ctx context.Context, s *storage.Store, e *raceEnv) (string, error) {
		return commentSummary(s.DeleteComment(ctx, storage.CommentRef{PostID: e.published.ID, CommentID: e.reply.ID, IdempotencyKey: "k"}))
	}},
	{"updateAuthor", func(ctx context.Context, s *storage.Store, e *raceEnv) (string, error) {
		a, err := s.UpdateAuthor(ctx, storage.AuthorPatch{ID: "bob", ExpectedVersion: 1, Name: ptr("Robert"), IdempotencyKey: "k"})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("author %s v%d %s", a.ID, a.Version, a.Name), nil
	}},
	{"updateCategory", func(ctx context.Context, s *storage.Store, e *raceEnv) (string, error) {
		c, err := s.UpdateCategory(ctx, storage.CategoryPatch{Slug: "aws", ExpectedVersion: 1, Description: ptr("Cloud"), IdempotencyKey: "k"})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("category %s v%d", c.Slug, c.Version), nil
	}},
	{"createCategory", func(ctx context.Context, s *storage.Store, e *raceEnv) (string, error) {
		c, err := s.CreateCategory(ctx, storage.NewCategory{Slug: "web", Name: "Web", IdempotencyKey: "k"})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("category %s v%d", c.Slug, c.Version), nil
	}},
}

// TestRepeatRacesTheOriginal sends a write with an idempotency key and,
// at a chosen request of it, lets the same write with the same key (a
// client's resend that got there first) run to its end: whatever the
// repeat read or wrote by then, it returns the same result as the first,
// and the write takes effect once. After the repeat's look for a record
// (request 2), it reads what the first one changed (a post gone, a version
// moved on, a comment deleted); at its transaction, it meets the record.
// addComment makes no request before its transaction when the store
// remembers what the comment depends on, so only its transaction is raced.
func TestRepeatRacesTheOriginal(t *testing.T) {
	for _, w := range keyedWrites {
		for _, at := range []struct {
			op string
			n  int
		}{{"", 2}, {"TransactWriteItems", 1}} {
			if w.name == "addComment" && at.op == "" {
				continue
			}
			t.Run(fmt.Sprintf("%s, the first one done before request %s %d", w.name, at.op, at.n), func(t *testing.T) {
				e := newRaceEnv(t)
				e.blog()
				var first string
				e.hooks.at(at.op, at.n, run(func() {
					var err error
					if first, err = w.write(context.Background(), e.direct, e); err != nil {
						t.Errorf("first: %v", err)
					}
				}))
				again, err := w.write(context.Background(), e.store, e)
				if err != nil {
					t.Fatalf("repeat: %v", err)
				}
				if first == "" {
					t.Fatalf("the first write never ran: the repeat made fewer requests than %d", at.n)
				}
				equal(t, "result of the repeat", again, first)
				e.consistent()
				e.effectsOnce(w.name)
			})
		}
	}
}

// effectsOnce checks the writes of keyedWrites took effect once: one new
// post, comment or version where they add one.
func (e *raceEnv) effectsOnce(name string) {
	ctx := context.Background()
	switch name {
	case "createPost":
		drafts := must[*storage.Result[*storage.Post]](e.t)(e.store.AuthorDrafts(ctx, "ada", storage.PageArgs{Limit: 10}))
		equal(e.t, "drafts", len(drafts.Items), 2)
	case "updatePost":
		equal(e.t, "version", must[*storage.Post](e.t)(e.store.GetPost(ctx, e.published.ID)).Version, e.published.Version+1)
	case "addComment":
		equal(e.t, "comments", must[*storage.Post](e.t)(e.store.GetPost(ctx, e.published.ID)).CommentCount, e.published.CommentCount+1)
	case "updateAuthor":
		equal(e.t, "version", must[*storage.Author](e.t)(e.store.GetAuthor(ctx, "bob")).Version, int64(2))
	case "updateCategory":
		equal(e.t, "version", must[*storage.Category](e.t)(e.store.GetCategory(ctx, "aws")).Version, int64(2))
	}
}

// TestTransactionAnswersUnderContention answers a write's transaction as
// DynamoDB does when other writers hold its items, or when its token met
// another transaction's: the write tries again and succeeds, or, when the
// answer never changes, fails with an error that says to try later.
func TestTransactionAnswersUnderContention(t *testing.T) {
	cases := []struct {
		name   string
		answer func(*http.Request) *http.Response
		always bool
		want   error // nil: success
	}{
		{"a conflict with another transaction", cancelled("TransactionConflict"), false, nil},
		{"a conflict on every attempt", cancelled("TransactionConflict"), true, storage.ErrBusy},
		{"cancelled for throttling", cancelled("ThrottlingError"), false, nil},
		{"cancelled for throttling on every attempt", cancelled("ProvisionedThroughputExceeded"), true, storage.ErrUnavailable},
		{"the token's transaction in progress", answer(400, "TransactionInProgressException", ""), false, nil},
		{"the token used by another transaction", answer(400, "IdempotentParameterMismatchException", ""), false, nil},
		{"the token used by another transaction every time", answer(400, "IdempotentParameterMismatchException", ""), true, storage.ErrBusy},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newRaceEnv(t)
			e.blog()
			if c.always {
				e.hooks.every("TransactWriteItems", c.answer)
			} else {
				e.hooks.at("TransactWriteItems", 1, c.answer)
			}
			_, err := e.store.AddComment(context.Background(), storage.NewComment{PostID: e.published.ID, AuthorID: "bob", Body: "hello", IdempotencyKey: "k"})
			e.hooks.clear()
			switch {
			case c.want == nil && err != nil:
				t.Fatalf("err = %v, want success", err)
			case c.want != nil && !errors.Is(err, c.want):
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			wantComments := e.published.CommentCount
			if c.want == nil {
				wantComments++
			}
			equal(t, "comments", must[*storage.Post](t)(e.store.GetPost(context.Background(), e.published.ID)).CommentCount, wantComments)
			e.consistent()
		})
	}
}
