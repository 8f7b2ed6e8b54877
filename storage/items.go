package storage

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Item shapes as stored. Times are stored as fixed-width UTC strings
// (keyTimeLayout), the same form the sort keys use.

const (
	typeAuthor       = "author"
	typeCategory     = "category"
	typePost         = "post"
	typeAuthorPost   = "authorPost"
	typeCategoryPost = "categoryPost"
	typeComment      = "comment"
	typeSlug         = "slug"
	typeStats        = "stats"
	typeIdempotency  = "idempotency"
	typeSecret       = "secret"
)

type authorItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	GSI1PK    string `dynamodbav:"GSI1PK"`
	GSI1SK    string `dynamodbav:"GSI1SK"`
	Type      string `dynamodbav:"type"`
	ID        string `dynamodbav:"id"`
	Name      string `dynamodbav:"name"`
	Bio       string `dynamodbav:"bio,omitempty"`
	AvatarURL string `dynamodbav:"avatarUrl,omitempty"`
	CreatedAt string `dynamodbav:"createdAt"`
	UpdatedAt string `dynamodbav:"updatedAt"`
	PostCount int64  `dynamodbav:"postCount"`
	Version   int64  `dynamodbav:"version"`
	// NameVer counts renames; post items and copies carry the NameVer of
	// the name they hold.
	NameVer   int64    `dynamodbav:"nameVer"`
	Scheduled schedule `dynamodbav:"-"`
}

// UnmarshalDynamoDBAttributeValue decodes the item and its scheduled-post
// entries.
func (it *authorItem) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	type plain authorItem
	var err error
	it.Scheduled, err = decodeScheduled(av, (*plain)(it))
	return err
}

func newAuthorItem(a *Author) authorItem {
	k := authorKey(a.ID)
	return authorItem{
		PK: k.PK, SK: k.SK,
		GSI1PK: authorsPartition, GSI1SK: authorListSortKey(a.CreatedAt, a.ID),
		Type: typeAuthor, ID: a.ID, Name: a.Name, Bio: a.Bio, AvatarURL: a.AvatarURL,
		CreatedAt: keyTime(a.CreatedAt), UpdatedAt: keyTime(a.UpdatedAt),
		PostCount: a.PostCount, Version: a.Version,
	}
}

// author returns the author as a reader sees it at now.
func (it *authorItem) author(now string) *Author {
	a := &Author{
		ID: it.ID, Name: it.Name, Bio: it.Bio, AvatarURL: it.AvatarURL,
		CreatedAt: parseKeyTime(it.CreatedAt), UpdatedAt: parseKeyTime(it.UpdatedAt),
		Version: it.Version,
	}
	a.PostCount, a.ScheduledCount = it.Scheduled.split(it.PostCount, now)
	return a
}

type categoryItem struct {
	PK          string   `dynamodbav:"PK"`
	SK          string   `dynamodbav:"SK"`
	GSI1PK      string   `dynamodbav:"GSI1PK"`
	GSI1SK      string   `dynamodbav:"GSI1SK"`
	Type        string   `dynamodbav:"type"`
	Slug        string   `dynamodbav:"slug"`
	Name        string   `dynamodbav:"name"`
	Description string   `dynamodbav:"description,omitempty"`
	CreatedAt   string   `dynamodbav:"createdAt"`
	UpdatedAt   string   `dynamodbav:"updatedAt"`
	PostCount   int64    `dynamodbav:"postCount"`
	Version     int64    `dynamodbav:"version"`
	NameVer     int64    `dynamodbav:"nameVer"`
	Scheduled   schedule `dynamodbav:"-"`
}

// UnmarshalDynamoDBAttributeValue decodes the item and its scheduled-post
// entries.
func (it *categoryItem) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	type plain categoryItem
	var err error
	it.Scheduled, err = decodeScheduled(av, (*plain)(it))
	return err
}

func newCategoryItem(c *Category) categoryItem {
	k := categoryKey(c.Slug)
	return categoryItem{
		PK: k.PK, SK: k.SK,
		GSI1PK: categoriesPartition, GSI1SK: k.SK,
		Type: typeCategory, Slug: c.Slug, Name: c.Name, Description: c.Description,
		CreatedAt: keyTime(c.CreatedAt), UpdatedAt: keyTime(c.UpdatedAt),
		PostCount: c.PostCount, Version: c.Version,
	}
}

// category returns the category as a reader sees it at now.
func (it *categoryItem) category(now string) *Category {
	c := &Category{
		Slug: it.Slug, Name: it.Name, Description: it.Description,
		CreatedAt: parseKeyTime(it.CreatedAt), UpdatedAt: parseKeyTime(it.UpdatedAt),
		Version: it.Version,
	}
	c.PostCount, _ = it.Scheduled.split(it.PostCount, now)
	return c
}

