package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Series: an ordered collection of posts. The series item SERIES#<slug>
// holds the order itself, the list of its posts' ids ("posts"), so a
// reorder or a removal is one conditional write of one item (guarded by
// its version) and positions are exact whatever writers run at once. A
// post names its series in its own item ("series"), so a post is in at
// most one: adding or removing a post is a post write (a new version,
// its copies) with the series item's update in the same transaction,
// each guarded by its version. Deleting a post takes it out of its
// series in the deletion's transaction. See doc_layout.go.

// MaxSeriesPosts is how many posts a series holds at most: the list of
// 1,000 ids is about 40 KB of the series item.
const MaxSeriesPosts = 1000

// Series is an ordered collection of posts. Posts are the ids of its
// posts in order, drafts included: readers are shown the public ones.
type Series struct {
	Slug        string
	Title       string
	Description string
	CoverImage  *Image
	OwnerID     string // the author who made it
	Posts       []string
	Version     int64
}

// NewSeries is the input of CreateSeries.
type NewSeries struct {
	Slug, Title, Description string
	CoverImage               *Image
	OwnerID                  string
}

// SeriesPatch is the input of UpdateSeries; nil fields are left as they
// are. ExpectedVersion, when not zero, must equal the stored version.
type SeriesPatch struct {
	Slug             string
	ExpectedVersion  int64
	Title            *string
	Description      *string
	CoverImage       *Image
	RemoveCoverImage bool
}

// SeriesPostChange is the input of AddSeriesPost, MoveSeriesPost and
// RemoveSeriesPost. Position is 1-based (0: the end) for add and move.
// ExpectedVersion, when not zero, must equal the series' version.
type SeriesPostChange struct {
	Slug            string
	PostID          string
	Position        int
	ExpectedVersion int64
}

type seriesItem struct {
	PK          string     `dynamodbav:"PK"`
	SK          string     `dynamodbav:"SK"`
	GSI1PK      string     `dynamodbav:"GSI1PK"`
	GSI1SK      string     `dynamodbav:"GSI1SK"`
	Type        string     `dynamodbav:"type"`
	Slug        string     `dynamodbav:"slug"`
	Title       string     `dynamodbav:"title"`
	Description string     `dynamodbav:"description,omitempty"`
	Cover       *imageItem `dynamodbav:"cover,omitempty"`
	OwnerID     string     `dynamodbav:"ownerId"`
	Posts       []string   `dynamodbav:"posts,omitempty"`
	CreatedAt   string     `dynamodbav:"createdAt"`
	UpdatedAt   string     `dynamodbav:"updatedAt"`
	Version     int64      `dynamodbav:"version"`
}

func (it *seriesItem) series() *Series {
	s := &Series{Slug: it.Slug, Title: it.Title, Description: it.Description, OwnerID: it.OwnerID,
		Posts: slices.Clone(it.Posts), Version: it.Version}
	if it.Cover != nil {
		s.CoverImage = &Image{URL: it.Cover.URL, Alt: it.Cover.Alt, Width: it.Cover.Width, Height: it.Cover.Height}
	}
	return s
}

func validateSeriesFields(title, description *string, cover *Image) error {
	return firstErr(
		validateOpt(title, func(v string) error { return validateLine("title", v, MaxTitleLength) }),
		validateOpt(description, func(v string) error { return validateText("description", v, false, MaxExcerptLength) }),
		validateImage("coverImage", cover),
	)
}

// CreateSeries makes an empty series; a slug another series has is
// ErrAlreadyExists.
func (s *Store) CreateSeries(ctx context.Context, in NewSeries) (*Series, error) {
	if err := firstErr(validateSlug("slug", in.Slug), validateSeriesFields(&in.Title, &in.Description, in.CoverImage), validateID("ownerId", in.OwnerID)); err != nil {
		return nil, err
	}
	if in.CoverImage != nil {
		if err := s.checkLinkHosts([2]string{"coverImage.url", in.CoverImage.URL}); err != nil {
			return nil, err
		}
	}
	now := s.nowKey()
	k := s.ks.Series(in.Slug)
	it := seriesItem{PK: k.PK, SK: k.SK, GSI1PK: s.ks.Partition(keys.SeriesPartition), GSI1SK: k.SK, Type: typeSeries,
		Slug: in.Slug, Title: in.Title, Description: in.Description, OwnerID: in.OwnerID,
		CreatedAt: now, UpdatedAt: now, Version: 1}
	if in.CoverImage != nil {
		it.Cover = &imageItem{URL: in.CoverImage.URL, Alt: in.CoverImage.Alt, Width: in.CoverImage.Width, Height: in.CoverImage.Height}
	}
	t := s.db.NewTxn()
	if err := t.Put(it, ptr(dynamo.CondNotExists()), ErrAlreadyExists); err != nil {
		return nil, err
	}
	if err := s.db.Exec(ctx, t); err != nil {
		return nil, err
	}
	return it.series(), nil
}

