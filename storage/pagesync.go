package storage

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blogql/blog/storage/internal/keys"
)

// The page indexes of numbered pages (numbered.go) follow the lists
// through the change feed: the "pages" worker reads post events and
// rebuilds the index of each list they name (the feed and its months,
// the categories, tags and authors the post had and has), at most once
// a PageSyncEvery a list.

// PageSyncEvery is how often at most the pages worker rebuilds one
// list's page index, however many posts are published in it.
const PageSyncEvery = time.Second

// PageSync is the pages worker's state: the lists waiting for their
// rebuild. Its methods are safe for concurrent use.
type PageSync struct {
	store *Store
	// OnSync, when set, is called after each rebuild with what it did or
	// the error it met.
	OnSync func(list string, did PagesSynced, err error)

	mu sync.Mutex
	// pending holds each list to rebuild, with the position of the first
	// event naming it read since its last rebuild began and the earliest
	// time of publication those events changed (zero: unknown).
	pending map[string]pendingList
	// last is when each list's last rebuild began.
	last map[string]time.Time
	// syncing serializes the rebuilds of Events and Tick.
	syncing sync.Mutex
}

// NewPageSync returns the pages worker's state, with nothing pending.
func (s *Store) NewPageSync() *PageSync {
	return &PageSync{store: s, pending: map[string]pendingList{}, last: map[string]time.Time{}}
}

// pendingList is a list waiting for its rebuild: the position of its
// first event since its last rebuild began, and from where it changed.
type pendingList struct {
	pos  int64
	from time.Time
	// expect is, by post id, what the list must show of the post for a
	// read of it to have the post's last write: GSI1 follows the table
	// a moment after the change feed does.
	expect map[string]expected
	// tries counts the rebuilds that found the list behind.
	tries int
}

// expected is what a list must show of a post: its key (present) or
// not (absent).
type expected struct {
	present string
	absent  []string
}

// merge returns p with q, which came later, merged in.
func (p pendingList) merge(q pendingList) pendingList {
	p.pos = min(p.pos, q.pos)
	if q.from.IsZero() || q.from.Before(p.from) {
		p.from = q.from
	}
	if p.expect == nil {
		p.expect = map[string]expected{}
	}
	maps.Copy(p.expect, q.expect)
	return p
}

// shows reports whether the sort keys sks of a list show every
// expectation of p.
func (p pendingList) shows(sks []string) bool {
	has := func(k string) bool { _, ok := slices.BinarySearch(sks, k); return ok }
	for _, e := range p.expect {
		if e.present != "" && !has(e.present) || slices.ContainsFunc(e.absent, has) {
			return false
		}
	}
	return true
}

// maxBehind is how many rebuilds of a list that found it behind the
// pages worker makes before it rebuilds from what the list shows.
const maxBehind = 10

