package migrations

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// Layout 3 to layout 4 (see Run): a post's body and what is rendered from
// it move to its body item, its exact comment counts to its count item,
// and the feed to one GSI1 partition, FEED. Layout 3 kept the body and the
// counts on the post item and spread the feed over FEED#0..3. This step is
// frozen: the items it reads and writes and their keys are its own copies
// below, of what the writes of layout 4 did when it shipped.

// The keys, item types and partitions of layout 4 that this step uses.
const (
	v4PostPrefix   = "POST#"
	v4DraftPrefix  = "DRAFT#"
	v4FeedPrefix   = "FEED#"
	v4Feed         = "FEED"
	v4Authors      = "AUTHORS"
	v4BodySuffix   = "#TEXT"
	v4CountSuffix  = "#COUNT"
	v4TypePostBody = "postBody"
	v4TypeCount    = "postCount"
	v4Published    = "PUBLISHED"
	// v4LegacyFeedShards is how many partitions the feed had in layout 3.
	v4LegacyFeedShards = 4
)

func v4PostKey(id string) key { return key{PK: v4PostPrefix + id, SK: v4PostPrefix + id} }
func v4BodyKey(id string) key {
	return key{PK: v4PostPrefix + id, SK: v4PostPrefix + id + v4BodySuffix}
}
func v4CountKey(id string) key {
	return key{PK: v4PostPrefix + id, SK: v4PostPrefix + id + v4CountSuffix}
}

// v4Post is what this step reads of a post item, of layout 3 or 4.
type v4Post struct {
	GSI1PK        string     `dynamodbav:"GSI1PK,omitempty"`
	ID            string     `dynamodbav:"id"`
	Body          string     `dynamodbav:"body,omitempty"`
	HTML          string     `dynamodbav:"bodyHtml,omitempty"`
	TOC           []tocEntry `dynamodbav:"toc,omitempty"`
	RenderVersion string     `dynamodbav:"renderVersion,omitempty"`
	Status        string     `dynamodbav:"status"`
	AuthorID      string     `dynamodbav:"authorId"`
	PublishedAt   string     `dynamodbav:"publishedAt,omitempty"`
	Version       int64      `dynamodbav:"version"`
	CommentCount  int64      `dynamodbav:"commentCount"`
	ThreadCount   int64      `dynamodbav:"threadCount,omitempty"`
	BodySum       string     `dynamodbav:"bodySum,omitempty"`
	HTMLSum       string     `dynamodbav:"htmlSum,omitempty"`
}

// v4Body is a post's body item.
type v4Body struct {
	PK            string     `dynamodbav:"PK"`
	SK            string     `dynamodbav:"SK"`
	Type          string     `dynamodbav:"type"`
	ID            string     `dynamodbav:"id"`
	Body          string     `dynamodbav:"body,omitempty"`
	HTML          string     `dynamodbav:"bodyHtml,omitempty"`
	TOC           []tocEntry `dynamodbav:"toc,omitempty"`
	RenderVersion string     `dynamodbav:"renderVersion,omitempty"`
}

// v4Count is a post's count item.
type v4Count struct {
	PK           string `dynamodbav:"PK"`
	SK           string `dynamodbav:"SK"`
	Type         string `dynamodbav:"type"`
	ID           string `dynamodbav:"id"`
	AuthorID     string `dynamodbav:"authorId"`
	Status       string `dynamodbav:"status"`
	PublishedAt  string `dynamodbav:"publishedAt,omitempty"`
	CommentCount int64  `dynamodbav:"commentCount"`
	ThreadCount  int64  `dynamodbav:"threadCount"`
}

// v4FeedPartition returns the GSI1 partition that lists the post p in
// layout 4: the feed when published, its author's drafts when not.
func v4FeedPartition(p *v4Post) string {
	if p.Status == v4Published {
		return v4Feed
	}
	return v4DraftPrefix + p.AuthorID
}

// v4Sum returns a short sum of s, as the post item keeps of its body and
// of its HTML.
func v4Sum(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return strconv.FormatUint(h.Sum64(), 36)
}

