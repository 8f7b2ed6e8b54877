package gqlhttp

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// The validation rule "Overlapping fields can be merged" of the GraphQL
// specification (5.3.2), in time linear in the document for the shapes
// clients send and bounded for any other.
//
// gqlparser's own rule forgets which fragments it compared whenever it
// descends into a field, so a chain of fragments that each spread the next
// one twice next to a field with a selection (…F1 …F1 author { … }) takes
// time doubling with every link: 21 links of 1.8 KB ran 15 s. This one
// compares sets of fields rather than pairs:
//
//   - The fields a selection set selects, through inline fragments and
//     fragment spreads, are gathered once, each field node and each
//     fragment once, and grouped by response name: a group is a set of
//     fields the response merges into one entry.
//   - SameResponseShape holds for a group when every field's type has the
//     same list and non-null wrappers and, for scalars and enums, the same
//     type; it is an equivalence, so each field is compared with the
//     first, and the sub-selections of the whole group are gathered and
//     checked the same way.
//   - Two fields whose parent types are two different object types are
//     mutually exclusive: they never both apply. For every object type T of
//     the group, the fields of T and those of an interface or a union
//     (which apply whatever the object) form a clique in which every pair
//     must have the same name and arguments; the specification's merged
//     sub-selections of the pairs are then exactly the groups of the
//     clique's sub-selections, which are checked in turn.
//   - Each group is checked once (memoized by its set of field nodes), so
//     a field that fragments repeat is not compared again, and the
//     sub-selections of a clique are gathered and checked once for what
//     they select (memoized by their fields and fragment names), so a
//     fragment spread under many fields is not gathered again.
//
// The work (selections gathered, fields compared) is counted; a document
// that needs more than maxValidationWork is refused as too complex, so no
// document, however crafted, can hold a request longer than that.

// maxValidationWork bounds the work of the rule on one document. A
// document within the token limit does a few thousand units; the limit
// stands for a few milliseconds of CPU.
const maxValidationWork = 200_000

// tooComplexToValidate is the message of a document refused for the work
// it takes to validate; the error presenter gives it
// COMPLEXITY_LIMIT_EXCEEDED.
const tooComplexToValidate = "the document is too complex to validate"

// fieldsMergeRule is the rule as the server runs it.
var fieldsMergeRule = newFieldsMergeRule(maxValidationWork, nil)

// newFieldsMergeRule returns the rule with a work limit of budget; report,
// when set, is called with the work each document took.
func newFieldsMergeRule(budget int, report func(work int)) core.Rule {
	return core.Rule{
		Name: rules.OverlappingFieldsCanBeMergedRule.Name,
		RuleFunc: func(observers *core.Events, addError core.AddErrFunc) {
			m := &fieldsMerge{
				addError:  addError,
				budget:    budget,
				ids:       map[*ast.Field]int{},
				merged:    map[string]bool{},
				shaped:    map[string]bool{},
				reported:  map[string]bool{},
				reached:   map[string]bool{},
				gathered:  map[string]*groups{},
				subMerged: map[string]bool{},
				subShaped: map[string]bool{},
			}
			observers.OnOperation(func(w *core.Walker, op *ast.OperationDefinition) {
				m.schema = w.Schema
				m.checkRoot(op.SelectionSet, m.reached)
				if report != nil {
					report(m.work)
				}
			})
			// Operations are walked before fragment definitions. A fragment
			// that no operation reaches is checked on its own: it is an
			// error anyway (NoUnusedFragments), but its conflicts are too.
			observers.OnFragment(func(w *core.Walker, f *ast.FragmentDefinition) {
				if m.reached[f.Name] {
					return
				}
				m.schema = w.Schema
				m.checkRoot(f.SelectionSet, map[string]bool{})
				if report != nil {
					report(m.work)
				}
			})
		},
	}
}

// fieldsMerge is the state of the rule for one document.
type fieldsMerge struct {
	schema   *ast.Schema
	addError core.AddErrFunc
	budget   int
	work     int
	ids      map[*ast.Field]int // a small number per field node, for group keys
	merged   map[string]bool    // groups checked by checkGroup
	shaped   map[string]bool    // groups checked by checkShape
	reported map[string]bool    // conflicts reported
	reached  map[string]bool    // fragments an operation reaches
	// gathered holds the groups of sub-selections by what they select;
	// subMerged and subShaped the ones whose groups were checked.
	gathered             map[string]*groups
	subMerged, subShaped map[string]bool
}

// groups is the fields of a selection, gathered through fragments, by
// response name in the order the names first appear.
type groups struct {
	names  []string
	fields map[string][]*ast.Field
}

// exhausted reports whether the work limit has been crossed, and reports
// that once.
func (m *fieldsMerge) exhausted() bool {
	if m.work <= m.budget {
		return false
	}
	if !m.reported[tooComplexToValidate] {
		m.reported[tooComplexToValidate] = true
		m.addError(core.Message(tooComplexToValidate))
	}
	return true
}

