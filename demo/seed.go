// Package demo seeds a realistic demo blog: five authors with slugs, eight
// categories, fifty Markdown posts with section headings (so each has a
// table of contents) and one to four tags each, a third of them with a
// cover image, a few written by two or three authors, published over the
// past eighteen months (a few still drafts, a few scheduled), the three
// newest with a cover featured, a tutorial series of five posts, comment
// threads on the newest posts, and a reader with a published comment and
// one waiting for moderation on the newest; an About page (with a page
// under it) and a Contact page, and site settings with menus.
//
// The content is generated from fixed templates with a fixed random seed,
// so every run writes the same blog; only the dates follow the clock.
// Authors and categories have fixed ids ("ada-lovelace", "dynamodb", …).
package demo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/blogql/blog/storage"
)

// Seed writes the demo blog to store through its public write methods,
// with publish dates relative to now. It returns the first error a write
// or read fails with; what was written until then stays, and running Seed
// again completes it.
//
// Seed is idempotent: it reconciles the table with the demo blog instead of
// replaying writes. Authors and categories are looked up by their fixed
// ids, posts by their slugs, comments by writer and text, the series by
// its slug, and only what is missing is created; a draft that should be
// published is published, a post that should be featured is featured, and
// a planned post in no series is added to the demo series. Tags and
// co-authors are written with the post that is created.
// Nothing that exists is changed, so a second run writes nothing, a run
// cut short is completed by the next, and content edited since (a renamed
// author, an unpublished post) is left alone. Deleted demo items come back.
//
// Idempotency keys were the other option. They were not chosen because
// their records expire (a run a day later would duplicate every comment),
// they add an item per write to the table, and they cost a read per write
// on every later run.
//
// Seed is not meant to run concurrently with itself on one table: two runs
// can both find a comment missing and both add it.
func Seed(ctx context.Context, store *storage.Store, now time.Time) error {
	p := newPlan(now)
	if err := seedAuthors(ctx, store, p.authors); err != nil {
		return fmt.Errorf("seed demo authors: %w", err)
	}
	if err := seedCategories(ctx, store, p.categories); err != nil {
		return fmt.Errorf("seed demo categories: %w", err)
	}
	posts := map[string]*storage.Post{} // by slug
	for i := range p.posts {
		post, err := seedPost(ctx, store, &p.posts[i])
		if err != nil {
			return fmt.Errorf("seed demo post %q: %w", p.posts[i].Slug, err)
		}
		posts[p.posts[i].Slug] = post
	}
	if err := seedSeries(ctx, store, p, posts); err != nil {
		return fmt.Errorf("seed demo series %q: %w", p.series.Slug, err)
	}
	if err := seedSite(ctx, store); err != nil {
		return fmt.Errorf("seed demo pages and site: %w", err)
	}
	// The lists' numbered pages now, as the pages worker would a moment
	// later.
	if err := store.SyncAllPages(ctx); err != nil {
		return fmt.Errorf("seed demo page indexes: %w", err)
	}
	return nil
}

func seedAuthors(ctx context.Context, store *storage.Store, want []storage.NewAuthor) error {
	ids := make([]string, len(want))
	for i, a := range want {
		ids[i] = a.ID
	}
	_, errs := store.GetAuthors(ctx, ids)
	for i, a := range want {
		switch {
		case errs[i] == nil:
			continue // there already
		case !errors.Is(errs[i], storage.ErrNotFound):
			return fmt.Errorf("read author %q: %w", a.ID, errs[i])
		}
		if _, err := store.CreateAuthor(ctx, a); err != nil && !errors.Is(err, storage.ErrAlreadyExists) {
			return fmt.Errorf("create author %q: %w", a.ID, err)
		}
	}
	return nil
}

