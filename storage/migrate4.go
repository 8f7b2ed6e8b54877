package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Layout 4 (postparts.go, doc_layout.go): a post's body and what is
// rendered from it live in its body item, its exact comment counts in its
// count item, and the feed is one GSI1 partition, FEED. Layout 3 kept the
// body and the counts on the post item and spread the feed over FEED#0..3.

// splitPosts brings every post of a table of layout 3 (or of a layout 1
// or 2 table migrated by this version's writes) to layout 4 and counts
// them in m.Split. The posts are listed by Queries of GSI1: the feed's
// partitions, old and new (published and scheduled posts), and each
// author's drafts (the authors from AUTHORS); each is moved by splitPost.
func (s *Store) splitPosts(ctx context.Context, m *Migration) error {
	var ids []string
	collect := func(id, _ string) error {
		ids = append(ids, id)
		return nil
	}
	for _, part := range append(keys.LegacyFeedPartitions(), keys.FeedPartitions...) {
		if err := s.eachVersion(ctx, part, collect); err != nil {
			return fmt.Errorf("migrate: list posts: %w", err)
		}
	}
	authors, err := s.partitionIDs(ctx, keys.AuthorsPartition, "id")
	if err != nil {
		return fmt.Errorf("migrate: list authors: %w", err)
	}
	for _, a := range authors {
		if err := s.eachVersion(ctx, keys.DraftPartition(a), collect); err != nil {
			return fmt.Errorf("migrate: list drafts: %w", err)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	n := make(chan struct{}, len(ids))
	err = eachLimited(ctx, ids, func(ctx context.Context, id string) error {
		did, err := s.splitPost(ctx, id)
		if did {
			n <- struct{}{}
		}
		return err
	})
	m.Split += len(n)
	return err
}

// splitPost moves the post id to layout 4 when it is not there yet, in one
// TransactWriteItems: it puts the body item from the post item's body, its
// HTML and table of contents (rendered now, and the post item's words,
// minutes and excerpt with them, for a post of layout 1 or 2 that never
// was), and the count item from its counts, status,
// publishedAt and author (each with attribute_not_exists), and updates
// the post item (the body's attributes removed, their sums set, its GSI1
// entry moved to FEED when published), on the condition that the post
// item is as read (version and counts). It changes no version and no
// updatedAt, so it is no event. It reports whether it wrote; a post gone
// meanwhile is none of its business, and a write that meets a change made
// meanwhile reads again.
func (s *Store) splitPost(ctx context.Context, id string) (bool, error) {
	return dynamo.RetryWrite(ctx, func() (bool, error) {
		found, err := s.db.BatchGet(ctx, keys.PostParts(id), true)
		if err != nil {
			return false, err
		}
		raw, ok := found[keys.Post(id)]
		if !ok {
			return false, nil
		}
		p, err := decodePost(found, id)
		if err != nil {
			return false, err
		}
		_, hasBodyAttr := raw["body"]
		_, hasHTMLAttr := raw["bodyHtml"]
		_, hasTOCAttr := raw["toc"]
		onItem := hasBodyAttr || hasHTMLAttr || hasTOCAttr
		wantGSI1 := p.withPostKeys().GSI1PK
		if !onItem && p.hasBody && p.counts != nil && p.GSI1PK == wantGSI1 {
			return false, nil
		}
		var legacy postItem // the post item alone, as layout 3 holds it
		if err := dynamo.DecodeFound(found, keys.Post(id), &legacy); err != nil {
			return false, fmt.Errorf("decode post %q: %w", id, err)
		}
		rendered := legacy.HTML == "" && legacy.Body != ""
		if rendered {
			// A post of layout 1 or 2, its body never rendered: rendered
			// now, as Migrate renders it, so that the writes after it,
			// which leave the body unread, find the post whole.
			if err := legacy.derive(ctx, s.render); err != nil {
				if !errors.Is(err, ErrInvalidInput) {
					return false, err
				}
				rendered = false
			}
		}
		t := s.db.NewTxn()
		var errs []error
		if !p.hasBody {
			b := legacy.bodyItem()
			b.RenderVersion = legacy.RenderVersion
			errs = append(errs, t.Put(b, ptr(dynamo.CondNotExists()), dynamo.ErrRetry))
		}
		if p.counts == nil {
			errs = append(errs, t.Put(legacy.countItem(legacy.CommentCount, legacy.ThreadCount), ptr(dynamo.CondNotExists()), dynamo.ErrRetry))
		}
		upd := expression.Remove(expression.Name("body")).Remove(expression.Name("bodyHtml")).Remove(expression.Name("toc"))
		if onItem {
			if sum := legacy.bodySum(); sum != "" {
				upd = upd.Set(expression.Name("bodySum"), expression.Value(sum))
			}
			if sum := legacy.htmlSum(); sum != "" {
				upd = upd.Set(expression.Name("htmlSum"), expression.Value(sum))
			}
		}
		if rendered {
			upd = upd.Set(expression.Name("words"), expression.Value(legacy.Words)).
				Set(expression.Name("minutes"), expression.Value(legacy.Minutes)).
				Set(expression.Name("renderVersion"), expression.Value(legacy.RenderVersion))
			if legacy.AutoExcerpt != "" {
				upd = upd.Set(expression.Name("autoExcerpt"), expression.Value(legacy.AutoExcerpt))
			}
		}
		if p.GSI1PK != wantGSI1 {
			upd = upd.Set(expression.Name(keys.AttrGSI1PK), expression.Value(wantGSI1))
		}
		threads := expression.Name("threadCount").Equal(expression.Value(legacy.ThreadCount))
		if legacy.ThreadCount == 0 {
			threads = expression.Name("threadCount").AttributeNotExists().Or(threads)
		}
		cond := condVersion(legacy.Version).
			And(expression.Name("commentCount").Equal(expression.Value(legacy.CommentCount))).
			And(threads)
		errs = append(errs, t.Update(keys.Post(id), upd, &cond, dynamo.ErrRetry))
		if err := errors.Join(errs...); err != nil {
			return false, err
		}
		if err := s.db.Exec(ctx, t); err != nil {
			return false, err
		}
		return true, nil
	})
}
