package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// The background re-render. Bodies are rendered when they are written,
// and each rendered item records the version of its renderer
// (renderVersion: markdown.Options.Version, the code's version and a hash
// of the options). When the renderer changes (a new release, another
// -site-url, highlighting turned on), what is stored is rendered again in
// the background:
//
//   - a server at start claims the renderer: it puts the renderer item
//     RENDERER / RENDERER with its version, not done, unless the item
//     already names that version (ClaimRenderer; the last server started
//     wins, so a rolling deploy ends with the new release's, and a
//     rollback goes back);
//   - Rerender, which one server of the fleet runs under a worker lease
//     (the change feed's "rerender" worker), reads the renderer item and,
//     while it names this server's version and is not done, sweeps: it
//     lists every rendered item, posts and pages, with its version
//     (renderedKinds) and renders again each one of another version, one
//     transaction each, conditional on the item's version as read, so a
//     concurrent edit is never lost (the edit wins, rendered with its own
//     server's renderer, and the sweep reads it again); a sweep that
//     wrote nothing marks the renderer item done; then the sweep walks
//     the other publications (rerender_walk.go), and once that is done
//     too a tick costs one GetItem;
//   - a server whose version is not the renderer item's never sweeps, so
//     servers of two releases during a deploy do not undo each other's
//     work; and when such a server writes a body, it marks the renderer
//     item not done again and counts a mark (noteRendered: every server
//     reads the item every rendererRecheck, WatchRenderer, and writes
//     only while it is outdated), so the sweep runs again and renders that
//     body with the table's renderer; a sweep marks done only if no mark
//     came since it began, and it began indexLag or more after the last
//     (GSI1, where it finds posts and pages, shows a write a moment
//     later).
//
// A post's re-render rewrites its post item (bodyHtml, toc, words,
// minutes, autoExcerpt, renderVersion) and, when the word count, reading
// time or derived excerpt changed, the same attributes of its copies,
// in one TransactWriteItems; it changes no version and no updatedAt, so
// an editor's expected version still holds. A body that no longer renders
// within the limits with the new renderer keeps what it has (and its old
// version) until it is edited. A page's re-render rewrites the page item
// alone (bodyHtml, toc, words, autoExcerpt, renderVersion), in the same
// way. Every server must run with the same rendering flags
// (-heading-id-prefix, -site-url, -highlight-code): two servers that
// differ re-render to their own at each start.

// rendererItem is the renderer the table's bodies are to be rendered with.
type rendererItem struct {
	PK      string `dynamodbav:"PK"`
	SK      string `dynamodbav:"SK"`
	Type    string `dynamodbav:"type"`
	Version string `dynamodbav:"version"`
	// ClaimedAt is when the renderer was claimed (a key time).
	ClaimedAt string `dynamodbav:"claimedAt"`
	// Done is set by the first sweep that found nothing to render again
	// and started settleAfter the claim or later, with no mark since it
	// started.
	Done bool `dynamodbav:"done"`
	// Marks counts the bodies outdated servers wrote (noteRendered);
	// MarkedAt is when the last was counted (a key time).
	Marks    int64  `dynamodbav:"marks,omitempty"`
	MarkedAt string `dynamodbav:"markedAt,omitempty"`
	// The walk of the other publications (rerender_walk.go): WalkDone
	// once a pass found nothing to render again; WalkPass is when the
	// pass under way began (a key time), WalkAfter the directory's cursor
	// after the publications it swept, WalkRendered the bodies it
	// rendered again.
	WalkDone     bool   `dynamodbav:"walkDone,omitempty"`
	WalkPass     string `dynamodbav:"walkPass,omitempty"`
	WalkAfter    string `dynamodbav:"walkAfter,omitempty"`
	WalkRendered int64  `dynamodbav:"walkRendered,omitempty"`
	// Alone is set by a claim of the table's only writer
	// (ClaimRendererAlone): the sweep and the walk need not settle.
	Alone bool `dynamodbav:"alone,omitempty"`
}