func seedCategories(ctx context.Context, store *storage.Store, want []storage.NewCategory) error {
	slugs := make([]string, len(want))
	for i, c := range want {
		slugs[i] = c.Slug
	}
	_, errs := store.GetCategories(ctx, slugs)
	for i, c := range want {
		switch {
		case errs[i] == nil:
			continue // there already
		case !errors.Is(errs[i], storage.ErrNotFound):
			return fmt.Errorf("read category %q: %w", c.Slug, errs[i])
		}
		if _, err := store.CreateCategory(ctx, c); err != nil && !errors.Is(err, storage.ErrAlreadyExists) {
			return fmt.Errorf("create category %q: %w", c.Slug, err)
		}
	}
	return nil
}

// seedPost makes sure the post exists (found by slug), is published when
// the plan says so and it is still a draft, is featured when the plan
// says so and it is not, and has its comment threads. It returns the post.
func seedPost(ctx context.Context, store *storage.Store, pp *plannedPost) (*storage.Post, error) {
	post, err := store.GetPostBySlug(ctx, pp.Slug)
	if errors.Is(err, storage.ErrNotFound) {
		// A post was written a few days before it went out.
		written := earliest(pp.at, store.Now()).Add(-72 * time.Hour)
		if pp.state == stateDraft {
			written = store.Now().Add(-24 * time.Hour)
		}
		post, err = store.At(fixed(written)).CreatePost(ctx, pp.NewPost)
	}
	if err != nil {
		return nil, err
	}
	if pp.state != stateDraft && post.Status == storage.StatusDraft {
		post, err = store.At(fixed(earliest(pp.at, store.Now()))).Publish(ctx, storage.PublishPost{ID: post.ID, ExpectedVersion: post.Version, At: pp.at})
		if err != nil {
			return nil, err
		}
	}
	if pp.featured && !post.Featured {
		// Featured as it went out.
		post, err = store.At(fixed(earliest(pp.at, store.Now()))).SetFeatured(ctx, storage.FeaturePost{ID: post.ID, Featured: true, ExpectedVersion: post.Version})
		if err != nil {
			return nil, fmt.Errorf("feature: %w", err)
		}
	}
	if len(pp.threads) == 0 || !post.VisibleAt(store.Now()) {
		return post, nil
	}
	if err := seedComments(ctx, store, post, pp.threads); err != nil {
		return nil, err
	}
	// The post's summaries in lists get its comment count now, as the
	// counts worker would a moment later.
	if _, err := store.SyncCounts(ctx, post.ID); err != nil {
		return nil, fmt.Errorf("count comments: %w", err)
	}
	return post, nil
}

// seedSeries makes the series when there is none with its slug and adds
// the planned posts that are in no series, each after the planned posts
// before it, so a run cut short is completed in order. Posts are read by
// slug from posts; one missing there (taken by another post since) is
// left out.
func seedSeries(ctx context.Context, store *storage.Store, p *plan, posts map[string]*storage.Post) error {
	se, err := store.GetSeries(ctx, p.series.Slug)
	if errors.Is(err, storage.ErrNotFound) {
		se, err = store.CreateSeries(ctx, p.series)
	}
	if err != nil {
		return err
	}
	after := 0 // the position of the last planned post in the series
	for _, slug := range p.inSeries {
		post := posts[slug]
		if post == nil {
			continue
		}
		if post.Series == "" {
			_, se, err = store.AddSeriesPost(ctx, storage.SeriesPostChange{Slug: se.Slug, PostID: post.ID, Position: after + 1, ExpectedVersion: se.Version})
			if err != nil {
				return fmt.Errorf("add post %q: %w", slug, err)
			}
		}
		if i := slices.Index(se.Posts, post.ID); i >= 0 {
			after = i + 1
		}
	}
	return nil
}

