package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
	"github.com/blogql/blog/storage/internal/migrations"
)

// The locale copies of posts written before them. A published post with
// a locale has copies in its locale's lists of its categories and tags
// (LOCALECAT#, LOCALETAG#) and author copies in its authors' lists of its
// locale (their GSI1 entry: locales.go). Posts written before those lists
// existed lack them: Check reports them, and the post's next write adds
// them. MigrateLocaleCopies writes them without waiting for that write,
// beside live servers, within the current layout (no key changes, so no
// layout step):
//
//   - it reads the feed's GSI1 partition (every published post, scheduled
//     ones too) a page at a time, and records after each page where it is
//     in a checkpoint item (LocaleCopiesMark), so a run stopped half-way
//     goes on from there; a run that reached the end marks the item done,
//     and from then on a run costs one GetItem;
//   - for each post of the page with a locale it reads the post item and
//     count item (one consistent Query) and the copies the post must have
//     in its locale's lists (one consistent BatchGetItem), and when some
//     are missing writes them in one TransactWriteItems: a put of each
//     missing list copy unless one is there, the GSI1 entry of each author
//     copy that lacks it, and checks that the post item is as read (its
//     version, counts, names' versions and renderer: all the copies
//     carry) and its count item's count too. The copies carry the count
//     item's count, which the counts worker (countsync.go) copies on
//     every copy it finds; a comment counted after the read fails the
//     check, and the post is read again. It writes no version and no
//     updatedAt, so an editor's expected version still holds, and a post
//     written meanwhile by this version already has its copies.
//
// Running it again, or on several servers at once, writes nothing twice:
// what was written is found written.

const typeLocaleCopiesMark = "localeCopiesMark"

// localeCopiesPage bounds the posts of a page of the sweep.
const localeCopiesPage = 100

// localeCopiesMark is where the sweep is: the last key of the feed page
// it finished, or done.
type localeCopiesMark struct {
	PK     string `dynamodbav:"PK"`
	SK     string `dynamodbav:"SK"`
	Type   string `dynamodbav:"type"`
	Last   key    `dynamodbav:"last"`
	GSI1PK string `dynamodbav:"lastGSI1PK,omitempty"`
	GSI1SK string `dynamodbav:"lastGSI1SK,omitempty"`
	Done   bool   `dynamodbav:"done,omitempty"`
}

// LocaleCopies is what MigrateLocaleCopies did.
type LocaleCopies struct {
	// Posts got copies; Copies is how many copies were put or got
	// their GSI1 entry.
	Posts, Copies int
	// Pages got their copy in their locale's list (pagelocales.go).
	Pages int
}

// MigrateLocaleCopies writes the locale copies that published posts with
// a locale written before them lack (see above), then those of pages
// (migrateLocalePageCopies), each sweep with its checkpoint. It returns
// what it did, or the first error, with the checkpoint left where the
// last finished page put it, so the next run goes on;
// migrations.ErrStopped when WithMigrationStop stopped it. Once both are
// done a run costs two GetItems.
func (s *Store) MigrateLocaleCopies(ctx context.Context) (LocaleCopies, error) {
	var out LocaleCopies
	err := s.sweepGSI1(ctx, "locale copies", s.ks.LocaleCopiesMark(), s.ks.Partition(keys.FeedPartition), func(it map[string]types.AttributeValue) error {
		var p struct {
			ID     string `dynamodbav:"id"`
			Locale string `dynamodbav:"locale"`
		}
		if err := attributevalue.UnmarshalMap(it, &p); err != nil {
			return fmt.Errorf("decode post: %w", err)
		}
		if p.Locale == "" {
			return nil
		}
		n, err := s.addLocaleCopies(ctx, p.ID)
		if n > 0 {
			out.Posts++
			out.Copies += n
		}
		return err
	})
	if err != nil {
		return out, err
	}
	out.Pages, err = s.migrateLocalePageCopies(ctx)
	return out, err
}

