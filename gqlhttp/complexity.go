package gqlhttp

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// complexityLimit refuses an operation whose complexity is over limit,
// with COMPLEXITY_LIMIT_EXCEEDED, as gqlgen's FixedComplexityLimit does,
// but counts as the schema's complexity functions say down to zero: a
// field whose function returns 0 costs nothing. gqlgen counts such a
// field as 1 and what it selects, so a schema could not make the
// fields of a list that are not its items' (a connection's totalCount
// and pageInfo) count once instead of once for each item. A negative
// value (a function's product that overflowed) counts as the most there
// is; a field without a function costs 1 and what it selects; sums
// saturate, so no document overflows them.
//
// Every answer to a query or a mutation shows the operation's complexity
// and the limit (extensions.complexity, reportComplexity), and a refusal
// names the fields that cost the most (DearestFields).
//
// An operation within the limit then reserves the bytes of the memory
// budget its complexity stands for (admit, inflight.go), unless the
// answer cache holds its answer (answerKept), which takes no memory to
// send.
type complexityLimit struct {
	limit       int
	bytesPer    int64 // bytes of a unit of complexity
	maxResponse int64
	es          graphql.ExecutableSchema
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = (*complexityLimit)(nil)

func (*complexityLimit) ExtensionName() string { return "ComplexityLimit" }

func (c *complexityLimit) Validate(es graphql.ExecutableSchema) error {
	c.es = es
	return nil
}

// MutateOperationContext returns COMPLEXITY_LIMIT_EXCEEDED for an
// operation over the limit, SERVER_BUSY for one the memory budget has no
// room for, or nil.
func (c *complexityLimit) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation == nil {
		return nil
	}
	n := Complexity(ctx, c.es, opCtx.Operation, opCtx.Variables)
	opCtx.Stats.SetExtension(complexityStats, &ComplexityReport{Cost: n, Limit: c.limit})
	if n <= c.limit {
		if answerKept(ctx) {
			return nil
		}
		return admit(ctx, n, c.bytesPer, c.maxResponse)
	}
	return c.refusal(ctx, opCtx, n)
}

// refusal returns the COMPLEXITY_LIMIT_EXCEEDED error of an operation of
// complexity n: its message and extensions.complexity name the fields
// that add the most to it (DearestFields).
func (c *complexityLimit) refusal(ctx context.Context, opCtx *graphql.OperationContext, n int) *gqlerror.Error {
	fields := DearestFields(ctx, c.es, opCtx.Operation, opCtx.Variables, dearestShown)
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = fmt.Sprintf("%s (%d)", f.Path, f.Cost)
	}
	msg := fmt.Sprintf("operation has complexity %d, which exceeds the limit of %d", n, c.limit)
	if len(names) > 0 {
		msg += "; it costs most in " + strings.Join(names, ", ")
	}
	err := gqlerror.Errorf("%s", msg)
	errcode.Set(err, CodeComplexityLimit)
	err.Extensions["complexity"] = ComplexityReport{Cost: n, Limit: c.limit, Fields: fields}
	return err
}

// complexityStats is the name under which complexityLimit keeps the
// operation's ComplexityReport in its context's stats.
const complexityStats = "ComplexityLimit"

// dearestShown is how many fields a refusal names.
const dearestShown = 3

// ComplexityReport is what extensions.complexity shows: the operation's
// complexity and the limit, and in a refusal the fields that add the most
// to it.
type ComplexityReport struct {
	// Cost is the operation's complexity.
	Cost int `json:"cost"`
	// Limit is the most an operation may have.
	Limit int `json:"limit"`
	// Fields are the fields that add the most, dearest first: only in
	// a refusal.
	Fields []FieldCost `json:"fields,omitempty"`
}

// FieldCost is what a field adds to an operation's complexity, wherever
// the document selects it: Path is its response keys from the root (an
// alias where it has one), Cost what it costs beyond what its selection
// adds (a list: its request, and the least its items cost) times how
// many times the fields above it count it (a list's page size).
type FieldCost struct {
	Path string `json:"path"`
	Cost int    `json:"cost"`
}

// reportComplexity is the response hook that puts the operation's
// complexity and the limit in extensions.complexity of every answer to a
// query or mutation (an event of a subscription has none). It depends only
// on the document and its variables, as the answer cache's key does, so an
// answer the cache keeps carries it as it was computed, and it is as true
// when the cache sends it again.
func reportComplexity(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil || !graphql.HasOperationContext(ctx) {
		return resp
	}
	opCtx := graphql.GetOperationContext(ctx)
	r, ok := opCtx.Stats.GetExtension(complexityStats).(*ComplexityReport)
	if !ok || opCtx.Operation == nil || opCtx.Operation.Operation == ast.Subscription {
		return resp
	}
	if resp.Extensions == nil {
		resp.Extensions = map[string]any{}
	}
	resp.Extensions["complexity"] = *r
	return resp
}