// seedComments adds the planned comments and replies the post lacks; the
// reader's held comments are looked for in its author's moderation queue.
func seedComments(ctx context.Context, store *storage.Store, post *storage.Post, threads []plannedThread) error {
	type ck struct{ parentID, writer, body string }
	key := func(parentID string, c *storage.Comment) ck {
		if c.ReaderID != "" {
			return ck{parentID, "reader:" + c.ReaderID, c.Body}
		}
		return ck{parentID, c.AuthorID, c.Body}
	}
	have := map[ck]string{} // comment → its id
	if post.CommentCount > 0 || post.ThreadCount > 0 {
		// Tombstones have no body, so a deleted demo comment is added again.
		page := storage.PageArgs{Limit: storage.MaxPageSize}
		for {
			res, err := store.Comments(ctx, post.ID, page)
			if err != nil {
				return fmt.Errorf("list comments: %w", err)
			}
			for _, c := range res.Items {
				if !c.Deleted {
					have[key("", c)] = c.ID
				}
				replies, err := allReplies(ctx, store, c)
				if err != nil {
					return fmt.Errorf("list replies: %w", err)
				}
				for _, r := range replies {
					have[key(c.ID, r)] = r.ID
				}
			}
			if !res.HasNext || len(res.Cursors) == 0 {
				break
			}
			page.After = res.Cursors[len(res.Cursors)-1]
		}
	}
	if slices.ContainsFunc(threads, func(th plannedThread) bool { return th.held }) {
		pending, err := heldOn(ctx, store, post)
		if err != nil {
			return fmt.Errorf("list pending comments: %w", err)
		}
		for _, c := range pending {
			have[key("", c)] = c.ID
		}
	}
	// Comments arrive one after another between publication and now.
	n := 0
	for _, th := range threads {
		n += 1 + len(th.replies)
	}
	step := store.Now().Sub(post.PublishedAt) / time.Duration(n+1)
	at := post.PublishedAt
	add := func(parentID string, c plannedComment) (string, error) {
		at = at.Add(step)
		writer := c.authorID
		if c.reader {
			writer = "reader:" + c.authorID
		}
		if id, ok := have[ck{parentID, writer, c.body}]; ok {
			return id, nil
		}
		in := storage.NewComment{PostID: post.ID, ParentID: parentID, AuthorID: c.authorID, Body: c.body}
		if c.reader {
			in.AuthorID, in.Reader = "", &Reader
			in.Rules = storage.ReaderRules{Hold: c.held, Unchecked: true}
		}
		added, err := store.At(fixed(at)).AddComment(ctx, in)
		if err != nil {
			return "", fmt.Errorf("add comment: %w", err)
		}
		return added.ID, nil
	}
	for _, th := range threads {
		id, err := add("", th.plannedComment)
		if err != nil {
			return err
		}
		for _, r := range th.replies {
			if _, err := add(id, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// allReplies returns every published reply to the comment c.
func allReplies(ctx context.Context, store *storage.Store, c *storage.Comment) ([]*storage.Comment, error) {
	var out []*storage.Comment
	page := storage.PageArgs{Limit: storage.MaxReplyPage}
	for c.ReplyCount > 0 {
		res, err := store.ReplyPage(ctx, c, page)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Items...)
		if !res.HasNext || len(res.Cursors) == 0 {
			break
		}
		page.After = res.Cursors[len(res.Cursors)-1]
	}
	return out, nil
}

// heldOn returns the pending comments on post, from its author's
// moderation queue.
func heldOn(ctx context.Context, store *storage.Store, post *storage.Post) ([]*storage.Comment, error) {
	var out []*storage.Comment
	page := storage.PageArgs{Limit: storage.MaxPageSize}
	for {
		res, err := store.ModerationQueue(ctx, post.AuthorID, page)
		if err != nil {
			return nil, err
		}
		for _, c := range res.Items {
			if c.PostID == post.ID {
				out = append(out, c)
			}
		}
		if !res.HasNext || len(res.Cursors) == 0 {
			return out, nil
		}
		page.After = res.Cursors[len(res.Cursors)-1]
	}
}

func fixed(t time.Time) func() time.Time { return func() time.Time { return t } }

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