// sweepGSI1 calls each for every item of the GSI1 partition part, a page
// at a time from where the checkpoint mk says the last run stopped, and
// records after each page where it is; a run that reaches the end marks
// mk done, and from then on costs one GetItem. what names the sweep in
// errors. It returns the first error (the checkpoint left where the last
// finished page put it), or migrations.ErrStopped when WithMigrationStop
// stopped it.
func (s *Store) sweepGSI1(ctx context.Context, what string, mk key, part string, each func(map[string]types.AttributeValue) error) error {
	var at localeCopiesMark
	err := s.db.Get(ctx, mk, true, &at)
	switch {
	case err == nil && at.Done:
		return nil
	case err != nil && !errors.Is(err, ErrNotFound):
		return fmt.Errorf("%s: read checkpoint: %w", what, err)
	}
	in, err := s.db.KeyQuery(expression.Key(keys.AttrGSI1PK).Equal(expression.Value(part)))
	if err != nil {
		return err
	}
	size := localeCopiesPage
	if s.migrationStop.size > 0 {
		size = s.migrationStop.size
	}
	// GSI1 is never read consistently; an item it has not shown yet was
	// written by this version, with its copies.
	in.IndexName, in.Limit, in.ConsistentRead = aws.String(keys.IndexGSI1), aws.Int32(int32(size)), nil
	if at.Last.PK != "" {
		in.ExclusiveStartKey, err = attributevalue.MarshalMap(map[string]string{
			"PK": at.Last.PK, "SK": at.Last.SK, keys.AttrGSI1PK: at.GSI1PK, keys.AttrGSI1SK: at.GSI1SK})
		if err != nil {
			return fmt.Errorf("%s: checkpoint: %w", what, err)
		}
	}
	for pages := 0; ; pages++ {
		if s.migrationStop.pages > 0 && pages == s.migrationStop.pages {
			return migrations.ErrStopped
		}
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return fmt.Errorf("%s: read %s: %w", what, part, err)
		}
		for _, it := range page.Items {
			if err := each(it); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
		}
		next := localeCopiesMark{PK: mk.PK, SK: mk.SK, Type: typeLocaleCopiesMark, Done: len(page.LastEvaluatedKey) == 0}
		if !next.Done {
			var last map[string]string
			if err := attributevalue.UnmarshalMap(page.LastEvaluatedKey, &last); err != nil {
				return fmt.Errorf("%s: checkpoint: %w", what, err)
			}
			next.Last, next.GSI1PK, next.GSI1SK = key{PK: last["PK"], SK: last["SK"]}, last[keys.AttrGSI1PK], last[keys.AttrGSI1SK]
		}
		av, err := attributevalue.MarshalMap(next)
		if err != nil {
			return fmt.Errorf("%s: checkpoint: %w", what, err)
		}
		if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: av}); err != nil {
			return fmt.Errorf("%s: checkpoint: %w", what, err)
		}
		if next.Done {
			return nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// addLocaleCopies writes the locale copies the post id lacks, and
// returns how many it wrote: none for a post that is gone, a draft, one
// without a locale or one that has them all.
func (s *Store) addLocaleCopies(ctx context.Context, id string) (int, error) {
	return dynamo.RetryWrite(ctx, func() (int, error) {
		p, err := s.readPostItems(ctx, id, true, false)
		switch {
		case errors.Is(err, ErrNotFound):
			return 0, nil
		case err != nil:
			return 0, fmt.Errorf("locale copies of post %q: %w", id, err)
		}
		if !p.published() || p.Locale == "" {
			return 0, nil
		}
		c := *p
		if p.counts != nil {
			c.CommentCount = p.counts.CommentCount
		}
		lists := c.localeListCopies(s.ks)
		var ks []key
		for _, l := range lists {
			ks = append(ks, key{PK: l.PK, SK: l.SK})
		}
		for _, a := range p.authorIDs() {
			ks = append(ks, s.ks.AuthorCopy(a, p.publishedAt(), id))
		}
		have, err := s.db.BatchGet(ctx, ks, true)
		if err != nil {
			return 0, fmt.Errorf("locale copies of post %q: %w", id, err)
		}
		t := s.db.NewTxn()
		var errs []error
		for _, l := range lists {
			if _, ok := have[key{PK: l.PK, SK: l.SK}]; !ok {
				errs = append(errs, t.Put(l, ptr(dynamo.CondNotExists()), dynamo.ErrRetry))
			}
		}
		for _, a := range p.authorIDs() {
			k := s.ks.AuthorCopy(a, p.publishedAt(), id)
			it, ok := have[k]
			if _, indexed := it[keys.AttrGSI1PK]; !ok || indexed {
				continue
			}
			ac := c.authorCopyOf(s.ks, a)
			upd := expression.Set(expression.Name(keys.AttrGSI1PK), expression.Value(ac.GSI1PK)).
				Set(expression.Name(keys.AttrGSI1SK), expression.Value(ac.GSI1SK))
			errs = append(errs, t.Update(k, upd, ptr(dynamo.CondExists()), dynamo.ErrRetry))
		}
		n := t.Len()
		if n == 0 {
			return 0, nil
		}
		errs = append(errs, t.Check(s.ks.Post(id), asCopied(p), dynamo.ErrRetry))
		if p.counts != nil {
			errs = append(errs, t.Check(s.ks.PostCount(id), expression.Name("commentCount").Equal(expression.Value(p.counts.CommentCount)), dynamo.ErrRetry))
		}
		if err := errors.Join(errs...); err != nil {
			return 0, err
		}
		if err := s.db.Exec(ctx, t); err != nil {
			return 0, fmt.Errorf("locale copies of post %q: %w", id, err)
		}
		return n, nil
	})
}

// asCopied holds when the post item is still as p: what unchanged checks,
// and the versions of the names and the renderer that its copies carry,
// which renames and re-renders change without a new version.
func asCopied(p *postItem) expression.ConditionBuilder {
	cond := unchanged(p).And(sameOrAbsent("renderVersion", p.RenderVersion))
	for _, c := range p.Cats {
		cond = cond.And(sameVer("catVer."+c.Slug, p.CatVer, c.Slug))
	}
	for _, a := range p.CoAuthors {
		cond = cond.And(sameVer("coAuthorVer."+a.ID, p.CoAuthorVer, a.ID))
	}
	for _, t := range p.Tags {
		cond = cond.And(sameVer("tagVer."+t.Slug, p.TagVer, t.Slug))
	}
	return cond
}

// sameVer holds when the attribute name is vers[k], or absent when vers
// has no k.
func sameVer(name string, vers map[string]int64, k string) expression.ConditionBuilder {
	v, ok := vers[k]
	if !ok {
		return expression.Name(name).AttributeNotExists()
	}
	return expression.Name(name).Equal(expression.Value(v))
}

// sameOrAbsent holds when the attribute name is v, or absent when v is
// empty.
func sameOrAbsent(name, v string) expression.ConditionBuilder {
	if v == "" {
		return expression.Name(name).AttributeNotExists()
	}
	return expression.Name(name).Equal(expression.Value(v))
}

// MigrateAllLocaleCopies runs MigrateLocaleCopies in every publication of
// the table's directory (ListPublications, a Query of 100 a page), and
// in the Store's own, and returns what they did together, or the first
// error. A table where every run is done costs a Query and two GetItems
// a publication.
func (s *Store) MigrateAllLocaleCopies(ctx context.Context) (LocaleCopies, error) {
	var out LocaleCopies
	err := s.inEveryPublication(ctx, "locale copies", func(st *Store) error {
		did, err := st.MigrateLocaleCopies(ctx)
		out.Posts += did.Posts
		out.Copies += did.Copies
		out.Pages += did.Pages
		return err
	})
	return out, err
}
