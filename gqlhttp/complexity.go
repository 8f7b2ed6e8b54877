package gqlhttp

import (
	"context"

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
	if n <= c.limit {
		if answerKept(ctx) {
			return nil
		}
		return admit(ctx, n, c.bytesPer, c.maxResponse)
	}
	err := gqlerror.Errorf("operation has complexity %d, which exceeds the limit of %d", n, c.limit)
	errcode.Set(err, CodeComplexityLimit)
	return err
}

// Complexity returns the complexity of op with vars as the complexity
// limit counts it (see complexityLimit).
func Complexity(ctx context.Context, es graphql.ExecutableSchema, op *ast.OperationDefinition, vars map[string]any) int {
	return complexityWalker{es: es, schema: es.Schema(), vars: vars}.selections(ctx, op.SelectionSet)
}

type complexityWalker struct {
	es     graphql.ExecutableSchema
	schema *ast.Schema
	vars   map[string]any
}

func (w complexityWalker) selections(ctx context.Context, set ast.SelectionSet) int {
	total := 0
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			def := w.schema.Types[s.Definition.Type.Name()]
			if def == nil || def.Name == "__Schema" {
				continue
			}
			child := 0
			switch def.Kind {
			case ast.Object, ast.Interface, ast.Union:
				child = w.selections(ctx, s.SelectionSet)
			}
			args := s.ArgumentMap(w.vars)
			cost := 0
			if s.ObjectDefinition.Kind == ast.Interface {
				// An interface's field costs what its dearest
				// implementation's does.
				for _, t := range w.schema.GetPossibleTypes(s.ObjectDefinition) {
					cost = max(cost, w.field(ctx, t, s.Name, child, args))
				}
			} else {
				cost = w.field(ctx, s.ObjectDefinition, s.Name, child, args)
			}
			total = saturatingAdd(total, cost)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				total = saturatingAdd(total, w.selections(ctx, s.Definition.SelectionSet))
			}
		case *ast.InlineFragment:
			total = saturatingAdd(total, w.selections(ctx, s.SelectionSet))
		}
	}
	return total
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

const maxComplexity = int(^uint(0) >> 1)

// saturatingAdd returns a+b, or the largest int when that overflows;
// neither is negative.
func saturatingAdd(a, b int) int {
	if a > maxComplexity-b {
		return maxComplexity
	}
	return a + b
}
