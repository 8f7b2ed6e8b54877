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

// categoryPageQuery is the frontend's category page: the category and its
// 20 newest posts with what a post card shows.
const categoryPageQuery = `query CategoryPage($slug: String!) {
  category(slug: $slug) {
    id name description postCount
    posts(first: 20) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { cursor node { id slug title excerpt publishedAt commentCount author { name } categories { slug name } } }
    }
  }
}`

// BenchmarkCategoryPage executes the category page through the real handler
// on the embedded engine, so allocations per page include everything the
// server does for it: transport, parsing (cached), validation, resolvers,
// storage, the engine and the JSON response. Run with
// go test -run ^$ -bench CategoryPage -benchmem ./tests.
func BenchmarkCategoryPage(b *testing.B) {
	_, h := benchHandler(b)
	benchPage(b, h, categoryPageQuery)
}

// BenchmarkFieldCost measures what resolving one field costs the GraphQL
// layer: the category page's 20 posts with one field each, then with
// twenty (the same field under twenty aliases, served from the post as it
// was read). The two make the same DynamoDB requests, so the difference,
// divided by the 380 fields more, is the executor's cost of a field.
func BenchmarkFieldCost(b *testing.B) {
	_, h := benchHandler(b)
	for _, n := range []int{1, 20} {
		fields := make([]string, n)
		for i := range fields {
			fields[i] = fmt.Sprintf("f%d: slug", i)
		}
		query := `query CategoryPage($slug: String!) {
  category(slug: $slug) { id name description postCount posts(first: 20) { edges { node { ` + strings.Join(fields, " ") + ` } } } }
}`
		b.Run(fmt.Sprintf("fields=%d", n), func(b *testing.B) { benchPage(b, h, query) })
	}
}

// benchPage runs query, a category page of 20 posts, through h on every
// iteration, after checking that it answers 20 posts and no errors.
func benchPage(b *testing.B, h http.Handler, query string) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"slug": "go"}})
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
		Data   struct {
			Category struct {
				Posts struct{ Edges []json.RawMessage }
			}
		}
	}
	if err := json.Unmarshal(page().Body.Bytes(), &res); err != nil || len(res.Errors) > 0 || len(res.Data.Category.Posts.Edges) != 20 {
		b.Fatalf("category page: err %v, errors %s, %d posts", err, res.Errors, len(res.Data.Category.Posts.Edges))
	}
	b.ReportAllocs()
	for b.Loop() {
		if rec := page(); rec.Code != http.StatusOK || bytes.HasPrefix(rec.Body.Bytes(), []byte(`{"errors"`)) {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkCategoryPageFloor makes the category page's DynamoDB requests
// directly through the store, on the same data: what BenchmarkCategoryPage
// costs beyond it is the GraphQL layer's.
func BenchmarkCategoryPageFloor(b *testing.B) {
	store, _ := benchHandler(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := store.GetCategory(ctx, "go"); err != nil {
			b.Fatal(err)
		}
		if res, err := store.CategoryPosts(ctx, "go", storage.PageArgs{Limit: 20}, storage.Period{}); err != nil || len(res.Items) != 20 {
			b.Fatal(err)
		}
	}
}

// benchHandler returns the GraphQL handler over an embedded engine holding
// a category with 30 published posts by two authors, and its store.
func benchHandler(b *testing.B) (*storage.Store, http.Handler) {
	b.Helper()
	ctx := context.Background()
	db, err := storage.NewClient(ctx, dynamotest.EmbeddedConfig(b, nil))
	if err != nil {
		b.Fatal(err)
	}
	store := storage.New(db, "bench")
	if err := store.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	for _, slug := range []string{"go", "dynamodb"} {
		if _, err := store.CreateCategory(ctx, storage.NewCategory{Slug: slug, Name: strings.ToUpper(slug[:1]) + slug[1:]}); err != nil {
			b.Fatal(err)
		}
	}
	var authors []string
	for _, name := range []string{"Ada Lovelace", "Grace Hopper"} {
		a, err := store.CreateAuthor(ctx, storage.NewAuthor{Name: name})
		if err != nil {
			b.Fatal(err)
		}
		authors = append(authors, a.ID)
	}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 30 {
		p, err := store.CreatePost(ctx, storage.NewPost{
			AuthorID: authors[i%2], Title: fmt.Sprintf("Post %d", i), Slug: fmt.Sprintf("post-%d", i),
			Excerpt: "What the post is about.", Body: strings.Repeat("Markdown text. ", 200),
			Categories: []string{"go", "dynamodb"}[:1+i%2],
		})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := store.Publish(ctx, storage.PublishPost{ID: p.ID, At: at.Add(time.Duration(i) * time.Hour)}); err != nil {
			b.Fatal(err)
		}
	}
	return store, graph.NewHandler(store, graph.HandlerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}