// Complexity returns the complexity of op with vars as the complexity
// limit counts it (see complexityLimit).
func Complexity(ctx context.Context, es graphql.ExecutableSchema, op *ast.OperationDefinition, vars map[string]any) int {
	return complexityWalker{es: es, schema: es.Schema(), vars: vars}.selections(ctx, op.SelectionSet, "", 1)
}

// DearestFields returns the n fields of op with vars that add the most to
// its complexity, dearest first (see FieldCost). The costs of fields at
// the same path, through fragments or spread twice, are added up.
func DearestFields(ctx context.Context, es graphql.ExecutableSchema, op *ast.OperationDefinition, vars map[string]any, n int) []FieldCost {
	w := complexityWalker{es: es, schema: es.Schema(), vars: vars, costs: map[string]int{}}
	w.selections(ctx, op.SelectionSet, "", 1)
	fields := make([]FieldCost, 0, len(w.costs))
	for path, cost := range w.costs {
		if cost > 0 {
			fields = append(fields, FieldCost{Path: path, Cost: cost})
		}
	}
	slices.SortFunc(fields, func(a, b FieldCost) int {
		return cmp.Or(cmp.Compare(b.Cost, a.Cost), strings.Compare(a.Path, b.Path))
	})
	return fields[:min(n, len(fields))]
}

// complexityWalker counts the complexity of selections; with costs, it
// also adds up there what each field costs at its path.
type complexityWalker struct {
	es     graphql.ExecutableSchema
	schema *ast.Schema
	vars   map[string]any
	costs  map[string]int
}

// selections returns the complexity of set, at path, which the fields
// above it count times times.
func (w complexityWalker) selections(ctx context.Context, set ast.SelectionSet, path string, times int) int {
	total := 0
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			def := w.schema.Types[s.Definition.Type.Name()]
			if def == nil || def.Name == "__Schema" {
				continue
			}
			args := s.ArgumentMap(w.vars)
			at, per := path, 0
			if w.costs != nil {
				at, per = joinPath(path, cmp.Or(s.Alias, s.Name)), w.perChild(ctx, s, args)
			}
			child := 0
			switch def.Kind {
			case ast.Object, ast.Interface, ast.Union:
				child = w.selections(ctx, s.SelectionSet, at, saturatingMul(times, per))
			}
			cost := w.cost(ctx, s, child, args)
			if w.costs != nil {
				// What it costs beyond what its selection adds.
				own := max(0, cost-saturatingMul(per, child))
				w.costs[at] = saturatingAdd(w.costs[at], saturatingMul(times, own))
			}
			total = saturatingAdd(total, cost)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				total = saturatingAdd(total, w.selections(ctx, s.Definition.SelectionSet, path, times))
			}
		case *ast.InlineFragment:
			total = saturatingAdd(total, w.selections(ctx, s.SelectionSet, path, times))
		}
	}
	return total
}

// cost returns the complexity of the field s whose selection costs child.
func (w complexityWalker) cost(ctx context.Context, s *ast.Field, child int, args map[string]any) int {
	if s.ObjectDefinition.Kind != ast.Interface {
		return w.field(ctx, s.ObjectDefinition, s.Name, child, args)
	}
	// An interface's field costs what its dearest implementation's does.
	cost := 0
	for _, t := range w.schema.GetPossibleTypes(s.ObjectDefinition) {
		cost = max(cost, w.field(ctx, t, s.Name, child, args))
	}
	return cost
}

// perChild returns how many times the field s counts its selection: what
// one more unit of its selection adds to its cost (a list's page size, 1
// for an object, 0 for a field whose cost is fixed), measured far from
// the least an item costs.
func (w complexityWalker) perChild(ctx context.Context, s *ast.Field, args map[string]any) int {
	const probe = 1 << 16
	return max(0, w.cost(ctx, s, 2*probe, args)-w.cost(ctx, s, probe, args)) / probe
}

func (w complexityWalker) field(ctx context.Context, def *ast.Definition, name string, child int, args map[string]any) int {
	if c, ok := w.es.Complexity(ctx, def.Name, name, child, args); ok {
		if c < 0 {
			return maxComplexity // a function's product overflowed
		}
		return c
	}
	return saturatingAdd(1, child)
}

// joinPath returns the path of the field key under path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

const maxComplexity = int(^uint(0) >> 1)

// saturatingAdd returns a+b, or the largest int when that overflows;
// neither is negative.
func saturatingAdd(a, b int) int {
	if a > maxComplexity-b {
		return maxComplexity
	}
	return a + b
}

// saturatingMul returns a*b, or the largest int when that overflows;
// neither is negative.
func saturatingMul(a, b int) int {
	if a != 0 && b > maxComplexity/a {
		return maxComplexity
	}
	return a * b
}
