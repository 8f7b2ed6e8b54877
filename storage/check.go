package storage

import (
	"context"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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
// invariants (checkfeed.go), a schedule item or a go-live marker without the other, or
// a schedule item due for over a minute (see checkSchedule), a webhook
// count that is off, an outbox or delivery item whose webhook is gone, a
// pending delivery out of its index or due long ago (stuck), an author's or
// category's cleared attribute kept as an empty string. It reads every
// item, so it is for tests and maintenance, not for serving. An empty list
// means the table is consistent.
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
	{"post parts", func(_ context.Context, _ *Store, t *snapshot, badf func(string, ...any)) {
		checkPostParts(t.posts, t.bodies, t.counts, badf)
	}},
	{"posts", checkPosts},
	{"slugs", checkAllSlugs},
	{"comments", checkAllComments},
	{"webhooks", func(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
		report(badf, t.hooks.check(s.Now()))
	}},
	{"series", func(_ context.Context, _ *Store, t *snapshot, badf func(string, ...any)) {
		report(badf, checkSeries(t.series, t.posts))
	}},
	{"revisions", func(_ context.Context, _ *Store, t *snapshot, badf func(string, ...any)) {
		report(badf, checkRevisions(t.revs, t.posts))
	}},
	{"comment counts", checkCommentCounts},
	{"readers", checkReaders},
	{"counters", checkCounters},
	{"scheduled entries", checkScheduledEntries},
	{"change feed", func(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
		t.feed.check(s.Now().Unix(), badf)
	}},
	{"schedule", func(_ context.Context, s *Store, t *snapshot, badf func(string, ...any)) {
		report(badf, checkSchedule(t.sched, t.posts, s.nowKey(), keyTime(s.Now().Add(-goLiveGrace))))
	}},
}

// report passes every finding of found to badf.
func report(badf func(string, ...any), found []string) {
	for _, f := range found {
		badf("%s", f)
	}
}

// check is one read of the table for Check: the findings of the scan,
// not yet confirmed, and the comment counts still lagging after their
// own second read (checkCountLag).
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
	return bad, lagged, nil
}

// snapshot is one scan of the whole table, decoded by item type, for the
// checks to read. lagging and copiesOf are filled by the checks.
type snapshot struct {
	authors  map[string]*authorItem
	cats     map[string]*categoryItem
	posts    map[string]*postItem
	sitePgs  map[string]*pageItem
	copies   []*postItem
	comments []*commentItem
	queued   []*commentItem
	readers  map[string]*readerItem
	rates    []*rateItem
	slugs    []*slugItem
	aslugs   []*authorSlugItem
	sched    []*scheduleItem
	stats    statsItem
	feed     feedItems
	hooks    webhookItems
	tags     map[string]*tagItem
	renderer *rendererItem
	series   []*seriesItem
	revs     []*revisionItem
	bodies   map[string]*bodyItem
	counts   map[string]*countItem
	// found are what the scan itself found wrong: items of unknown types,
	// cleared attributes kept as empty strings.
	found []string
	// lagging are, by post id, the keys of the copies (and the post
	// item) whose comment count alone differs: read again after the
	// allowed lag. copiesOf are the keys of every copy, by post id.
	lagging, copiesOf map[string][]key
}

// optionalAttrs are, by item type, the optional attributes that a write
// removes when they are cleared, rather than keep an empty string.
var optionalAttrs = map[string][]string{
	typeAuthor:   {"bio", "avatarUrl"},
	typeCategory: {"description"},
}

