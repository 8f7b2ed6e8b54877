package graph

import "github.com/blogql/blog/storage"

// The complexity of an operation estimates, before any resolver runs, the
// work it makes and the answer it gets; gqlhttp refuses it above the limit
// (DefaultComplexityLimit). It follows the requests and the items an
// operation reads:
//   - a field costs 1 (a small value: an id, a date, a name) and what it
//     selects;
//   - a field whose value can be large costs 1 more for each costBytes
//     it can hold (sizecost.go);
//   - a field that reads on its own, past the page it is on, costs its
//     requests: previous and next (adjacentCost), a post's place in its
//     series' neighbours (series.go), search and related posts
//     (search.go);
//   - a field read through a loader, in one BatchGetItem for all the
//     items of a page, costs what it reads of each item (a post's
//     series: seriesCost);
//   - a list costs, for each item its page size lets it read, what the
//     item's selection costs (at least 1: an item is read whatever is
//     shown of it), plus its own fields once (connectionFields): a
//     list's totalCount and pageInfo are not the items', so they are not
//     counted once for each item.
//
// tests of this package compute the complexity of every page of the
// TypeScript client (clients/typescript) with its largest page sizes
// and check that it fits with room to spare; tests/limits_test.go checks
// what stays refused.

// listRequestCost is what the request of a list costs (a Query, or the
// BatchGetItem of its page): a hundredth of DefaultComplexityLimit. A
// list asked of each item of another list makes a request for each, so
// a list inside a page of 100 items is over the limit whatever it shows,
// and one inside a page of 20 costs a fifth of it.
const listRequestCost = DefaultComplexityLimit / 100

// minItemCost is the least an item of a list costs, whatever is shown of
// it: it is read.
const minItemCost = 3

// connectionFields is what a list's own fields cost, once, whether they
// are asked or not: totalCount, and pageInfo with its four fields.
const connectionFields = 6

// withConnectionFields makes the fields of every list's own (totalCount,
// pageInfo) cost nothing where they are selected: the list counts them
// once (connectionFields) instead of once for each item of its page.
func withConnectionFields(c *ComplexityRoot) {
	none := func(int) int { return 0 }
	// edges and node hold the items: they cost what the items do.
	items := func(child int) int { return child }
	c.AuthorConnection.Edges, c.AuthorEdge.Node = items, items
	c.CommentConnection.Edges, c.CommentEdge.Node = items, items
	c.DraftConnection.Edges = items
	c.PendingCommentConnection.Edges = items
	c.PostConnection.Edges, c.PostEdge.Node = items, items
	c.ReplyConnection.Edges = items
	c.RevisionConnection.Edges, c.RevisionEdge.Node = items, items
	c.SearchConnection.Edges, c.SearchEdge.Node = items, items
	c.SeriesConnection.Edges, c.SeriesEdge.Node = items, items
	c.SitePageConnection.Edges, c.SitePageEdge.Node = items, items
	c.TagConnection.Edges, c.TagEdge.Node = items, items
	c.AuthorConnection.PageInfo, c.AuthorConnection.TotalCount = none, none
	c.CommentConnection.PageInfo, c.CommentConnection.TotalCount = none, none
	c.DraftConnection.PageInfo, c.DraftConnection.TotalCount = none, none
	c.PendingCommentConnection.PageInfo, c.PendingCommentConnection.TotalCount = none, none
	c.PostConnection.PageInfo, c.PostConnection.TotalCount = none, none
	c.ReplyConnection.PageInfo, c.ReplyConnection.TotalCount = none, none
	c.RevisionConnection.PageInfo, c.RevisionConnection.TotalCount = none, none
	c.SearchConnection.PageInfo, c.SearchConnection.TotalCount = none, none
	c.SeriesConnection.PageInfo = none
	c.SitePageConnection.PageInfo = none
	c.TagConnection.PageInfo = none
	c.PostPage.Nodes = items
	c.PostPage.Number, c.PostPage.Size, c.PostPage.TotalPages, c.PostPage.TotalCount = none, none, none, none
}

// withComplexity gives the schema's fields their complexity, as the
// model above says.
func withComplexity(c *ComplexityRoot) {
	c.Query.Posts = localePostsComplexity
	c.Query.Tags = listComplexity
	c.Tag.Posts = localePostsComplexity
	c.Query.Authors = listComplexity
	c.Author.Posts = localePostsComplexity
	c.Author.Drafts = listComplexity
	c.Category.Posts = localePostsComplexity
	c.Query.PostPage = func(child int, _, _, _ *string, _ int, size *int, _ *string) int {
		return numberedComplexity(child, size)
	}
	c.Category.PostPage = func(child int, _ int, size *int, _ *string) int { return numberedComplexity(child, size) }
	c.Tag.PostPage = func(child int, _ int, size *int, _ *string) int { return numberedComplexity(child, size) }
	c.Author.PostPage = func(child int, _ int, size *int, _ *string) int { return numberedComplexity(child, size) }
	c.Series.PostPage = func(child int, _ int, size *int) int { return numberedComplexity(child, size) }
	c.Post.Comments = listComplexity
	c.Post.Previous = adjacentComplexity
	c.Post.Next = adjacentComplexity
	c.Post.PreviousInCategory = adjacentInComplexity
	c.Post.NextInCategory = adjacentInComplexity
	c.Query.ModerationQueue = listComplexity
	c.Query.Pages = func(child int, first *int, _ *string, last *int, _ *string, _ *bool, _ *string) int {
		return connectionComplexity(child, first, last)
	}
	c.Comment.ReplyConnection = replyComplexity
	c.Webhook.RecentDeliveries = func(child int, first *int) int { return connectionComplexity(child, first, nil) }
	c.Query.Search = searchComplexity
	c.Post.Related = relatedComplexity
	c.Comment.Replies = func(child int) int { return storage.MaxReplyPage * child }
	withSizeCosts(c)
	withSeriesCosts(c)
	withConnectionFields(c)
}
