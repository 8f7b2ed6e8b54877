package gqlhttp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/blogql/blog/admission"
)

// echoSchema answers every operation with its name and its variables as
// they reached the executor, and counts the operations it ran.
type echoSchema struct {
	testSchema
	ran *atomic.Int32
}

func (s echoSchema) Exec(ctx context.Context) graphql.ResponseHandler {
	s.ran.Add(1)
	opCtx := graphql.GetOperationContext(ctx)
	data, err := json.Marshal(map[string]any{"op": opCtx.Operation.Name, "vars": opCtx.Variables})
	if err != nil {
		panic(err)
	}
	return graphql.OneShot(&graphql.Response{Data: data})
}

// answering is a handler with an answer cache over echoSchema.
type answering struct {
	http.Handler
	ran atomic.Int32
}

func newAnswering() *answering {
	a := &answering{}
	a.Handler = New(echoSchema{newTestSchema(), &a.ran}, Options{
		ComplexityLimit: testComplexityLimit,
		Answers:         NewAnswerCache(0, nil),
	})
	return a
}

// request is an anonymous request to the endpoint: a GET of target's
// parameters when body is empty, else a POST of body.
type request struct{ query, body string }

func post(body string) request     { return request{body: body} }
func get(query url.Values) request { return request{query: query.Encode()} }

func (a *answering) do(r request) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/graphql?"+r.query, nil)
	if r.body != "" {
		req = httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(r.body))
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, req)
	return rec
}

