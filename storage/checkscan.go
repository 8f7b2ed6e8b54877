package storage

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/feedstore"
)

// report passes every finding of found to badf.
func report(badf func(string, ...any), found []string) {
	for _, f := range found {
		badf("%s", f)
	}
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
	// quota is the posts' counter (quotas.go), nil when missing.
	quota    *postUsageItem
	feed     feedstore.Items
	hooks    webhookItems
	tags     map[string]*tagItem
	renderer *rendererItem
	series   []*seriesItem
	revs     []*revisionItem
	bodies   map[string]*bodyItem
	counts   map[string]*countItem
	pageIdx  []*pageIndexItem
	groups   []*translationItem
	privacy  privacyItems
	// pagesLagging are the lists whose page index differs from them:
	// read again after the allowed lag (checkPageLag).
	pagesLagging []string
	// found are what the scan itself found wrong: items of unknown types,
	// cleared attributes kept as empty strings.
	found []string
	// lagging are, by post id, the keys of the copies (and the post
	// item) whose comment count alone differs: read again after the
	// allowed lag. copiesOf are the keys of every copy, by post id.
	lagging, copiesOf map[string][]key

	// pageCopies are the pages' copies in their locales' lists, by id.
	pageCopies map[string]*pageItem
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
		sitePgs: map[string]*pageItem{}, pageCopies: map[string]*pageItem{}, readers: map[string]*readerItem{}, tags: map[string]*tagItem{},
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
			case typeLocalePage:
				pg := &pageItem{}
				err = attributevalue.UnmarshalMap(it, pg)
				t.pageCopies[pg.ID] = pg
			case typeAuthorPost, typeCategoryPost, typeTagPost, typeFeaturedPost, typeLocalePost, typeLocaleCategoryPost, typeLocaleTagPost:
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
			case typePostUsage:
				if head.PK == s.ks.PostUsage().PK {
					t.quota = &postUsageItem{}
					err = attributevalue.UnmarshalMap(it, t.quota)
				}
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
			case typePageIndex:
				pi := &pageIndexItem{}
				err = attributevalue.UnmarshalMap(it, pi)
				t.pageIdx = append(t.pageIdx, pi)
			case typeTranslations:
				g := &translationItem{}
				err = attributevalue.UnmarshalMap(it, g)
				t.groups = append(t.groups, g)
			case typeIdempotency, typeSecret, typeLayout, typeLocaleCopiesMark, typeTrailsMark, typeSite, typePersisted, typePublication, typePublicationSlug, typePublicationHost, typeUpload, typeMedia, typeMediaGone, typeMediaUsage, typeStaffCount, typeNewsletterSend, typeSignInRate:
			case typeAccount, typeAccountEmail, typeSession, typeSignIn, typeMail, typeTrail, typeMember, typeStaff, typeReaction:
				err = t.privacy.add(head.Type, it)
			case typePostViews, typePostViewDay, typePopularEntry, typeReactions: // counts, nothing to check
			case feedstore.TypeLease, feedstore.TypeHeartbeat, feedstore.TypeEvent, feedstore.TypeEventHead:
				err = t.feed.Add(head.Type, it)
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