// v4 brings every post of a table of layout 3 (or of a layout 1 or 2
// table brought to 3 by the steps before) to layout 4 and counts them in
// m.Split. The posts are listed by Queries of GSI1: the feed's
// partitions, old and new (published and scheduled posts), and each
// author's drafts (the authors from AUTHORS); each is moved by SplitPost.
func (e *Env) v4(ctx context.Context, m *Result) error {
	var ids []string
	var parts []string
	for i := range v4LegacyFeedShards {
		parts = append(parts, fmt.Sprintf("%s%d", v4FeedPrefix, i))
	}
	for _, part := range append(parts, v4Feed) {
		got, err := e.partitionIDs(ctx, part, "id")
		if err != nil {
			return fmt.Errorf("migrate: list posts: list %s: %w", part, err)
		}
		ids = append(ids, got...)
	}
	authors, err := e.partitionIDs(ctx, v4Authors, "id")
	if err != nil {
		return fmt.Errorf("migrate: list authors: %w", err)
	}
	for _, a := range authors {
		got, err := e.partitionIDs(ctx, v4DraftPrefix+a, "id")
		if err != nil {
			return fmt.Errorf("migrate: list drafts: list %s: %w", v4DraftPrefix+a, err)
		}
		ids = append(ids, got...)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	n := make(chan struct{}, len(ids))
	err = eachLimited(ctx, ids, func(ctx context.Context, id string) error {
		did, err := SplitPost(ctx, e, id)
		if did {
			n <- struct{}{}
		}
		return err
	})
	m.Split += len(n)
	return err
}

// SplitPost moves the post id to layout 4 when it is not there yet, in one
// TransactWriteItems: it puts the body item from the post item's body, its
// HTML and table of contents (rendered now, and the post item's words,
// minutes and excerpt with them, for a post of layout 1 or 2 that never
// was), and the count item from its counts, status, publishedAt and
// author (each with attribute_not_exists), and updates the post item (the
// body's attributes removed, their sums set, its GSI1 entry moved to FEED
// when published), on the condition that the post item is as read
// (version and counts). It changes no version and no updatedAt, so it is
// no event. It reports whether it wrote; a post gone meanwhile is none of
// its business, and a write that meets a change made meanwhile reads
// again. Package storage calls it too, when a comment's write meets a post
// that a migration beside it has not reached yet.
func SplitPost(ctx context.Context, e *Env, id string) (bool, error) {
	return dynamo.RetryWrite(ctx, func() (bool, error) {
		found, err := e.DB.BatchGet(ctx, []key{v4PostKey(id), v4CountKey(id), v4BodyKey(id)}, true)
		if err != nil {
			return false, err
		}
		raw, ok := found[v4PostKey(id)]
		if !ok {
			return false, nil
		}
		var p v4Post
		if err := attributevalue.UnmarshalMap(raw, &p); err != nil {
			return false, fmt.Errorf("decode post %q: %w", id, err)
		}
		_, hasBody := found[v4BodyKey(id)]
		_, hasCounts := found[v4CountKey(id)]
		_, hasBodyAttr := raw["body"]
		_, hasHTMLAttr := raw["bodyHtml"]
		_, hasTOCAttr := raw["toc"]
		onItem := hasBodyAttr || hasHTMLAttr || hasTOCAttr
		wantGSI1 := v4FeedPartition(&p)
		if !onItem && hasBody && hasCounts && p.GSI1PK == wantGSI1 {
			return false, nil
		}
		var d *derived
		if p.HTML == "" && p.Body != "" {
			// A post of layout 1 or 2, its body never rendered: rendered
			// now, as the migration renders it, so that the writes after
			// it, which leave the body unread, find the post whole.
			switch d, err = e.derive(ctx, p.Body); {
			case errors.Is(err, errUnrendered):
				d = nil
			case err != nil:
				return false, err
			default:
				p.HTML, p.TOC, p.RenderVersion = d.HTML, d.TOC, d.RenderVersion
			}
		}
		t := e.DB.NewTxn()
		var errs []error
		if !hasBody {
			k := v4BodyKey(id)
			b := v4Body{PK: k.PK, SK: k.SK, Type: v4TypePostBody, ID: id, Body: p.Body, HTML: p.HTML, TOC: p.TOC, RenderVersion: p.RenderVersion}
			errs = append(errs, t.Put(b, ptr(dynamo.CondNotExists()), dynamo.ErrRetry))
		}
		if !hasCounts {
			k := v4CountKey(id)
			c := v4Count{PK: k.PK, SK: k.SK, Type: v4TypeCount, ID: id, AuthorID: p.AuthorID, Status: p.Status,
				PublishedAt: p.PublishedAt, CommentCount: p.CommentCount, ThreadCount: p.ThreadCount}
			errs = append(errs, t.Put(c, ptr(dynamo.CondNotExists()), dynamo.ErrRetry))
		}
		upd := expression.Remove(expression.Name("body")).Remove(expression.Name("bodyHtml")).Remove(expression.Name("toc"))
		if onItem {
			if sum := sumOr(p.Body, p.BodySum); sum != "" {
				upd = upd.Set(expression.Name("bodySum"), expression.Value(sum))
			}
			if sum := sumOr(p.HTML, p.HTMLSum); sum != "" {
				upd = upd.Set(expression.Name("htmlSum"), expression.Value(sum))
			}
		}
		if d != nil {
			upd = upd.Set(expression.Name("words"), expression.Value(d.Words)).
				Set(expression.Name("minutes"), expression.Value(d.Minutes)).
				Set(expression.Name("renderVersion"), expression.Value(d.RenderVersion))
			if d.AutoExcerpt != "" {
				upd = upd.Set(expression.Name("autoExcerpt"), expression.Value(d.AutoExcerpt))
			}
		}
		if p.GSI1PK != wantGSI1 {
			upd = upd.Set(expression.Name("GSI1PK"), expression.Value(wantGSI1))
		}
		threads := expression.Name("threadCount").Equal(expression.Value(p.ThreadCount))
		if p.ThreadCount == 0 {
			threads = expression.Name("threadCount").AttributeNotExists().Or(threads)
		}
		cond := expression.Name("version").Equal(expression.Value(p.Version)).
			And(expression.Name("commentCount").Equal(expression.Value(p.CommentCount))).
			And(threads)
		errs = append(errs, t.Update(v4PostKey(id), upd, &cond, dynamo.ErrRetry))
		if err := errors.Join(errs...); err != nil {
			return false, err
		}
		if err := e.DB.Exec(ctx, t); err != nil {
			return false, err
		}
		return true, nil
	})
}

// sumOr returns the sum of text when the post item holds it, else the sum
// it keeps.
func sumOr(text, sum string) string {
	if text != "" {
		return v4Sum(text)
	}
	return sum
}