// renderedKind is a kind of item whose Markdown the store renders when it
// is written. Posts and pages are listed in renderedKinds; any other
// rendered item adds its kind there, and the sweep needs nothing else.
type renderedKind struct {
	name string
	// each calls fn with the id and renderVersion of every item of the
	// kind, and stops at fn's first error.
	each func(ctx context.Context, fn func(id, version string) error) error
	// rerender renders the item id again with the store's renderer unless
	// it already has its version, and reports whether it wrote.
	rerender func(ctx context.Context, id string) (bool, error)
}

// renderedKinds lists what the background re-render covers.
func (s *Store) renderedKinds() []renderedKind {
	return []renderedKind{
		{name: "posts", each: s.eachPostVersion, rerender: s.rerenderPost},
		{name: "pages", each: s.eachPageVersion, rerender: s.rerenderPage},
	}
}

// rendererRecheck is how long a store trusts what it last read of the
// renderer item when it writes a body.
const rendererRecheck = 30 * time.Second

// settleAfter is how long after a claim a sweep may mark the renderer
// done: by then every server has read the claim again before its writes
// (rendererRecheck), so each body an outdated server writes afterwards
// marks the renderer not done, and those it wrote before are found by a
// sweep.
const settleAfter = 2 * rendererRecheck

// indexLag is how long after a mark a sweep may mark the renderer done:
// the sweep finds posts in GSI1, which shows a write a moment after it
// (well under a second on DynamoDB), so a sweep that started sooner might
// not see the body the mark is for.
const indexLag = 10 * time.Second

// claimed is what a store last read of the renderer item.
type claimed struct {
	mu      sync.Mutex
	version string
}

// WatchRenderer reads the renderer item now and every rendererRecheck
// until ctx ends (one GetItem each), so that noteRendered knows whether
// this store's renderer is the table's. A server runs it; a read that
// fails keeps what was read before.
func (s *Store) WatchRenderer(ctx context.Context) {
	for {
		_ = s.RefreshRenderer(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(rendererRecheck):
		}
	}
}

// RefreshRenderer reads the renderer item for noteRendered; it fails when
// the read fails.
func (s *Store) RefreshRenderer(ctx context.Context) error {
	var r rendererItem
	if err := s.db.Get(ctx, s.ks.Renderer(), false, &r); err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("read the renderer: %w", err)
	}
	s.claimed.mu.Lock()
	defer s.claimed.mu.Unlock()
	s.claimed.version = r.Version
	return nil
}

// noteRendered is called after a write stored a body this store rendered:
// when the table's renderer, as last read (WatchRenderer), is another, it
// marks it not done (one UpdateItem), so that the sweep renders the body
// again with it. It is best effort: a failure leaves the body for the
// next sweep that another write or a claim starts.
func (s *Store) noteRendered(ctx context.Context) {
	s.claimed.mu.Lock()
	v := s.claimed.version
	s.claimed.mu.Unlock()
	if v == "" || v == s.RenderVersion() {
		return
	}
	expr, err := dynamo.BuildExpr(expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name("done"), expression.Value(false)).
			Set(expression.Name("markedAt"), expression.Value(keys.Time(s.Now()))).
			Add(expression.Name("marks"), expression.Value(1))).
		WithCondition(expression.Name("version").Equal(expression.Value(v))))
	if err != nil {
		return
	}
	_, _ = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: dynamo.MustKey(s.ks.Renderer()),
		UpdateExpression:          expr.Update(),
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
}

// RenderVersion returns the version of the store's renderer.
func (s *Store) RenderVersion() string { return s.render.Version() }

// ClaimRenderer makes the store's renderer the one the table's bodies are
// to have, and reports whether it changed that: one PutItem, conditional
// on the renderer item naming another version or none. It fails only
// when the write fails.
func (s *Store) ClaimRenderer(ctx context.Context) (bool, error) {
	return s.claimRenderer(ctx, false)
}

// ClaimRendererAlone claims the renderer as ClaimRenderer does, for a
// store that is the only writer of its table (the embedded engine's
// server: its data file is locked to one process). No other server can
// write a body with another renderer meanwhile, so the sweep marks the
// renderer done, and the walk its pass, as soon as they find nothing to
// render again, without waiting settleAfter and indexLag: a server that
// starts idle stops writing at its first sweep.
func (s *Store) ClaimRendererAlone(ctx context.Context) (bool, error) {
	return s.claimRenderer(ctx, true)
}