// pendingOf returns, by list, what the event e of a post asks of the
// lists it names.
func pendingOf(e LoggedEvent) map[string]pendingList {
	d := e.Data
	from := changedFrom(d)
	var now, was []string
	if !d.PublishedAt.IsZero() && d.PostID != "" {
		now = append(now, keys.PostSort(d.PublishedAt, d.PostID))
		if !d.PreviousPublishedAt.IsZero() && !d.PreviousPublishedAt.Equal(d.PublishedAt) {
			was = append(was, keys.PostSort(d.PreviousPublishedAt, d.PostID))
		}
	}
	visible := e.Type == EventPostPublished || e.Type == EventPostEdited
	out := map[string]pendingList{}
	addOne := func(list string, in bool) {
		p := pendingList{pos: e.Position, from: from, expect: map[string]expected{}}
		if len(now) > 0 {
			x := expected{absent: was}
			if in && visible {
				x.present = now[0]
			} else {
				x.absent = append(slices.Clone(was), now...)
			}
			p.expect[d.PostID] = x
		}
		out[list] = p
	}
	// Each list but a month's in the post's locale too, and in the
	// locale it left (numberedlocales.go).
	add := func(list string, in bool) {
		addOne(list, in)
		if d.Locale != "" {
			addOne(localeList(d.Locale, list), in)
		}
		if d.PreviousLocale != "" && d.PreviousLocale != d.Locale {
			addOne(localeList(d.PreviousLocale, list), false)
		}
	}
	add(keys.FeedPartition, true)
	if !d.PublishedAt.IsZero() {
		addOne(FeedMonthList(d.PublishedAt), true)
	}
	if !d.PreviousPublishedAt.IsZero() && FeedMonthList(d.PreviousPublishedAt) != FeedMonthList(d.PublishedAt) {
		addOne(FeedMonthList(d.PreviousPublishedAt), false)
	}
	for _, c := range d.Categories {
		add(CategoryListPartition(c), true)
	}
	for _, t := range d.Tags {
		add(TagListPartition(t), true)
	}
	for _, c := range d.PreviousCategories {
		if !slices.Contains(d.Categories, c) {
			add(CategoryListPartition(c), false)
		}
	}
	for _, t := range d.PreviousTags {
		if !slices.Contains(d.Tags, t) {
			add(TagListPartition(t), false)
		}
	}
	if d.AuthorID != "" {
		add(AuthorListPartition(d.AuthorID), true)
	}
	for _, a := range d.CoAuthors {
		add(AuthorListPartition(a), true)
	}
	for _, a := range d.PreviousCoAuthors {
		if !slices.Contains(d.CoAuthors, a) && a != d.AuthorID {
			add(AuthorListPartition(a), false)
		}
	}
	return out
}

// changedFrom returns the earliest time of publication an event of a
// post changed in its lists: its time before and after the write, or
// zero when the event does not say.
func changedFrom(d EventData) time.Time {
	from := d.PublishedAt
	if !d.PreviousPublishedAt.IsZero() && !from.IsZero() && d.PreviousPublishedAt.Before(from) {
		from = d.PreviousPublishedAt
	}
	return from
}

// pageSyncEvents are the events after which a post may have joined,
// left or moved in a list.
var pageSyncEvents = []EventType{
	EventPostPublished, EventPostEdited, EventPostUnpublished, EventPostScheduled,
	EventPostRescheduled, EventPostUnscheduled, EventPostDeleted,
}

// Events notes the lists that post events name and rebuilds those that
// are due. It returns the first error of a rebuild; what failed stays
// pending.
func (w *PageSync) Events(ctx context.Context, events []LoggedEvent) error {
	w.mu.Lock()
	for _, e := range events {
		if !slices.Contains(pageSyncEvents, e.Type) {
			continue
		}
		for l, q := range pendingOf(e) {
			if p, ok := w.pending[l]; ok {
				w.pending[l] = p.merge(q)
			} else {
				w.pending[l] = q
			}
		}
	}
	w.mu.Unlock()
	return w.Tick(ctx)
}

// Tick rebuilds every pending list that is due: never rebuilt, or last
// rebuilt PageSyncEvery ago or more. It returns the first error of a
// rebuild; the list that failed stays pending.
func (w *PageSync) Tick(ctx context.Context) error {
	w.syncing.Lock()
	defer w.syncing.Unlock()
	now := time.Now()
	due := map[string]pendingList{}
	w.mu.Lock()
	for l, p := range w.pending {
		if last, ok := w.last[l]; !ok || now.Sub(last) >= PageSyncEvery {
			due[l] = p
			delete(w.pending, l)
			w.last[l] = now
		}
	}
	for l, last := range w.last {
		if _, ok := w.pending[l]; !ok && now.Sub(last) >= PageSyncEvery {
			delete(w.last, l)
		}
	}
	w.mu.Unlock()
	var first error
	for _, l := range slices.Sorted(maps.Keys(due)) {
		p := due[l]
		shows := p.shows
		if p.tries >= maxBehind {
			shows = nil
		}
		did, err := w.store.syncPages(ctx, l, p.from, shows)
		if w.OnSync != nil {
			w.OnSync(l, did, err)
		}
		if err == nil && !did.Behind && !did.Lost {
			continue
		}
		// Failed, or GSI1 had not the events' writes yet, or a rebuild
		// that began later (a repair, a worker that took the lease over)
		// left this one's changes half written: pending again, with what
		// came since merged in (it is newer).
		if did.Behind {
			p.tries++
		}
		w.mu.Lock()
		if q, ok := w.pending[l]; ok {
			p = p.merge(q)
		}
		w.pending[l] = p
		w.mu.Unlock()
		if first == nil {
			first = err
		}
	}
	return first
}