// GetSeries returns the series with slug, or ErrNotFound.
func (s *Store) GetSeries(ctx context.Context, slug string) (*Series, error) {
	it, err := s.readSeries(ctx, slug, false)
	if err != nil {
		return nil, err
	}
	return it.series(), nil
}

// GetManySeries returns the series of slugs, in their order, in one
// BatchGetItem (a request for each 100): ErrNotFound for a slug of none.
func (s *Store) GetManySeries(ctx context.Context, slugs []string) ([]*Series, []error) {
	return dynamo.BatchDecode(ctx, s.db, mapKeys(slugs, s.ks.Series), (*seriesItem).series)
}

func (s *Store) readSeries(ctx context.Context, slug string, consistent bool) (*seriesItem, error) {
	var it seriesItem
	if err := s.db.Get(ctx, s.ks.Series(slug), consistent, &it); err != nil {
		return nil, fmt.Errorf("series %q: %w", slug, err)
	}
	return &it, nil
}

// changeSeries reads the series, applies change and puts it back on the
// condition that its version is the one read, reading again when another
// writer came between; a version other than expected is a *ConflictError.
func (s *Store) changeSeries(ctx context.Context, slug string, expected int64, change func(*seriesItem) error) (*Series, error) {
	if err := validateSlug("slug", slug); err != nil {
		return nil, err
	}
	return dynamo.RetryWrite(ctx, func() (*Series, error) {
		before, err := s.readSeries(ctx, slug, true)
		if err != nil {
			return nil, err
		}
		if expected != 0 && before.Version != expected {
			return nil, &ConflictError{CurrentVersion: before.Version}
		}
		after := *before
		after.Posts = slices.Clone(before.Posts)
		if err := change(&after); err != nil {
			return nil, err
		}
		after.Version++
		after.UpdatedAt = s.nowKey()
		t := s.db.NewTxn()
		if err := t.Put(after, ptr(condVersion(before.Version)), dynamo.ErrRetry); err != nil {
			return nil, err
		}
		if err := s.db.Exec(ctx, t); err != nil {
			return nil, err
		}
		return after.series(), nil
	})
}

// UpdateSeries changes a series' title, description or cover.
func (s *Store) UpdateSeries(ctx context.Context, in SeriesPatch) (*Series, error) {
	if err := validateSeriesFields(in.Title, in.Description, in.CoverImage); err != nil {
		return nil, err
	}
	if in.CoverImage != nil && in.RemoveCoverImage {
		return nil, invalid("coverImage", "cannot be set and removed at once")
	}
	if in.CoverImage != nil {
		if err := s.checkLinkHosts([2]string{"coverImage.url", in.CoverImage.URL}); err != nil {
			return nil, err
		}
	}
	return s.changeSeries(ctx, in.Slug, in.ExpectedVersion, func(it *seriesItem) error {
		setOpt(&it.Title, in.Title)
		setOpt(&it.Description, in.Description)
		switch {
		case in.RemoveCoverImage:
			it.Cover = nil
		case in.CoverImage != nil:
			c := in.CoverImage
			it.Cover = &imageItem{URL: c.URL, Alt: c.Alt, Width: c.Width, Height: c.Height}
		}
		return nil
	})
}