func (s *Store) claimRenderer(ctx context.Context, alone bool) (bool, error) {
	v := s.RenderVersion()
	k := s.ks.Renderer()
	it := rendererItem{PK: k.PK, SK: k.SK, Type: typeRenderer, Version: v, ClaimedAt: keys.Time(s.Now()), Alone: alone}
	wrote, err := s.db.PutIf(ctx, it, dynamo.CondNotExists().Or(expression.Name("version").NotEqual(expression.Value(v))))
	if err != nil {
		return false, fmt.Errorf("claim renderer %s: %w", v, err)
	}
	return wrote, nil
}

// Rerendered is what one call of Rerender did.
type Rerendered struct {
	// Swept is whether it swept the Store's own publication (the
	// renderer item named this store's version and was not done).
	Swept bool
	// Rendered counts the items rendered again; Stale those of another
	// version it found (a body that no longer renders within the limits
	// stays stale).
	Rendered, Stale int
	// Done is whether this sweep marked the renderer done.
	Done bool
	// Publications counts the other publications a step of the walk
	// swept (rerender_walk.go); WalkDone is whether it marked the walk
	// done.
	Publications int
	WalkDone     bool
}

// Rerender sweeps once when the renderer item names this store's renderer
// and is not done (see the top of this file): it renders again every
// rendered item of another version, and marks the renderer done when it
// found none to write and started settleAfter the claim or later, and
// indexLag after the last mark or later. Otherwise it costs one GetItem. It returns what it
// did so far and the first error of a read or a write; the next call goes
// on.
func (s *Store) Rerender(ctx context.Context) (Rerendered, error) {
	var out Rerendered
	var r rendererItem
	switch err := s.db.Get(ctx, s.ks.Renderer(), true, &r); {
	case errors.Is(err, ErrNotFound):
		return out, nil
	case err != nil:
		return out, fmt.Errorf("rerender: %w", err)
	}
	v := s.RenderVersion()
	switch {
	case r.Version != v || r.Done && r.WalkDone:
		return out, nil
	case r.Done:
		return s.walkStep(ctx, &r)
	}
	out.Swept = true
	now := s.Now()
	settled := r.Alone || !now.Before(keys.ParseTime(r.ClaimedAt).Add(settleAfter)) &&
		(r.MarkedAt == "" || !now.Before(keys.ParseTime(r.MarkedAt).Add(indexLag)))
	if err := s.sweepStale(ctx, &out); err != nil {
		return out, err
	}
	if out.Rendered > 0 || !settled {
		return out, nil
	}
	_, err := s.db.UpdateItem(ctx, s.doneInput(v, r.Marks))
	var failed *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &failed):
		// Another renderer was claimed meanwhile (its sweep goes on), or
		// an outdated server wrote a body (the next sweep renders it).
	case err != nil:
		return out, fmt.Errorf("rerender: mark done: %w", err)
	default:
		out.Done = true
	}
	if out.Done && r.Alone {
		// Nothing to wait for: the walk's first step comes at once.
		r.Done = true
		walk, err := s.walkStep(ctx, &r)
		out.Rendered += walk.Rendered
		out.Stale += walk.Stale
		out.Publications, out.WalkDone = walk.Publications, walk.WalkDone
		return out, err
	}
	return out, nil
}

// sweepStale renders again every rendered item of the Store's
// publication whose version is not the store's renderer's, and counts in
// out those it found and those it rendered.
func (s *Store) sweepStale(ctx context.Context, out *Rerendered) error {
	v := s.RenderVersion()
	for _, kind := range s.renderedKinds() {
		err := kind.each(ctx, func(id, version string) error {
			if version == v {
				return nil
			}
			out.Stale++
			did, err := kind.rerender(ctx, id)
			if did {
				out.Rendered++
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("rerender %s in %s: %w", kind.name, s.ks.ID(), err)
		}
	}
	return nil
}

// doneInput marks the renderer item done, on the condition that it names
// the renderer v and has the marks it had when the sweep began.
func (s *Store) doneInput(v string, marks int64) *dynamodb.UpdateItemInput {
	same := expression.Name("marks").Equal(expression.Value(marks))
	if marks == 0 {
		same = expression.Name("marks").AttributeNotExists()
	}
	expr, err := dynamo.BuildExpr(expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name("done"), expression.Value(true))).
		WithCondition(expression.Name("version").Equal(expression.Value(v)).And(same)))
	if err != nil {
		panic(err) // a constant expression
	}
	return &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: dynamo.MustKey(s.ks.Renderer()),
		UpdateExpression:          expr.Update(),
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	}
}

