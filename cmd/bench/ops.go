package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/blogql/blog/storage"
)

// operation is one frontend operation: the GraphQL request a page sends,
// what its answer must hold, and its floor, the same DynamoDB requests made
// directly through the store with no GraphQL and no HTTP, as a
// hand-written client would make them: requests that depend on nothing
// but the page's arguments at once (a category and its posts), the others
// as soon as what they need is read (a post and its comments once the
// slug names the post).
type operation struct {
	name string
	// budget is the DynamoDB requests DESIGN.md allows it.
	budget int
	query  string
	// vars returns the variables of the i-th call; list operations take
	// the page size as "first".
	vars func(i, first int) map[string]any
	// check returns an error when a response body has errors or its data
	// is not what the page needs; first is the page size asked for.
	check func(body []byte, first int) error
	// floor makes the i-th call's DynamoDB requests through the store.
	floor func(ctx context.Context, i int) error
	// paged operations are measured at page size 20 and 100 for the
	// request count.
	paged bool
	// token returns the bearer token of the i-th call; nil: anonymous.
	token func(i int) string
}

const postCard = `id slug title excerpt publishedAt commentCount author { name } categories { slug name }`

// targets are what the operations are called with, found through the API
// the way a frontend finds them, plus the store ids the floor needs.
type targets struct {
	categories []string // slugs
	authors    []string // global ids
	authorIDs  []string // store ids, same order
	tokens     []string // each author's bearer token, same order
	slugs      []string // slugs of the commented posts
	// Comments are added to posts outside the commented ones, so the post
	// page does not grow during the run.
	commentOn    []string // global ids
	commentOnIDs []string // store ids, same order
}

func operations(store *storage.Store, t *targets) []operation {
	pick := func(list []string, i int) string { return list[i%len(list)] }
	return []operation{{
		name: "category page", budget: 2, paged: true,
		query: `query CategoryPage($slug: String!, $first: Int) {
  category(slug: $slug) {
    id name description postCount
    posts(first: $first) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { ` + postCard + ` } } }
  }
}`,
		vars: func(i, first int) map[string]any {
			return map[string]any{"slug": pick(t.categories, i), "first": first}
		},
		check: expectEdges("category"),
		floor: func(ctx context.Context, i int) error {
			slug := pick(t.categories, i)
			g, gctx := errgroup.WithContext(ctx)
			g.Go(func() error { _, err := store.GetCategory(gctx, slug); return err })
			g.Go(func() error {
				res, err := store.CategoryPosts(gctx, slug, storage.PageArgs{Limit: 20}, storage.Period{})
				return wantItems(res, err, 20)
			})
			return g.Wait()
		},
	}, {
		name: "post page", budget: 4,
		query: `query PostPage($slug: String!) {
  post(slug: $slug) {
    ` + postCard + ` body version
    comments(first: 50) { totalCount pageInfo { hasNextPage endCursor } edges { node { id body createdAt deleted author { name } } } }
  }
}`,
		vars:  func(i, _ int) map[string]any { return map[string]any{"slug": pick(t.slugs, i)} },
		check: expectComments,
		floor: func(ctx context.Context, i int) error {
			id, err := store.PostIDBySlug(ctx, pick(t.slugs, i))
			if err != nil {
				return err
			}
			var res *storage.Result[*storage.Comment]
			g, gctx := errgroup.WithContext(ctx)
			g.Go(func() error { _, err := store.GetPost(gctx, id); return err })
			g.Go(func() (err error) { res, err = store.Comments(gctx, id, storage.PageArgs{Limit: 50}); return err })
			if err := g.Wait(); err != nil {
				return err
			}
			var ids []string
			for _, c := range res.Items {
				if !slices.Contains(ids, c.AuthorID) {
					ids = append(ids, c.AuthorID)
				}
			}
			_, errs := store.GetAuthors(ctx, ids)
			return errors.Join(errs...)
		},
	}, {
		name: "author page", budget: 2, paged: true,
		query: `query AuthorPage($id: ID!, $first: Int) {
  author(id: $id) {
    id name bio avatarUrl postCount
    posts(first: $first) { totalCount pageInfo { hasNextPage endCursor } edges { node { ` + postCard + ` } } }
  }
}`,
		vars: func(i, first int) map[string]any {
			return map[string]any{"id": pick(t.authors, i), "first": first}
		},
		check: expectEdges("author"),
		floor: func(ctx context.Context, i int) error {
			id := pick(t.authorIDs, i)
			g, gctx := errgroup.WithContext(ctx)
			g.Go(func() error { _, err := store.GetAuthor(gctx, id); return err })
			g.Go(func() error {
				res, err := store.AuthorPosts(gctx, id, storage.PageArgs{Limit: 20}, storage.Period{}, false)
				return wantItems(res, err, 20)
			})
			return g.Wait()
		},
	}, {
		name: "feed", budget: 2, paged: true,
		query: `query Feed($first: Int) {
  posts(first: $first) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { ` + postCard + ` } } }
}`,
		vars:  func(_, first int) map[string]any { return map[string]any{"first": first} },
		check: expectEdges(""),
		floor: func(ctx context.Context, _ int) error {
			g, gctx := errgroup.WithContext(ctx)
			g.Go(func() error {
				res, err := store.LatestPosts(gctx, storage.PageArgs{Limit: 20}, storage.Period{})
				return wantItems(res, err, 20)
			})
			g.Go(func() error { _, err := store.Stats(gctx); return err })
			return g.Wait()
		},
	}, {
		// DESIGN.md allows the TransactWriteItems and the reads it truly
		// needs; on a post the server has seen it needs none.
		name: "addComment", budget: 1,
		query: `mutation AddComment($input: AddCommentInput!) {
  addComment(input: $input) { comment { id body createdAt } }
}`,
		vars: func(i, _ int) map[string]any {
			return map[string]any{"input": map[string]any{
				"postId": pick(t.commentOn, i), "body": commentBody(i),
			}}
		},
		token: func(i int) string { return pick(t.tokens, i) },
		check: func(body []byte, _ int) error {
			d, err := decodeData[struct {
				AddComment struct{ Comment struct{ ID string } }
			}](body)
			if err == nil && d.AddComment.Comment.ID == "" {
				err = fmt.Errorf("no comment in %s", body)
			}
			return err
		},
		floor: func(ctx context.Context, i int) error {
			_, err := store.AddComment(ctx, storage.NewComment{
				PostID: pick(t.commentOnIDs, i), AuthorID: pick(t.authorIDs, i), Body: commentBody(i),
			})
			return err
		},
	}}
}

