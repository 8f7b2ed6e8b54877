package migrations

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/markdown"
	"github.com/blogql/blog/storage/internal/dynamo"
)

// Layout 1 to layout 2 (see Run). This step is frozen: the items it reads
// and writes (authors, author slugs, posts and their copies, comments,
// counters), their keys, and how it makes an author's slug are its own
// copies below (v2*.go), of what the writes of layout 2 did when it
// shipped, so a later change of the domain's writes does not change what
// it does. A post it writes is of layout 2, its body on its own item and
// in its feed shard; v3 and v4 take it from there. A post that a later
// version wrote before the migration (it has slugs) is left to
// Env.Renamed.

// The keys and item types of layout 2 that this step uses.
const (
	v2AuthorPrefix     = "AUTHOR#"
	v2AuthorSlugPrefix = "AUTHORSLUG#"
	v2CatPrefix        = "CAT#"
	v2PostPrefix       = "POST#"
	v2CommentPrefix    = "COMMENT#"
	v2ThreadPrefix     = "THREAD#"
	v2Authors          = "AUTHORS"
	v2Categories       = "CATEGORIES"
	v2Stats            = "STATS"
	v2TypeAuthor       = "author"
	v2TypeCategory     = "category"
	v2TypeAuthorSlug   = "authorSlug"
	v2DraftPrefix      = "DRAFT#"
	// v2SlugCandidates and v2MaxSlugLength are how many slugs an author's
	// name gave, and how long one could be.
	v2SlugCandidates = 10
	v2MaxSlugLength  = 100
)

func v2AuthorKey(id string) key { return key{PK: v2AuthorPrefix + id, SK: v2AuthorPrefix + id} }

func v2AuthorSlugKey(slug string) key {
	return key{PK: v2AuthorSlugPrefix + slug, SK: v2AuthorSlugPrefix + slug}
}

// v2Author is what this step reads of an author.
type v2Author struct {
	Name    string `dynamodbav:"name"`
	Slug    string `dynamodbav:"slug"`
	Version int64  `dynamodbav:"version"`
	NameVer int64  `dynamodbav:"nameVer"`
}

// v2AuthorSlug is an author's slug reservation.
type v2AuthorSlug struct {
	PK       string `dynamodbav:"PK"`
	SK       string `dynamodbav:"SK"`
	Type     string `dynamodbav:"type"`
	AuthorID string `dynamodbav:"authorId"`
}

