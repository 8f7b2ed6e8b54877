package model

// SearchConnection is a page of search results.
type SearchConnection struct {
	Edges      []*SearchEdge
	PageInfo   *PageInfo
	TotalCount int
	Categories []*SearchFacet
}

// SearchEdge is a search result with its cursor.
type SearchEdge struct {
	Cursor string
	Node   *SearchResult
}

// SearchResult is a post that matched, by id (its post is read through
// the loader), with its score and highlighted title and snippet.
type SearchResult struct {
	PostID  string
	Score   float64
	Title   string
	Snippet string
}

// SearchFacet is a category of a search's results and how many it holds.
type SearchFacet struct {
	Slug  string
	Count int
}
