// Command leanexec rewrites seven parts of gqlgen's executor that
// allocate, on every request, for features that the request does not
// use, or that start goroutines with stacks to grow.
//
// Deferred groups: gqlgen's object template starts every object it
// resolves with graphql.NewDeferredGroup, which copies the object's path
// and makes an empty field set and map: three allocations an object,
// whether the request defers anything or not, some 800 on a page of 20
// posts. The rewrite calls the graph package's deferredGroup instead,
// which makes the group only for an object whose selection defers a
// field; gqlgen reads the group only for deferred fields.
//
// Plain fields: a field that reads a struct field of its object (or
// calls a method of it without arguments, as an id's GlobalID), with no
// directive, goes through graphql.ResolveField, which makes the field's
// context, a context holding it, four closures and two boxed copies of
// the value, for errors and middleware that reading a struct field
// cannot cause and the server does not install (it has no field
// middleware; a panic is still recovered, by the root field or the list
// element that holds the object). For a field whose marshaler cannot fail (String, ID, Int,
// Boolean, an enum, or a nullable scalar that marshals null without an
// error), the rewrite has the field function call the marshaler on the
// value: some nine allocations a field, 1,500 on a page of 20 posts. A
// field whose marshaler can report an error keeps ResolveField, so that
// the error has the field's path.
//
// Collected fields: gqlgen caches the fields an object's selection set
// selects for a type, under a key it builds on every call with a hasher
// and copies of the type's names. The rewrite calls the graph package's
// collectFields, whose cache for the operation is keyed by the
// selection set's and the type's identity.
//
// Objects' JSON: an object's field set writes itself through an iterator
// that copies each field to the heap and a map of the names written (for
// @defer's views, which take fields out of it). The rewrite returns the
// graph package's object instead, which writes the same JSON with one
// allocation, and the field set itself for an object with deferred
// fields: some 700 allocations on a page of 20 posts.
//
// Lists: a list's elements are resolved on a new goroutine each, whose
// stack is copied each time it grows to the depth of the element's
// fields. The rewrite calls the graph package's
// marshalSlice instead, which resolves them on goroutines kept with the
// stacks they grew (graph/internal/warm), or one after the other on the
// caller's when, for a list of objects, the graph package's
// plainElements finds that the selection has nothing to wait for: no
// field with a resolver, which the tool lists in leanexec_gen.go, and no
// field with a selection of its own; for lists of posts, also when the
// function named in atHandLists finds that every post has at hand all
// that the selection asks.
//
// Fields at hand: gqlgen resolves the fields that have resolvers
// together, on goroutines of their own, for the resolvers that wait for
// a load. A post's
// author and categories are copied onto the post and answered from it
// unless the selection asks for more: the rewrite has the object call
// the graph package's function named in atHand first, and resolves the
// field on the object's goroutine when it says the post holds the
// answer.
//
// Answers: an operation's answer is written into a buffer that grows
// from empty, copying what it holds at each doubling: some 30 KB
// allocated and copied for an answer of 16 KB. The rewrite calls the
// graph package's marshalAnswer, which makes the buffer at the size of
// the operation's last answer.
//
// It runs after gqlgen in go generate and fails when the templates no
// longer have what it rewrites, so that a new gqlgen is looked at.
//
//	go run ./internal/leanexec generated.go
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

var (
	eager = []byte("deferred := graphql.NewDeferredGroup(ctx)")
	lazy  = []byte("deferred := deferredGroup(ctx, fields)")

	collect     = []byte("fields := graphql.CollectFields(ec.OperationContext, sel, ")
	collectLean = []byte("fields := collectFields(ec.OperationContext, sel, ")

	slice     = []byte("graphql.MarshalSliceConcurrently(ctx, len(v), 0, false, ")
	sliceWarm = []byte("marshalSlice(ctx, len(v), ")

	fieldSetEnd = []byte("\t\tec.ProcessDeferredGroup(deferred)\n\t}\n\n\treturn out\n}\n")
	objectEnd   = []byte("\t\tec.ProcessDeferredGroup(deferred)\n\t}\n\n\treturn object(out, fields, deferred)\n}\n")

	answer      = []byte("\t\t\tvar buf bytes.Buffer\n\t\t\tdata.MarshalGQL(&buf)\n")
	answerSized = []byte("\t\t\tbuf := marshalAnswer(opCtx, data)\n")

	importBytes = []byte("import (\n\t\"bytes\"\n")
)

