package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
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
		var errs []struct {
			Message    string
			Extensions struct{ Code string }
		}
		if err := json.Unmarshal(body["errors"], &errs); err != nil || len(errs) != 1 {
			t.Fatalf("errors %s: %v", body["errors"], err)
		}
		equal(t, "code", errs[0].Extensions.Code, graph.CodeBadRequest)
		equal(t, "message", errs[0].Message, "GET requests only allow query operations; send a mutation with POST")
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

// TestHTTPRequestsAreCheckedAsHTTPSays sends requests that are wrong at
// the HTTP level. Each gets the status HTTP has for it, an error in the
// API's words (no Go type names), and nothing is run or written: JSON with
// trailing data or a key twice, a body of another media type, other
// methods, empty and repeated Authorization headers.
func TestHTTPRequestsAreCheckedAsHTTPSays(t *testing.T) {
	s := newServer(t)
	create := `mutation { createCategory(input: {slug: "smuggled", name: "Smuggled"}) { category { slug } } }`
	admin := "Bearer " + s.signed(s.claims("admin", "admin"))
	cases := []struct {
		name        string
		method      string
		contentType string
		body        string
		headers     http.Header
		status      int
		header      string // a header the answer must have, "Name: value"
	}{
		{name: "JSON with data after it", method: http.MethodPost, body: `{"query":"{ __typename }"}xyz`, status: 400},
		{name: "JSON with a second object after it", method: http.MethodPost, body: `{"query":"{ __typename }"} {"query":"{ __typename }"}`, status: 400},
		{name: "query twice", method: http.MethodPost, body: `{"query":"{ __typename }","query":` + jsonString(create) + `}`,
			headers: http.Header{"Authorization": {admin}}, status: 400},
		{name: "variables twice", method: http.MethodPost, body: `{"query":"{ __typename }","variables":{},"variables":{}}`, status: 400},
		{name: "a query that is a number", method: http.MethodPost, body: `{"query":5}`, status: 400},
		{name: "variables that are a string", method: http.MethodPost, body: `{"query":"{ __typename }","variables":"x"}`, status: 400},
		{name: "plain text", method: http.MethodPost, contentType: "text/plain", body: `{"query":"{ __typename }"}`, status: 415, header: "Accept-Post: application/json"},
		{name: "a GraphQL document as the body", method: http.MethodPost, contentType: "application/graphql", body: `{ __typename }`, status: 415},
		{name: "no content type", method: http.MethodPost, contentType: "-", body: `{"query":"{ __typename }"}`, status: 415},
		{name: "HEAD", method: http.MethodHead, status: 405, header: "Allow: GET, POST, OPTIONS"},
		{name: "PUT", method: http.MethodPut, body: `{"query":"{ __typename }"}`, status: 405, header: "Allow: GET, POST, OPTIONS"},
		{name: "DELETE", method: http.MethodDelete, status: 405, header: "Allow: GET, POST, OPTIONS"},
		{name: "an empty Authorization header", method: http.MethodPost, body: `{"query":"{ __typename }"}`,
			headers: http.Header{"Authorization": {""}}, status: 401},
		{name: "two Authorization headers", method: http.MethodPost, body: `{"query":` + jsonString(create) + `}`,
			headers: http.Header{"Authorization": {admin, "Bearer other"}}, status: 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, s.url, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			switch c.contentType {
			case "":
				req.Header.Set("Content-Type", "application/json")
			case "-":
			default:
				req.Header.Set("Content-Type", c.contentType)
			}
			for k, v := range c.headers {
				req.Header[k] = v
			}
			a := roundTrip(t, req)
			equal(t, "status", a.status, c.status)
			if name, value, ok := strings.Cut(c.header, ": "); ok {
				equal(t, name, a.header.Get(name), value)
			}
			if c.method == http.MethodHead {
				return
			}
			for _, goTalk := range []string{"RawParams", "map[", "interface", "Go ", "struct"} {
				if strings.Contains(a.body, goTalk) {
					t.Errorf("answer %s speaks Go (%q)", a.body, goTalk)
				}
			}
			if strings.Contains(a.body, `"data"`) {
				t.Errorf("answer %s has data", a.body)
			}
		})
	}
	cats := ok[*CategoriesResponse](t)(Categories(context.Background(), s.client))
	equal(t, "categories written", len(cats.Categories), 0)

	t.Run("a GET with the query twice", func(t *testing.T) {
		a := s.fetch(t, http.MethodGet, s.url+"?query="+url.QueryEscape("{ __typename }")+"&query="+url.QueryEscape("{ categories { slug } }"), "", nil)
		equal(t, "status", a.status, http.StatusBadRequest)
	})

	t.Run("a GET whose variables or extensions are no JSON object", func(t *testing.T) {
		for _, param := range []string{"variables=x", "variables=%5B%5D", "variables=%22s%22", "variables=%7B%7D%20x", "extensions=x", "extensions=%5B%5D"} {
			a := s.fetch(t, http.MethodGet, s.url+"?query="+url.QueryEscape("{ __typename }")+"&"+param, "", nil)
			equal(t, param+": status", a.status, http.StatusBadRequest)
			var resp struct {
				Errors []struct {
					Message    string
					Extensions struct{ Code string }
				}
			}
			if err := json.Unmarshal([]byte(a.body), &resp); err != nil || len(resp.Errors) != 1 {
				t.Fatalf("%s: answer %s", param, a.body)
			}
			equal(t, param+": code", resp.Errors[0].Extensions.Code, "BAD_REQUEST")
		}
	})

	t.Run("a document of two operations without operationName", func(t *testing.T) {
		a := s.fetch(t, http.MethodPost, s.url, `{"query":"query A { __typename } query B { __typename }"}`, nil)
		if !strings.Contains(a.body, `"the document has 2 operations: name the one to run in operationName"`) || !strings.Contains(a.body, "GRAPHQL_VALIDATION_FAILED") {
			t.Errorf("answer %s does not say to name the operation", a.body)
		}
	})

	t.Run("OPTIONS lists the methods", func(t *testing.T) {
		a := s.fetch(t, http.MethodOptions, s.url, "", nil)
		equal(t, "status", a.status, http.StatusOK)
		equal(t, "Allow", a.header.Get("Allow"), "GET, POST, OPTIONS")
	})
	t.Run("every answer varies with Accept", func(t *testing.T) {
		for _, a := range []httpAnswer{
			s.fetch(t, http.MethodPost, s.url, `{"query":"{ __typename }"}`, nil),
			s.fetch(t, http.MethodGet, s.url+"?query="+url.QueryEscape("{ __typename }"), "", nil),
			s.fetch(t, http.MethodGet, s.url+"?query="+url.QueryEscape("{ nope }"), "", nil),
		} {
			if vary := strings.Join(a.header.Values("Vary"), ", "); !strings.Contains(vary, "Accept") {
				t.Errorf("Vary %q lacks Accept", vary)
			}
		}
	})
}

