package frontend

// SearchPath is the path of the frontend's search page, which takes the
// words to search for in its query parameter SearchParam
// ("/search?q=words"): the page a WebSite's SearchAction in JSON-LD
// points at.
const SearchPath = "/search"

// SearchParam is the query parameter of SearchPath that holds the words.
const SearchParam = "q"