type catRef struct {
	Slug string `dynamodbav:"slug"`
	Name string `dynamodbav:"name"`
}

// postItem is the post itself and, without Body and ThreadCount, each of its
// denormalized copies. AuthorVer and CatVer record the versions of the
// author and categories whose names the item carries, so a rename never
// overwrites a newer name with an older one.
type postItem struct {
	PK           string           `dynamodbav:"PK"`
	SK           string           `dynamodbav:"SK"`
	GSI1PK       string           `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK       string           `dynamodbav:"GSI1SK,omitempty"`
	Type         string           `dynamodbav:"type"`
	ID           string           `dynamodbav:"id"`
	Slug         string           `dynamodbav:"slug"`
	Title        string           `dynamodbav:"title"`
	Excerpt      string           `dynamodbav:"excerpt,omitempty"`
	Body         string           `dynamodbav:"body,omitempty"`
	Status       string           `dynamodbav:"status"`
	AuthorID     string           `dynamodbav:"authorId"`
	AuthorName   string           `dynamodbav:"authorName"`
	AuthorVer    int64            `dynamodbav:"authorVer"`
	Cats         []catRef         `dynamodbav:"cats,omitempty"`
	CatVer       map[string]int64 `dynamodbav:"catVer,omitempty"`
	CreatedAt    string           `dynamodbav:"createdAt"`
	UpdatedAt    string           `dynamodbav:"updatedAt"`
	PublishedAt  string           `dynamodbav:"publishedAt,omitempty"`
	Version      int64            `dynamodbav:"version"`
	CommentCount int64            `dynamodbav:"commentCount"`
	ThreadCount  int64            `dynamodbav:"threadCount,omitempty"`
}

func (it *postItem) post() *Post {
	p := &Post{
		ID: it.ID, Slug: it.Slug, Title: it.Title, Excerpt: it.Excerpt, Body: it.Body,
		Status: PostStatus(it.Status), AuthorID: it.AuthorID, AuthorName: it.AuthorName,
		CreatedAt: parseKeyTime(it.CreatedAt), UpdatedAt: parseKeyTime(it.UpdatedAt),
		PublishedAt: parseKeyTime(it.PublishedAt), Version: it.Version,
		CommentCount: it.CommentCount, ThreadCount: it.ThreadCount,
		Summary: it.Type != typePost,
	}
	p.Categories = make([]CategoryRef, len(it.Cats))
	for i, c := range it.Cats {
		p.Categories[i] = CategoryRef(c)
	}
	return p
}

// catSlugs returns the slugs of the post's categories, in order.
func (it *postItem) catSlugs() []string {
	out := make([]string, len(it.Cats))
	for i, c := range it.Cats {
		out[i] = c.Slug
	}
	return out
}

func (it *postItem) published() bool { return it != nil && it.Status == string(StatusPublished) }

func (it *postItem) publishedAt() time.Time { return parseKeyTime(it.PublishedAt) }

// withPostKeys returns the post item with its own key and the GSI1 entry
// that lists it: the feed shard when published, its author's drafts when not.
func (it postItem) withPostKeys() postItem {
	k := postKey(it.ID)
	it.PK, it.SK, it.Type = k.PK, k.SK, typePost
	if it.published() {
		it.GSI1PK, it.GSI1SK = feedShard(it.ID), postSortKey(it.publishedAt(), it.ID)
	} else {
		it.GSI1PK, it.GSI1SK = draftPartition(it.AuthorID), draftSortKey(parseKeyTime(it.CreatedAt), it.ID)
	}
	return it
}

// authorCopy returns the author→post copy of a published post.
func (it postItem) authorCopy() postItem {
	k := authorCopyKey(it.AuthorID, it.publishedAt(), it.ID)
	it.PK, it.SK, it.Type, it.GSI1PK, it.GSI1SK = k.PK, k.SK, typeAuthorPost, "", ""
	it.Body, it.ThreadCount = "", 0
	return it
}

// categoryCopy returns the post-in-category copy of a published post.
func (it postItem) categoryCopy(slug string) postItem {
	k := categoryCopyKey(it.ID, slug)
	it.PK, it.SK, it.Type = k.PK, k.SK, typeCategoryPost
	it.GSI1PK, it.GSI1SK = categoryPartition(slug), postSortKey(it.publishedAt(), it.ID)
	it.Body, it.ThreadCount = "", 0
	return it
}

// copyKeys returns the keys of every denormalized copy the post has in
// this state: none for a draft.
func (it *postItem) copyKeys() []key {
	if !it.published() {
		return nil
	}
	keys := []key{authorCopyKey(it.AuthorID, it.publishedAt(), it.ID)}
	for _, c := range it.Cats {
		keys = append(keys, categoryCopyKey(it.ID, c.Slug))
	}
	return keys
}

type commentItem struct {
	PK         string `dynamodbav:"PK"`
	SK         string `dynamodbav:"SK"`
	Type       string `dynamodbav:"type"`
	ID         string `dynamodbav:"id"`
	PostID     string `dynamodbav:"postId"`
	ParentID   string `dynamodbav:"parentId,omitempty"`
	AuthorID   string `dynamodbav:"authorId"`
	Body       string `dynamodbav:"body,omitempty"`
	CreatedAt  string `dynamodbav:"createdAt"`
	Deleted    bool   `dynamodbav:"deleted,omitempty"`
	ReplyCount int64  `dynamodbav:"replyCount,omitempty"`
}

func (it *commentItem) comment() *Comment {
	if it.Deleted {
		it.Body = "" // a tombstone shows nothing of what was said
	}
	return &Comment{
		ID: it.ID, PostID: it.PostID, ParentID: it.ParentID, AuthorID: it.AuthorID,
		Body: it.Body, CreatedAt: parseKeyTime(it.CreatedAt), Deleted: it.Deleted,
		ReplyCount: it.ReplyCount,
	}
}

type slugItem struct {
	PK     string `dynamodbav:"PK"`
	SK     string `dynamodbav:"SK"`
	Type   string `dynamodbav:"type"`
	PostID string `dynamodbav:"postId"`
}

type statsItem struct {
	PostCount     int64    `dynamodbav:"postCount"`
	AuthorCount   int64    `dynamodbav:"authorCount"`
	CategoryCount int64    `dynamodbav:"categoryCount"`
	Scheduled     schedule `dynamodbav:"-"`
}

// UnmarshalDynamoDBAttributeValue decodes the item and its scheduled-post
// entries.
func (it *statsItem) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	type plain statsItem
	var err error
	it.Scheduled, err = decodeScheduled(av, (*plain)(it))
	return err
}

// Stats are blog-wide counts kept in the same transactions that change them.
type Stats struct {
	PostCount     int64 // published posts whose time has come
	AuthorCount   int64
	CategoryCount int64
}

// attrScheduled is the map on an author, a category and the STATS item
// that records the posts they count whose publishedAt was in the future
// when they were written: publishedAt by post id. postCount counts those
// posts from the start; a reader subtracts the entries still in the
// future, so a count changes the moment a post appears, with no write. An
// entry is written and removed in its post's transactions, and entries
// whose time has passed are removed by the next write that schedules a
// post there (see counterChange.action).
const attrScheduled = "scheduled"

// schedule holds an item's scheduled-post entries: publishedAt by post id.
// It is nil when the item has no map yet.
type schedule map[string]string

// scheduledPath is the path of the entry of the post id.
func scheduledPath(id string) expression.NameBuilder {
	return expression.Name(attrScheduled + "." + id)
}

// split returns how many of total posts are visible at now and how many
// are still waiting for their time.
func (s schedule) split(total int64, now string) (visible, waiting int64) {
	for _, at := range s {
		if at > now {
			waiting++
		}
	}
	return total - waiting, waiting
}

// decodeScheduled decodes the item av into out and returns its entries.
func decodeScheduled(av types.AttributeValue, out any) (schedule, error) {
	m, ok := av.(*types.AttributeValueMemberM)
	if !ok {
		return nil, fmt.Errorf("item is a %T, not a map", av)
	}
	if err := attributevalue.UnmarshalMap(m.Value, out); err != nil {
		return nil, err
	}
	v, ok := m.Value[attrScheduled]
	if !ok {
		return nil, nil
	}
	s := schedule{}
	if entries, isMap := v.(*types.AttributeValueMemberM); isMap {
		for id, at := range entries.Value {
			// A table written by earlier versions holds an entry "-" with
			// no time: like any entry whose time has passed it counts
			// nothing, and the next write that schedules a post there
			// removes it.
			if at, isString := at.(*types.AttributeValueMemberS); isString {
				s[id] = at.Value
			}
		}
	}
	return s, nil
}

type idempotencyItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	Hash      string `dynamodbav:"hash"`
	Result    string `dynamodbav:"result"`
	ExpiresAt int64  `dynamodbav:"expiresAt"`
}

func parseKeyTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(keyTimeLayout, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