// plainField is gqlgen's template of a field function whose resolver
// returns a struct field of the object, or what a method of it without
// arguments returns, and which has no directives (middleware chain
// nil). Groups: 1 the function's head, 2 the struct field or method
// call, 3 its Go type, 4 the marshaler.
var plainField = regexp.MustCompile(`(func \(ec \*executionContext\) _\w+\(ctx context\.Context, field graphql\.CollectedField, obj \*[\w.]+\) \(ret graphql\.Marshaler\) \{\n)` +
	`\treturn graphql\.ResolveField\(\n\t\tctx,\n\t\tec\.OperationContext,\n\t\tfield,\n` +
	`\t\tfunc\(ctx context\.Context, field graphql\.CollectedField\) \(\*graphql\.FieldContext, error\) \{\n\t\t\treturn ec\.fieldContext_\w+\(ctx, field\)\n\t\t\},\n` +
	`\t\tfunc\(ctx context\.Context\) \(any, error\) \{\n\t\t\treturn obj\.(\w+(?:\(\))?), nil\n\t\t\},\n` +
	`\t\tnil,\n` +
	`\t\tfunc\(ctx context\.Context, selections ast\.SelectionSet, v ([^)]+)\) graphql\.Marshaler \{\n\t\t\treturn ec\.([\pL\pN_]+)\(ctx, selections, v\)\n\t\t\},\n` +
	`\t\ttrue,\n\t\t(?:true|false),\n\t\)\n\}\n`)

// concurrentField is gqlgen's template of an object's field with a
// resolver, in the object's switch on its fields. Groups: 1 the case, 2
// whether the field is non-null, 3 the field function.
var concurrentField = regexp.MustCompile(`(\t\tcase "\w+":\n)` +
	`\t\t\tout\.ResolveConcurrently\(ec\.OperationContext, &deferred, i,\n\t\t\t\t(?:true|false), (true|false),\n` +
	`\t\t\t\tfunc\(ctx context\.Context\) graphql\.Marshaler \{\n\t\t\t\t\treturn ec\.(_\w+)\(ctx, field, obj\)\n\t\t\t\t\}\)\n`)

// objectList is a list's marshaler (rewritten to marshalSlice) whose
// elements an object's marshaler writes: group 1 the call up to its
// arguments, 2 the function marshaling an element up to its type's name,
// 3 the element's type.
var objectList = regexp.MustCompile(`(marshalSlice\(ctx, len\(v\), )(?:plainElements\(sel, "\w+"\)(?: \|\| \w+\(ec\.OperationContext, sel, v\))?, )?` +
	`(func\(ctx context\.Context, i int\) graphql\.Marshaler \{\n\t\tfc := graphql\.GetFieldContext\(ctx\)\n\t\tfc\.Result = &v\[i\]\n\t\treturn ec\.marshal[NO](\w+?)2)`)

// objectFunc is the head of an object's marshaler: group 1 its type.
var objectFunc = regexp.MustCompile(`(?m)^func \(ec \*executionContext\) _(\w+)\(ctx context\.Context, sel ast\.SelectionSet, obj [^)]+\) graphql\.Marshaler \{\n`)

// objectCase is a case of an object's switch on its fields: group 1 the
// field's name.
var objectCase = regexp.MustCompile(`(?m)^\t\tcase "(\w+)":\n`)

// bytesUse is a use of package bytes.
var bytesUse = regexp.MustCompile(`\bbytes\.[A-Z]`)

// atHand names, for field functions of fields with resolvers, the graph
// package's function that tells when the object holds the answer.
var atHand = map[string]string{
	"_Post_author":     "postAuthorAtHand",
	"_Post_categories": "postCategoriesAtHand",
}

// atHandLists names, for lists of objects, the graph package's function
// that tells when the list's objects have at hand all their selection
// asks, so that the elements run in turn as plain ones do.
var atHandLists = map[string]string{
	"Post":     "postListAtHand",
	"PostEdge": "postEdgesAtHand",
}

// nonNullScalar is the body of a non-null scalar's marshaler, which
// reports the field null, at the field's path, when the scalar's
// marshal function (group 1) returns null.
var nonNullScalar = regexp.MustCompile(`^\t_ = sel\n\tres := ([\w.]+)\(v\)\n\tif res == graphql\.Null \{\n\t\tgraphql\.AddInvalidNullFromMarshaler\(ctx, "\w+!"\)\n\t\}\n\treturn res\n$`)

// neverNull are the marshal functions of gqlgen's built-in scalars that
// never return null.
var neverNull = map[string]bool{
	"graphql.MarshalString": true, "graphql.MarshalID": true,
	"graphql.MarshalInt": true, "graphql.MarshalInt64": true, "graphql.MarshalBoolean": true,
}