// eachPostVersion lists every post with its renderVersion: the published
// and scheduled ones from the feed's partition in GSI1 (one Query each, and
// one more for every 1 MB), the drafts from each author's drafts in GSI1
// (the authors from GSI1 AUTHORS, then one Query an author).
func (s *Store) eachPostVersion(ctx context.Context, fn func(id, version string) error) error {
	for _, part := range s.ks.FeedPartitions() {
		if err := s.eachVersion(ctx, part, fn); err != nil {
			return err
		}
	}
	var authors []string
	err := s.eachVersion(ctx, s.ks.Partition(keys.AuthorsPartition), func(id, _ string) error {
		authors = append(authors, id)
		return nil
	})
	if err != nil {
		return err
	}
	for _, a := range authors {
		if err := s.eachVersion(ctx, s.ks.DraftPartition(a), fn); err != nil {
			return err
		}
	}
	return nil
}

// eachVersion calls fn with the id and renderVersion of every item of the
// GSI1 partition pk.
func (s *Store) eachVersion(ctx context.Context, pk string, fn func(id, version string) error) error {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().
		WithKeyCondition(expression.Key(keys.AttrGSI1PK).Equal(expression.Value(pk))).
		WithProjection(expression.NamesList(expression.Name("id"), expression.Name("renderVersion"))))
	if err != nil {
		return err
	}
	pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String(keys.IndexGSI1),
		KeyConditionExpression:    expr.KeyCondition(),
		ProjectionExpression:      expr.Projection(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list %s: %w", pk, err)
		}
		var rows []struct {
			ID      string `dynamodbav:"id"`
			Version string `dynamodbav:"renderVersion"`
		}
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &rows); err != nil {
			return fmt.Errorf("list %s: %w", pk, err)
		}
		for _, r := range rows {
			if err := fn(r.ID, r.Version); err != nil {
				return err
			}
		}
	}
	return nil
}