// Hold returns the position the worker's checkpoint may move to once it
// has read up to last: last, or just before the first event of a list
// that is pending.
func (w *PageSync) Hold(last int64) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.pending {
		last = min(last, p.pos-1)
	}
	return last
}

// SyncAllPages rebuilds the page index of the feed, of each of its
// months that has posts, and of every category, tag and author, each
// also in every locale of the site's, as the
// pages worker rebuilds the lists its events name: for a table written
// with no pages worker running (a test's store, a repair). It reads the
// blog's counts, the categories, tags and authors (a Query each a page
// of 100) and fails at the first read or write that fails. A list whose
// index agrees with it costs its reads and no write (so a second demo
// seed writes nothing): unlike the pages worker's rebuilds, it claims an
// index only when it has a chunk to change. That is safe beside the
// worker: a rebuild of the worker that a skipped list leaves unfenced
// read the list before a change, whose event makes the worker rebuild
// the list again.
func (s *Store) SyncAllPages(ctx context.Context) error {
	lists := []string{keys.FeedPartition}
	st, err := s.Stats(ctx)
	if err != nil {
		return fmt.Errorf("sync all pages: %w", err)
	}
	for _, m := range st.Archive {
		lists = append(lists, FeedMonthList(m.Start()))
	}
	for p := (PageArgs{Limit: MaxPageSize}); ; {
		res, err := s.Categories(ctx, p)
		if err != nil {
			return fmt.Errorf("sync all pages: %w", err)
		}
		for _, c := range res.Items {
			lists = append(lists, CategoryListPartition(c.Slug))
		}
		if !res.HasNext {
			break
		}
		p.After = res.Cursors[len(res.Cursors)-1]
	}
	for p := (PageArgs{Limit: MaxPageSize}); ; {
		res, err := s.Tags(ctx, p)
		if err != nil {
			return fmt.Errorf("sync all pages: %w", err)
		}
		for _, t := range res.Items {
			lists = append(lists, TagListPartition(t.Slug))
		}
		if !res.HasNext {
			break
		}
		p.After = res.Cursors[len(res.Cursors)-1]
	}
	for p := (PageArgs{Limit: MaxPageSize}); ; {
		res, err := s.Authors(ctx, p)
		if err != nil {
			return fmt.Errorf("sync all pages: %w", err)
		}
		for _, a := range res.Items {
			lists = append(lists, AuthorListPartition(a.ID))
		}
		if !res.HasNext {
			break
		}
		p.After = res.Cursors[len(res.Cursors)-1]
	}
	more, err := s.siteLocaleLists(ctx, lists)
	if err != nil {
		return err
	}
	lists = append(lists, more...)
	for _, l := range lists {
		plan, err := s.readPages(ctx, l, time.Time{}, nil, false)
		if err != nil {
			return err
		}
		if !plan.differs() {
			continue
		}
		if _, err := s.SyncPages(ctx, l); err != nil {
			return err
		}
	}
	return nil
}