// MoveSeriesPost moves a post of the series to Position (1-based; 0 or
// past the end: the end).
func (s *Store) MoveSeriesPost(ctx context.Context, in SeriesPostChange) (*Series, error) {
	if err := firstErr(validateID("postId", in.PostID), validatePosition(in.Position)); err != nil {
		return nil, err
	}
	return s.changeSeries(ctx, in.Slug, in.ExpectedVersion, func(it *seriesItem) error {
		i := slices.Index(it.Posts, in.PostID)
		if i < 0 {
			return invalid("postId", "the post is not in this series")
		}
		it.Posts = insertAt(slices.Delete(it.Posts, i, i+1), in.PostID, in.Position)
		return nil
	})
}

func validatePosition(p int) error {
	if p < 0 || p > MaxSeriesPosts {
		return invalid("position", "must be from 1 to %d (0: the end)", MaxSeriesPosts)
	}
	return nil
}

// insertAt inserts id at the 1-based position pos of list (0 or past
// the end: at the end).
func insertAt(list []string, id string, pos int) []string {
	if pos <= 0 || pos > len(list) {
		return append(list, id)
	}
	return slices.Insert(list, pos-1, id)
}

// AddSeriesPost adds a post to the series at Position. A post already in
// a series, or a series of MaxSeriesPosts posts, is a *ValidationError
// and nothing is written. The post gets a new version.
func (s *Store) AddSeriesPost(ctx context.Context, in SeriesPostChange) (*Post, *Series, error) {
	if err := firstErr(validateSlug("seriesSlug", in.Slug), validateID("postId", in.PostID), validatePosition(in.Position)); err != nil {
		return nil, nil, err
	}
	return s.seriesMembership(ctx, in, true)
}

// RemoveSeriesPost takes a post out of the series; the post gets a new
// version.
func (s *Store) RemoveSeriesPost(ctx context.Context, in SeriesPostChange) (*Post, *Series, error) {
	if err := firstErr(validateSlug("seriesSlug", in.Slug), validateID("postId", in.PostID)); err != nil {
		return nil, nil, err
	}
	return s.seriesMembership(ctx, in, false)
}

