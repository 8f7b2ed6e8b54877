package storage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// TestCommentsWrittenBeforeCarriedReplies rewrites a thread as comments
// were stored before they had versions and carried their first replies:
// the checker accepts it, its replies are read with a Query, and the next
// write to the thread makes the comment carry them.
func TestCommentsWrittenBeforeCarriedReplies(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	db, table := testBackend(t, nil, "legacy")
	s := New(db, table, WithClock(func() time.Time { return now }))
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
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
	root, err := s.AddComment(ctx, NewComment{PostID: p.ID, AuthorID: "ada", Body: "root"})
	if err != nil {
		t.Fatal(err)
	}
	var replies []string
	for i := range MaxReplyPage + 2 {
		now = now.Add(time.Second)
		r, err := s.AddComment(ctx, NewComment{PostID: p.ID, ParentID: root.ID, AuthorID: "ada", Body: fmt.Sprintf("reply %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		replies = append(replies, r.ID)
	}
	// The old shape: no version, no carried replies.
	out, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(s.table)})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range out.Items {
		var c commentItem
		if err := attributevalue.UnmarshalMap(it, &c); err != nil || c.Type != typeComment {
			continue
		}
		c.Version, c.Replies = 0, nil
		av, err := attributevalue.MarshalMap(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: av}); err != nil {
			t.Fatal(err)
		}
	}
	check := func() {
		t.Helper()
		if err := s.SyncAllCounts(ctx); err != nil {
			t.Fatal(err)
		}
		bad, err := s.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bad {
			t.Error("invariant: " + b)
		}
	}
	check()

	first := func() *Comment {
		t.Helper()
		res, err := s.Comments(ctx, p.ID, PageArgs{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		return res.Items[0]
	}
	counter := func(f func(ctx context.Context)) map[string]int {
		ctx, c := WithRequestCounter(ctx)
		f(ctx)
		return c.ByOperation()
	}
	var page *Result[*Comment]
	old := first()
	n := counter(func(ctx context.Context) {
		page, err = s.ReplyPage(ctx, old, PageArgs{Limit: 3})
	})
	if err != nil || len(page.Items) != 3 || page.Items[0].ID != replies[0] || !page.HasNext {
		t.Fatalf("first replies of an old comment = %+v, %v", page, err)
	}
	if n["Query"] != 1 || len(n) != 1 {
		t.Errorf("requests %v, want one Query of the replies", n)
	}

	now = now.Add(time.Second)
	if _, err := s.DeleteComment(ctx, CommentRef{PostID: p.ID, CommentID: replies[1]}); err != nil {
		t.Fatal(err)
	}
	replies = append(replies[:1], replies[2:]...)
	check()
	c := first()
	if !c.repliesKnown || len(c.Replies) != MaxReplyPage || c.Replies[1].ID != replies[1] || c.Replies[MaxReplyPage-1].ID != replies[MaxReplyPage-1] {
		t.Errorf("after a write the comment carries %d replies, known %v", len(c.Replies), c.repliesKnown)
	}
}
