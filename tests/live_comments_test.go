package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
)

const commentUpdatedQuery = `subscription($post: ID!, $after: String) {
  commentUpdated(postId: $post, after: $after) { cursor kind commentId comment { id body } }
}`

// commentChange is what the tests ask commentUpdated for.
type commentChange struct {
	Cursor    string `json:"cursor"`
	Kind      string `json:"kind"`
	CommentID string `json:"commentId"`
	Comment   *struct {
		ID   string `json:"id"`
		Body string `json:"body"`
	} `json:"comment"`
}

// nextChange returns the next commentUpdated event of st.
func nextChange(t *testing.T, st stream) commentChange {
	t.Helper()
	r, ok := st.next()
	if !ok {
		t.Fatal("the subscription ended")
	}
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %+v", r.Errors)
	}
	var c commentChange
	if err := json.Unmarshal(r.Data["commentUpdated"], &c); err != nil {
		t.Fatalf("%s: %v", r.Data["commentUpdated"], err)
	}
	return c
}

// body returns the body of the change's comment, "" without one.
func (c commentChange) body() string {
	if c.Comment == nil {
		return ""
	}
	return c.Comment.Body
}

func TestLiveCommentUpdatedDeliversEditsAndDeletions(t *testing.T) {
	s := newLiveServer(t)
	ada, post := s.livePost(t)
	ctx := context.Background()
	start := s.cursor(t)
	first := addLiveComment(t, ada, post, "first")
	second := addLiveComment(t, ada, post, "second")
	vars := map[string]any{"post": post, "after": start}
	ws := s.dialWS(t, nil).subscribe("1", commentUpdatedQuery, vars)
	sse, _ := s.subscribeSSE(t, http.MethodPost, "", commentUpdatedQuery, vars, "")

	ok[*UpdateCommentResponse](t)(UpdateComment(ctx, ada, UpdateCommentInput{Id: first, Body: "first, edited"}))
	ok[*DeleteCommentResponse](t)(DeleteComment(ctx, ada, DeleteCommentInput{Id: second}))
	want := []commentChange{{Kind: "EDITED", CommentID: first}, {Kind: "DELETED", CommentID: second}}
	check := func(name string, st stream) string {
		t.Helper()
		var cursor string
		for i, w := range want {
			c := nextChange(t, st)
			equal(t, name+" kind", c.Kind, w.Kind)
			equal(t, name+" comment id", c.CommentID, w.CommentID)
			if i == 0 {
				equal(t, name+" body", c.body(), "first, edited")
			} else if c.Comment != nil {
				t.Errorf("%s: a deleted comment is given: %+v", name, c.Comment)
			}
			cursor = c.Cursor
		}
		return cursor
	}
	check("websocket", ws)
	cursor := check("sse", sse)

	// A subscriber that comes later replays them from its cursor.
	late, _ := s.subscribeSSE(t, http.MethodPost, "", commentUpdatedQuery, vars, "")
	check("late", late)

	t.Run("readers get no edit while the post is not public", func(t *testing.T) {
		vars := map[string]any{"post": post, "after": cursor}
		open := s.hub.Subscribers()
		reader, _ := s.subscribeSSE(t, http.MethodPost, "", commentUpdatedQuery, vars, "")
		author := s.dialWS(t, map[string]any{"Authorization": "Bearer " + s.token(time.Hour, "ada", auth.RoleAuthor)}).subscribe("a", commentUpdatedQuery, vars)
		// Both started while the post was public.
		waitFor(t, func() bool { return s.hub.Subscribers() == open+2 })
		ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, ada, UnpublishPostInput{Id: post}))
		ok[*UpdateCommentResponse](t)(UpdateComment(ctx, ada, UpdateCommentInput{Id: first, Body: "while a draft"}))
		// The author sees it: the edit's event has been read.
		equal(t, "the author's edit", nextChange(t, author).body(), "while a draft")
		ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: post}))
		ok[*UpdateCommentResponse](t)(UpdateComment(ctx, ada, UpdateCommentInput{Id: first, Body: "public again"}))
		equal(t, "the reader's next edit", nextChange(t, reader).body(), "public again")
	})
}
