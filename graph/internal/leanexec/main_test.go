package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// field is gqlgen's template of a field function reading obj.NAME of Go
// type TYPE and marshaling it with MARSHAL.
const field = `func (ec *executionContext) _Post_FUNC(ctx context.Context, field graphql.CollectedField, obj *storage.Post) (ret graphql.Marshaler) {
	return graphql.ResolveField(
		ctx,
		ec.OperationContext,
		field,
		func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			return ec.fieldContext_Post_FUNC(ctx, field)
		},
		func(ctx context.Context) (any, error) {
			return obj.NAMECALL, nil
		},
		nil,
		func(ctx context.Context, selections ast.SelectionSet, v TYPE) graphql.Marshaler {
			return ec.MARSHAL(ctx, selections, v)
		},
		true,
		NONNULL,
	)
}
`

// nonNullMarshaler is gqlgen's marshaler NAME of a non-null scalar SCALAR
// of Go type TYPE, marshaled by MARSHAL.
const nonNullMarshaler = `func (ec *executionContext) NAME(ctx context.Context, sel ast.SelectionSet, v TYPE) graphql.Marshaler {
	_ = sel
	res := MARSHAL(v)
	if res == graphql.Null {
		graphql.AddInvalidNullFromMarshaler(ctx, "SCALAR!")
	}
	return res
}

`

var marshalers = nonNull("marshalNString2string", "string", "graphql.MarshalString", "String") +
	nonNull("marshalNBoolean2bool", "bool", "graphql.MarshalBoolean", "Boolean") +
	nonNull("marshalNID2string", "string", "graphql.MarshalID", "ID") +
	nonNull("marshalNDateTime2timeᚐTime", "time.Time", "model.MarshalDateTime", "DateTime") +
	`func (ec *executionContext) marshalOString2ᚖstring(ctx context.Context, sel ast.SelectionSet, v *string) graphql.Marshaler {
	if v == nil {
		return graphql.Null
	}
	_ = sel
	_ = ctx
	res := graphql.MarshalString(*v)
	return res
}

func (ec *executionContext) marshalOFloat2ᚖfloat64(ctx context.Context, sel ast.SelectionSet, v *float64) graphql.Marshaler {
	if v == nil {
		return graphql.Null
	}
	_ = sel
	res := graphql.MarshalFloatContext(*v)
	return graphql.WrapContextMarshaler(ctx, res)
}
`

func nonNull(name, typ, marshal, scalar string) string {
	return strings.NewReplacer("NAME", name, "TYPE", typ, "MARSHAL", marshal, "SCALAR", scalar).Replace(nonNullMarshaler)
}

// fieldFunc returns gqlgen's field function reading obj.name, which is
// a method call when name ends in "()".
func fieldFunc(name, typ, marshal string, nonNull bool) string {
	return strings.NewReplacer("FUNC", strings.TrimSuffix(name, "()"), "NAMECALL", name, "TYPE", typ,
		"MARSHAL", marshal, "NONNULL", fmt.Sprint(nonNull)).Replace(field)
}

// rewritten returns the field function reading obj.name with body.
func rewritten(name, body string) string {
	return "func (ec *executionContext) _Post_" + strings.TrimSuffix(name, "()") +
		"(ctx context.Context, field graphql.CollectedField, obj *storage.Post) (ret graphql.Marshaler) {\n" + body + "}\n"
}

// resolved is gqlgen's case of a field with a resolver, FUNC, in an
// object's switch.
const resolved = `		case "NAME":
			out.ResolveConcurrently(ec.OperationContext, &deferred, i,
				true, NONNULL,
				func(ctx context.Context) graphql.Marshaler {
					return ec.FUNC(ctx, field, obj)
				})
`

func resolvedCase(name, fn string, nonNull bool) string {
	return strings.NewReplacer("NAME", name, "FUNC", fn, "NONNULL", fmt.Sprint(nonNull)).Replace(resolved)
}

// listOf is the rest of gqlgen's list of typ objects after its call of
// the function marshaling the elements.
func listOf(typ string) string {
	return "func(ctx context.Context, i int) graphql.Marshaler {\n\t\tfc := graphql.GetFieldContext(ctx)\n\t\tfc.Result = &v[i]\n" +
		"\t\treturn ec.marshalN" + typ + "2ᚖT(ctx, sel, v[i])\n"
}

var listBody = listOf("Category")

// postLists are gqlgen's lists of posts and of post edges.
var postLists = "\tret := " + string(slice) + listOf("Post") + "\tret := " + string(slice) + listOf("PostEdge")