// rerenderPost renders the post id again (see the top of this file). A
// post gone meanwhile, already of this version, or whose body no longer
// renders within the limits is left as it is.
func (s *Store) rerenderPost(ctx context.Context, id string) (bool, error) {
	return dynamo.RetryWrite(ctx, func() (bool, error) {
		p, err := s.readPostParts(ctx, id, true)
		switch {
		case errors.Is(err, ErrNotFound):
			return false, nil
		case err != nil:
			return false, err
		}
		if p.RenderVersion == s.RenderVersion() && p.hasBody {
			return false, nil
		}
		d := postItem{ID: id, Body: p.Body}
		switch err := s.deriveBody(ctx, &d, false); {
		case errors.Is(err, ErrInvalidInput):
			return false, nil
		case err != nil:
			return false, err
		}
		full := derivedUpdate(&d, true)
		cond := condVersion(p.Version)
		t := s.db.NewTxn()
		// The post item (its summary and the sum of its HTML) on the
		// condition that it is as read, and the body item, which only
		// writes of that post item change.
		errs := []error{t.Update(s.ks.Post(id), full, &cond, dynamo.ErrRetry), t.Put(d.bodyItem(s.ks), nil, nil)}
		if d.Words != p.Words || d.Minutes != p.Minutes || d.AutoExcerpt != p.AutoExcerpt {
			summary := derivedUpdate(&d, false)
			for _, k := range p.copyKeys(s.ks) {
				errs = append(errs, t.Update(k, summary, ptr(dynamo.CondExists()), dynamo.ErrRetry))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return false, err
		}
		if err := s.db.Exec(ctx, t); err != nil {
			return false, err
		}
		return true, nil
	})
}

// derivedUpdate sets what derive derived in d, as the item's omitempty
// attributes hold it (a zero value removed): on the post item (post) all
// of it, on a copy what a summary has.
func derivedUpdate(d *postItem, post bool) expression.UpdateBuilder {
	var u expression.UpdateBuilder
	set := func(name string, v any, zero bool) {
		if zero {
			u = u.Remove(expression.Name(name))
		} else {
			u = u.Set(expression.Name(name), expression.Value(v))
		}
	}
	set("words", d.Words, d.Words == 0)
	set("minutes", d.Minutes, d.Minutes == 0)
	set("autoExcerpt", d.AutoExcerpt, d.AutoExcerpt == "")
	if post {
		set("htmlSum", d.htmlSum(), d.HTML == "")
		set("renderVersion", d.RenderVersion, false)
		// A post item of layout 3 held its body: the body item does now.
		u = u.Remove(expression.Name("body")).Remove(expression.Name("bodyHtml")).Remove(expression.Name("toc"))
		if d.Body != "" {
			u = u.Set(expression.Name("bodySum"), expression.Value(d.bodySum()))
		}
	}
	return u
}

// eachPageVersion lists every page with its renderVersion: the published
// ones from GSI1 PAGES, the drafts from GSI1 PAGEDRAFTS (one Query each,
// and one more for every 1 MB).
func (s *Store) eachPageVersion(ctx context.Context, fn func(id, version string) error) error {
	for _, pk := range []string{s.ks.Partition(keys.PagesPartition), s.ks.Partition(keys.PageDraftsPartition)} {
		if err := s.eachVersion(ctx, pk, fn); err != nil {
			return err
		}
	}
	return nil
}

// rerenderPage renders the page id again (see the top of this file): one
// transaction that updates the page's derived attributes, conditional on
// its version and locale as read (a link may store a locale without a new
// version), and puts its locale copy as rendered (pagelocales.go), with
// no new version and no new updatedAt. A page gone
// meanwhile, already of this version, or whose body no longer renders
// within the limits is left as it is. A published page whose HTML
// changes is a page.published.edited on the change feed (pageEvents).
func (s *Store) rerenderPage(ctx context.Context, id string) (bool, error) {
	return dynamo.RetryWrite(ctx, func() (bool, error) {
		var p pageItem
		switch err := s.db.Get(ctx, s.ks.Page(id), true, &p); {
		case errors.Is(err, ErrNotFound):
			return false, nil
		case err != nil:
			return false, err
		}
		if p.RenderVersion == s.RenderVersion() {
			return false, nil
		}
		var d pageItem
		switch err := s.setPageBody(ctx, &d, p.Body, false); {
		case errors.Is(err, ErrInvalidInput):
			return false, nil
		case err != nil:
			return false, err
		}
		t := s.db.NewTxn()
		after := p
		after.HTML, after.TOC, after.Words, after.AutoExcerpt, after.RenderVersion = d.HTML, d.TOC, d.Words, d.AutoExcerpt, d.RenderVersion
		if err := errors.Join(t.Update(s.ks.Page(id), pageDerivedUpdate(&d), ptr(condVersion(p.Version).And(sameOrAbsent("locale", p.Locale))), dynamo.ErrRetry),
			writeLocalePageCopy(s.ks, t, &p, &after)); err != nil {
			return false, err
		}
		if err := s.db.Exec(ctx, t); err != nil {
			return false, err
		}
		return true, nil
	})
}

// pageDerivedUpdate sets what setBody derived in d, as the page item's
// omitempty attributes hold it (a zero value removed).
func pageDerivedUpdate(d *pageItem) expression.UpdateBuilder {
	var u expression.UpdateBuilder
	set := func(name string, v any, zero bool) {
		if zero {
			u = u.Remove(expression.Name(name))
		} else {
			u = u.Set(expression.Name(name), expression.Value(v))
		}
	}
	set("bodyHtml", d.HTML, d.HTML == "")
	set("toc", d.TOC, len(d.TOC) == 0)
	set("words", d.Words, d.Words == 0)
	set("autoExcerpt", d.AutoExcerpt, d.AutoExcerpt == "")
	set("renderVersion", d.RenderVersion, false)
	return u
}
