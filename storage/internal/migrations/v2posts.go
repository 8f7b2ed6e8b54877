package migrations

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// The posts of layout 1 to layout 2 (see v2.go): each post without slugs
// is written again with its copies, as layout 2 wrote a post, and counted
// in its month.

// The item types and attributes of layout 2's posts and counters.
const (
	v2TypeAuthorPost   = "authorPost"
	v2TypeCategoryPost = "categoryPost"
	v2TypeStats        = "stats"
	v2Published        = "PUBLISHED"
	v2MonthPrefix      = "month#"
	v2Scheduled        = "scheduled"
)

func v2PostKey(id string) key { return key{PK: v2PostPrefix + id, SK: v2PostPrefix + id} }

func v2CategoryKey(slug string) key { return key{PK: v2CatPrefix + slug, SK: v2CatPrefix + slug} }

func v2StatsKey() key { return key{PK: v2Stats, SK: v2Stats} }

// v2PostSortKey is where a published post sorts in its author's partition
// and its categories' GSI1 partitions.
func v2PostSortKey(publishedAt, id string) string { return v2PostPrefix + publishedAt + "#" + id }

// v2MonthAttr is the attribute of a counter that counts its posts
// published in the month of publishedAt.
func v2MonthAttr(publishedAt string) string { return v2MonthPrefix + publishedAt[:len("2006-01")] }

type v2CatRef struct {
	Slug string `dynamodbav:"slug"`
	Name string `dynamodbav:"name"`
}

type v2Image struct {
	URL    string `dynamodbav:"url"`
	Alt    string `dynamodbav:"alt,omitempty"`
	Width  int    `dynamodbav:"width,omitempty"`
	Height int    `dynamodbav:"height,omitempty"`
}

type v2SEO struct {
	Title        string `dynamodbav:"title,omitempty"`
	Description  string `dynamodbav:"description,omitempty"`
	CanonicalURL string `dynamodbav:"canonicalUrl,omitempty"`
	OGImage      string `dynamodbav:"ogImage,omitempty"`
}