// v2SlugsFromName returns the slugs an author of name could take, in
// order of preference.
func v2SlugsFromName(name string) []string {
	base := markdown.Slugify(name, v2MaxSlugLength-len("-123456"))
	if base == "" {
		base = "author"
	}
	out := []string{base}
	for i := 2; i < v2SlugCandidates; i++ {
		out = append(out, fmt.Sprintf("%s-%d", base, i))
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return append(out, base+"-"+hex.EncodeToString(b))
}

// errV2SlugTaken is the failure of a put of an author's slug reservation
// that another holds.
var errV2SlugTaken = errors.New("slug taken")

// v2PickSlug returns the first of candidates that found holds no
// reservation of.
func v2PickSlug(found map[key]item, candidates []string) (string, error) {
	for _, c := range candidates {
		if _, ok := found[v2AuthorSlugKey(c)]; !ok {
			return c, nil
		}
	}
	return "", fmt.Errorf("slugs %s to %s: %w", candidates[0], candidates[len(candidates)-1], errV2SlugTaken)
}

// v2 brings a table of layout 1 to layout 2 (see Run)
// and counts what it did in m.
func (e *Env) v2(ctx context.Context, m *Result) error {
	var mu sync.Mutex
	count := func(n *int, did bool) {
		if did {
			mu.Lock()
			*n++
			mu.Unlock()
		}
	}

	authors, err := e.partitionIDs(ctx, v2Authors, "id")
	if err != nil {
		return fmt.Errorf("migrate: list authors: %w", err)
	}
	// One author after another, oldest first (the order of the AUTHORS
	// partition), so that of two authors of one name the older gets the
	// slug without a number, whatever runs at once.
	for _, id := range authors {
		did, err := e.v2SlugAuthor(ctx, id)
		count(&m.Authors, did)
		if err != nil {
			return err
		}
	}

	var posts []string
	for _, a := range authors {
		ids, err := e.v2PostIDs(ctx, a)
		if err != nil {
			return fmt.Errorf("migrate: list posts of author %q: %w", a, err)
		}
		posts = append(posts, ids...)
	}
	slices.Sort(posts)
	posts = slices.Compact(posts)
	// A post written here takes its author's slug with it; one written by
	// this version before (it has slugs) may carry none, as its author had
	// none then, and has it copied in as a new slug is.
	err = eachLimited(ctx, posts, func(ctx context.Context, id string) error {
		did, rendered, err := e.v2WritePost(ctx, id)
		count(&m.Posts, did)
		if !rendered {
			mu.Lock()
			m.Unrendered = append(m.Unrendered, id)
			mu.Unlock()
		}
		if err != nil {
			return err
		}
		if !did && e.Renamed != nil {
			if err := e.Renamed(ctx, id); err != nil {
				return fmt.Errorf("migrate post %q: author's slug: %w", id, err)
			}
		}
		n, err := e.v2Comments(ctx, id)
		mu.Lock()
		m.Comments += n
		mu.Unlock()
		return err
	})
	if err != nil {
		return err
	}

	cats, err := e.partitionIDs(ctx, v2Categories, "slug")
	if err != nil {
		return fmt.Errorf("migrate: list categories: %w", err)
	}
	counters := append(mapKeys(authors, v2AuthorKey), mapKeys(cats, func(slug string) key { return key{PK: v2CatPrefix + slug, SK: v2CatPrefix + slug} })...)
	counters = append(counters, key{PK: v2Stats, SK: v2Stats})
	for _, k := range counters {
		did, err := e.v2TidyCounter(ctx, k)
		count(&m.Counters, did)
		if err != nil {
			return err
		}
	}
	return nil
}

// v2SlugAuthor gives the author id a slug when it has none. It reports
// whether it gave one.
func (e *Env) v2SlugAuthor(ctx context.Context, id string) (bool, error) {
	did, err := dynamo.RetryWrite(ctx, func() (bool, error) {
		var a v2Author
		if err := e.DB.Get(ctx, v2AuthorKey(id), true, &a); err != nil {
			if errors.Is(err, dynamo.ErrNotFound) {
				return false, nil
			}
			return false, fmt.Errorf("author %q: %w", id, err)
		}
		if a.Slug != "" {
			return false, nil
		}
		candidates := v2SlugsFromName(a.Name)
		found, err := e.DB.BatchGet(ctx, mapKeys(candidates, v2AuthorSlugKey), true)
		if err != nil {
			return false, err
		}
		slug, err := v2PickSlug(found, candidates)
		if err != nil {
			return false, err
		}
		upd := expression.Set(expression.Name("slug"), expression.Value(slug)).
			Set(expression.Name("slugs"), expression.Value([]string{slug})).
			Set(expression.Name("version"), expression.Value(a.Version+1)).
			Set(expression.Name("nameVer"), expression.Value(a.NameVer+1))
		cond := expression.Name("version").Equal(expression.Value(a.Version)).And(expression.Name("slug").AttributeNotExists())
		k := v2AuthorSlugKey(slug)
		t := e.DB.NewTxn()
		if err := t.Update(v2AuthorKey(id), upd, &cond, dynamo.ErrRetry); err != nil {
			return false, err
		}
		res := v2AuthorSlug{PK: k.PK, SK: k.SK, Type: v2TypeAuthorSlug, AuthorID: id}
		if err := t.Put(res, ptr(dynamo.CondNotExists()), errV2SlugTaken); err != nil {
			return false, err
		}
		if err := e.DB.Exec(ctx, t); err != nil {
			if errors.Is(err, errV2SlugTaken) {
				// Taken meanwhile: the next candidate.
				return false, dynamo.ErrRetry
			}
			return false, err
		}
		return true, nil
	})
	if err != nil {
		return false, fmt.Errorf("migrate author %q: %w", id, err)
	}
	return did, nil
}

// v2ScheduledKeep is the entry with no time that layout 1 kept in every
// scheduled map.
const v2ScheduledKeep = "-"

// v2ClearedAttrs are, by item type, the optional attributes that layout 1
// kept as empty strings once cleared, and that this layout removes.
var v2ClearedAttrs = map[string][]string{
	v2TypeAuthor:   {"bio", "avatarUrl"},
	v2TypeCategory: {"description"},
}

// v2TidyCounter removes from the counter k (an author, a category or STATS)
// what layout 1 left in it: the "-" entry of its scheduled map and the
// empty strings of its cleared attributes. The update is conditional on
// each of them being still there as read, and reads again when a write
// came between. It reports whether it changed the item.
func (e *Env) v2TidyCounter(ctx context.Context, k key) (bool, error) {
	did, err := dynamo.RetryWrite(ctx, func() (bool, error) {
		res, err := e.DB.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(e.DB.Name()), Key: dynamo.MustKey(k), ConsistentRead: aws.Bool(true),
		})
		if err != nil || res.Item == nil {
			return false, err
		}
		it := res.Item
		var head struct {
			Type      string            `dynamodbav:"type"`
			Scheduled map[string]string `dynamodbav:"scheduled"`
		}
		if err := attributevalue.UnmarshalMap(it, &head); err != nil {
			return false, fmt.Errorf("decode: %w", err)
		}
		var (
			upd   expression.UpdateBuilder
			cond  expression.ConditionBuilder
			conds []expression.ConditionBuilder
		)
		if _, ok := head.Scheduled[v2ScheduledKeep]; ok {
			path := expression.Name("scheduled." + v2ScheduledKeep)
			upd = upd.Remove(path)
			conds = append(conds, path.AttributeExists())
		}
		for _, name := range v2ClearedAttrs[head.Type] {
			if v, ok := it[name].(*types.AttributeValueMemberS); ok && v.Value == "" {
				upd = upd.Remove(expression.Name(name))
				conds = append(conds, expression.Name(name).Equal(expression.Value("")))
			}
		}
		switch len(conds) {
		case 0:
			return false, nil
		case 1:
			cond = conds[0]
		default:
			cond = expression.And(conds[0], conds[1], conds[2:]...)
		}
		expr, err := dynamo.BuildExpr(expression.NewBuilder().WithUpdate(upd).WithCondition(cond))
		if err != nil {
			return false, err
		}
		_, err = e.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(e.DB.Name()),
			Key:                       dynamo.MustKey(k),
			UpdateExpression:          expr.Update(),
			ConditionExpression:       expr.Condition(),
			ExpressionAttributeNames:  expr.Names(),
			ExpressionAttributeValues: expr.Values(),
		})
		var failed *types.ConditionalCheckFailedException
		if errors.As(err, &failed) {
			// Changed since read (by another migration, or a write that
			// cleared an attribute again): read it again.
			return false, dynamo.ErrRetry
		}
		return err == nil, err
	})
	if err != nil {
		return false, fmt.Errorf("migrate %s: %w", k.PK, err)
	}
	return did, nil
}
