package storage

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/keys"
)

// Featured posts: a post's "featured" flag gives a published post one more
// copy, POST#<id> / FEATURED, in GSI1 partition FEATURED under the same
// sort key as its category copies. postActions writes it beside the
// category copies and copyKeys names it, so every path that rewrites a
// post's copies (an edit, a rename, publishing, unpublishing, scheduling,
// deleting, a comment's count) keeps it exact with no code of its own,
// and a scheduled featured post stays out of the list until its time as
// it does everywhere else. See doc_layout.go.

// FeaturePost is the input of SetFeatured. ExpectedVersion, when not zero,
// must equal the stored version.
type FeaturePost struct {
	ID              string
	Featured        bool
	ExpectedVersion int64
	IdempotencyKey  string
}

// SetFeatured puts a post on the featured list or takes it off, as one
// post write (a new version). A draft may be featured: it shows in the
// list once it is published and its time has come. It fails as
// UpdatePost does (ErrNotFound, *ConflictError).
func (s *Store) SetFeatured(ctx context.Context, in FeaturePost) (*Post, error) {
	if err := validateID("id", in.ID); err != nil {
		return nil, err
	}
	return s.changePost(ctx, postChange{
		op: "setPostFeatured", id: in.ID, expected: in.ExpectedVersion, key: in.IdempotencyKey, input: in,
	}, func(p *postItem) error {
		p.Featured = in.Featured
		return nil
	})
}

// featuredCopy returns the featured-list copy of a published post.
func (it postItem) featuredCopy(ks keys.Space) postItem {
	k := ks.FeaturedCopy(it.ID)
	it = it.summary()
	it.PK, it.SK, it.Type = k.PK, k.SK, typeFeaturedPost
	it.GSI1PK, it.GSI1SK = ks.Partition(keys.FeaturedPartition), keys.PostSort(it.publishedAt(), it.ID)
	return it
}

// FeaturedPosts returns the featured posts whose time has come, newest
// first, as summaries: one Query of GSI1 partition FEATURED a page.
func (s *Store) FeaturedPosts(ctx context.Context, p PageArgs) (*Result[*Post], error) {
	return queryPage(ctx, s, listQuery{
		list:  "featured-posts",
		index: true,
		cond: expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.Partition(keys.FeaturedPartition))).
			And(expression.Key(keys.AttrGSI1SK).Between(expression.Value(keys.PrefixPost), expression.Value(s.visibleBound()))),
	}, p, (*postItem).post)
}

// CountFeatured returns the number of featured posts whose time has come:
// one Query with Select COUNT (a featured list is short, so one page).
func (s *Store) CountFeatured(ctx context.Context) (int64, error) {
	return s.count(ctx, "featured posts", true,
		expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.Partition(keys.FeaturedPartition))).
			And(expression.Key(keys.AttrGSI1SK).Between(expression.Value(keys.PrefixPost), expression.Value(s.visibleBound()))))
}