// v2Post is a post item of layout 2 and, without what only the post item
// has (v2Summary), each of its copies. A post of layout 1 is one of these
// without authorSlug, slugs and what is derived from its body.
type v2Post struct {
	PK            string           `dynamodbav:"PK"`
	SK            string           `dynamodbav:"SK"`
	GSI1PK        string           `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK        string           `dynamodbav:"GSI1SK,omitempty"`
	Type          string           `dynamodbav:"type"`
	ID            string           `dynamodbav:"id"`
	Slug          string           `dynamodbav:"slug"`
	Title         string           `dynamodbav:"title"`
	Excerpt       string           `dynamodbav:"excerpt,omitempty"`
	Body          string           `dynamodbav:"body,omitempty"`
	Status        string           `dynamodbav:"status"`
	AuthorID      string           `dynamodbav:"authorId"`
	AuthorName    string           `dynamodbav:"authorName"`
	AuthorSlug    string           `dynamodbav:"authorSlug,omitempty"`
	AuthorVer     int64            `dynamodbav:"authorVer"`
	Cats          []v2CatRef       `dynamodbav:"cats,omitempty"`
	CatVer        map[string]int64 `dynamodbav:"catVer,omitempty"`
	CreatedAt     string           `dynamodbav:"createdAt"`
	UpdatedAt     string           `dynamodbav:"updatedAt"`
	PublishedAt   string           `dynamodbav:"publishedAt,omitempty"`
	Version       int64            `dynamodbav:"version"`
	CommentCount  int64            `dynamodbav:"commentCount"`
	ThreadCount   int64            `dynamodbav:"threadCount,omitempty"`
	AutoExcerpt   string           `dynamodbav:"autoExcerpt,omitempty"`
	Words         int              `dynamodbav:"words,omitempty"`
	Minutes       int              `dynamodbav:"minutes,omitempty"`
	HTML          string           `dynamodbav:"bodyHtml,omitempty"`
	TOC           []tocEntry       `dynamodbav:"toc,omitempty"`
	RenderVersion string           `dynamodbav:"renderVersion,omitempty"`
	Cover         *v2Image         `dynamodbav:"cover,omitempty"`
	SEO           *v2SEO           `dynamodbav:"seo,omitempty"`
	Slugs         []string         `dynamodbav:"slugs,omitempty"`
}

// v2Summary returns the post without what only the post item carries.
func (p v2Post) v2Summary() v2Post {
	p.Body, p.HTML, p.TOC, p.SEO, p.Slugs, p.ThreadCount, p.RenderVersion = "", "", nil, nil, nil, 0, ""
	return p
}

// v2Copies returns the copies of a published post: in its author's
// partition and in each of its categories.
func (p *v2Post) v2Copies() []v2Post {
	if p.Status != v2Published {
		return nil
	}
	sk := v2PostSortKey(p.PublishedAt, p.ID)
	ac := p.v2Summary()
	ac.PK, ac.SK, ac.Type, ac.GSI1PK, ac.GSI1SK = v2AuthorPrefix+p.AuthorID, sk, v2TypeAuthorPost, "", ""
	out := []v2Post{ac}
	for _, c := range p.Cats {
		cc := p.v2Summary()
		cc.PK, cc.SK, cc.Type, cc.GSI1PK, cc.GSI1SK = v2PostPrefix+p.ID, v2CatPrefix+c.Slug, v2TypeCategoryPost, v2CatPrefix+c.Slug, sk
		out = append(out, cc)
	}
	return out
}

// v2Names is what a post copies from its author or a category.
type v2Names struct {
	Name    string `dynamodbav:"name"`
	Slug    string `dynamodbav:"slug"`
	NameVer int64  `dynamodbav:"nameVer"`
}

// v2PostIDs lists the posts of the author authorID: published and
// scheduled from its partition's copies, drafts from its GSI1 partition.
func (e *Env) v2PostIDs(ctx context.Context, authorID string) ([]string, error) {
	published, err := e.queryAttr(ctx, false, expression.Key("PK").Equal(expression.Value(v2AuthorPrefix+authorID)).
		And(expression.Key("SK").BeginsWith(v2PostPrefix)), "id")
	if err != nil {
		return nil, err
	}
	drafts, err := e.partitionIDs(ctx, v2DraftPrefix+authorID, "id")
	return append(published, drafts...), err
}

// v2WritePost writes the post id as layout 2 wrote a post, when it has no
// slugs (no later version wrote it), in one transaction: the post item
// with its slug as its slugs, its author's and categories' names and
// versions as they are now, and what is derived from its body (rendered
// now); its copies likewise; and, when it is published, one more post in
// its month on its author, its categories and STATS, which layout 1 did
// not count by month, each guarded by the nameVer of the names it copied.
// The post item is updated on the condition that it is as read; it gets no new
// version or updatedAt. It reports whether it wrote, and whether the body
// rendered.
func (e *Env) v2WritePost(ctx context.Context, id string) (did, rendered bool, err error) {
	rendered = true
	did, err = dynamo.RetryWrite(ctx, func() (bool, error) {
		var before v2Post
		switch err := e.DB.Get(ctx, v2PostKey(id), true, &before); {
		case errors.Is(err, dynamo.ErrNotFound):
			return false, nil
		case err != nil:
			return false, err
		case len(before.Slugs) > 0:
			return false, nil
		}
		keys := []key{v2AuthorKey(before.AuthorID)}
		for _, c := range before.Cats {
			keys = append(keys, v2CategoryKey(c.Slug))
		}
		keys = append(keys, v2StatsKey())
		found, err := e.DB.BatchGet(ctx, keys, true)
		if err != nil {
			return false, err
		}
		after := before
		after.Slugs = []string{before.Slug}
		if after.HTML == "" && after.Body != "" {
			switch d, err := e.derive(ctx, after.Body); {
			case errors.Is(err, errUnrendered):
				rendered = false
			case err != nil:
				return false, err
			default:
				after.HTML, after.TOC, after.Words, after.Minutes = d.HTML, d.TOC, d.Words, d.Minutes
				after.AutoExcerpt, after.RenderVersion = d.AutoExcerpt, d.RenderVersion
			}
		}
		if err := v2SetNames(&after, found); err != nil {
			return false, err
		}
		t := e.DB.NewTxn()
		if err := e.v2PostActions(t, &before, &after, found); err != nil {
			return false, err
		}
		if err := e.DB.Exec(ctx, t); err != nil {
			return false, err
		}
		return true, nil
	})
	if err != nil {
		return false, rendered, fmt.Errorf("migrate post %q: %w", id, err)
	}
	return did, rendered, nil
}

// v2SetNames copies into p the names and versions of its author and
// categories as found, keeping those it carries of any not found.
func v2SetNames(p *v2Post, found map[key]item) error {
	if it, ok := found[v2AuthorKey(p.AuthorID)]; ok {
		var a v2Names
		if err := attributevalue.UnmarshalMap(it, &a); err != nil {
			return fmt.Errorf("decode author: %w", err)
		}
		p.AuthorName, p.AuthorSlug, p.AuthorVer = a.Name, a.Slug, a.NameVer
	}
	p.Cats = slices.Clone(p.Cats)
	p.CatVer = maps.Clone(p.CatVer)
	for i, c := range p.Cats {
		it, ok := found[v2CategoryKey(c.Slug)]
		if !ok {
			continue
		}
		var n v2Names
		if err := attributevalue.UnmarshalMap(it, &n); err != nil {
			return fmt.Errorf("decode category: %w", err)
		}
		p.Cats[i].Name = n.Name
		p.CatVer[c.Slug] = n.NameVer
	}
	return nil
}

// v2PostActions adds to t the post item after, written on the condition that
// it is still before (version, counts, names' versions, slugs, GSI1 entry,
// body), its copies, and its counters' changes (v2Counter).
func (e *Env) v2PostActions(t *dynamo.Txn, before, after *v2Post, found map[key]item) error {
	threads := expression.Name("threadCount").Equal(expression.Value(before.ThreadCount))
	if before.ThreadCount == 0 {
		threads = expression.Name("threadCount").AttributeNotExists().Or(threads)
	}
	unchanged := expression.Name("version").Equal(expression.Value(before.Version)).
		And(expression.Name("commentCount").Equal(expression.Value(before.CommentCount))).
		And(threads).
		And(expression.Name("authorVer").Equal(expression.Value(before.AuthorVer))).
		And(expression.AttributeNotExists(expression.Name("slugs"))).
		And(expression.Name("goLiveAt").AttributeNotExists())
	// A later version's write may move the post on without a new version
	// (package storage moves a post of layout 1 to layout 4 when a comment
	// meets it): its body leaves the post item and its GSI1 entry moves.
	// Such a post is not this step's to write.
	if before.GSI1PK == "" {
		unchanged = unchanged.And(expression.Name("GSI1PK").AttributeNotExists())
	} else {
		unchanged = unchanged.And(expression.Name("GSI1PK").Equal(expression.Value(before.GSI1PK)))
	}
	if before.Body != "" {
		unchanged = unchanged.And(expression.Name("body").AttributeExists())
	}
	errs := []error{t.Update(v2PostKey(after.ID), v2Added(after), &unchanged, dynamo.ErrRetry)}
	for _, c := range after.v2Copies() {
		errs = append(errs, t.Put(c, nil, nil))
	}
	now := e.nowKey()
	nameVer := func(v int64) *expression.ConditionBuilder {
		return ptr(expression.Name("nameVer").Equal(expression.Value(v)))
	}
	errs = append(errs, v2Counter(t, after, v2AuthorKey(after.AuthorID), nameVer(after.AuthorVer), found, now))
	for _, c := range after.Cats {
		errs = append(errs, v2Counter(t, after, v2CategoryKey(c.Slug), nameVer(after.CatVer[c.Slug]), found, now))
	}
	errs = append(errs, v2Counter(t, after, v2StatsKey(), nil, found, now))
	return errors.Join(errs...)
}

// v2Added sets on the post item what this step adds to a post: its slugs,
// the names and versions it copies, and what is derived from its body.
// The step updates the item rather than putting it whole, so that it
// keeps what it does not know of.
func v2Added(p *v2Post) expression.UpdateBuilder {
	upd := expression.Set(expression.Name("slugs"), expression.Value(p.Slugs)).
		Set(expression.Name("authorName"), expression.Value(p.AuthorName)).
		Set(expression.Name("authorVer"), expression.Value(p.AuthorVer))
	if p.AuthorSlug != "" {
		upd = upd.Set(expression.Name("authorSlug"), expression.Value(p.AuthorSlug))
	}
	if len(p.Cats) > 0 {
		upd = upd.Set(expression.Name("cats"), expression.Value(p.Cats)).
			Set(expression.Name("catVer"), expression.Value(p.CatVer))
	}
	if p.HTML != "" {
		upd = upd.Set(expression.Name("bodyHtml"), expression.Value(p.HTML)).
			Set(expression.Name("words"), expression.Value(p.Words)).
			Set(expression.Name("minutes"), expression.Value(p.Minutes)).
			Set(expression.Name("renderVersion"), expression.Value(p.RenderVersion))
		if len(p.TOC) > 0 {
			upd = upd.Set(expression.Name("toc"), expression.Value(p.TOC))
		}
		if p.AutoExcerpt != "" {
			upd = upd.Set(expression.Name("autoExcerpt"), expression.Value(p.AutoExcerpt))
		}
	}
	return upd
}

// v2Counter adds to t what writing the post p does to its counter k: one
// more post in its month when published (a post of layout 1 was counted
// in total, not by month), the entries of other posts whose time has
// passed removed on the way (each on the condition that it is as found),
// and the guard that the names p copied are current; for a draft, the
// guard alone.
func v2Counter(t *dynamo.Txn, p *v2Post, k key, guard *expression.ConditionBuilder, found map[key]item, now string) error {
	cond := guard
	and := func(b expression.ConditionBuilder) {
		if cond == nil {
			cond = &b
		} else {
			cond = ptr(cond.And(b))
		}
	}
	if p.Status != v2Published {
		if cond == nil {
			return nil
		}
		return t.Check(k, *cond, dynamo.ErrRetry)
	}
	upd := expression.Add(expression.Name(v2MonthAttr(p.PublishedAt)), expression.Value(1))
	if entries, ok := found[k][v2Scheduled].(*types.AttributeValueMemberM); ok {
		for _, other := range slices.Sorted(maps.Keys(entries.Value)) {
			at, isString := entries.Value[other].(*types.AttributeValueMemberS)
			if !isString || other == p.ID || at.Value > now {
				continue
			}
			path := expression.Name(v2Scheduled + "." + other)
			upd = upd.Remove(path)
			and(path.Equal(expression.Value(at.Value)))
		}
	}
	if k == v2StatsKey() {
		// STATS is made by the first write that counts something.
		return t.Update(k, upd.Set(expression.Name("type"), expression.Value(v2TypeStats)), cond, dynamo.ErrRetry)
	}
	and(dynamo.CondExists())
	return t.Update(k, upd, cond, dynamo.ErrRetry)
}