func commentBody(i int) string {
	return fmt.Sprintf("Benchmark comment %d: thanks, this helped.", i)
}

func wantItems[T any](res *storage.Result[T], err error, n int) error {
	if err != nil {
		return err
	}
	if len(res.Items) != n && (res.HasNext || len(res.Items) == 0) {
		return fmt.Errorf("%d items, want %d", len(res.Items), n)
	}
	return nil
}

// postPage is a connection of posts as the checks read it.
type postPage struct {
	PageInfo struct{ HasNextPage bool }
	Edges    []struct {
		Node struct {
			Author     struct{ Name string }
			Categories []struct{ Name string }
		}
	}
}

// expectEdges checks a page of posts under data[field].posts (or data.posts
// for the feed): a full page unless it is the last, each post with its
// author's and categories' names.
func expectEdges(field string) func([]byte, int) error {
	return func(body []byte, n int) error {
		d, err := decodeData[map[string]struct {
			postPage
			Posts postPage
		}](body)
		if err != nil {
			return err
		}
		page := (*d)["posts"].postPage
		if field != "" {
			page = (*d)[field].Posts
		}
		edges := page.Edges
		if len(edges) != n && (len(edges) > n || page.PageInfo.HasNextPage || len(edges) == 0) {
			return fmt.Errorf("%d posts, want %d", len(edges), n)
		}
		for _, e := range edges {
			if e.Node.Author.Name == "" || len(e.Node.Categories) == 0 || e.Node.Categories[0].Name == "" {
				return fmt.Errorf("post without author or category names: %s", body)
			}
		}
		return nil
	}
}

// expectComments checks the post page: a body and at least 8 comments,
// each with its author's name.
func expectComments(body []byte, _ int) error {
	d, err := decodeData[struct {
		Post struct {
			Body     string
			Comments struct {
				Edges []struct {
					Node struct{ Author struct{ Name string } }
				}
			}
		}
	}](body)
	if err != nil {
		return err
	}
	if d.Post.Body == "" || len(d.Post.Comments.Edges) < 8 {
		return fmt.Errorf("post page with %d comments, body %d bytes", len(d.Post.Comments.Edges), len(d.Post.Body))
	}
	for _, e := range d.Post.Comments.Edges {
		if e.Node.Author.Name == "" {
			return errors.New("comment without author name")
		}
	}
	return nil
}
