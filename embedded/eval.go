package embedded

import (
	"slices"
	"strings"
)

// Evaluation of conditions and projections against an item.
//
// Invariants, as DynamoDB defines them:
//   - an operand that names a missing attribute, a path through something
//     that is not a map or list, or size() of a value that has none, has
//     no value; a comparison with no value is false, except <>, which is
//     true;
//   - values of different types are never equal, and only S, N and B are
//     ordered (eval never orders other types: the parser refused them
//     where it could see them, and at run time the comparison is false);
//   - evaluation never changes the item.

// resolve returns the value at path p in it.
func resolve(it item, p docPath) (value, bool) {
	v, ok := it[p[0].name]
	if !ok || p[0].index >= 0 {
		return value{}, false
	}
	for _, e := range p[1:] {
		switch {
		case e.index >= 0 && v.kind == kindL:
			if e.index >= len(v.list) {
				return value{}, false
			}
			v = v.list[e.index]
		case e.index < 0 && v.kind == kindM:
			if v, ok = v.m[e.name]; !ok {
				return value{}, false
			}
		default:
			return value{}, false
		}
	}
	return v, true
}

// evalOperand returns the value of a condition's operand.
func evalOperand(it item, o *operand) (value, bool) {
	switch o.kind {
	case opPath:
		return resolve(it, o.path)
	case opValue:
		return o.val.v, true
	case opCall: // size, the only function that is an operand of conditions
		v, ok := evalOperand(it, o.args[0])
		if !ok {
			return value{}, false
		}
		n, ok := sizeOf(v)
		if !ok {
			return value{}, false
		}
		return value{kind: kindN, s: itoa(n)}, true
	}
	return value{}, false
}

// sizeOf returns size() of v: the bytes of a string or binary, the
// elements of a set, list or map.
func sizeOf(v value) (int, bool) {
	switch v.kind {
	case kindS, kindB:
		return len(v.s), true
	case kindSS, kindNS, kindBS:
		return len(v.set), true
	case kindL:
		return len(v.list), true
	case kindM:
		return len(v.m), true
	}
	return 0, false
}

// evalCond reports whether it satisfies c.
func evalCond(it item, c *cond) bool {
	switch c.kind {
	case cAnd:
		return evalCond(it, c.kids[0]) && evalCond(it, c.kids[1])
	case cOr:
		return evalCond(it, c.kids[0]) || evalCond(it, c.kids[1])
	case cNot:
		return !evalCond(it, c.kids[0])
	case cCompare:
		a, okA := evalOperand(it, c.args[0])
		b, okB := evalOperand(it, c.args[1])
		if !okA || !okB {
			return c.op == "<>"
		}
		switch c.op {
		case "=":
			return equal(a, b)
		case "<>":
			return !equal(a, b)
		}
		cmp, ok := compareValues(a, b)
		if !ok {
			return false
		}
		switch c.op {
		case "<":
			return cmp < 0
		case "<=":
			return cmp <= 0
		case ">":
			return cmp > 0
		}
		return cmp >= 0
	case cBetween:
		a, ok := evalOperand(it, c.args[0])
		lo, okLo := evalOperand(it, c.args[1])
		hi, okHi := evalOperand(it, c.args[2])
		if !ok || !okLo || !okHi {
			return false
		}
		c1, ok1 := compareValues(a, lo)
		c2, ok2 := compareValues(a, hi)
		return ok1 && ok2 && c1 >= 0 && c2 <= 0
	case cIn:
		a, ok := evalOperand(it, c.args[0])
		if !ok {
			return false
		}
		for _, o := range c.args[1:] {
			if b, ok := evalOperand(it, o); ok && equal(a, b) {
				return true
			}
		}
		return false
	case cCall:
		return evalFunction(it, c.op, c.args)
	}
	return false
}

// evalFunction evaluates a condition function.
func evalFunction(it item, name string, args []*operand) bool {
	a, ok := evalOperand(it, args[0])
	switch name {
	case "attribute_exists":
		return ok
	case "attribute_not_exists":
		return !ok
	}
	b, okB := evalOperand(it, args[1])
	if !ok || !okB {
		return false
	}
	switch name {
	case "attribute_type":
		return b.kind == kindS && a.kind.String() == b.s
	case "begins_with":
		return a.kind == b.kind && (a.kind == kindS || a.kind == kindB) && strings.HasPrefix(a.s, b.s)
	case "contains":
		return contains(a, b)
	}
	return false
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// projection is the tree of the paths a projection expression selects.
type projection struct {
	all     bool // the whole value at this point
	names   map[string]*projection
	indexes map[int]*projection
}

// newProjection returns the tree of paths.
func newProjection(paths []docPath) *projection {
	root := &projection{}
	for _, p := range paths {
		n := root
		for _, e := range p {
			if e.index >= 0 {
				if n.indexes == nil {
					n.indexes = map[int]*projection{}
				}
				if n.indexes[e.index] == nil {
					n.indexes[e.index] = &projection{}
				}
				n = n.indexes[e.index]
			} else {
				if n.names == nil {
					n.names = map[string]*projection{}
				}
				if n.names[e.name] == nil {
					n.names[e.name] = &projection{}
				}
				n = n.names[e.name]
			}
		}
		n.all = true
	}
	return root
}

// apply returns the parts of it the projection selects: attributes, keys
// of maps, and elements of lists (in their order, the others left out).
func (pr *projection) apply(it item) item {
	out := item{}
	for name, sub := range pr.names {
		if v, ok := it[name]; ok {
			if pv, ok := sub.value(v); ok {
				out[name] = pv
			}
		}
	}
	return out
}

func (pr *projection) value(v value) (value, bool) {
	if pr.all {
		return v, true
	}
	switch {
	case v.kind == kindM && pr.names != nil:
		m := map[string]value{}
		for name, sub := range pr.names {
			if e, ok := v.m[name]; ok {
				if pv, ok := sub.value(e); ok {
					m[name] = pv
				}
			}
		}
		if len(m) == 0 {
			return value{}, false
		}
		return value{kind: kindM, m: m}, true
	case v.kind == kindL && pr.indexes != nil:
		idx := make([]int, 0, len(pr.indexes))
		for i := range pr.indexes {
			idx = append(idx, i)
		}
		slices.Sort(idx)
		var l []value
		for _, i := range idx {
			if i < len(v.list) {
				if pv, ok := pr.indexes[i].value(v.list[i]); ok {
					l = append(l, pv)
				}
			}
		}
		if len(l) == 0 {
			return value{}, false
		}
		return value{kind: kindL, list: l}, true
	}
	return value{}, false
}