// checkPageIndexes checks that every page index agrees with its list:
// its count and the sort key of every PageStep-th visible post. It
// checks the indexes there are (a list never rebuilt has none, and its
// pages are empty until the pages worker reaches it). The index follows
// its list through the change feed, so a list whose index differs is
// marked lagging (snapshot.pagesLagging) and read again after the
// allowed lag (checkPageLag).
func checkPageIndexes(_ context.Context, s *Store, t *snapshot, _ func(string, ...any)) {
	if len(t.pageIdx) == 0 {
		return
	}
	bound := s.visibleBound()
	lists := map[string][]string{}
	add := func(p *postItem) {
		if list, _ := s.ks.Local(p.GSI1PK); p.GSI1PK != "" && p.GSI1SK > keys.PrefixPost && p.GSI1SK < bound {
			lists[list] = append(lists[list], p.GSI1SK)
			if list == keys.FeedPartition {
				at, _, _ := strings.Cut(strings.TrimPrefix(p.GSI1SK, keys.PrefixPost), "#")
				month := FeedMonthList(keys.ParseTime(at))
				lists[month] = append(lists[month], p.GSI1SK)
			}
		}
		if list, _ := s.ks.Local(p.PK); p.Type == typeAuthorPost && p.SK < bound {
			lists[list] = append(lists[list], p.SK)
		}
	}
	for _, p := range t.posts {
		add(p)
	}
	for _, c := range t.copies {
		add(c)
	}
	have := map[string]map[string]pageIndexItem{}
	for _, c := range t.pageIdx {
		if have[c.List] == nil {
			have[c.List] = map[string]pageIndexItem{}
		}
		have[c.List][c.SK] = *c
	}
	for _, list := range slices.Sorted(maps.Keys(have)) {
		sks := lists[list]
		slices.Sort(sks)
		if pageIndexDiff(s.ks, list, sks, have[list]) != "" {
			t.pagesLagging = append(t.pagesLagging, list)
		}
	}
}

// pageIndexDiff returns how the chunks have of the page index of list
// differ from what the list's sort keys sks give, or "" when they agree.
func pageIndexDiff(ks keys.Space, list string, sks []string, have map[string]pageIndexItem) string {
	want := wantChunks(ks, list, startsOf(sks), len(sks), "")
	for _, w := range want {
		h, ok := have[w.SK]
		switch {
		case !ok:
			return fmt.Sprintf("lacks chunk %s", w.SK)
		case h.Count != w.Count || !slices.Equal(h.Starts, w.Starts):
			return fmt.Sprintf("chunk %s holds %d posts and starts %v, the list %d and %v", w.SK, h.Count, h.Starts, w.Count, w.Starts)
		}
	}
	for sk := range have {
		if !slices.ContainsFunc(want, func(w pageIndexItem) bool { return w.SK == sk }) {
			return fmt.Sprintf("has chunk %s past its list's end", sk)
		}
	}
	return ""
}

// checkPageLag reads again, after the allowed lag (unless waited is
// true: the comment counts' wait has passed), each list whose page index
// Check found to differ, and returns a line for each one whose index
// still differs. It fails when a read fails.
func (s *Store) checkPageLag(ctx context.Context, lists []string, waited bool) ([]string, error) {
	if len(lists) == 0 {
		return nil, nil
	}
	seen := time.Now()
	lag := s.countLag
	if lag == 0 {
		lag = CountLag
	}
	if !waited {
		wait := s.lagWait
		if wait == nil {
			wait = sleepFor
		}
		if err := wait(ctx, lag); err != nil {
			return nil, err
		}
	}
	var bad []string
	for _, list := range lists {
		sks, err := s.listSortKeys(ctx, list, keys.PrefixPost)
		if err != nil {
			return nil, fmt.Errorf("check: %w", err)
		}
		have, err := s.pageChunks(ctx, list)
		if err != nil {
			return nil, fmt.Errorf("check: %w", err)
		}
		if d := pageIndexDiff(s.ks, list, sks, have); d != "" {
			bad = append(bad, fmt.Sprintf("page index of %s %s: lagging over %s (allowed %s)", list, d, time.Since(seen).Round(time.Millisecond), lag))
		}
	}
	return bad, nil
}