func TestAnswerKeyIsTheOperationThatRan(t *testing.T) {
	const page = `query Page($n: Int) { posts(first: $n) { totalCount } }`
	sum := sha256.Sum256([]byte(page))
	persisted := `{"persistedQuery":{"version":1,"sha256Hash":"` + hex.EncodeToString(sum[:]) + `"}}`
	twoOps := `query A { hello } query B { hello }`
	cases := []struct {
		name          string
		first, second request
		shared        bool
	}{
		{"whitespace, comments and the order of variables do not matter",
			post(`{"query":` + quote(page) + `,"variables":{"n":1,"m":2}}`),
			post(`{"variables":{"m":2,"n":1},"query":"# the page\nquery Page($n:Int){posts(first:$n){totalCount}}"}`), true},
		{"a variable the operation does not define, or 1.0 for an Int, does not matter",
			post(`{"query":` + quote(page) + `,"variables":{"n":1}}`),
			post(`{"query":` + quote(page) + `,"variables":{"n":1.0,"unused":"x"}}`), true},
		{"GET and POST share an answer",
			post(`{"query":` + quote(page) + `,"variables":{"n":1}}`),
			get(url.Values{"query": {page}, "variables": {`{"n":1}`}}), true},
		{"a persisted query's hash stands for its document",
			post(`{"query":` + quote(page) + `,"variables":{"n":1},"extensions":` + persisted + `}`),
			get(url.Values{"variables": {`{"n":1}`}, "extensions": {persisted}}), true},
		{"the name of the only operation may be left out",
			post(`{"query":` + quote(page) + `,"operationName":"Page"}`),
			post(`{"query":` + quote(page) + `}`), true},
		{"other variables are another answer",
			post(`{"query":` + quote(page) + `,"variables":{"n":1}}`),
			post(`{"query":` + quote(page) + `,"variables":{"n":2}}`), false},
		{"another operation of the document is another answer",
			post(`{"query":` + quote(twoOps) + `,"operationName":"A"}`),
			post(`{"query":` + quote(twoOps) + `,"operationName":"B"}`), false},
		{"another document is another answer",
			post(`{"query":"{ hello }"}`),
			post(`{"query":"{ hello __typename }"}`), false},
		{"a string's spaces count",
			post(`{"query":"{ node(id: \"x y\") { id } }"}`),
			post(`{"query":"{ node(id: \"x  y\") { id } }"}`), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAnswering()
			first := a.do(c.first)
			second := a.do(c.second)
			for _, rec := range []*httptest.ResponseRecorder{first, second} {
				if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"errors"`) {
					t.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
			equal := func(what string, got, want any) {
				t.Helper()
				if got != want {
					t.Errorf("%s = %v, want %v", what, got, want)
				}
			}
			if c.shared {
				equal("X-Cache", second.Header().Get(AnswerCacheHeader), "HIT")
				equal("operations run", a.ran.Load(), int32(1))
				equal("body", second.Body.String(), first.Body.String())
				return
			}
			equal("X-Cache", second.Header().Get(AnswerCacheHeader), "MISS")
			equal("operations run", a.ran.Load(), int32(2))
		})
	}
}

// TestRequestParametersAreSpeltExactly sends the parameters of a request
// twice, or in another case, or with a character that folds to one of
// theirs: each request is refused with 400, and a body that runs one
// operation and names another in such keys files nothing under the other.
func TestRequestParametersAreSpeltExactly(t *testing.T) {
	const victim = `query Page($n: Int) { posts(first: $n) { totalCount } }`
	for _, c := range []struct {
		name string
		req  request
		want string
	}{
		{"Query", post(`{"query":"query Page { hello }","Query":` + quote(victim) + `,"variables":{"n":1}}`), `"Query"`},
		{"VARIABLES", post(`{"query":` + quote(victim) + `,"VARIABLES":{"n":1}}`), `"VARIABLES"`},
		{"variableſ", post(`{"query":` + quote(victim) + `,"variableſ":{"n":1}}`), `"variableſ"`},
		{"OperationName", post(`{"query":"{ hello }","OperationName":"Page","Query":` + quote(victim) + `}`), `"OperationName"`},
		{"Extensions", post(`{"query":"query Page { hello }","Extensions":{"persistedQuery":{"version":1,"sha256Hash":"00"}}}`), `"Extensions"`},
		{"a key twice", post(`{"query":"query Page { hello }","query":` + quote(victim) + `}`), `"query" more than once`},
		{"a key twice, once escaped", post(`{"query":"query Page { hello }","quer\u0079":` + quote(victim) + `}`), `"query" more than once`},
		{"a GET's Query", get(url.Values{"query": {"query Page { hello }"}, "Query": {victim}}), `"Query"`},
		{"a GET's parameter twice", get(url.Values{"query": {"query Page { hello }", victim}}), `"query" more than once`},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := newAnswering()
			rec := a.do(c.req)
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"code":"BAD_REQUEST"`) ||
				!strings.Contains(rec.Body.String(), strings.ReplaceAll(c.want, `"`, `\"`)) {
				t.Errorf("%d %s, want 400 BAD_REQUEST naming %s", rec.Code, rec.Body, c.want)
			}
			if page := a.do(post(`{"query":` + quote(victim) + `,"variables":{"n":1}}`)); page.Header().Get(AnswerCacheHeader) != "MISS" {
				t.Errorf("the page after it: X-Cache %s, %s", page.Header().Get(AnswerCacheHeader), page.Body)
			}
		})
	}
	t.Run("other keys are ignored", func(t *testing.T) {
		if rec := newAnswering().do(post(`{"query":"{ hello }","id":"x","queries":[]}`)); rec.Code != http.StatusOK {
			t.Errorf("%d %s", rec.Code, rec.Body)
		}
	})
}

// deadlineBody is a request body whose first read returns part of the
// JSON and every later one the error of a connection whose read deadline
// (the server's ReadTimeout) has passed.
type deadlineBody struct{ sent bool }

func (b *deadlineBody) Read(p []byte) (int, error) {
	if b.sent {
		return 0, os.ErrDeadlineExceeded
	}
	b.sent = true
	return copy(p, `{"query":`), nil
}

func (b *deadlineBody) Close() error { return nil }

func TestABodyThatDoesNotArriveInTimeIs408WithTheAnswerCache(t *testing.T) {
	a := newAnswering()
	req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
	req.Header.Set("Content-Type", "application/json")
	req.Body, req.ContentLength = &deadlineBody{}, 100
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestTimeout || !strings.Contains(rec.Body.String(), "did not arrive in time") {
		t.Errorf("%d %s, want 408", rec.Code, rec.Body)
	}
	if a.ran.Load() != 0 {
		t.Error("an operation ran")
	}
}