func (s *Store) seriesMembership(ctx context.Context, in SeriesPostChange, add bool) (*Post, *Series, error) {
	var written *seriesItem
	p, err := s.changePost(ctx, postChange{op: "seriesPost", id: in.PostID, input: in,
		also: func(ctx context.Context, t *dynamo.Txn, before, after *postItem) error {
			it, err := s.readSeries(ctx, in.Slug, true)
			if err != nil {
				return err
			}
			if in.ExpectedVersion != 0 && it.Version != in.ExpectedVersion {
				return &ConflictError{CurrentVersion: it.Version}
			}
			next := *it
			next.Posts = slices.Clone(it.Posts)
			if add {
				switch {
				case before.Series == in.Slug:
					return invalid("postId", "the post is in this series already")
				case before.Series != "":
					return invalid("postId", "the post is in another series; a post is in at most one")
				case len(it.Posts) >= MaxSeriesPosts:
					return invalid("seriesSlug", "the series holds %d posts, the most it may", MaxSeriesPosts)
				}
				next.Posts = insertAt(next.Posts, in.PostID, in.Position)
			} else {
				i := slices.Index(it.Posts, in.PostID)
				if before.Series != in.Slug || i < 0 {
					return invalid("postId", "the post is not in this series")
				}
				next.Posts = slices.Delete(next.Posts, i, i+1)
			}
			next.Version++
			next.UpdatedAt = s.nowKey()
			written = &next
			return t.Put(next, ptr(condVersion(it.Version)), dynamo.ErrRetry)
		},
	}, func(p *postItem) error {
		if add {
			p.Series = in.Slug
		} else {
			p.Series = ""
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return p, written.series(), nil
}

// leaveSeries adds to a post's deletion the update that takes it out of
// its series, guarded by the series' version; nothing for a post in none.
func (s *Store) leaveSeries(ctx context.Context, t *dynamo.Txn, before, after *postItem) error {
	if after != nil || before.Series == "" {
		return nil
	}
	it, err := s.readSeries(ctx, before.Series, true)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	i := slices.Index(it.Posts, before.ID)
	if i < 0 {
		return nil
	}
	next := *it
	next.Posts = slices.Delete(slices.Clone(it.Posts), i, i+1)
	next.Version++
	next.UpdatedAt = s.nowKey()
	return t.Put(next, ptr(condVersion(it.Version)), dynamo.ErrRetry)
}

// DeleteSeries deletes a series, taking its posts out of it first: one
// transaction for every 50 posts (each post a new version), then the
// series item. A deletion cut short leaves a smaller series; the same call
// sent again finishes it.
func (s *Store) DeleteSeries(ctx context.Context, slug string, expected int64) (*Series, error) {
	if err := validateSlug("slug", slug); err != nil {
		return nil, err
	}
	first := true
	for {
		it, err := s.readSeries(ctx, slug, true)
		if err != nil {
			return nil, err
		}
		if first && expected != 0 && it.Version != expected {
			return nil, &ConflictError{CurrentVersion: it.Version}
		}
		first = false
		if len(it.Posts) == 0 {
			t := s.db.NewTxn()
			cond := condVersion(it.Version)
			if err := t.Delete(s.ks.Series(slug), &cond, dynamo.ErrRetry); err != nil {
				return nil, err
			}
			if err := s.db.Exec(ctx, t); errors.Is(err, dynamo.ErrRetry) {
				continue
			} else if err != nil {
				return nil, err
			}
			return it.series(), nil
		}
		// One post at a time through the post's own write, so every copy
		// of each post stays exact.
		id := it.Posts[0]
		_, _, err = s.RemoveSeriesPost(ctx, SeriesPostChange{Slug: slug, PostID: id})
		if errors.Is(err, ErrNotFound) {
			// A post that is gone: take its id out alone.
			_, err = s.changeSeries(ctx, slug, 0, func(x *seriesItem) error {
				x.Posts = slices.DeleteFunc(x.Posts, func(p string) bool { return p == id })
				return nil
			})
		}
		if err != nil {
			return nil, fmt.Errorf("delete series %q: %w", slug, err)
		}
	}
}

// AllSeries returns every series by slug: one Query of GSI1 partition
// SERIES a page.
func (s *Store) AllSeries(ctx context.Context, p PageArgs) (*Result[*Series], error) {
	return queryPage(ctx, s, listQuery{
		list: "series", index: true, forward: true,
		cond: expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.Partition(keys.SeriesPartition))),
	}, p, (*seriesItem).series)
}

// seriesSlack is how many posts a page of a series reads beyond the page
// and the one that tells whether more follow.
const seriesSlack = 5

// SeriesPosts returns a page of the series' posts in its order: the ids
// of the page read with the posts in one BatchGetItem, those visible
// filtered by keep (readers see public posts only), read on while the
// page is short. Cursors are the posts' places, sealed.
func (s *Store) SeriesPosts(ctx context.Context, se *Series, p PageArgs, keep func(*Post) bool) (*Result[*Post], error) {
	if err := validatePage(p); err != nil {
		return nil, err
	}
	list := "series-posts:" + se.Slug
	field, cursor := "after", p.After
	if p.Backward {
		field, cursor = "before", p.Before
	}
	pos, err := s.position(list, field, cursor)
	if err != nil {
		return nil, err
	}
	ids := slices.Clone(se.Posts)
	if p.Backward {
		slices.Reverse(ids)
	}
	start := 0
	if pos != nil {
		i := slices.Index(ids, pos["id"])
		if len(pos) != 1 || i < 0 {
			return nil, BadCursor(field)
		}
		start = i + 1
	}
	res := &Result[*Post]{}
	more := false
	for start < len(ids) && !more {
		// seriesSlack more than the page, so that a few hidden posts
		// (drafts, scheduled) cost no second read.
		window := ids[start:min(len(ids), start+p.Limit+1+seriesSlack)]
		start += len(window)
		posts, errs := s.GetPosts(ctx, window)
		for i, post := range posts {
			if errs[i] != nil {
				if errors.Is(errs[i], ErrNotFound) {
					continue
				}
				return nil, errs[i]
			}
			if !keep(post) {
				continue
			}
			if len(res.Items) == p.Limit {
				more = true
				break
			}
			res.Items = append(res.Items, post)
			res.Cursors = append(res.Cursors, s.encodeCursor(list, map[string]string{"id": post.ID}))
		}
	}
	return res.from(p, more), nil
}

// SeriesNeighbours returns the posts before and after id in the series
// that keep passes (nil where there is none), looking at up to 5 posts
// each way in one BatchGetItem.
func (s *Store) SeriesNeighbours(ctx context.Context, se *Series, id string, keep func(*Post) bool) (prev, next *Post, err error) {
	i := slices.Index(se.Posts, id)
	if i < 0 {
		return nil, nil, nil
	}
	const reach = 5
	lo, hi := max(0, i-reach), min(len(se.Posts), i+reach+1)
	var window []string
	window = append(window, se.Posts[lo:i]...)
	window = append(window, se.Posts[i+1:hi]...)
	if len(window) == 0 {
		return nil, nil, nil
	}
	posts, errs := s.GetPosts(ctx, window)
	before := i - lo
	for j := before - 1; j >= 0; j-- {
		if errs[j] == nil && keep(posts[j]) {
			prev = posts[j]
			break
		}
	}
	for j := before; j < len(window); j++ {
		if errs[j] == nil && keep(posts[j]) {
			next = posts[j]
			break
		}
	}
	for _, e := range errs {
		if e != nil && !errors.Is(e, ErrNotFound) {
			return nil, nil, e
		}
	}
	return prev, next, nil
}

// seriesEvents translates a write of a series item: series.updated, with
// the series' page and tag.
func (p eventPaths) seriesEvents(r *record, add func(EventType, EventData)) error {
	old, cur, err := decode[seriesItem](r)
	if err != nil {
		return err
	}
	now := cur
	if now == nil {
		now = old
	}
	add(EventSeriesUpdated, EventData{
		Slug:      now.Slug,
		Paths:     []string{p.BySlug(frontend.SeriesPath, now.Slug)},
		CacheTags: []string{frontend.TagSeries(now.Slug)},
	})
	return nil
}

// EventSeriesUpdated: a series created, changed (its title, description,
// cover or the order of its posts) or deleted.
const EventSeriesUpdated EventType = "series.updated"

// seriesPostData adds to a post event's data the series pages and the
// featured list the post was or is on.
func (p eventPaths) seriesPostData(d *EventData, old, now *postItem) {
	for _, it := range []*postItem{old, now} {
		if it == nil {
			continue
		}
		if it.Series != "" {
			d.Paths = append(d.Paths, p.BySlug(frontend.SeriesPath, it.Series))
			d.CacheTags = append(d.CacheTags, frontend.TagSeries(it.Series))
		}
		if it.Featured {
			d.CacheTags = append(d.CacheTags, frontend.TagFeatured)
		}
	}
}

// checkSeries reports a series that lists a post twice, a missing post,
// or a post that names another series, holds more than MaxSeriesPosts,
// or has wrong keys; and a post that names a series which does not list
// it.
func checkSeries(ks keys.Space, series []*seriesItem, posts map[string]*postItem) []string {
	var bad []string
	listed := map[string]string{}
	for _, se := range series {
		k := ks.Series(se.Slug)
		if se.PK != k.PK || se.SK != k.SK || se.GSI1PK != ks.Partition(keys.SeriesPartition) || se.GSI1SK != k.SK {
			bad = append(bad, fmt.Sprintf("series %s has wrong keys", se.Slug))
		}
		if len(se.Posts) > MaxSeriesPosts {
			bad = append(bad, fmt.Sprintf("series %s holds %d posts, more than %d", se.Slug, len(se.Posts), MaxSeriesPosts))
		}
		for _, id := range se.Posts {
			if prev, ok := listed[id]; ok {
				bad = append(bad, fmt.Sprintf("post %s is listed twice, by series %s and %s", id, prev, se.Slug))
			}
			listed[id] = se.Slug
			switch p := posts[id]; {
			case p == nil:
				bad = append(bad, fmt.Sprintf("series %s lists post %s, which does not exist", se.Slug, id))
			case p.Series != se.Slug:
				bad = append(bad, fmt.Sprintf("series %s lists post %s, which names series %q", se.Slug, id, p.Series))
			}
		}
	}
	for id, p := range posts {
		if p.Series != "" && listed[id] != p.Series {
			bad = append(bad, fmt.Sprintf("post %s names series %s, which does not list it", id, p.Series))
		}
	}
	return bad
}
