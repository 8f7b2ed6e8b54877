package storage

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// A link of translations that stores the site's default locale on a
// published post that had none gives the post what a post with a locale
// has (locales.go): its copy in its locale's list, its copies in its
// locale's lists of its categories and tags, and its author copies in
// their authors' lists of its locale; and every summary copy (author,
// category, tag, featured) carries the locale. postJoined writes them
// all in the link's transaction, each copy put whole from the post as
// read, guarded by the post being still as copied (asCopied) and its
// count item's count (which the copies carry) unchanged, so no write
// between the read and the link leaves a copy behind. The link needs no
// new version of the post: an editor's expected version still holds.
//
// Only one post of a link can take the default (two would share it), so
// the copies add at most 10 author copies, 10 category and 10 tag copies
// with their 21 copies in the locale's lists, the featured copy and the
// count item's check: 53 actions, beside the link's own (the group, the
// two posts, and the members of the groups it changes). A link that
// would pass DynamoDB's 100 actions (a post with most of its categories,
// tags and co-authors joining a group of about 45 translations) is
// refused as invalid input, writing nothing: setting the post's locale
// by updatePost first (which rewrites its copies) makes the link small.

// postJoined adds to a link's transaction the copies of the published
// post p (as read) that follow it storing locale where it had none, and
// returns the condition that the post is still as copied. Nothing for a
// draft (its copies are written when it is published) or a post whose
// locale stays.
func postJoined(ks keys.Space, t *dynamo.Txn, m *transMember, locale string) (*expression.ConditionBuilder, error) {
	p, ok := m.item.(*postItem)
	if !ok || p.Locale != "" || locale == "" || !p.published() {
		return nil, nil
	}
	after := *p
	after.Locale = locale
	if p.counts != nil {
		after.CommentCount = p.counts.CommentCount
	}
	var copies []postItem
	for _, id := range after.authorIDs() {
		copies = append(copies, after.authorCopyOf(ks, id))
	}
	for _, c := range after.Cats {
		copies = append(copies, after.categoryCopy(ks, c.Slug))
	}
	for _, tg := range after.Tags {
		copies = append(copies, after.tagCopy(ks, tg.Slug))
	}
	if after.Featured {
		copies = append(copies, after.featuredCopy(ks))
	}
	copies = append(copies, after.localeCopy(ks))
	copies = append(copies, after.localeListCopies(ks)...)
	var errs []error
	for _, c := range copies {
		errs = append(errs, t.Put(c, nil, dynamo.ErrRetry))
	}
	if p.counts != nil {
		errs = append(errs, t.Check(ks.PostCount(p.ID), expression.Name("commentCount").Equal(expression.Value(p.counts.CommentCount)), dynamo.ErrRetry))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return ptr(asCopied(p)), nil
}