// withoutContext are the bodies of marshalers that never report an
// error and never read the field's context: a nullable scalar, by
// pointer or value, and an enum.
var withoutContext = []*regexp.Regexp{
	regexp.MustCompile(`^\tif v == nil \{\n\t\treturn graphql\.Null\n\t\}\n\t_ = sel\n\t_ = ctx\n\tres := [\w.]+\(\*v\)\n\treturn res\n$`),
	regexp.MustCompile(`^\t_ = sel\n\t_ = ctx\n\tres := [\w.]+\(v\)\n\treturn res\n$`),
	regexp.MustCompile(`^\treturn v\n$`),
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: leanexec FILE")
		os.Exit(2)
	}
	if err := rewriteFile(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "leanexec:", err)
		os.Exit(1)
	}
}

// rewriteFile rewrites the file name and writes, beside it, the file of
// the object types' fields with resolvers (fieldsFile).
func rewriteFile(name string) error {
	src, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	out, err := rewrite(src)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	fields, err := resolverFieldsFile(out)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := writeIfChanged(filepath.Join(filepath.Dir(name), fieldsFile), fields); err != nil {
		return err
	}
	return writeIfChanged(name, out)
}

func writeIfChanged(name string, b []byte) error {
	if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, b) {
		return nil
	}
	return os.WriteFile(name, b, 0o644)
}

// fieldsFile is the file, beside generated.go, of resolverFields.
const fieldsFile = "leanexec_gen.go"