// scanSnapshot reads the whole table with a consistent Scan.
func (s *Store) scanSnapshot(ctx context.Context) (*snapshot, error) {
	t := &snapshot{
		authors: map[string]*authorItem{}, cats: map[string]*categoryItem{}, posts: map[string]*postItem{},
		sitePgs: map[string]*pageItem{}, readers: map[string]*readerItem{}, tags: map[string]*tagItem{},
		bodies: map[string]*bodyItem{}, counts: map[string]*countItem{},
		lagging: map[string][]key{}, copiesOf: map[string][]key{},
	}
	pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("scan: %w", err)
		}
		for _, it := range page.Items {
			var head struct {
				PK, SK string
				Type   string `dynamodbav:"type"`
			}
			var err error
			if err = attributevalue.UnmarshalMap(it, &head); err != nil {
				return nil, err
			}
			switch head.Type {
			case typeAuthor:
				a := &authorItem{}
				err = attributevalue.UnmarshalMap(it, a)
				t.authors[a.ID] = a
			case typeCategory:
				c := &categoryItem{}
				err = attributevalue.UnmarshalMap(it, c)
				t.cats[c.Slug] = c
			case typePost:
				p := &postItem{}
				err = attributevalue.UnmarshalMap(it, p)
				t.posts[p.ID] = p
			case typePostBody:
				b := &bodyItem{}
				err = attributevalue.UnmarshalMap(it, b)
				t.bodies[b.ID] = b
			case typePostCount:
				c := &countItem{}
				err = attributevalue.UnmarshalMap(it, c)
				t.counts[c.ID] = c
			case typePage:
				pg := &pageItem{}
				err = attributevalue.UnmarshalMap(it, pg)
				t.sitePgs[pg.ID] = pg
			case typeAuthorPost, typeCategoryPost, typeTagPost, typeFeaturedPost:
				p := &postItem{}
				err = attributevalue.UnmarshalMap(it, p)
				t.copies = append(t.copies, p)
			case typeComment:
				c := &commentItem{}
				err = attributevalue.UnmarshalMap(it, c)
				t.comments = append(t.comments, c)
			case typeQueued:
				c := &commentItem{}
				err = attributevalue.UnmarshalMap(it, c)
				t.queued = append(t.queued, c)
			case typeReader:
				r := &readerItem{}
				err = attributevalue.UnmarshalMap(it, r)
				t.readers[r.ID] = r
			case typeRate:
				r := &rateItem{}
				err = attributevalue.UnmarshalMap(it, r)
				t.rates = append(t.rates, r)
			case typeSlug:
				sl := &slugItem{}
				err = attributevalue.UnmarshalMap(it, sl)
				t.slugs = append(t.slugs, sl)
			case typeAuthorSlug:
				sl := &authorSlugItem{}
				err = attributevalue.UnmarshalMap(it, sl)
				t.aslugs = append(t.aslugs, sl)
			case typeStats:
				err = attributevalue.UnmarshalMap(it, &t.stats)
			case typeTag:
				tg := &tagItem{}
				err = attributevalue.UnmarshalMap(it, tg)
				t.tags[tg.Slug] = tg
			case typeSchedule:
				si := &scheduleItem{}
				err = attributevalue.UnmarshalMap(it, si)
				t.sched = append(t.sched, si)
			case typeWebhook, typeWebhookCount, typeOutbox, typeDelivery:
				err = t.hooks.add(head.Type, it)
			case typeRenderer:
				t.renderer = &rendererItem{}
				err = attributevalue.UnmarshalMap(it, t.renderer)
			case typeSeries:
				se := &seriesItem{}
				err = attributevalue.UnmarshalMap(it, se)
				t.series = append(t.series, se)
			case typeRevision:
				rv := &revisionItem{}
				err = attributevalue.UnmarshalMap(it, rv)
				t.revs = append(t.revs, rv)
			case typeIdempotency, typeSecret, typeLayout, typeSite, typePersisted:
			case typeLease, typeHeartbeat, typeEvent, typeEventHead:
				err = t.feed.add(head.Type, it)
			default:
				t.found = append(t.found, fmt.Sprintf("item %s/%s has unknown type %q", head.PK, head.SK, head.Type))
			}
			if err != nil {
				return nil, fmt.Errorf("decode %s/%s: %w", head.PK, head.SK, err)
			}
			for _, name := range optionalAttrs[head.Type] {
				if v, ok := it[name].(*types.AttributeValueMemberS); ok && v.Value == "" {
					t.found = append(t.found, fmt.Sprintf("%s %s keeps an empty %s", head.Type, head.PK, name))
				}
			}
		}
	}
	return t, nil
}
