package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/blogql/blog/storage"
)

// client sends GraphQL requests the way a frontend does: POST with a JSON
// body, over kept-alive connections.
type client struct {
	url     string
	http    *http.Client
	checked checkedAnswers
}

func newClient(url string, conns int) *client {
	return &client{url: url, http: &http.Client{Transport: &http.Transport{
		MaxIdleConns: conns * 2, MaxIdleConnsPerHost: conns * 2, DisableCompression: true,
	}}, checked: checkedAnswers{seed: maphash.MakeSeed(), passed: map[checkedKey][]byte{}}}
}

// checkedAnswers remembers answers that passed their operation's check:
// a check is a function of the body and the page size alone, so the same
// body again passes without being decoded again. The client is in the
// server's process; decoding every copy of a page the server sends from
// its answer cache took more of the two cores than sending it.
type checkedAnswers struct {
	seed   maphash.Seed
	mu     sync.Mutex
	passed map[checkedKey][]byte
}

type checkedKey struct {
	op    string
	first int
	sum   uint64
}

// maxCheckedAnswers bounds the answers remembered: a write's answers all
// differ.
const maxCheckedAnswers = 4096

// check runs op's check on body unless the same body passed it before.
func (c *checkedAnswers) check(op operation, body []byte, first int) error {
	k := checkedKey{op: op.name, first: first, sum: maphash.Bytes(c.seed, body)}
	c.mu.Lock()
	prev, ok := c.passed[k]
	c.mu.Unlock()
	if ok && bytes.Equal(prev, body) {
		return nil
	}
	if err := op.check(body, first); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.passed) < maxCheckedAnswers {
		c.passed[k] = body
	}
	return nil
}

// opHeader names the operation of a request for the request counts.
const opHeader = "X-Bench-Operation"

// do sends the i-th call of op with page size first and checks the answer:
// HTTP 200, no errors, and the data op expects. tag sets the name the
// request is counted under, after op's.
func (c *client) do(ctx context.Context, op operation, first, i int, tag string) error {
	token := ""
	if op.token != nil {
		token = op.token(i)
	}
	body, err := c.query(ctx, op.name+"@"+tag, token, op.query, op.vars(i, first))
	if err != nil {
		return err
	}
	return c.checked.check(op, body, first)
}

// caller returns the call of op at page size 20.
func (c *client) caller(op operation) call {
	return func(ctx context.Context, i int) error { return c.do(ctx, op, 20, i, "") }
}

// inProcess returns what the i-th call of op at page size 20 needs to be
// served by h in this process, with no HTTP client or connection: a
// function that serves it and checks the answer.
func inProcess(h http.Handler, op operation, i int) (func() error, error) {
	body, err := json.Marshal(map[string]any{"query": op.query, "variables": op.vars(i, 20)})
	if err != nil {
		return nil, err
	}
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if op.token != nil {
		req.Header.Set("Authorization", "Bearer "+op.token(i))
	}
	rec := httptest.NewRecorder()
	return func() error {
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return fmt.Errorf("HTTP %d: %.500s", rec.Code, rec.Body.Bytes())
		}
		return nil
	}, nil
}

// query sends one GraphQL request and returns the response body; a status
// other than 200 is an error. The caller decodes the body once, with
// decodeData.
func (c *client) query(ctx context.Context, name, token, query string, vars map[string]any) ([]byte, error) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(opHeader, name)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %.500s", resp.StatusCode, raw)
	}
	return raw, nil
}

