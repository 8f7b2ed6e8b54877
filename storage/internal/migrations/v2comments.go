package migrations

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// The comments of layout 1 to layout 2 (see v2.go): each gets a version,
// and a top-level one with replies carries its first v2MaxReplyPage.

// v2MaxReplyPage is how many replies a top-level comment carries.
const v2MaxReplyPage = 10

// v2Comment is a comment of layout 2; one of layout 1 has no version and
// carries no replies.
type v2Comment struct {
	PK         string    `dynamodbav:"PK"`
	SK         string    `dynamodbav:"SK"`
	GSI1PK     string    `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK     string    `dynamodbav:"GSI1SK,omitempty"`
	Type       string    `dynamodbav:"type"`
	ID         string    `dynamodbav:"id"`
	PostID     string    `dynamodbav:"postId"`
	ParentID   string    `dynamodbav:"parentId,omitempty"`
	AuthorID   string    `dynamodbav:"authorId,omitempty"`
	ReaderID   string    `dynamodbav:"readerId,omitempty"`
	Body       string    `dynamodbav:"body,omitempty"`
	CreatedAt  string    `dynamodbav:"createdAt"`
	EditedAt   string    `dynamodbav:"editedAt,omitempty"`
	Status     string    `dynamodbav:"status,omitempty"`
	Deleted    bool      `dynamodbav:"deleted,omitempty"`
	ReplyCount int64     `dynamodbav:"replyCount,omitempty"`
	Replies    []v2Reply `dynamodbav:"replies,omitempty"`
	Version    int64     `dynamodbav:"version,omitempty"`
	ExpiresAt  int64     `dynamodbav:"expiresAt,omitempty"`
}

// v2Reply is a reply as its top-level comment carries it.
type v2Reply struct {
	ID        string `dynamodbav:"id"`
	AuthorID  string `dynamodbav:"authorId,omitempty"`
	ReaderID  string `dynamodbav:"readerId,omitempty"`
	Body      string `dynamodbav:"body"`
	CreatedAt string `dynamodbav:"createdAt"`
	EditedAt  string `dynamodbav:"editedAt,omitempty"`
}

func (c *v2Comment) key() key { return key{PK: c.PK, SK: c.SK} }

func (c *v2Comment) reply() v2Reply {
	return v2Reply{ID: c.ID, AuthorID: c.AuthorID, ReaderID: c.ReaderID, Body: c.Body, CreatedAt: c.CreatedAt, EditedAt: c.EditedAt}
}

// v2CondVersion holds when the comment's version is v (0: it has none).
func v2CondVersion(v int64) expression.ConditionBuilder {
	if v == 0 {
		return dynamo.CondExists().And(expression.AttributeNotExists(expression.Name("version")))
	}
	return expression.Name("version").Equal(expression.Value(v))
}

// v2Comments gives the comments of the post id without a version
// version 1, and the top-level ones with replies the copies of their first
// replies. It returns how many comments it wrote.
func (e *Env) v2Comments(ctx context.Context, postID string) (int, error) {
	n := 0
	for _, prefix := range []string{v2CommentPrefix, v2ThreadPrefix} {
		var unversioned []*v2Comment
		in, err := e.DB.KeyQuery(expression.Key("PK").Equal(expression.Value(v2PostPrefix + postID)).
			And(expression.Key("SK").BeginsWith(prefix)))
		if err != nil {
			return n, err
		}
		err = e.DB.QueryAll(ctx, in, func(it item) error {
			c := &v2Comment{}
			if err := attributevalue.UnmarshalMap(it, c); err != nil {
				return fmt.Errorf("decode comment: %w", err)
			}
			if c.Version == 0 {
				unversioned = append(unversioned, c)
			}
			return nil
		})
		if err != nil {
			return n, fmt.Errorf("migrate comments of post %q: %w", postID, err)
		}
		for _, c := range unversioned {
			written, err := e.v2Comment(ctx, postID, c)
			n += written
			if err != nil {
				return n, fmt.Errorf("migrate comment %q: %w", c.ID, err)
			}
		}
	}
	return n, nil
}

// v2Comment gives the comment c, as read, version 1, and makes it carry
// its first replies when it has any, giving those version 1 too; a
// comment that has a version by the time of the write (a later write
// reached it first) is left as it is. It returns how many comments it
// wrote.
func (e *Env) v2Comment(ctx context.Context, postID string, c *v2Comment) (int, error) {
	return dynamo.RetryWrite(ctx, func() (int, error) {
		if c.Version != 0 {
			return 0, nil
		}
		t := e.DB.NewTxn()
		written := 1
		if c.ParentID != "" || c.ReplyCount == 0 {
			err := t.Update(c.key(), expression.Set(expression.Name("version"), expression.Value(1)),
				ptr(v2CondVersion(0)), dynamo.ErrRetry)
			if err != nil {
				return 0, err
			}
		} else {
			first, err := e.v2FirstReplies(ctx, postID, c)
			if err != nil {
				return 0, err
			}
			carrying := *c
			carrying.Replies, carrying.Version = nil, 1
			for _, r := range first {
				carrying.Replies = append(carrying.Replies, r.reply())
				if r.Version == 0 {
					written++
					err = t.Update(r.key(), expression.Set(expression.Name("version"), expression.Value(1)),
						ptr(v2CondVersion(0)), dynamo.ErrRetry)
				} else {
					err = t.Check(r.key(), v2CondVersion(r.Version), dynamo.ErrRetry)
				}
				if err != nil {
					return 0, err
				}
			}
			if err := t.Put(carrying, ptr(v2CondVersion(0)), dynamo.ErrRetry); err != nil {
				return 0, err
			}
		}
		err := e.DB.Exec(ctx, t)
		if errors.Is(err, dynamo.ErrRetry) {
			// Read the comment again: gone, or written meanwhile.
			var again v2Comment
			switch gerr := e.DB.Get(ctx, c.key(), true, &again); {
			case errors.Is(gerr, dynamo.ErrNotFound):
				c.Version = -1
			case gerr != nil:
				return 0, gerr
			default:
				*c = again
			}
		}
		if err != nil {
			return 0, err
		}
		return written, nil
	})
}

// v2FirstReplies returns the first v2MaxReplyPage replies of the top-level
// comment parent, oldest first: the replies sort under THREAD# followed by
// their parent's sort key (after COMMENT#).
func (e *Env) v2FirstReplies(ctx context.Context, postID string, parent *v2Comment) ([]*v2Comment, error) {
	prefix := v2ThreadPrefix + strings.TrimPrefix(parent.SK, v2CommentPrefix) + "#"
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(
		expression.Key("PK").Equal(expression.Value(v2PostPrefix + postID)).
			And(expression.Key("SK").BeginsWith(prefix))))
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(e.DB.Name()),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(v2MaxReplyPage),
	}
	var out []*v2Comment
	for len(out) < v2MaxReplyPage {
		page, err := e.DB.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("replies of comment %q: %w", parent.ID, err)
		}
		for _, it := range page.Items {
			r := &v2Comment{}
			if err := attributevalue.UnmarshalMap(it, r); err != nil {
				return nil, fmt.Errorf("decode reply: %w", err)
			}
			out = append(out, r)
		}
		if page.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
		in.Limit = aws.Int32(int32(v2MaxReplyPage - len(out)))
	}
	return out, nil
}