// TestABodyThatDoesNotArriveIs408 opens a connection to a server that
// gives a request 300 ms to arrive, sends the headers of a POST and only
// part of its body, with a declared length and chunked: the answer is 408
// Request Timeout, not a GraphQL answer, with the answer cache on or off.
func TestABodyThatDoesNotArriveIs408(t *testing.T) {
	s := newServer(t)
	for _, answers := range []bool{false, true} {
		opts := graph.HandlerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		if answers {
			opts.HTTP.Answers = gqlhttp.NewAnswerCache(0, nil)
		}
		hs := httptest.NewUnstartedServer(graph.NewHandler(s.store, opts))
		hs.Config.ReadTimeout = 300 * time.Millisecond
		hs.Start()
		defer hs.Close()
		for name, head := range map[string]string{
			"declared length": "Content-Length: 100\r\n\r\n{\"query\":",
			"chunked":         "Transfer-Encoding: chunked\r\n\r\n9\r\n{\"query\":\r\n",
		} {
			t.Run(fmt.Sprintf("%s, answer cache %t", name, answers), func(t *testing.T) {
				conn, err := net.Dial("tcp", hs.Listener.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: blog\r\nContent-Type: application/json\r\n"+head); err != nil {
					t.Fatal(err)
				}
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				equal(t, "status", resp.StatusCode, http.StatusRequestTimeout)
				if strings.Contains(string(body), `"data"`) {
					t.Errorf("answer %s", body)
				}
			})
		}
	}
}

// TestSchemaOffersNoDefer checks that the schema clients read leaves out
// @defer, which gqlgen declares and no transport here delivers, and that
// a request using it is refused in validation, naming the directive.
func TestSchemaOffersNoDefer(t *testing.T) {
	s := newServer(t)
	resp := s.send(t, request("{ __schema { directives { name } } }", nil), false)
	if len(resp.Errors) > 0 {
		t.Fatalf("introspection: %v", resp.Errors)
	}
	var data struct {
		Schema struct{ Directives []struct{ Name string } } `json:"__schema"`
	}
	if err := json.Unmarshal(resp.Data, &data); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, d := range data.Schema.Directives {
		names[d.Name] = true
	}
	if names["defer"] || !names["include"] || !names["skip"] || !names["deprecated"] {
		t.Errorf("the schema's directives are %v, want include, skip and deprecated and no defer", names)
	}
	resp = s.send(t, request("{ posts(first: 1) { edges { node { id ... @defer { title } } } } }", nil), false)
	if len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" || !strings.Contains(resp.Errors[0].Message, "defer") || resp.Data != nil {
		t.Errorf("@defer: errors %v, data %s; want one GRAPHQL_VALIDATION_FAILED naming it and no data", resp.Errors, resp.Data)
	}
}