// decodeData returns the data of a GraphQL response body; a response that
// is not JSON, has errors or has no data is an error.
func decodeData[T any](body []byte) (*T, error) {
	var r struct {
		Errors json.RawMessage `json:"errors"`
		Data   *T              `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || len(r.Errors) > 0 || r.Data == nil {
		return nil, fmt.Errorf("GraphQL errors or no data (%v): %.500s", err, body)
	}
	return r.Data, nil
}

// requestCounts records the DynamoDB requests of every GraphQL request by
// the operation it was sent as.
type requestCounts struct {
	mu   sync.Mutex
	last map[string]int
	min  map[string]int
	max  map[string]int
}

func newRequestCounts() *requestCounts {
	return &requestCounts{last: map[string]int{}, min: map[string]int{}, max: map[string]int{}}
}

func (rc *requestCounts) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, counter := storage.WithRequestCounter(r.Context())
		next.ServeHTTP(w, r.WithContext(ctx))
		name, _, _ := strings.Cut(r.Header.Get(opHeader), "@")
		n := counter.Total()
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.last[r.Header.Get(opHeader)] = n
		if m, ok := rc.min[name]; !ok || n < m {
			rc.min[name] = n
		}
		rc.max[name] = max(rc.max[name], n)
	})
}

// lastOf returns the DynamoDB requests of the last call of op sent with tag.
func (rc *requestCounts) lastOf(op, tag string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.last[op+"@"+tag]
}

// rangeOf returns the fewest and most DynamoDB requests a call of op made.
func (rc *requestCounts) rangeOf(op string) (int, int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.min[op], rc.max[op]
}

// discover finds what the operations are called with through the API, as a
// frontend would (global ids are opaque), and the matching store ids for
// the floor.
func discover(ctx context.Context, c *client, store *storage.Store, d *dataset, tokens map[string]string) (*targets, error) {
	t := &targets{categories: categorySlugs}
	body, err := c.query(ctx, "discover", "", `{ authors(first: 100) { edges { node { id name } } } }`, nil)
	if err != nil {
		return nil, err
	}
	authors, err := decodeData[struct {
		Authors struct {
			Edges []struct{ Node struct{ ID, Name string } }
		}
	}](body)
	if err != nil {
		return nil, err
	}
	byName := map[string]string{}
	for _, e := range authors.Authors.Edges {
		byName[e.Node.Name] = e.Node.ID
	}
	for _, a := range d.authors {
		if byName[a.Name] == "" {
			return nil, fmt.Errorf("author %q not listed", a.Name)
		}
		t.authors, t.authorIDs = append(t.authors, byName[a.Name]), append(t.authorIDs, a.ID)
		t.tokens = append(t.tokens, tokens[a.ID])
	}

	// Every post, newest first, from the feed: global ids from the API,
	// store ids from the store.
	global, ids := map[string]string{}, map[string]string{}
	after := ""
	for {
		vars := map[string]any{"after": nil}
		if after != "" {
			vars["after"] = after
		}
		body, err := c.query(ctx, "discover", "", `query($after: String) {
  posts(first: 100, after: $after) { pageInfo { hasNextPage endCursor } edges { node { id slug } } }
}`, vars)
		if err != nil {
			return nil, err
		}
		page, err := decodeData[struct {
			Posts struct {
				PageInfo struct {
					HasNextPage bool
					EndCursor   string
				}
				Edges []struct{ Node struct{ ID, Slug string } }
			}
		}](body)
		if err != nil {
			return nil, err
		}
		for _, e := range page.Posts.Edges {
			global[e.Node.Slug] = e.Node.ID
		}
		if !page.Posts.PageInfo.HasNextPage {
			break
		}
		after = page.Posts.PageInfo.EndCursor
	}
	p := storage.PageArgs{Limit: storage.MaxPageSize}
	for {
		res, err := store.LatestPosts(ctx, p, storage.Period{})
		if err != nil {
			return nil, err
		}
		for _, post := range res.Items {
			ids[post.Slug] = post.ID
		}
		if !res.HasNext {
			break
		}
		p.After = res.Cursors[len(res.Cursors)-1]
	}
	for i, post := range d.posts {
		if global[post.Slug] == "" || ids[post.Slug] == "" {
			return nil, fmt.Errorf("post %q not in the feed", post.Slug)
		}
		if i >= len(d.posts)-d.commented {
			t.slugs = append(t.slugs, post.Slug)
		} else {
			t.commentOn, t.commentOnIDs = append(t.commentOn, global[post.Slug]), append(t.commentOnIDs, ids[post.Slug])
		}
	}
	return t, nil
}