func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestTheSameRequestAgainIsAnsweredBeforeItIsAdmitted: with the only
// slot of the executor taken and no queue, a request the answer cache
// answered before is answered again when it comes byte for byte, headers
// included; any other spelling of it must be decoded first, which is
// refused (503). Once it was answered, its spelling is remembered too,
// and an invalidation forgets them all.
func TestTheSameRequestAgainIsAnsweredBeforeItIsAdmitted(t *testing.T) {
	gate := admission.New(1, 0, 0)
	a := &answering{}
	answers := NewAnswerCache(0, nil)
	a.Handler = New(echoSchema{newTestSchema(), &a.ran}, Options{
		ComplexityLimit: testComplexityLimit, Answers: answers, Admission: gate,
	})
	const page = `query Page($n: Int) { posts(first: $n) { totalCount } }`
	same := `{"query":` + quote(page) + `,"variables":{"n":1}}`
	spaced := `{"query":` + quote(page) + `, "variables":{"n":1}}`
	send := func(body, contentType string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		return rec
	}
	want := func(rec *httptest.ResponseRecorder, status int, cache string) {
		t.Helper()
		if rec.Code != status || (cache != "" && rec.Header().Get(AnswerCacheHeader) != cache) {
			t.Errorf("%d X-Cache %q %s, want %d %s", rec.Code, rec.Header().Get(AnswerCacheHeader), rec.Body, status, cache)
		}
	}
	holdTheSlot := func() func() {
		release, err := gate.Enter(context.Background(), "other")
		if err != nil {
			t.Fatal(err)
		}
		return release
	}
	first := send(same, "application/json")
	want(first, http.StatusOK, "MISS")
	getPage := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/graphql?"+url.Values{"query": {page}, "variables": {`{"n":2}`}}.Encode(), nil)
		req.Header.Set("Accept", "application/graphql-response+json")
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		return rec
	}
	firstGet := getPage()
	want(firstGet, http.StatusOK, "MISS")

	release := holdTheSlot()
	for _, c := range []struct{ first, again *httptest.ResponseRecorder }{
		{first, send(same, "application/json")}, {firstGet, getPage()},
	} {
		want(c.again, http.StatusOK, "HIT")
		for _, h := range []string{"Content-Type", "Cache-Control", "ETag", "Content-Length"} {
			if got, want := c.again.Header().Get(h), c.first.Header().Get(h); got != want {
				t.Errorf("%s %q, want %q as the first answer", h, got, want)
			}
		}
		if c.again.Body.String() != c.first.Body.String() {
			t.Errorf("body %s, want %s", c.again.Body, c.first.Body)
		}
	}
	want(send(spaced, "application/json"), http.StatusServiceUnavailable, "")
	want(send(same, "application/json; charset=utf-8"), http.StatusServiceUnavailable, "")
	want(a.do(get(url.Values{"query": {page}, "variables": {`{"n":1}`}})), http.StatusServiceUnavailable, "")
	release()

	want(send(spaced, "application/json"), http.StatusOK, "HIT")
	release = holdTheSlot()
	want(send(spaced, "application/json"), http.StatusOK, "HIT")
	release()

	answers.InvalidateAll()
	release = holdTheSlot()
	want(send(same, "application/json"), http.StatusServiceUnavailable, "")
	release()
	want(send(same, "application/json"), http.StatusOK, "MISS")
	if got := a.ran.Load(); got != 3 {
		t.Errorf("operations run: %d, want 3", got)
	}
}

// BenchmarkAnswerCacheHit measures an anonymous POST of a page's query
// answered from the answer cache, through the whole handler:
//
//	go test -run '^$' -bench AnswerCacheHit -benchmem ./gqlhttp
func BenchmarkAnswerCacheHit(b *testing.B) {
	a := newAnswering()
	const page = `query Page($n: Int) { posts(first: $n) { totalCount edges { node { id title slug author { id name } } } } }`
	body := `{"query":` + quote(page) + `,"operationName":"Page","variables":{"n":20}}`
	if rec := a.do(post(body)); rec.Code != http.StatusOK {
		b.Fatalf("%d %s", rec.Code, rec.Body)
	}
	b.ReportAllocs()
	for b.Loop() {
		if rec := a.do(post(body)); rec.Header().Get(AnswerCacheHeader) != "HIT" {
			b.Fatalf("X-Cache %s", rec.Header().Get(AnswerCacheHeader))
		}
	}
}
