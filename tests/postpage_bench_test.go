package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// postPageBenchQuery is the load bench's post page (cmd/bench): the post
// with its body, author and categories, and its first 50 comments, each
// with its author's name.
const postPageBenchQuery = `query PostPage($slug: String!) {
  post(slug: $slug) {
    id slug title excerpt publishedAt commentCount author { name } categories { slug name } body version
    comments(first: 50) { totalCount pageInfo { hasNextPage endCursor } edges { node { id body createdAt deleted author { name } } } }
  }
}`

// authorPageBenchQuery is the load bench's author page: the author and
// their 20 newest posts as cards.
const authorPageBenchQuery = `query AuthorPage($id: ID!) {
  author(id: $id) {
    id name bio avatarUrl postCount
    posts(first: 20) { totalCount pageInfo { hasNextPage endCursor } edges { node { id slug title excerpt publishedAt commentCount author { name } categories { slug name } } } }
  }
}`

// BenchmarkPostPage executes the post page of a post with 50 comments by
// five authors through the real handler, on the embedded engine or, with
// DYNAMODB_ENDPOINT set, on DynamoDB Local: one client, one page at a
// time, so ns/op is the page's latency. Run with
// go test -run '^$' -bench 'PostPage|AuthorPage' -benchmem ./tests.
func BenchmarkPostPage(b *testing.B) {
	h, _ := pageBenchHandler(b, nil)
	benchQuery(b, h, postPageBenchQuery, map[string]any{"slug": "post-0"}, func(data json.RawMessage) bool {
		var d struct {
			Post struct {
				Comments struct{ Edges []json.RawMessage }
			}
		}
		return json.Unmarshal(data, &d) == nil && len(d.Post.Comments.Edges) == 50
	})
}

// BenchmarkPostPageOverANetwork is BenchmarkPostPage on the embedded
// engine behind a link that holds every request for 2 ms, as the network
// to DynamoDB does: the page's time is then mostly its round trips one
// after another (2 ms each), which the machine's load hardly changes.
func BenchmarkPostPageOverANetwork(b *testing.B) {
	h, _ := pageBenchHandler(b, func(next http.RoundTripper) http.RoundTripper {
		return delayed{next: next, by: 2 * time.Millisecond}
	})
	benchQuery(b, h, postPageBenchQuery, map[string]any{"slug": "post-0"}, func(data json.RawMessage) bool {
		var d struct {
			Post struct {
				Comments struct{ Edges []json.RawMessage }
			}
		}
		return json.Unmarshal(data, &d) == nil && len(d.Post.Comments.Edges) == 50
	})
}

// delayed is an http.RoundTripper that sends each request on after a
// fixed time.
type delayed struct {
	next http.RoundTripper
	by   time.Duration
}

func (d delayed) RoundTrip(r *http.Request) (*http.Response, error) {
	t := time.NewTimer(d.by)
	defer t.Stop()
	select {
	case <-t.C:
		return d.next.RoundTrip(r)
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
}

// BenchmarkAuthorPage executes the author page of an author with 20
// published posts as BenchmarkPostPage does the post page.
func BenchmarkAuthorPage(b *testing.B) {
	h, authorGID := pageBenchHandler(b, nil)
	benchQuery(b, h, authorPageBenchQuery, map[string]any{"id": authorGID}, func(data json.RawMessage) bool {
		var d struct {
			Author struct {
				Posts struct{ Edges []json.RawMessage }
			}
		}
		return json.Unmarshal(data, &d) == nil && len(d.Author.Posts.Edges) == 20
	})
}

// benchQuery runs query with vars through h on every iteration, after
// checking that its answer has no errors and that full accepts its data.
func benchQuery(b *testing.B, h http.Handler, query string, vars map[string]any, full func(json.RawMessage) bool) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		b.Fatal(err)
	}
	page := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	var res struct {
		Errors []json.RawMessage
		Data   json.RawMessage
	}
	if rec := page(); json.Unmarshal(rec.Body.Bytes(), &res) != nil || len(res.Errors) > 0 || !full(res.Data) {
		b.Fatalf("page: %.500s", rec.Body)
	}
	b.ReportAllocs()
	for b.Loop() {
		if rec := page(); rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) {
			b.Fatalf("status %d: %.500s", rec.Code, rec.Body)
		}
	}
}

// pageBenchHandler returns the GraphQL handler over the test's DynamoDB
// holding five authors, 30 published posts by the first (post-0 the
// newest of them) in two categories, and 50 comments on post-0 by the
// five authors in turn; and the first author's global id. With link, the
// requests to DynamoDB go through the transport it returns.
func pageBenchHandler(b *testing.B, link func(http.RoundTripper) http.RoundTripper) (http.Handler, string) {
	b.Helper()
	ctx := context.Background()
	cfg := dynamotest.ClientConfig(b, nil)
	if link != nil {
		cfg.HTTPClient = &http.Client{Transport: link(dynamotest.Transport(cfg))}
	}
	db, err := storage.NewClient(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	store := storage.New(db, dynamotest.Table(b, db, "pagebench"))
	if err := store.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	for _, slug := range []string{"go", "dynamodb"} {
		if _, err := store.CreateCategory(ctx, storage.NewCategory{Slug: slug, Name: strings.ToUpper(slug[:1]) + slug[1:]}); err != nil {
			b.Fatal(err)
		}
	}
	var authors []string
	for i := range 5 {
		a, err := store.CreateAuthor(ctx, storage.NewAuthor{Name: fmt.Sprintf("Author %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		authors = append(authors, a.ID)
	}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var post0 string
	for i := range 30 {
		p, err := store.CreatePost(ctx, storage.NewPost{
			AuthorID: authors[0], Title: fmt.Sprintf("Post %d", i), Slug: fmt.Sprintf("post-%d", i),
			Excerpt: "What the post is about.", Body: strings.Repeat("Markdown text. ", 200),
			Categories: []string{"go", "dynamodb"}[:1+i%2],
		})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := store.Publish(ctx, storage.PublishPost{ID: p.ID, At: at.Add(-time.Duration(i) * time.Hour)}); err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			post0 = p.ID
		}
	}
	for i := range 50 {
		if _, err := store.AddComment(ctx, storage.NewComment{PostID: post0, AuthorID: authors[i%5], Body: fmt.Sprintf("Comment %d: thanks, this helped.", i)}); err != nil {
			b.Fatal(err)
		}
	}
	h := graph.NewHandler(store, graph.HandlerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return h, b64("Author:" + authors[0])
}
