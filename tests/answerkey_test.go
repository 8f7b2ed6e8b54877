package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/blogql/blog/gqlhttp"
)

// TestAnswerCacheCannotBePoisonedByKeysInAnotherCase sends bodies whose
// keys differ from "query", "operationName", "variables" and "extensions"
// only in case or by a character that folds to theirs ("ſ" for "s"), the
// way a second decoder of the body would read them, and each with one
// operation to run and another to file its answer under. Each is refused
// with 400, and the operation they name answers its own data, over POST
// and GET alike, never the other's.
func TestAnswerCacheCannotBePoisonedByKeysInAnotherCase(t *testing.T) {
	s := newServer(t, withAnswers(0))
	s.seedAnswers(t)
	const vars = `{"slug":"post-2"}`
	// attack runs an operation named op that shows post-0's body as its
	// title: in a page's HTML, Markdown where the page expects text.
	attack := func(op string) string {
		return jsonString(`query ` + op + ` { post(slug: "post-0") { title: body slug } }`)
	}
	hashOf := func(query string) string {
		sum := sha256.Sum256([]byte(query))
		return hex.EncodeToString(sum[:])
	}
	persisted := func(query string) string {
		return `{"persistedQuery":{"version":1,"sha256Hash":"` + hashOf(query) + `"}}`
	}
	shapes := []struct {
		name string
		body func(op, victim string) string
		// hashOnly: the victim's page sends its query's hash alone, after
		// registering it.
		hashOnly bool
	}{
		{name: "Query and Variables", body: func(op, victim string) string {
			return `{"query":` + attack(op) + `,"operationName":"` + op + `","Query":` + jsonString(victim) + `,"Variables":` + vars + `}`
		}},
		{name: "QUERY and VARIABLES", body: func(op, victim string) string {
			return `{"query":` + attack(op) + `,"operationName":"` + op + `","QUERY":` + jsonString(victim) + `,"VARIABLES":` + vars + `}`
		}},
		{name: "variableſ", body: func(op, victim string) string {
			return `{"query":` + attack(op) + `,"operationName":"` + op + `","Query":` + jsonString(victim) + `,"variableſ":` + vars + `}`
		}},
		{name: "OperationName", body: func(op, victim string) string {
			return `{"query":` + attack("") + `,"OperationName":"` + op + `","Query":` + jsonString(victim) + `,"Variables":` + vars + `}`
		}},
		{name: "a persisted query's hash in Extensions", hashOnly: true, body: func(op, victim string) string {
			return `{"query":` + attack(op) + `,"operationName":"` + op + `","Query":"","Extensions":` + persisted(victim) + `,"Variables":` + vars + `}`
		}},
	}
	for i, shape := range shapes {
		t.Run(shape.name, func(t *testing.T) {
			// Each shape has a page of its own: no answer of another
			// shape is filed under its key.
			op := fmt.Sprintf("Page%d", i)
			victim := `query ` + op + `($slug: String!) { post(slug: $slug) { title slug } }`
			page := map[string]string{"query": victim, "operationName": op, "variables": vars}
			if shape.hashOnly {
				// The page registers its query; later it sends its hash.
				s.fetch(t, http.MethodPost, s.url, `{"query":`+jsonString(victim)+`,"operationName":"`+op+
					`","variables":`+vars+`,"extensions":`+persisted(victim)+`}`, nil)
				delete(page, "query")
				page["extensions"] = persisted(victim)
			}

			poison := s.fetch(t, http.MethodPost, s.url, shape.body(op, victim), nil)

			q := url.Values{}
			var body []string
			for k, v := range page {
				q.Set(k, v)
				if k == "query" || k == "operationName" {
					v = jsonString(v)
				}
				body = append(body, jsonString(k)+":"+v)
			}
			for _, a := range []struct {
				method string
				httpAnswer
			}{
				{"POST", s.fetch(t, http.MethodPost, s.url, "{"+strings.Join(body, ",")+"}", nil)},
				{"GET", s.fetch(t, http.MethodGet, s.url+"?"+q.Encode(), "", nil)},
			} {
				if a.status != http.StatusOK || !strings.Contains(a.body, `"title":"Post 2"`) {
					t.Errorf("the page over %s (X-Cache %s): %d %s", a.method, a.header.Get(gqlhttp.AnswerCacheHeader), a.status, a.body)
				}
			}
			if poison.status != http.StatusBadRequest || !strings.Contains(poison.body, `"code":"BAD_REQUEST"`) {
				t.Errorf("the body with keys in another case: %d %s, want 400 BAD_REQUEST", poison.status, poison.body)
			}
		})
	}
}