// checkRoot checks the selection set of an operation or a fragment.
func (m *fieldsMerge) checkRoot(set ast.SelectionSet, reached map[string]bool) {
	g := &groups{fields: map[string][]*ast.Field{}}
	m.gather(set, g, map[*ast.Field]bool{}, reached)
	for _, name := range g.names {
		m.checkGroup(g.fields[name], name)
	}
}

// gather adds the fields set selects to g: through inline fragments and
// fragment spreads, each field node and each fragment once.
func (m *fieldsMerge) gather(set ast.SelectionSet, g *groups, seen map[*ast.Field]bool, frags map[string]bool) {
	for _, sel := range set {
		m.work++
		switch s := sel.(type) {
		case *ast.Field:
			if seen[s] {
				continue
			}
			seen[s] = true
			name := s.Alias
			if name == "" {
				name = s.Name
			}
			if _, ok := g.fields[name]; !ok {
				g.names = append(g.names, name)
			}
			g.fields[name] = append(g.fields[name], s)
		case *ast.InlineFragment:
			m.gather(s.SelectionSet, g, seen, frags)
		case *ast.FragmentSpread:
			if s.Definition == nil || frags[s.Name] {
				continue
			}
			frags[s.Name] = true
			m.reached[s.Name] = true
			m.gather(s.Definition.SelectionSet, g, seen, frags)
		}
	}
}

// subGroups returns the groups of the sub-selections of fields, gathered
// together, and a key that names what they select: sub-selections that
// select the same fields and fragments share one gathering.
func (m *fieldsMerge) subGroups(fields []*ast.Field) (*groups, string) {
	var parts []string
	for _, f := range fields {
		parts = m.selects(f.SelectionSet, parts)
	}
	slices.Sort(parts)
	key := strings.Join(slices.Compact(parts), ",")
	if g, ok := m.gathered[key]; ok {
		return g, key
	}
	g := &groups{fields: map[string][]*ast.Field{}}
	seen, frags := map[*ast.Field]bool{}, map[string]bool{}
	for _, f := range fields {
		m.gather(f.SelectionSet, g, seen, frags)
	}
	m.gathered[key] = g
	return g, key
}

// selects appends to parts what set selects directly, without going into
// fragments: its fields, by number, and the names of the fragments it
// spreads, through inline fragments.
func (m *fieldsMerge) selects(set ast.SelectionSet, parts []string) []string {
	for _, sel := range set {
		m.work++
		switch s := sel.(type) {
		case *ast.Field:
			parts = append(parts, strconv.Itoa(m.id(s)))
		case *ast.InlineFragment:
			parts = m.selects(s.SelectionSet, parts)
		case *ast.FragmentSpread:
			parts = append(parts, "..."+s.Name)
		}
	}
	return parts
}

// id returns the number of a field node.
func (m *fieldsMerge) id(f *ast.Field) int {
	id, ok := m.ids[f]
	if !ok {
		id = len(m.ids)
		m.ids[f] = id
	}
	return id
}

// key returns a key that names the set of field nodes of a group.
func (m *fieldsMerge) key(fields []*ast.Field) string {
	ids := make([]int, len(fields))
	for i, f := range fields {
		ids[i] = m.id(f)
	}
	slices.Sort(ids)
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(strconv.Itoa(id))
		b.WriteByte(',')
	}
	return b.String()
}

// checkGroup checks that the fields of one response name, at path, can be
// merged: the same response shape, and for each clique of fields that can
// apply together the same name and arguments, then their sub-selections.
func (m *fieldsMerge) checkGroup(fields []*ast.Field, path string) {
	m.work += len(fields)
	if m.exhausted() {
		return
	}
	key := m.key(fields)
	if m.merged[key] {
		return
	}
	m.merged[key] = true
	m.checkShape(fields, path)
	for _, clique := range cliques(fields) {
		if m.conflictingCall(clique, path) {
			continue
		}
		sub, key := m.subGroups(clique)
		if m.subMerged[key] {
			continue // its groups are checked, or being checked
		}
		m.subMerged[key] = true
		for _, name := range sub.names {
			m.checkGroup(sub.fields[name], path+"."+name)
			if m.exhausted() {
				return
			}
		}
	}
}

// cliques splits fields into the sets whose members can all apply to one
// object: for each object type that is a parent, its fields and those of
// abstract parents (interfaces, unions). Fields of two different object
// types never apply together, so only their shapes must agree. A field
// whose parent is unknown (an invalid document) takes part in nothing.
func cliques(fields []*ast.Field) [][]*ast.Field {
	var objects []*ast.Definition
	byObject := map[*ast.Definition][]*ast.Field{}
	var shared []*ast.Field
	for _, f := range fields {
		switch parent := f.ObjectDefinition; {
		case parent == nil:
		case parent.Kind == ast.Object && f.Definition != nil:
			if _, ok := byObject[parent]; !ok {
				objects = append(objects, parent)
			}
			byObject[parent] = append(byObject[parent], f)
		default:
			shared = append(shared, f)
		}
	}
	if len(objects) == 0 {
		if len(shared) == 0 {
			return nil
		}
		return [][]*ast.Field{shared}
	}
	out := make([][]*ast.Field, len(objects))
	for i, o := range objects {
		out[i] = append(slices.Clip(byObject[o]), shared...)
	}
	return out
}

