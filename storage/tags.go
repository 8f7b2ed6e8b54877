package storage

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/slugs"
	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Tags: free-form labels authors give posts as they write, by name; the
// slug is made from the name. A tag item TAG#<slug> holds the name and the
// counts (as a category's: postCount, scheduled entries, months) and is
// listed in GSI1 partition TAGS; a published post has a post-in-tag copy
// (POST#<id>, TAG#<slug>) per tag, in GSI1 under TAG#<slug> by publication
// time, written in the post's transactions as its category copies are, so
// a tag's page is one Query. A post write that names a tag nobody has made
// yet makes it in its own transaction (an update conditional on the item
// not existing). Renaming a tag rewrites its posts as renaming a category
// does; merging one into another marks the merged one (mergedInto) and
// rewrites each of its posts, whose writes move them to the other tag.
// doc.go has the layout and the limits.

const (
	typeTag     = "tag"
	typeTagPost = "tagPost"

	// MaxTags is how many tags a post may have.
	MaxTags = 10
	// MaxTagNameLength is the longest name of a tag, in characters.
	MaxTagNameLength = 50
	// maxMergeHops bounds how many merges a post write follows from a tag
	// it names to the tag that holds its posts now.
	maxMergeHops = 5
)

// Tag labels posts. Its slug is its id.
type Tag struct {
	Slug      string
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
	PostCount int64 // published posts whose time has come
	Version   int64
	// Archive counts the tag's posts whose time has come by month, newest
	// first.
	Archive []ArchiveMonth
}

type tagItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	GSI1PK    string `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK    string `dynamodbav:"GSI1SK,omitempty"`
	Type      string `dynamodbav:"type"`
	Slug      string `dynamodbav:"slug"`
	Name      string `dynamodbav:"name"`
	CreatedAt string `dynamodbav:"createdAt"`
	UpdatedAt string `dynamodbav:"updatedAt"`
	PostCount int64  `dynamodbav:"postCount"`
	Version   int64  `dynamodbav:"version"`
	NameVer   int64  `dynamodbav:"nameVer"`
	// RenamedVer is the NameVer that has reached every post
	// (markRenamed).
	RenamedVer int64 `dynamodbav:"renamedVer,omitempty"`
	// MergedInto names the tag this one was merged into: it is out of the
	// list, its slug leads to the other, and post writes move its posts.
	MergedInto string   `dynamodbav:"mergedInto,omitempty"`
	Scheduled  schedule `dynamodbav:"-"`
	Months     months   `dynamodbav:"-"`
	// created marks a tag a post write makes.
	created bool
}

// UnmarshalDynamoDBAttributeValue decodes the item, its scheduled-post
// entries and its counts by month.
func (it *tagItem) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	type plain tagItem
	var err error
	it.Scheduled, it.Months, err = decodeCounter(av, (*plain)(it))
	return err
}

// tag returns the tag as a reader sees it at now.
func (it *tagItem) tag(now string) *Tag {
	t := &Tag{
		Slug: it.Slug, Name: it.Name, CreatedAt: keys.ParseTime(it.CreatedAt), UpdatedAt: keys.ParseTime(it.UpdatedAt),
		Version: it.Version, Archive: it.Months.archive(it.Scheduled, now),
	}
	t.PostCount, _ = it.Scheduled.split(it.PostCount, now)
	return t
}

// tagCreation returns the update that makes the tag it, with its first
// version and name version, in a post write's transaction.
func (it *tagItem) tagCreation(ks keys.Space, upd expression.UpdateBuilder, now string, counts bool) expression.UpdateBuilder {
	upd = upd.Set(expression.Name("type"), expression.Value(typeTag)).
		Set(expression.Name("slug"), expression.Value(it.Slug)).
		Set(expression.Name("name"), expression.Value(it.Name)).
		Set(expression.Name(keys.AttrGSI1PK), expression.Value(ks.Partition(keys.TagsPartition))).
		Set(expression.Name(keys.AttrGSI1SK), expression.Value(ks.Tag(it.Slug).SK)).
		Set(expression.Name("createdAt"), expression.Value(now)).
		Set(expression.Name("updatedAt"), expression.Value(now)).
		Set(expression.Name("version"), expression.Value(1)).
		Set(expression.Name("nameVer"), expression.Value(1))
	if !counts {
		upd = upd.Set(expression.Name("postCount"), expression.Value(0))
	}
	return upd
}

// tagCopy returns the post-in-tag copy of a published post.
func (it postItem) tagCopy(ks keys.Space, slug string) postItem {
	k := ks.TagCopy(it.ID, slug)
	it = it.summary()
	it.PK, it.SK, it.Type = k.PK, k.SK, typeTagPost
	it.GSI1PK, it.GSI1SK = ks.TagPartition(slug), keys.PostSort(it.publishedAt(), it.ID)
	return it
}

// tagSlugs returns the slugs of the post's tags, in order.
func (it *postItem) tagSlugs() []string {
	out := make([]string, len(it.Tags))
	for i, t := range it.Tags {
		out[i] = t.Slug
	}
	return out
}

// TagSlug returns the slug a tag named name gets, in Latin letters with
// latin (the site's SlugTransliteration), or "" when the name has no
// letter or digit to make one of.
func TagSlug(name string, latin bool) string { return slugs.Make(name, latin) }

// tagNames checks the names of a post's tags and returns them with their
// slugs, without two of one slug (the first name stands), in order.
func (s *Store) tagNames(ctx context.Context, tagNames []string) ([]catRef, error) {
	latin, err := s.latinSlugs(ctx, tagNames...)
	if err != nil {
		return nil, err
	}
	return validateTags(tagNames, latin)
}

// validateTags checks the names of a post's tags and returns them with
// their slugs made as TagSlug does.
func validateTags(tagNames []string, latin bool) ([]catRef, error) {
	var out []catRef
	seen := map[string]bool{}
	for _, name := range tagNames {
		if err := validateLine("tags", name, MaxTagNameLength); err != nil {
			return nil, err
		}
		slug := TagSlug(name, latin)
		if slug == "" {
			return nil, invalid("tags", "%q has no letter or digit to make a slug of", name)
		}
		if err := slugs.Check(slug); err != nil {
			return nil, invalid("tags", "the slug of %q %v", name, err)
		}
		if !seen[slug] {
			seen[slug] = true
			out = append(out, catRef{Slug: slug, Name: name})
		}
	}
	if len(out) > MaxTags {
		return nil, invalid("tags", "must be at most %d", MaxTags)
	}
	return out, nil
}

// resolveTag returns the tag that holds the posts of the tag slug now,
// following merges through the tags r read: nil when it was not read
// (or is new), errStaleNames when a merge leads to a tag not read.
func (r *names) resolveTag(slug string) (*tagItem, error) {
	it := r.tags[slug]
	for range maxMergeHops {
		if it == nil || it.MergedInto == "" {
			return it, nil
		}
		next := r.tags[it.MergedInto]
		if next == nil {
			return nil, errStaleNames
		}
		it = next
	}
	return nil, invalid("tags", "tag %q was merged too many times over", slug)
}

// setTagNames copies the names of the post's tags from r into p, the tags
// merged into others replaced by those; a tag r has not got is made with
// the name given.
func (r *names) setTagNames(p *postItem) error {
	given := p.Tags
	p.Tags, p.TagVer = nil, nil
	for _, ref := range given {
		it, err := r.resolveTag(ref.Slug)
		if err != nil {
			return err
		}
		if it == nil {
			it = &tagItem{Slug: ref.Slug, Name: ref.Name, NameVer: 1, created: true}
			r.tags[ref.Slug] = it
		}
		if p.TagVer[it.Slug] != 0 {
			continue // two tags merged into one
		}
		if p.TagVer == nil {
			p.TagVer = map[string]int64{}
		}
		p.Tags = append(p.Tags, catRef{Slug: it.Slug, Name: it.Name})
		p.TagVer[it.Slug] = it.NameVer
	}
	return nil
}

// readMergeTargets reads the tags that the tags in r were merged into, as
// far as they lead, in one BatchGetItem a hop.
func (s *Store) readMergeTargets(ctx context.Context, r *names) error {
	for range maxMergeHops {
		var missing []key
		for _, it := range r.tags {
			if it != nil && it.MergedInto != "" && r.tags[it.MergedInto] == nil {
				missing = append(missing, s.ks.Tag(it.MergedInto))
			}
		}
		if len(missing) == 0 {
			return nil
		}
		found, err := s.db.BatchGet(ctx, missing, true)
		if err != nil {
			return err
		}
		for _, k := range missing {
			var it tagItem
			if err := dynamo.DecodeFound(found, k, &it); err != nil {
				return fmt.Errorf("tag %s: %w", k.PK, err)
			}
			r.tags[it.Slug] = &it
		}
	}
	return nil
}

// GetTag returns the tag with slug, or the tag it was merged into (whose
// Slug then differs, so a frontend can redirect), or ErrNotFound: one
// GetItem, one more for a merged tag.
func (s *Store) GetTag(ctx context.Context, slug string) (*Tag, error) {
	if err := validateSlug("slug", slug); err != nil {
		return nil, err
	}
	for range maxMergeHops + 1 {
		var it tagItem
		if err := s.db.Get(ctx, s.ks.Tag(slug), false, &it); err != nil {
			return nil, fmt.Errorf("tag %q: %w", slug, err)
		}
		if it.MergedInto == "" {
			return it.tag(s.nowKey()), nil
		}
		slug = it.MergedInto
	}
	return nil, fmt.Errorf("tag %q: %w", slug, ErrNotFound)
}

// GetTags returns the tags with the slugs in order, with ErrNotFound in
// errs for each missing one: one BatchGetItem for 100.
func (s *Store) GetTags(ctx context.Context, slugs []string) ([]*Tag, []error) {
	now := s.nowKey()
	return dynamo.BatchDecode(ctx, s.db, mapKeys(slugs, s.ks.Tag), func(it *tagItem) *Tag { return it.tag(now) })
}

// Tags returns the tags, ordered by slug, with their post counts; merged
// tags are not listed.
func (s *Store) Tags(ctx context.Context, p PageArgs) (*Result[*Tag], error) {
	return queryPage(ctx, s, listQuery{
		list: "tags", index: true, forward: true,
		cond: expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.Partition(keys.TagsPartition))),
	}, p, func(it *tagItem) *Tag { return it.tag(s.nowKey()) })
}

// TagPosts returns the tag's visible posts in per, newest first, as
// summaries: one Query of GSI1.
func (s *Store) TagPosts(ctx context.Context, slug string, p PageArgs, per Period) (*Result[*Post], error) {
	lo, hi, list, empty, err := postRange(per, "tag-posts:"+slug, s.visibleBound())
	if err != nil {
		return nil, err
	}
	return queryPage(ctx, s, listQuery{
		list:  list,
		index: true,
		cond: expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.TagPartition(slug))).
			And(expression.Key(keys.AttrGSI1SK).Between(expression.Value(lo), expression.Value(hi))),
		empty: empty,
	}, p, (*postItem).post)
}

// tagPostIDs lists the published and scheduled posts of a tag.
func (s *Store) tagPostIDs(ctx context.Context, slug string) ([]string, error) {
	return s.collectIDs(ctx, true, expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.TagPartition(slug))))
}

// RenameTag gives a tag a new name (its slug stays), if its version still
// equals in.ExpectedVersion when that is not zero (else a *ConflictError),
// and rewrites the name in every published post that carries it before it
// returns, as UpdateCategory does; drafts get it at their next write.
func (s *Store) RenameTag(ctx context.Context, in TagRename) (*Tag, error) {
	if err := firstErr(validateSlug("slug", in.Slug), validateLine("name", in.Name, MaxTagNameLength)); err != nil {
		return nil, err
	}
	tag, err := idempotent(ctx, s, "renameTag", in.IdempotencyKey, in, func(rec *idem) (*Tag, error) {
		return dynamo.RetryWrite(ctx, func() (*Tag, error) {
			var it tagItem
			if err := s.db.Get(ctx, s.ks.Tag(in.Slug), true, &it); err != nil {
				return nil, fmt.Errorf("tag %q: %w", in.Slug, err)
			}
			if it.MergedInto != "" {
				return nil, invalid("slug", "tag %q was merged into %q; rename that one", in.Slug, it.MergedInto)
			}
			if in.ExpectedVersion != 0 && it.Version != in.ExpectedVersion {
				return nil, &ConflictError{CurrentVersion: it.Version}
			}
			cond := condVersion(it.Version)
			if in.Name != it.Name {
				it.NameVer++
			}
			it.Name = in.Name
			it.Version++
			it.UpdatedAt = keys.Time(s.Now())
			t := s.db.NewTxn()
			if err := t.Update(s.ks.Tag(in.Slug), profileUpdate(it.Version, it.NameVer, it.UpdatedAt, map[string]string{"name": it.Name}), &cond, dynamo.ErrRetry); err != nil {
				return nil, err
			}
			return execRecord(ctx, s, t, rec, it.tag(s.nowKey()))
		})
	})
	if err != nil {
		return nil, err
	}
	if err := s.refreshAll(ctx, s.tagPostIDs, in.Slug, s.ks.Tag(in.Slug)); err != nil {
		return nil, fmt.Errorf("rename tag %q: %w", in.Slug, err)
	}
	return tag, nil
}

// MergeTags merges the tag in.From into the tag in.Into: From is marked
// merged (it leaves the list, and its slug leads to Into), then each of
// its published posts is written again, which moves it to Into (its
// copies, counts and names) in the post's own transaction, before
// MergeTags returns; a draft moves at its next write. A merge cut short
// is finished by the same call sent again. It returns Into as it is then,
// ErrNotFound when either tag is missing, and a *ValidationError for a
// tag merged into itself or into a tag that was merged.
func (s *Store) MergeTags(ctx context.Context, in TagMerge) (*Tag, error) {
	err := firstErr(validateSlug("from", in.From), validateSlug("into", in.Into))
	if err == nil && in.From == in.Into {
		err = invalid("into", "is the tag to merge")
	}
	if err != nil {
		return nil, err
	}
	_, err = idempotent(ctx, s, "mergeTags", in.IdempotencyKey, in, func(rec *idem) (*Tag, error) {
		return dynamo.RetryWrite(ctx, func() (*Tag, error) {
			found, err := s.db.BatchGet(ctx, []key{s.ks.Tag(in.From), s.ks.Tag(in.Into)}, true)
			if err != nil {
				return nil, err
			}
			var from, into tagItem
			if err := dynamo.DecodeFound(found, s.ks.Tag(in.From), &from); err != nil {
				return nil, fmt.Errorf("tag %q: %w", in.From, err)
			}
			if err := dynamo.DecodeFound(found, s.ks.Tag(in.Into), &into); err != nil {
				return nil, fmt.Errorf("tag %q: %w", in.Into, err)
			}
			switch {
			case into.MergedInto != "":
				return nil, invalid("into", "tag %q was merged into %q", in.Into, into.MergedInto)
			case from.MergedInto == in.Into:
				return into.tag(s.nowKey()), nil // merged before: its posts are moved below
			case from.MergedInto != "":
				return nil, invalid("from", "tag %q was merged into %q", in.From, from.MergedInto)
			}
			t := s.db.NewTxn()
			upd := expression.Set(expression.Name("mergedInto"), expression.Value(in.Into)).
				Set(expression.Name("version"), expression.Value(from.Version+1)).
				Set(expression.Name("nameVer"), expression.Value(from.NameVer+1)).
				Set(expression.Name("updatedAt"), expression.Value(s.nowKey())).
				Remove(expression.Name(keys.AttrGSI1PK)).Remove(expression.Name(keys.AttrGSI1SK))
			err = firstErr(
				t.Update(s.ks.Tag(in.From), upd, ptr(condVersion(from.Version)), dynamo.ErrRetry),
				t.Check(s.ks.Tag(in.Into), dynamo.CondExists().And(expression.Name("mergedInto").AttributeNotExists()), dynamo.ErrRetry),
			)
			if err != nil {
				return nil, err
			}
			return execRecord(ctx, s, t, rec, into.tag(s.nowKey()))
		})
	})
	if err != nil {
		return nil, err
	}
	if err := s.refreshAll(ctx, s.tagPostIDs, in.From, s.ks.Tag(in.From)); err != nil {
		return nil, fmt.Errorf("merge tag %q: %w", in.From, err)
	}
	return s.GetTag(ctx, in.Into)
}

// TagRename is the input of RenameTag.
type TagRename struct {
	Slug            string
	Name            string
	ExpectedVersion int64
	IdempotencyKey  string
}

// TagMerge is the input of MergeTags.
type TagMerge struct {
	From           string
	Into           string
	IdempotencyKey string
}

// decodeTag decodes a tag item read by readNames.
func decodeTag(it item) (*tagItem, error) {
	t := &tagItem{}
	if err := attributevalue.UnmarshalMap(it, t); err != nil {
		return nil, fmt.Errorf("decode tag: %w", err)
	}
	return t, nil
}

// tagEvents translates a write of a tag item: tag.updated when it is
// made, renamed or merged into another, with the pages of both.
func (p eventPaths) tagEvents(r *record, add func(EventType, EventData)) error {
	old, cur, err := decode[tagItem](r)
	if err != nil {
		return err
	}
	if old != nil && cur != nil && old.Name == cur.Name && old.MergedInto == cur.MergedInto && old.RenamedVer == cur.RenamedVer {
		return nil
	}
	now := cur
	if now == nil {
		now = old
	}
	d := EventData{
		Slug: now.Slug, Tags: []string{now.Slug},
		Paths:     []string{p.BySlug(p.Tag, now.Slug)},
		CacheTags: []string{frontend.TagTag(now.Slug)},
	}
	if now.MergedInto != "" {
		d.Tags, d.PreviousTags = []string{now.MergedInto}, []string{now.Slug}
		d.Paths = append(d.Paths, p.BySlug(p.Tag, now.MergedInto))
		d.CacheTags = append(d.CacheTags, frontend.TagTag(now.MergedInto))
	}
	d.Paths = distinct(d.Paths)
	add(EventTagUpdated, d)
	return nil
}

// coAuthorsAndTagsData adds to the data of an event about a post written
// from old to now its co-authors and tags, the pages of every author and
// tag it had or has, and their cache tags.
func (p eventPaths) coAuthorsAndTagsData(d *EventData, old, now *postItem) {
	d.CoAuthors, d.Tags = now.coAuthorIDs(), now.tagSlugs()
	var authors []authorRef
	var tags []string
	if old != nil && old != now {
		for _, id := range old.coAuthorIDs() {
			if !slices.Contains(d.CoAuthors, id) {
				d.PreviousCoAuthors = append(d.PreviousCoAuthors, id)
			}
		}
		for _, t := range old.tagSlugs() {
			if !slices.Contains(d.Tags, t) {
				d.PreviousTags = append(d.PreviousTags, t)
			}
		}
		authors, tags = append(authors, old.CoAuthors...), append(tags, old.tagSlugs()...)
	}
	authors, tags = append(authors, now.CoAuthors...), append(tags, now.tagSlugs()...)
	for _, a := range authors {
		d.Paths = append(d.Paths, p.BySlug(p.Author, a.Slug))
		d.CacheTags = append(d.CacheTags, frontend.TagAuthor(a.ID))
	}
	for _, t := range tags {
		d.Paths = append(d.Paths, p.BySlug(p.Tag, t))
		d.CacheTags = append(d.CacheTags, frontend.TagTag(t))
	}
}

// CountTagPosts counts the visible posts of the tag slug published in
// per: one Query of its keys for every 1 MB of posts in it. The tag's
// Archive answers month-aligned periods with no read (CountIn).
func (s *Store) CountTagPosts(ctx context.Context, slug string, per Period) (int64, error) {
	lo, hi, _, empty, err := postRange(per, "", s.visibleBound())
	if err != nil || empty {
		return 0, err
	}
	return s.count(ctx, fmt.Sprintf("posts of tag %q", slug), true,
		expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.TagPartition(slug))).
			And(expression.Key(keys.AttrGSI1SK).Between(expression.Value(lo), expression.Value(hi))))
}
