package storage

import "github.com/blogql/blog/storage/internal/keys"

// commentItem is a comment as stored: published under COMMENT# (top
// level) or THREAD# (a reply), held under HELD# with Status PENDING or
// REJECTED, and, while pending, copied into the admins' queue (Type
// typeQueued). Version grows with every write of the item; items written
// before it existed have none, read as 0. A top-level comment carries its
// first replies (Replies, at most MaxReplyPage), so a page of comments
// brings the first page of each thread along.
type commentItem struct {
	PK         string      `dynamodbav:"PK"`
	SK         string      `dynamodbav:"SK"`
	GSI1PK     string      `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK     string      `dynamodbav:"GSI1SK,omitempty"`
	Type       string      `dynamodbav:"type"`
	ID         string      `dynamodbav:"id"`
	PostID     string      `dynamodbav:"postId"`
	ParentID   string      `dynamodbav:"parentId,omitempty"`
	AuthorID   string      `dynamodbav:"authorId,omitempty"`
	ReaderID   string      `dynamodbav:"readerId,omitempty"`
	Body       string      `dynamodbav:"body,omitempty"`
	CreatedAt  string      `dynamodbav:"createdAt"`
	EditedAt   string      `dynamodbav:"editedAt,omitempty"`
	Status     string      `dynamodbav:"status,omitempty"` // empty when published
	Deleted    bool        `dynamodbav:"deleted,omitempty"`
	ReplyCount int64       `dynamodbav:"replyCount,omitempty"`
	Replies    []replyCopy `dynamodbav:"replies,omitempty"`
	Version    int64       `dynamodbav:"version,omitempty"`
	ExpiresAt  int64       `dynamodbav:"expiresAt,omitempty"` // rejected comments expire
	// ApprovedAt is when a moderator approved the comment: it tells the
	// change feed an approval from a new comment.
	ApprovedAt string `dynamodbav:"approvedAt,omitempty"`
}

// replyCopy is a published reply as its top-level comment carries it.
type replyCopy struct {
	ID        string `dynamodbav:"id"`
	AuthorID  string `dynamodbav:"authorId,omitempty"`
	ReaderID  string `dynamodbav:"readerId,omitempty"`
	Body      string `dynamodbav:"body"`
	CreatedAt string `dynamodbav:"createdAt"`
	EditedAt  string `dynamodbav:"editedAt,omitempty"`
}

func (it *commentItem) replyCopy() replyCopy {
	return replyCopy{ID: it.ID, AuthorID: it.AuthorID, ReaderID: it.ReaderID, Body: it.Body, CreatedAt: it.CreatedAt, EditedAt: it.EditedAt}
}

func (it *commentItem) status() CommentStatus {
	if it.Status == "" {
		return CommentPublished
	}
	return CommentStatus(it.Status)
}

func (it *commentItem) comment() *Comment {
	if it.Deleted {
		it.Body = "" // a tombstone shows nothing of what was said
	}
	c := &Comment{
		ID: it.ID, PostID: it.PostID, ParentID: it.ParentID, AuthorID: it.AuthorID, ReaderID: it.ReaderID,
		Body: it.Body, CreatedAt: keys.ParseTime(it.CreatedAt), EditedAt: keys.ParseTime(it.EditedAt),
		Status: it.status(), Deleted: it.Deleted, ReplyCount: it.ReplyCount,
		repliesKnown: it.Version > 0 || it.ReplyCount == 0,
	}
	for _, r := range it.Replies {
		c.Replies = append(c.Replies, &Comment{
			ID: r.ID, PostID: it.PostID, ParentID: it.ID, AuthorID: r.AuthorID, ReaderID: r.ReaderID,
			Body: r.Body, CreatedAt: keys.ParseTime(r.CreatedAt), EditedAt: keys.ParseTime(r.EditedAt),
			Status: CommentPublished,
		})
	}
	return c
}
