package graph

import (
	"bytes"
	"context"
	"hash/maphash"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/graph/internal/warm"
)

// The functions here stand in for parts of gqlgen's executor that
// allocate for what a request does not use, or start goroutines whose
// stacks are copied as they grow; internal/leanexec rewrites
// generated.go to call them.

// marshalSlice marshals a list's n elements with f, as
// graphql.MarshalSliceConcurrently does without a limit of goroutines:
// the elements wait for their loads together, and a panic in one makes
// it null with an error at its path. The first element is marshaled on
// the caller's goroutine and the others on kept ones (warm.Go), whose
// stacks are already as deep as an element needs; all of them on the
// caller's, one after the other, when they are plain (plainElements):
// they have nothing to wait for together.
func marshalSlice(ctx context.Context, n int, plain bool, f func(context.Context, int) graphql.Marshaler) graphql.Array {
	ret := make(graphql.Array, n)
	element := func(i int) {
		ctx := graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &i})
		defer func() {
			if r := recover(); r != nil {
				graphql.AddError(ctx, graphql.Recover(ctx, r))
				ret[i] = graphql.Null
			}
		}()
		ret[i] = f(ctx, i)
	}
	if plain {
		for i := range n {
			element(i)
		}
		return ret
	}
	var wg sync.WaitGroup
	for i := 1; i < n; i++ {
		wg.Add(1)
		warm.Go(func() {
			defer wg.Done()
			element(i)
		})
	}
	if n > 0 {
		element(0)
	}
	wg.Wait()
	return ret
}

// plainElements reports whether the elements of a list of objects of
// type typ, written with the selection sel, resolve without waiting:
// sel selects, directly and not through fragments, only fields without
// resolvers (resolverFields) and without selections of their own, as a
// post's categories { slug name }. An unknown type is not plain.
func plainElements(sel ast.SelectionSet, typ string) bool {
	resolved, ok := resolverFields[typ]
	if !ok {
		return false
	}
	for _, s := range sel {
		f, ok := s.(*ast.Field)
		if !ok || len(f.SelectionSet) > 0 || slices.Contains(resolved, f.Name) {
			return false
		}
	}
	return true
}

// gqlgen's prelude declares @defer, which no transport here delivers:
// every answer is sent whole, and a POST would answer the deferred fields
// null with "hasNext": true and never send the rest. The schema leaves it
// out, so introspection and the clients generated from it do not offer
// it, and validation refuses it as a directive the schema does not know.
func init() { delete(parsedSchema.Directives, "defer") }

// deferredGroup returns the group of an object's @defer'd fields, as
// graphql.NewDeferredGroup does, for an object of which a field in
// fields is deferred, and an empty group for any other: the executor
// reads the group only for deferred fields, and gqlgen's template made
// one for every object, three allocations each.
func deferredGroup(ctx context.Context, fields []graphql.CollectedField) graphql.DeferredGroup {
	for _, f := range fields {
		if f.IsDeferred() {
			return graphql.NewDeferredGroup(ctx)
		}
	}
	return graphql.DeferredGroup{}
}

// collectFields returns the fields of sel that apply to an object of
// the type whose implementors are given (nil: every fragment applies),
// as graphql.CollectFields does, from the operation's cache
// (fieldsCache) once collected. gqlgen's own cache builds its key on
// every call with a hasher and a copy of each type name, two to five
// allocations an object; this one is keyed by the selection set's
// identity and the type's name and number of implementors, and checks
// the implementors on a hit.
// An operation without the cache collects them as gqlgen does.
func collectFields(oc *graphql.OperationContext, sel ast.SelectionSet, implementors []string) []graphql.CollectedField {
	c, _ := oc.Stats.GetExtension(fieldsCacheName).(*fieldsCache)
	if c == nil || len(sel) == 0 {
		return graphql.CollectFields(oc, sel, implementors)
	}
	k := fieldsKey{sel: &sel[0], n: len(sel), types: len(implementors)}
	if len(implementors) > 0 {
		k.typ = implementors[0]
	}
	c.mu.Lock()
	e, ok := c.m[k]
	c.mu.Unlock()
	if ok && slices.Equal(e.implementors, implementors) {
		return e.fields
	}
	fields := graphql.CollectFields(oc, sel, implementors)
	if !ok {
		c.mu.Lock()
		if c.m == nil {
			c.m = make(map[fieldsKey]collected, 8)
		}
		c.m[k] = collected{implementors: implementors, fields: fields}
		c.mu.Unlock()
	}
	return fields
}

// fieldsCache holds an operation's collected fields, its map made at the
// first: it lives as long as the operation and holds one entry for each
// selection set and type the operation's document has.
type fieldsCache struct {
	mu sync.Mutex
	m  map[fieldsKey]collected
}

type fieldsKey struct {
	sel   *ast.Selection
	n     int
	typ   string
	types int
}

type collected struct {
	implementors []string
	fields       []graphql.CollectedField
}

const fieldsCacheName = "collectedFields"

// fieldsCacheExtension gives every operation a fieldsCache, before it
// runs: the operation context's stats are written only then, and read
// by the operation's resolvers at once.
type fieldsCacheExtension struct{}

