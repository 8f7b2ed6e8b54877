package gqlhttp

import (
	"strconv"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// Validation: gqlparser's rules of the GraphQL specification, with these
// changes.
//
//   - OverlappingFieldsCanBeMerged (mergefields.go) and
//     MaxIntrospectionDepth are ours: gqlparser's take time exponential in
//     the fragments a document chains, ours linear.
//   - An Int literal must fit in 32 bits, as the specification's Int does.
//   - Without introspection, no rule suggests a name ("Did you mean …?"):
//     suggestions would spell out the schema that introspection hides, and
//     __schema and __type fail validation rather than return null.

// validationRules returns the function that makes the rules of each
// validation, with or without introspection.
func validationRules(introspection bool) func() *rules.Rules {
	return func() *rules.Rules {
		r := rules.NewDefaultRules()
		replace := func(old string, rule core.Rule) {
			r.RemoveRule(old)
			r.AddRule(rule.Name, rule.RuleFunc)
		}
		replace(rules.OverlappingFieldsCanBeMergedRule.Name, fieldsMergeRule)
		replace(rules.MaxIntrospectionDepth.Name, introspectionDepthRule)
		r.AddRule(intRangeRule.Name, intRangeRule.RuleFunc)
		if !introspection {
			// gqlgen swaps FieldsOnCorrectType and ScalarLeafs itself when
			// suggestions are disabled.
			replace(rules.KnownArgumentNamesRule.Name, rules.KnownArgumentNamesRuleWithoutSuggestions)
			replace(rules.KnownTypeNamesRule.Name, rules.KnownTypeNamesRuleWithoutSuggestions)
			replace(rules.ValuesOfCorrectTypeRule.Name, rules.ValuesOfCorrectTypeRuleWithoutSuggestions)
			r.AddRule(noIntrospectionRule.Name, noIntrospectionRule.RuleFunc)
		}
		return r
	}
}

// noIntrospectionRule refuses __schema and __type, so a client asking for
// the schema of a server without introspection gets a validation error
// rather than a failed field.
var noIntrospectionRule = core.Rule{
	Name: "NoIntrospection",
	RuleFunc: func(observers *core.Events, addError core.AddErrFunc) {
		observers.OnField(func(_ *core.Walker, f *ast.Field) {
			if f.Name == "__schema" || f.Name == "__type" {
				addError(core.Message("introspection is disabled"), core.At(f.Position))
			}
		})
	},
}

// intRangeRule refuses Int literals outside the 32-bit range of the
// specification's Int (gqlparser takes any 64-bit number).
var intRangeRule = core.Rule{
	Name: "IntLiteralsFit32Bits",
	RuleFunc: func(observers *core.Events, addError core.AddErrFunc) {
		observers.OnValue(func(_ *core.Walker, v *ast.Value) {
			if v.Kind != ast.IntValue || v.Definition == nil || v.Definition.Name != "Int" {
				return
			}
			if _, err := strconv.ParseInt(v.Raw, 10, 32); err != nil {
				addError(core.Message("Int cannot represent non 32-bit signed integer value: %s", v.Raw), core.At(v.Position))
			}
		})
	},
}

// maxIntrospectionListDepth is how deeply an introspection query may nest
// the list fields that let it grow without bound (fields, interfaces,
// possibleTypes, inputFields), as graphql-js allows.
const maxIntrospectionListDepth = 3

// introspectionDepthRule is gqlparser's MaxIntrospectionDepth with each
// fragment measured once per depth rather than once per spread: the same
// verdicts in time linear in the document.
var introspectionDepthRule = newIntrospectionDepthRule(nil)

// newIntrospectionDepthRule returns the rule; report, when set, is called
// with the selections it visited for each introspection field.
func newIntrospectionDepthRule(report func(work int)) core.Rule {
	return core.Rule{
		Name: rules.MaxIntrospectionDepth.Name,
		RuleFunc: func(observers *core.Events, addError core.AddErrFunc) {
			d := &introspectionDepth{memo: map[fragmentDepth]bool{}}
			observers.OnField(func(_ *core.Walker, f *ast.Field) {
				if f.Name != "__schema" && f.Name != "__type" {
					return
				}
				if d.field(f, 0) {
					addError(core.Message("Maximum introspection depth exceeded"), core.At(f.Position))
				}
				if report != nil {
					report(d.work)
				}
			})
		},
	}
}

type fragmentDepth struct {
	name  string
	depth int
}

// introspectionDepth remembers, for each fragment and depth at which it is
// spread, whether it nests the list fields too deeply.
type introspectionDepth struct {
	memo map[fragmentDepth]bool
	work int
}

func (d *introspectionDepth) field(f *ast.Field, depth int) bool {
	switch f.Name {
	case "fields", "interfaces", "possibleTypes", "inputFields":
		depth++
		if depth >= maxIntrospectionListDepth {
			return true
		}
	}
	return d.selections(f.SelectionSet, depth)
}

func (d *introspectionDepth) selections(set ast.SelectionSet, depth int) bool {
	for _, sel := range set {
		d.work++
		switch s := sel.(type) {
		case *ast.Field:
			if d.field(s, depth) {
				return true
			}
		case *ast.InlineFragment:
			if d.selections(s.SelectionSet, depth) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Definition == nil {
				continue
			}
			k := fragmentDepth{s.Name, depth}
			deep, seen := d.memo[k]
			if !seen {
				// A cycle (refused by NoFragmentCycles) ends here.
				d.memo[k] = false
				deep = d.selections(s.Definition.SelectionSet, depth)
				d.memo[k] = deep
			}
			if deep {
				return true
			}
		}
	}
	return false
}