// TestIntrospectionCanBeTurnedOff checks a server configured as outside
// the embedded mode: the schema cannot be read, and no validation error
// suggests a name of the schema (fields, arguments, enum values, input
// fields, types, directive arguments), which would spell out what
// introspection hides. With introspection on, each of them suggests one.
func TestIntrospectionCanBeTurnedOff(t *testing.T) {
	s := newServer(t, func(_ *storage.ClientConfig, o *graph.HandlerOptions) { o.HTTP.Introspection = false })
	for _, q := range []string{"{ __schema { types { name } } }", `{ __type(name: "Post") { fields { name } } }`} {
		resp := s.send(t, request(q, nil), false)
		if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" {
			t.Errorf("%s: %+v, want GRAPHQL_VALIDATION_FAILED", q, resp.Errors)
		}
	}
	misspelt := []struct{ name, query string }{
		{"a field", "{ postz(first: 1) { totalCount } }"},
		{"an argument", "{ posts(frist: 1) { totalCount } }"},
		{"a field without its selection", "{ posts }"},
		{"an enum value", "query($s: PostStatus = DRAFTS) { __typename }"},
		{"an input field", `mutation { createCategory(input: {slug: "x", nam: "X"}) { category { slug } } }`},
		{"a type", "{ ...F } fragment F on Querry { __typename }"},
		{"a directive argument", "{ __typename @include(iff: true) }"},
	}
	on := newServer(t)
	for _, m := range misspelt {
		t.Run(m.name, func(t *testing.T) {
			resp := s.send(t, request(m.query, nil), false)
			if len(resp.Errors) == 0 {
				t.Fatal("no error")
			}
			for _, e := range resp.Errors {
				if strings.Contains(e.Message, "Did you mean") {
					t.Errorf("without introspection: %q", e.Message)
				}
			}
			resp = on.send(t, request(m.query, nil), false)
			if !strings.Contains(fmt.Sprint(resp.Errors), "Did you mean") {
				t.Errorf("with introspection: errors %v, want a suggestion", resp.Errors)
			}
		})
	}
	resp := s.send(t, request("{ __typename }", nil), false)
	if len(resp.Errors) > 0 || !bytes.Contains(resp.Data, []byte("Query")) {
		t.Errorf("__typename: %s %v", resp.Data, resp.Errors)
	}
}

// TestVariablesCoerceAsTheSpecificationSays sends variables that the
// specification's input coercion refuses, and some it takes: each refused
// one is a request error whose message names the value (and where it
// sits), before anything is read.
func TestVariablesCoerceAsTheSpecificationSays(t *testing.T) {
	s := newServer(t)
	feed := "query($first: Int) { posts(first: $first) { totalCount } }"
	update := "mutation($input: UpdateCategoryInput!) { updateCategory(input: $input) { category { slug } } }"
	refused := []struct {
		name  string
		query string
		vars  string
		words []string // what the message must name
	}{
		{"an Int past 32 bits", feed, `{"first": 2147483648}`, []string{"2147483648", "32-bit"}},
		{"an Int as a string", feed, `{"first": "10"}`, []string{`"10"`, "non-integer"}},
		{"an Int with a fraction", feed, `{"first": 1.5}`, []string{"1.5", "non-integer"}},
		{"an Int that is true", feed, `{"first": true}`, []string{"true"}},
		{"an Int inside an input, as a string", update, `{"input": {"slug": "go", "expectedVersion": "3"}}`, []string{`"3"`, "input.expectedVersion"}},
		{"a String that is a number", "query($slug: String!) { category(slug: $slug) { name } }", `{"slug": 5}`, []string{"5", "String"}},
		{"an unknown input field", update, `{"input": {"slug": "go", "nam": "Go"}}`, []string{`"nam"`}},
		{"a required input field left out", "mutation($input: CreateCategoryInput!) { createCategory(input: $input) { category { slug } } }", `{"input": {"name": "Go"}}`, []string{`"slug"`}},
		{"an ID that is true", "query($id: ID!) { node(id: $id) { id } }", `{"id": true}`, []string{"true", "ID"}},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			resp := s.send(t, `{"query":`+jsonString(c.query)+`,"variables":`+c.vars+`}`, false)
			if len(resp.Errors) != 1 {
				t.Fatalf("errors %v, data %s", resp.Errors, resp.Data)
			}
			e := resp.Errors[0]
			equal(t, "code", e.Extensions["code"], any("GRAPHQL_VALIDATION_FAILED"))
			for _, w := range c.words {
				if !strings.Contains(e.Message, w) {
					t.Errorf("message %q does not name %s", e.Message, w)
				}
			}
			if strings.Contains(e.Message, "Did you mean") {
				t.Errorf("message %q suggests", e.Message)
			}
			equal(t, "requests", total(s.requests()), 0)
		})
	}
	for _, v := range []string{`{"first": 10}`, `{"first": 10.0}`, `{"first": 1e1}`, `{"first": null}`, `{}`} {
		resp := s.send(t, `{"query":`+jsonString(feed)+`,"variables":`+v+`}`, false)
		if len(resp.Errors) > 0 {
			t.Errorf("variables %s: %v", v, resp.Errors)
		}
	}
}