var (
	_ graphql.HandlerExtension        = fieldsCacheExtension{}
	_ graphql.OperationContextMutator = fieldsCacheExtension{}
)

func (fieldsCacheExtension) ExtensionName() string                   { return "CollectedFieldsCache" }
func (fieldsCacheExtension) Validate(graphql.ExecutableSchema) error { return nil }

func (fieldsCacheExtension) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	oc.Stats.SetExtension(fieldsCacheName, &fieldsCache{})
	return nil
}

// maxObjectFields is the most fields an object written by objectFields
// has; more go to gqlgen's FieldSet, whose map keeps the check for a
// repeated name linear.
const maxObjectFields = 32

// object returns the marshaler of an object whose fields are resolved:
// out, the object's field set, holds a value for each of fields.
// gqlgen's FieldSet writes itself through an iterator that copies each
// field to the heap and a map of the names written, three allocations
// and one more a field; objectFields writes the same JSON with one. An
// object with deferred fields, whose views take values out of out, and
// an object of many fields keep out.
func object(out *graphql.FieldSet, fields []graphql.CollectedField, deferred graphql.DeferredGroup) graphql.Marshaler {
	if len(deferred.Defers) > 0 || len(fields) > maxObjectFields {
		return out
	}
	return &objectFields{fields: fields, values: out.Values}
}

type objectFields struct {
	fields []graphql.CollectedField
	values []graphql.Marshaler
}

// MarshalGQL writes the fields as FieldSet.MarshalGQL does: in order,
// each name (an alias, which is a GraphQL name and needs no escaping)
// once, the first value written.
func (o *objectFields) MarshalGQL(w io.Writer) {
	io.WriteString(w, "{")
	written := 0
	for i := range o.fields {
		alias := o.fields[i].Alias
		if aliasWritten(o.fields[:i], alias) {
			continue
		}
		if written > 0 {
			io.WriteString(w, ",")
		}
		written++
		io.WriteString(w, `"`)
		io.WriteString(w, alias)
		io.WriteString(w, `":`)
		o.values[i].MarshalGQL(w)
	}
	io.WriteString(w, "}")
}

func aliasWritten(fields []graphql.CollectedField, alias string) bool {
	for i := range fields {
		if fields[i].Alias == alias {
			return true
		}
	}
	return false
}

// jsonString is a string field of an object, written as a JSON string:
// a pointer to the field is a graphql.Marshaler without the allocation
// of graphql.MarshalString's closure. It escapes as gqlgen does.
type jsonString string

func (s *jsonString) MarshalGQL(w io.Writer) {
	const hex = "0123456789ABCDEF"
	v := string(*s)
	io.WriteString(w, `"`)
	start := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		io.WriteString(w, v[start:i])
		switch c {
		case '"', '\\':
			io.WriteString(w, `\`+string(c))
		case '\n':
			io.WriteString(w, `\n`)
		case '\r':
			io.WriteString(w, `\r`)
		case '\t':
			io.WriteString(w, `\t`)
		default:
			io.WriteString(w, `\u00`+hex[c>>4:c>>4+1]+hex[c&0xf:c&0xf+1])
		}
		start = i + 1
	}
	io.WriteString(w, v[start:])
	io.WriteString(w, `"`)
}

// jsonInt and jsonInt64 are integer fields of an object, and a pointer
// to one a graphql.Marshaler without graphql.MarshalInt's closure.
type (
	jsonInt   int
	jsonInt64 int64
)

func (n *jsonInt) MarshalGQL(w io.Writer)   { io.WriteString(w, strconv.Itoa(int(*n))) }
func (n *jsonInt64) MarshalGQL(w io.Writer) { io.WriteString(w, strconv.FormatInt(int64(*n), 10)) }

// jsonTrue and jsonFalse are the marshalers of a Boolean, made once.
var (
	jsonTrue  = graphql.MarshalBoolean(true)
	jsonFalse = graphql.MarshalBoolean(false)
)

func jsonBool(b bool) graphql.Marshaler {
	if b {
		return jsonTrue
	}
	return jsonFalse
}

// answerSizes holds the size of an operation's last answer, in a slot
// by a hash of its document and name, for the next answer's buffer to
// be made at once at about its size instead of growing to it through
// doublings that copy it. Two operations that share a slot only size
// each other's buffers.
var (
	answerSizes [1024]atomic.Uint32
	answerSeed  = maphash.MakeSeed()
)

// maxAnswerHint bounds the buffer made ahead of an answer.
const maxAnswerHint = 1 << 20

// marshalAnswer writes data, the answer to op, into a buffer made at the
// size of op's last answer.
func marshalAnswer(op *graphql.OperationContext, data graphql.Marshaler) *bytes.Buffer {
	slot := &answerSizes[(maphash.String(answerSeed, op.RawQuery)^maphash.String(answerSeed, op.OperationName))%uint64(len(answerSizes))]
	hint := int(slot.Load())
	buf := bytes.NewBuffer(make([]byte, 0, hint+hint/8))
	data.MarshalGQL(buf)
	slot.Store(uint32(min(buf.Len(), maxAnswerHint)))
	return buf
}
