package graph

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
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

// marshalSlice writes what gqlgen's MarshalSliceConcurrently writes: the
// elements in order, each under its index, and a panicking element as a
// null with an error at its path, whether its elements are plain or not.
func TestMarshalSliceAsGqlgen(t *testing.T) {
	for _, c := range []struct {
		n, panics int
		plain     bool
	}{
		{0, -1, false}, {0, -1, true}, {1, -1, false}, {1, 0, true}, {2, -1, true}, {2, 1, false},
		{5, -1, false}, {5, 0, true}, {5, 4, false}, {40, -1, true}, {40, 39, true}, {40, 0, false},
	} {
		n, panics := c.n, c.panics
		{
			run := func(marshal func(context.Context, int, func(context.Context, int) graphql.Marshaler) graphql.Array) (string, string) {
				ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter,
					func(context.Context, any) error { return errors.New("internal system error") })
				ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Alias: "posts"}}})
				arr := marshal(ctx, n, func(ctx context.Context, i int) graphql.Marshaler {
					if i == panics {
						panic("element")
					}
					if fc := graphql.GetFieldContext(ctx); fc.Index == nil || *fc.Index != i {
						t.Errorf("element %d under index %v", i, fc.Index)
					}
					return graphql.MarshalInt(10 * i)
				})
				return marshaled(arr), fmt.Sprint(graphql.GetErrors(ctx))
			}
			got, gotErrs := run(func(ctx context.Context, n int, f func(context.Context, int) graphql.Marshaler) graphql.Array {
				return marshalSlice(ctx, n, c.plain, f)
			})
			want, wantErrs := run(func(ctx context.Context, n int, f func(context.Context, int) graphql.Marshaler) graphql.Array {
				return graphql.MarshalSliceConcurrently(ctx, n, 0, false, f)
			})
			if got != want || gotErrs != wantErrs {
				t.Errorf("n=%d, element %d panics, plain %v: %s, %s; want %s, %s", n, panics, c.plain, got, gotErrs, want, wantErrs)
			}
		}
	}
}

// A list's elements are plain when their selection asks, directly, only
// for fields without resolvers or selections: a post's categories with
// their slugs and names, not with their posts.
func TestPlainElements(t *testing.T) {
	doc, err := gqlparser.LoadQueryWithRules(parsedSchema, `query($slug: String!) {
  category(slug: $slug) { posts(first: 2) { edges { node {
    a: categories { slug name __typename }
    b: categories { slug posts(first: 1) { totalCount } }
    c: categories { slug head { title } }
    d: categories { ... on Category { slug } }
    e: categories { name @include(if: true) }
  } } } }
}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	node := doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet[0].(*ast.Field).SelectionSet[0].(*ast.Field).SelectionSet[0].(*ast.Field).SelectionSet
	for i, want := range []bool{true, false, false, false, true} {
		sel := node[i].(*ast.Field).SelectionSet
		if got := plainElements(sel, "Category"); got != want {
			t.Errorf("%s: plain %v, want %v", node[i].(*ast.Field).Alias, got, want)
		}
	}
	if plainElements(nil, "NoSuchType") {
		t.Error("an unknown type is plain")
	}
}
