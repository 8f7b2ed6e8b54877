package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestGraphQLOverHTTP checks the answers the GraphQL over HTTP
// specification asks for, in both response media types: a request error
// is 200 in application/json (which older clients expect) and 400 in
// application/graphql-response+json, never has a data entry, and a
// request that names no query is 400 in both.
func TestGraphQLOverHTTP(t *testing.T) {
	s := newServer(t)
	const (
		jsonType     = "application/json"
		responseType = "application/graphql-response+json"
	)
	cases := []struct {
		name     string
		body     string
		accept   string
		status   int
		data     bool
		errors   bool
		errCode  string
		respType string
	}{
		{"a query succeeds", `{"query":"{ __typename }"}`, responseType, 200, true, false, "", responseType},
		{"no Accept header means application/json", `{"query":"{ __typename }"}`, "", 200, true, false, "", jsonType},
		{"a document that does not parse, in application/json", `{"query":"{"}`, jsonType, 200, false, true, "GRAPHQL_PARSE_FAILED", jsonType},
		{"a document that does not parse, in graphql-response+json", `{"query":"{"}`, responseType, 400, false, true, "GRAPHQL_PARSE_FAILED", responseType},
		{"an invalid document, in application/json", `{"query":"{ nope }"}`, jsonType, 200, false, true, "GRAPHQL_VALIDATION_FAILED", jsonType},
		{"an invalid document, in graphql-response+json", `{"query":"{ nope }"}`, responseType, 400, false, true, "GRAPHQL_VALIDATION_FAILED", responseType},
		{"variables that do not coerce, in application/json", `{"query":"query($n: Int) { posts(first: $n) { totalCount } }","variables":{"n":"ten"}}`,
			jsonType, 200, false, true, "GRAPHQL_VALIDATION_FAILED", jsonType},
		{"variables that do not coerce, in graphql-response+json", `{"query":"query($n: Int) { posts(first: $n) { totalCount } }","variables":{"n":"ten"}}`,
			responseType, 400, false, true, "GRAPHQL_VALIDATION_FAILED", responseType},
		{"no query, in application/json", `{"qeury":"{ __typename }"}`, jsonType, 400, false, true, "", jsonType},
		{"no query, in graphql-response+json", `{"qeury":"{ __typename }"}`, responseType, 400, false, true, "", responseType},
		{"an unknown persisted query asks for the query", `{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"` + strings.Repeat("0", 64) + `"}}}`,
			jsonType, 200, false, true, "PERSISTED_QUERY_NOT_FOUND", jsonType},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			headers := map[string]string{}
			if c.accept != "" {
				headers["Accept"] = c.accept
			}
			status, header, body := entries(t, s.fetch(t, http.MethodPost, s.url, c.body, headers))
			equal(t, "status", status, c.status)
			equal(t, "content type", header.Get("Content-Type"), c.respType)
			_, hasData := body["data"]
			equal(t, "has data", hasData, c.data)
			var errs []struct {
				Extensions struct{ Code string }
			}
			if raw, ok := body["errors"]; ok {
				if err := json.Unmarshal(raw, &errs); err != nil {
					t.Fatal(err)
				}
			}
			equal(t, "has errors", len(errs) > 0, c.errors)
			if c.errCode != "" && len(errs) > 0 {
				equal(t, "code", errs[0].Extensions.Code, c.errCode)
			}
		})
	}

	t.Run("a mutation over GET is 405 and changes nothing", func(t *testing.T) {
		q := url.Values{"query": {`mutation { createCategory(input: {slug: "via-get", name: "Via GET"}) { category { slug } } }`}}
		status, header, body := entries(t, s.fetch(t, http.MethodGet, s.url+"?"+q.Encode(), "", nil))
		equal(t, "status", status, http.StatusMethodNotAllowed)
		equal(t, "Allow", header.Get("Allow"), "POST")
		_, hasData := body["data"]
		equal(t, "has data", hasData, false)
		cats := ok[*CategoriesResponse](t)(Categories(context.Background(), s.client))
		equal(t, "categories", len(cats.Categories), 0)
	})

	t.Run("a query over GET succeeds", func(t *testing.T) {
		status, _, body := entries(t, s.fetch(t, http.MethodGet, s.url+"?query="+url.QueryEscape("{ __typename }"), "", nil))
		equal(t, "status", status, http.StatusOK)
		equal(t, "data", string(body["data"]), `{"__typename":"Query"}`)
	})
}

// entries returns the status, the headers and the top-level entries of
// the JSON body of a.
func entries(t *testing.T, a httpAnswer) (int, http.Header, map[string]json.RawMessage) {
	t.Helper()
	var body map[string]json.RawMessage
	if err := json.Unmarshal([]byte(a.body), &body); err != nil {
		t.Fatalf("body %q: %v", a.body, err)
	}
	return a.status, a.header, body
}