// conflictingCall reports, and returns true, when two fields of a clique
// differ in name or arguments.
func (m *fieldsMerge) conflictingCall(clique []*ast.Field, path string) bool {
	first := clique[0]
	for _, f := range clique[1:] {
		m.work++
		switch {
		case f.Name != first.Name:
			m.conflict(path, strconv.Quote(first.Name)+" and "+strconv.Quote(f.Name)+" are different fields", first, f)
			return true
		case !sameArguments(first.Arguments, f.Arguments):
			m.conflict(path, "they have differing arguments", first, f)
			return true
		}
	}
	return false
}

// checkShape checks that the fields of one response name return values of
// the same shape, at every depth of their sub-selections.
func (m *fieldsMerge) checkShape(fields []*ast.Field, path string) {
	typed := make([]*ast.Field, 0, len(fields))
	for _, f := range fields {
		if f.Definition != nil {
			typed = append(typed, f)
		}
	}
	if len(typed) == 0 || m.exhausted() {
		return
	}
	key := m.key(typed)
	if m.shaped[key] {
		return
	}
	m.shaped[key] = true
	first := typed[0]
	for _, f := range typed[1:] {
		m.work++
		if m.typesConflict(first.Definition.Type, f.Definition.Type) {
			m.conflict(path, "they return conflicting types "+strconv.Quote(first.Definition.Type.String())+
				" and "+strconv.Quote(f.Definition.Type.String()), first, f)
			return
		}
	}
	if m.isLeaf(first.Definition.Type.Name()) {
		return
	}
	sub, key := m.subGroups(typed)
	if m.subShaped[key] {
		return
	}
	m.subShaped[key] = true
	for _, name := range sub.names {
		m.checkShape(sub.fields[name], path+"."+name)
	}
}

// typesConflict reports whether two field types give differently shaped
// values: other list or non-null wrappers, or two different scalars or
// enums, or a leaf and a composite type.
func (m *fieldsMerge) typesConflict(a, b *ast.Type) bool {
	switch {
	case a.NonNull != b.NonNull, (a.Elem == nil) != (b.Elem == nil):
		return true
	case a.Elem != nil:
		return m.typesConflict(a.Elem, b.Elem)
	case m.isLeaf(a.NamedType) || m.isLeaf(b.NamedType):
		return a.NamedType != b.NamedType
	}
	return false
}

func (m *fieldsMerge) isLeaf(name string) bool {
	def := m.schema.Types[name]
	return def != nil && (def.Kind == ast.Scalar || def.Kind == ast.Enum)
}

// sameArguments reports whether two fields are called with the same
// arguments, in any order, with the same values.
func sameArguments(a, b ast.ArgumentList) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		y := b.ForName(x.Name)
		if y == nil || canonicalValue(x.Value) != canonicalValue(y.Value) {
			return false
		}
	}
	return true
}

// canonicalValue writes a value so that two values are equal exactly when
// they are written alike: the fields of an input object in name order.
func canonicalValue(v *ast.Value) string {
	if v == nil {
		return ""
	}
	switch v.Kind {
	case ast.ObjectValue:
		fields := slices.Clone(v.Children)
		slices.SortFunc(fields, func(a, b *ast.ChildValue) int { return cmp.Compare(a.Name, b.Name) })
		var b strings.Builder
		b.WriteByte('{')
		for _, f := range fields {
			b.WriteString(f.Name + ":" + canonicalValue(f.Value) + ",")
		}
		return b.String() + "}"
	case ast.ListValue:
		var b strings.Builder
		b.WriteByte('[')
		for _, c := range v.Children {
			b.WriteString(canonicalValue(c.Value) + ",")
		}
		return b.String() + "]"
	}
	return v.String()
}

// conflict reports that a and b cannot be merged at path, once.
func (m *fieldsMerge) conflict(path, reason string, a, b *ast.Field) {
	key := path + "\x00" + reason + "\x00" + positionKey(a.Position) + "\x00" + positionKey(b.Position)
	if m.reported[key] {
		return
	}
	m.reported[key] = true
	at := []*ast.Position{a.Position, b.Position}
	slices.SortFunc(at, func(p, q *ast.Position) int {
		if p == nil || q == nil {
			return 0
		}
		return cmp.Or(cmp.Compare(p.Line, q.Line), cmp.Compare(p.Column, q.Column))
	})
	m.addError(
		core.Message(`Fields %q conflict because %s. Use different aliases on the fields to fetch both if this was intentional.`, path, reason),
		core.At(at[0]), core.At(at[1]),
	)
}

func positionKey(p *ast.Position) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column)
}
