package migrations

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// Layout 2 to layout 3 (see Run): scheduled posts get their go-live
// marker and schedule item. This step is frozen: the items it reads and
// writes and their keys are its own copies below, of what the writes of
// layout 3 did when it shipped, so a later change of the domain's writes
// does not change what it does.

// The keys, item types and attributes of layout 3 that this step uses.
const (
	v3AuthorPrefix = "AUTHOR#"
	v3PostPrefix   = "POST#"
	v3Authors      = "AUTHORS"
	v3Schedule     = "SCHEDULE"
	v3TypeSchedule = "schedule"
	v3GoLiveAt     = "goLiveAt"
	v3Published    = "PUBLISHED"
)

// v3Post is what this step reads of a post.
type v3Post struct {
	Status      string `dynamodbav:"status"`
	PublishedAt string `dynamodbav:"publishedAt"`
	GoLiveAt    string `dynamodbav:"goLiveAt,omitempty"`
	Version     int64  `dynamodbav:"version"`
}

// v3ScheduleItem is the schedule item of a post going live at At.
type v3ScheduleItem struct {
	PK     string `dynamodbav:"PK"`
	SK     string `dynamodbav:"SK"`
	Type   string `dynamodbav:"type"`
	PostID string `dynamodbav:"postId"`
	At     string `dynamodbav:"at"`
}

// v3 gives every post scheduled after now that has no marker
// (written by a version before markers) its marker and schedule item, in
// one transaction each, conditional on the post as read; it changes no
// version. It lists the posts from the author copies sorted after now,
// and returns how many it marked.
func (e *Env) v3(ctx context.Context) (int, error) {
	authors, err := e.partitionIDs(ctx, v3Authors, "id")
	if err != nil {
		return 0, fmt.Errorf("list authors: %w", err)
	}
	now := e.nowKey()
	n := 0
	for _, a := range authors {
		// Author copies sort by publishedAt: those after now, whose '#'
		// follows the time, sort after now's '$'.
		in, err := e.DB.KeyQuery(expression.Key("PK").Equal(expression.Value(v3AuthorPrefix + a)).
			And(expression.Key("SK").Between(expression.Value(v3PostPrefix+now+"$"), expression.Value(v3PostPrefix+"~"))))
		if err != nil {
			return n, err
		}
		in.ConsistentRead = nil
		in.ProjectionExpression = aws.String("#id")
		in.ExpressionAttributeNames["#id"] = "id"
		var ids []string
		err = e.DB.QueryAll(ctx, in, func(it item) error {
			var row struct {
				ID string `dynamodbav:"id"`
			}
			if err := attributevalue.UnmarshalMap(it, &row); err != nil {
				return err
			}
			ids = append(ids, row.ID)
			return nil
		})
		if err != nil {
			return n, fmt.Errorf("list scheduled posts of author %q: %w", a, err)
		}
		for _, id := range ids {
			did, err := dynamo.RetryWrite(ctx, func() (bool, error) { return e.v3MarkPost(ctx, id) })
			if err != nil {
				return n, fmt.Errorf("mark scheduled post %q: %w", id, err)
			}
			if did {
				n++
			}
		}
	}
	return n, nil
}

// v3MarkPost gives the post id its marker and schedule item when it is
// scheduled after now and has none, and reports whether it did.
func (e *Env) v3MarkPost(ctx context.Context, id string) (bool, error) {
	var p v3Post
	k := key{PK: v3PostPrefix + id, SK: v3PostPrefix + id}
	switch err := e.DB.Get(ctx, k, true, &p); {
	case errors.Is(err, dynamo.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	if p.Status != v3Published || p.PublishedAt <= e.nowKey() || p.GoLiveAt != "" {
		return false, nil
	}
	t := e.DB.NewTxn()
	cond := expression.Name("version").Equal(expression.Value(p.Version)).
		And(expression.Name("publishedAt").Equal(expression.Value(p.PublishedAt))).
		And(expression.Name("status").Equal(expression.Value(p.Status))).
		And(expression.Name(v3GoLiveAt).AttributeNotExists())
	if err := t.Update(k, expression.Set(expression.Name(v3GoLiveAt), expression.Value(p.PublishedAt)), &cond, dynamo.ErrRetry); err != nil {
		return false, err
	}
	sk := p.PublishedAt + "#" + id
	if err := t.Put(v3ScheduleItem{PK: v3Schedule, SK: sk, Type: v3TypeSchedule, PostID: id, At: p.PublishedAt}, nil, nil); err != nil {
		return false, err
	}
	if err := e.DB.Exec(ctx, t); err != nil {
		return false, err
	}
	return true, nil
}