func TestRewrite(t *testing.T) {
	// The schema's text, in the file, speaks of bytes too.
	object := "import (\n\t\"bytes\"\n\t\"context\"\n)\n\n// The original's size in bytes. Its format, by its bytes.\n%s\t%simplementors)\n\t%s\n\tif n := len(deferred.Defers); n > 0 {\n%s\tret := %s" + listBody +
		"func (ec *executionContext) _Post(ctx context.Context, sel ast.SelectionSet, obj *storage.Post) graphql.Marshaler {\n"
	resolvers := resolvedCase("author", "_Post_author", true) + resolvedCase("categories", "_Post_categories", false) +
		resolvedCase("comments", "_Post_comments", true)
	src := fmt.Sprintf(object, answer, collect, eager, fieldSetEnd, slice) + resolvers +
		fieldFunc("Title", "string", "marshalNString2string", true) +
		fieldFunc("GlobalID()", "string", "marshalNID2string", true) +
		fieldFunc("Featured", "bool", "marshalNBoolean2bool", true) +
		fieldFunc("PublishedAt", "time.Time", "marshalNDateTime2timeᚐTime", true) +
		fieldFunc("Subtitle", "*string", "marshalOString2ᚖstring", false) +
		fieldFunc("Score", "*float64", "marshalOFloat2ᚖfloat64", false) +
		marshalers + postLists
	publishedAt := fieldFunc("PublishedAt", "time.Time", "marshalNDateTime2timeᚐTime", true)
	atHand := func(name, fn, at, invalid string) string {
		return "\t\tcase \"" + name + "\":\n\t\t\tif " + at + "(ec.OperationContext, field, obj) {\n" +
			"\t\t\t\tout.Values[i] = ec." + fn + "(ctx, field, obj)\n" +
			"\t\t\t\tif out.Values[i] == graphql." + invalid + " {\n\t\t\t\t\tatomic.AddUint32(&out.Invalids, 1)\n\t\t\t\t}\n" +
			"\t\t\t\tbreak\n\t\t\t}\n"
	}
	// With its buffer gone, the file no longer uses package bytes.
	// A list of objects says whether its elements are plain.
	want := strings.NewReplacer("\t\"bytes\"\n", "", string(sliceWarm), string(sliceWarm)+`plainElements(sel, "Category"), `).
		Replace(fmt.Sprintf(object, answerSized, collectLean, lazy, objectEnd, sliceWarm)) +
		atHand("author", "_Post_author", "postAuthorAtHand", "Null") +
		strings.TrimPrefix(resolvedCase("author", "_Post_author", true), "\t\tcase \"author\":\n") +
		// A nullable field is invalid when its child was, not when null.
		atHand("categories", "_Post_categories", "postCategoriesAtHand", "RequiredNull") +
		strings.TrimPrefix(resolvedCase("categories", "_Post_categories", false), "\t\tcase \"categories\":\n") +
		// A field not in atHand keeps its goroutine.
		resolvedCase("comments", "_Post_comments", true) +
		rewritten("Title", "\treturn (*jsonString)(&obj.Title)\n") +
		rewritten("GlobalID()", "\treturn ec.marshalNID2string(ctx, field.Selections, obj.GlobalID())\n") +
		rewritten("Featured", "\treturn jsonBool(obj.Featured)\n") +
		// DateTime! can marshal null, which ResolveField reports at the
		// field's path.
		strings.Replace(publishedAt, "{\n", "{\n\tif res := model.MarshalDateTime(obj.PublishedAt); res != graphql.Null {\n\t\treturn res\n\t}\n", 1) +
		rewritten("Subtitle", "\treturn ec.marshalOString2ᚖstring(ctx, field.Selections, obj.Subtitle)\n") +
		// A context marshaler reads the field's context.
		fieldFunc("Score", "*float64", "marshalOFloat2ᚖfloat64", false) +
		marshalers +
		// A list of posts says whether its posts have all at hand.
		"\tret := " + string(sliceWarm) + `plainElements(sel, "Post") || postListAtHand(ec.OperationContext, sel, v), ` + listOf("Post") +
		"\tret := " + string(sliceWarm) + `plainElements(sel, "PostEdge") || postEdgesAtHand(ec.OperationContext, sel, v), ` + listOf("PostEdge")

	path := filepath.Join(t.TempDir(), "generated.go")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // the second as a go generate without gqlgen
		if err := rewriteFile(path); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("rewrite %d:\n%s\nwant:\n%s", i+1, got, want)
		}
		fields, err := os.ReadFile(filepath.Join(filepath.Dir(path), fieldsFile))
		if err != nil {
			t.Fatal(err)
		}
		if want := `"Post": {"author", "categories", "comments"},`; !strings.Contains(string(fields), want) {
			t.Errorf("%s:\n%s\nwant %s", fieldsFile, fields, want)
		}
	}

	for _, c := range []struct{ src, err string }{
		{"package graph\n", "templates changed"},
		{string(eager) + "\n" + marshalers, "templates changed"},
		{string(eager) + "\n" + string(collect) + "\n" + marshalers, "templates changed"},
		{string(eager) + "\n" + string(collect) + "\n" + string(slice) + "\n" + marshalers, "templates changed"},
		{string(eager) + "\n" + string(collect) + "\n" + string(slice) + "\n" + string(fieldSetEnd) + marshalers, "templates changed"},
		{string(eager) + "\n" + string(collect) + "\n" + string(slice) + "\n" + string(fieldSetEnd) + string(answer) + marshalers, "no field _Post_"},
		{string(eager) + "\n" + string(collect) + "\n" + string(slice) + "\n" + string(fieldSetEnd) + string(answer) + resolvers + marshalers, "list template changed"},
		{string(eager) + "\n" + string(collect) + "\n" + string(slice) + listBody + string(fieldSetEnd) + string(answer) + resolvers + marshalers, "no list of Post"},
		{string(eager) + "\n" + string(collect) + "\n" + string(slice) + listBody + string(fieldSetEnd) + string(answer) + resolvers + marshalers + postLists, "field template changed"},
	} {
		if _, err := rewrite([]byte(c.src)); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("rewrite of a file without the template: %v, want %q", err, c.err)
		}
	}
}