// resolverFieldsFile returns the Go source of resolverFields: for each
// object type src marshals, the fields it resolves concurrently, which
// have resolvers that may wait for a load.
func resolverFieldsFile(src []byte) ([]byte, error) {
	types := map[string][]string{}
	for _, m := range objectFunc.FindAllSubmatchIndex(src, -1) {
		body := src[m[1]:]
		body = body[:bytes.Index(body, []byte("\n}\n"))+1]
		var fields []string
		cases := objectCase.FindAllSubmatchIndex(body, -1)
		for i, c := range cases {
			end := len(body)
			if i+1 < len(cases) {
				end = cases[i+1][0]
			}
			if bytes.Contains(body[c[1]:end], []byte("out.ResolveConcurrently(")) {
				fields = append(fields, string(body[c[2]:c[3]]))
			}
		}
		types[string(src[m[2]:m[3]])] = fields
	}
	if len(types) == 0 {
		return nil, fmt.Errorf("no object marshaler: gqlgen's object template changed")
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by leanexec from generated.go. DO NOT EDIT.\n\npackage graph\n\n" +
		"// resolverFields names, for each object type, its fields with\n" +
		"// resolvers, which gqlgen resolves on goroutines of their own for the\n" +
		"// loads they may wait for (plainElements).\n" +
		"var resolverFields = map[string][]string{\n")
	for _, t := range slices.Sorted(maps.Keys(types)) {
		fmt.Fprintf(&b, "\t%q: {", t)
		for i, f := range types[t] {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", f)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

// rewrite returns src with the rewrites made. It fails when src lacks
// both the template's and the rewritten form of any, as gqlgen's
// executor always has them all.
func rewrite(src []byte) ([]byte, error) {
	for _, r := range [][2][]byte{{eager, lazy}, {collect, collectLean}, {slice, sliceWarm}, {fieldSetEnd, objectEnd}, {answer, answerSized}} {
		if !bytes.Contains(src, r[0]) && !bytes.Contains(src, r[1]) {
			return nil, fmt.Errorf("no %q: gqlgen's templates changed", r[0])
		}
		src = bytes.ReplaceAll(src, r[0], r[1])
	}
	if !bytesUse.Match(src) {
		src = bytes.Replace(src, importBytes, []byte("import (\n"), 1)
	}

	done := map[string]bool{}
	src = concurrentField.ReplaceAllFunc(src, func(c []byte) []byte {
		m := concurrentField.FindSubmatch(c)
		fn := string(m[3])
		at, ok := atHand[fn]
		if !ok {
			return c
		}
		done[fn] = true
		invalid := "RequiredNull"
		if string(m[2]) == "true" {
			invalid = "Null"
		}
		return fmt.Appendf(nil, "%s\t\t\tif %s(ec.OperationContext, field, obj) {\n"+
			"\t\t\t\tout.Values[i] = ec.%s(ctx, field, obj)\n"+
			"\t\t\t\tif out.Values[i] == graphql.%s {\n\t\t\t\t\tatomic.AddUint32(&out.Invalids, 1)\n\t\t\t\t}\n"+
			"\t\t\t\tbreak\n\t\t\t}\n%s", m[1], at, fn, invalid, c[len(m[1]):])
	})
	for fn, at := range atHand {
		if !done[fn] && !bytes.Contains(src, []byte("if "+at+"(")) {
			return nil, fmt.Errorf("no field %s resolved concurrently: gqlgen's object template changed", fn)
		}
	}

	if !objectList.Match(src) {
		return nil, fmt.Errorf("no list of objects: gqlgen's list template changed")
	}
	lists := map[string]bool{}
	src = objectList.ReplaceAllFunc(src, func(c []byte) []byte {
		m := objectList.FindSubmatch(c)
		typ := string(m[3])
		plain := fmt.Sprintf("plainElements(sel, %q)", typ)
		if at, ok := atHandLists[typ]; ok {
			lists[typ] = true
			plain += " || " + at + "(ec.OperationContext, sel, v)"
		}
		return fmt.Appendf(nil, "%s%s, %s", m[1], plain, m[2])
	})
	for typ := range atHandLists {
		if !lists[typ] {
			return nil, fmt.Errorf("no list of %s: gqlgen's list template changed", typ)
		}
	}

	found := false
	src = plainField.ReplaceAllFunc(src, func(fn []byte) []byte {
		found = true
		m := plainField.FindSubmatch(fn)
		return direct(fn, string(m[1]), string(m[2]), string(m[3]), string(m[4]), marshalerBody(src, string(m[4])))
	})
	if !found {
		return nil, fmt.Errorf("no field function reading a struct field: gqlgen's field template changed")
	}
	return src, nil
}

// direct returns fn, the field function with head reading obj.value of
// Go type typ and marshaling it with marshal, whose body is body, made
// to marshal the value without graphql.ResolveField where it can:
//   - a string, int or int64 struct field whose marshaler never fails:
//     a pointer to it, as a jsonString, jsonInt or jsonInt64, which takes
//     no allocation; a bool, one of two marshalers made once;
//   - any other value whose marshaler never fails or reads the context:
//     the marshaler's result;
//   - a non-null scalar whose marshal function can return null: that
//     function's result when it is not null, and fn's ResolveField,
//     which reports the null at the field's path, when it is.
//
// Any other field function is returned as it is.
func direct(fn []byte, head, value, typ, marshal string, body []byte) []byte {
	isField := !strings.HasSuffix(value, "()")
	if m := nonNullScalar.FindSubmatch(body); m != nil {
		switch f := string(m[1]); {
		case typ == "string" && isField && (f == "graphql.MarshalString" || f == "graphql.MarshalID"):
			return fmt.Appendf(nil, "%s\treturn (*jsonString)(&obj.%s)\n}\n", head, value)
		case typ == "int" && isField && f == "graphql.MarshalInt":
			return fmt.Appendf(nil, "%s\treturn (*jsonInt)(&obj.%s)\n}\n", head, value)
		case typ == "int64" && isField && f == "graphql.MarshalInt64":
			return fmt.Appendf(nil, "%s\treturn (*jsonInt64)(&obj.%s)\n}\n", head, value)
		case typ == "bool" && f == "graphql.MarshalBoolean":
			return fmt.Appendf(nil, "%s\treturn jsonBool(obj.%s)\n}\n", head, value)
		case neverNull[f]:
			return fmt.Appendf(nil, "%s\treturn ec.%s(ctx, field.Selections, obj.%s)\n}\n", head, marshal, value)
		default:
			return fmt.Appendf(nil, "%s\tif res := %s(obj.%s); res != graphql.Null {\n\t\treturn res\n\t}\n%s", head, f, value, fn[len(head):])
		}
	}
	for _, re := range withoutContext {
		if re.Match(body) {
			return fmt.Appendf(nil, "%s\treturn ec.%s(ctx, field.Selections, obj.%s)\n}\n", head, marshal, value)
		}
	}
	return fn
}

// marshalerBody returns the body of src's marshaler name, nil if src
// has none.
func marshalerBody(src []byte, name string) []byte {
	head := []byte("func (ec *executionContext) " + name + "(")
	i := bytes.Index(src, head)
	if i < 0 {
		return nil
	}
	open := bytes.Index(src[i:], []byte(" {\n"))
	end := bytes.Index(src[i:], []byte("\n}\n"))
	if open < 0 || end < open {
		return nil
	}
	return src[i+open+3 : i+end+1]
}
