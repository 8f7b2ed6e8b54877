package storage

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// TestPostWriteSeesThreadCountChanges reads a post, then changes its
// comments so that commentCount ends where it was while threadCount does
// not, and writes the post as read: the write must fail its condition
// rather than put the old threadCount back.
func TestPostWriteSeesThreadCountChanges(t *testing.T) {
	ctx := context.Background()
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	db, err := NewClient(ctx, ClientConfig{Embedded: endpoint == "", Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	s := New(db, "threads-"+newID())
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if endpoint != "" {
		t.Cleanup(func() {
			_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(s.table)})
		})
	}
	if _, err := s.CreateAuthor(ctx, NewAuthor{ID: "ada", Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	p, err := s.CreatePost(ctx, NewPost{AuthorID: "ada", Title: "T", Slug: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err = s.Publish(ctx, PublishPost{ID: p.ID}); err != nil {
		t.Fatal(err)
	}
	first, err := s.AddComment(ctx, NewComment{PostID: p.ID, AuthorID: "ada", Body: "first"})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := s.AddComment(ctx, NewComment{PostID: p.ID, ParentID: first.ID, AuthorID: "ada", Body: "reply"})
	if err != nil {
		t.Fatal(err)
	}

	before, r, err := s.readPost(ctx, p.ID, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddComment(ctx, NewComment{PostID: p.ID, AuthorID: "ada", Body: "second"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteComment(ctx, CommentRef{PostID: p.ID, CommentID: reply.ID}); err != nil {
		t.Fatal(err)
	}

	after := *before
	after.Title, after.Version = "Edited", before.Version+1
	r.keep(before)
	if _, err := s.writePost(ctx, nil, before, &after, r); !errors.Is(err, errRetry) {
		t.Errorf("write of the post as read before = %v, want a failed condition (retry)", err)
	}
	if bad, err := s.Check(ctx); err != nil || len(bad) > 0 {
		t.Errorf("invariants: %v %v", bad, err)
	}
}
