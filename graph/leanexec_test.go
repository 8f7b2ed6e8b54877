package graph

import (
	"bytes"
	"math"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

func marshaled(m graphql.Marshaler) string {
	var b bytes.Buffer
	m.MarshalGQL(&b)
	return b.String()
}

// The marshalers that stand in for gqlgen's write what gqlgen's write.
func TestLeanMarshalersWriteAsGqlgen(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "tab\tnew\nline\rret", "\x00\x01\x1f\x7f", "héllo, 世界 🚀", "bad \xff\xfe utf-8", "</script>&"} {
		v := jsonString(s)
		if got, want := marshaled(&v), marshaled(graphql.MarshalString(s)); got != want {
			t.Errorf("jsonString(%q) = %s, want %s", s, got, want)
		}
	}
	for _, n := range []int64{0, 7, -1, 99, 100, math.MaxInt64, math.MinInt64} {
		i, i64 := jsonInt(n), jsonInt64(n)
		if got, want := marshaled(&i64), marshaled(graphql.MarshalInt64(n)); got != want {
			t.Errorf("jsonInt64(%d) = %s, want %s", n, got, want)
		}
		if got, want := marshaled(&i), marshaled(graphql.MarshalInt(int(n))); got != want {
			t.Errorf("jsonInt(%d) = %s, want %s", n, got, want)
		}
	}
	for _, b := range []bool{true, false} {
		if got, want := marshaled(jsonBool(b)), marshaled(graphql.MarshalBoolean(b)); got != want {
			t.Errorf("jsonBool(%v) = %s, want %s", b, got, want)
		}
	}

	field := func(alias string) graphql.CollectedField {
		return graphql.CollectedField{Field: &ast.Field{Alias: alias, Name: alias}}
	}
	for _, fields := range [][]graphql.CollectedField{
		nil,
		{field("id")},
		{field("id"), field("title"), field("id"), field("n")}, // a name twice: the first value
	} {
		out := graphql.NewFieldSet(fields)
		for i := range out.Values {
			out.Values[i] = graphql.MarshalInt(i)
		}
		obj := object(out, fields, graphql.DeferredGroup{})
		if _, lean := obj.(*objectFields); !lean {
			t.Fatalf("object of %d fields is %T", len(fields), obj)
		}
		if got, want := marshaled(obj), marshaled(out); got != want {
			t.Errorf("object = %s, want %s", got, want)
		}
	}
}
