package gqlhttp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestWriteResponse checks that an answer with only data is written as the
// executor wrote it, byte for byte (encoding/json would escape the "<"),
// and that anything else is written in full.
func TestWriteResponse(t *testing.T) {
	data := json.RawMessage(`{"post":{"body":"a <- b"}}`)
	cases := []struct {
		name string
		resp *graphql.Response
		want string
	}{
		{"data only", &graphql.Response{Data: data}, `{"data":{"post":{"body":"a <- b"}}}`},
		{"data and no extensions", &graphql.Response{Data: data, Extensions: map[string]any{}}, `{"data":{"post":{"body":"a <- b"}}}`},
		{"errors and data", &graphql.Response{Data: data, Errors: gqlerror.List{{Message: "boom"}}},
			`{"errors":[{"message":"boom"}],"data":{"post":{"body":"a \u003c- b"}}}`},
		{"extensions", &graphql.Response{Data: json.RawMessage(`null`), Extensions: map[string]any{"cost": 3}},
			`{"data":null,"extensions":{"cost":3}}`},
		{"no data", &graphql.Response{Errors: gqlerror.List{{Message: "bad"}}}, `{"errors":[{"message":"bad"}],"data":null}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			writeResponse(&b, c.resp)
			if b.String() != c.want {
				t.Errorf("wrote %s, want %s", b.String(), c.want)
			}
		})
	}
}
