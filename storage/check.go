package storage

import (
	"context"
	"fmt"
	"sort"

	"github.com/blogql/blog/storage/internal/keys"
)

// Check scans the whole table and returns every way in which it breaks the
// single-table invariants: a copy that disagrees with its post (its
// comment count only when it still does after CountLag, checkcounts.go), an orphan
// copy or comment, a missing copy, a counter or a month's count that is
// off, a name or an author slug that is stale, a rendered body that is not
// its body's, a slug or author slug reservation that points nowhere or
// disagrees with its holder's slugs, a held comment outside its queues, a
// reply its parent carries wrongly, a reader or rate item that is
// malformed, a post or page left to another renderer than the table's
// after its sweep is done, a lease or an event log that breaks its
// invariants (feedstore.Items), a schedule item or a go-live marker without the other, or
// a schedule item due for over a minute (see checkSchedule), a webhook
// count that is off, an outbox or delivery item whose webhook is gone, a
// pending delivery out of its index or due long ago (stuck), an author's or
// category's cleared attribute kept as an empty string, a page index
// that still disagrees with its list after CountLag, a page's copy in
// its locale's list missing, stray or stale, an item a deleted account
// left or a reader's comment, reaction or membership missing from their
// trail (checkprivacy.go): each a named
// check of tableChecks, run on one scan of the table (checkscan.go). It
// reads every item, so it is for tests and maintenance (the command
// "blog check"), not for serving. An empty list means the table is
// consistent.
//
// A finding is reported only when a second read of the table finds it
// again: a scan is not a snapshot, and one that overlaps a write (the
// go-live sweep's transaction, read half before and half after) can see
// a state the table was never in.
func (s *Store) Check(ctx context.Context) ([]string, error) {
	first, lagged, err := s.check(ctx)
	if err != nil || len(first) == 0 {
		return lagged, err
	}
	second, _, err := s.check(ctx)
	if err != nil {
		return nil, err
	}
	again := make(map[string]bool, len(second))
	for _, b := range second {
		again[b] = true
	}
	var confirmed []string
	for _, b := range first {
		if again[b] {
			confirmed = append(confirmed, b)
		}
	}
	return append(confirmed, lagged...), nil
}

// tableCheck is one named consistency check of the table: run reads one
// scan of it and reports, with badf, every way the items break the
// invariant that name names.
type tableCheck struct {
	name string
	run  func(ctx context.Context, s *Store, t *snapshot, badf func(string, ...any))
}

// tableChecks are the checks Check runs on every scan. "posts" comes
// before "comment counts": both mark the copies whose comment count may
// only lag (snapshot.lagging).
var tableChecks = []tableCheck{
	{"items", checkItems},
	{"post parts", func(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
		checkPostParts(s.ks, t.posts, t.bodies, t.counts, badf)
	}},
	{"posts", checkPosts},
	{"slugs", checkAllSlugs},
	{"comments", checkAllComments},
	{"webhooks", func(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
		report(badf, t.hooks.check(s.ks, s.Now()))
	}},
	{"series", func(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
		report(badf, checkSeries(s.ks, t.series, t.posts))
	}},
	{"revisions", func(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
		report(badf, checkRevisions(s.ks, t.revs, t.posts))
	}},
	{"comment counts", checkCommentCounts},
	{"page indexes", checkPageIndexes},
	{"readers", checkReaders},
	{"privacy", checkPrivacy},
	{"pages by locale", func(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
		report(badf, checkLocalePages(s.ks, t.sitePgs, t.pageCopies))
	}},
	{"translations", func(_ context.Context, _ *Store, t *snapshot, badf func(string, ...any)) {
		report(badf, checkTranslations(t.groups, t.posts, t.sitePgs))
	}},
	{"counters", checkCounters},
	{"post quota", checkPostUsage},
	{"scheduled entries", checkScheduledEntries},
	{"change feed", func(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
		t.feed.Check(s.Now().Unix(), badf)
	}},
	{"schedule", func(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
		report(badf, checkSchedule(s.ks, t.sched, t.posts, s.nowKey(), keys.Time(s.Now().Add(-goLiveGrace))))
	}},
}

// check is one read of the table for Check: the findings of the scan,
// not yet confirmed, and the comment counts and page indexes still
// lagging after their own second read (checkCountLag, checkPageLag).
func (s *Store) check(ctx context.Context) (found, lagged []string, err error) {
	t, err := s.scanSnapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	var bad []string
	for _, c := range tableChecks {
		c.run(ctx, s, t, func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) })
	}
	sort.Strings(bad)
	lagged, err = s.checkCountLag(ctx, t.lagging)
	if err != nil {
		return nil, nil, err
	}
	pages, err := s.checkPageLag(ctx, t.pagesLagging, len(t.lagging) > 0)
	if err != nil {
		return nil, nil, err
	}
	return bad, append(lagged, pages...), nil
}
