package embedded

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The nodes of the trees the parser (parse.go) builds from DynamoDB's
// expressions and eval.go and update.go run: conditions, operands,
// document paths and update actions. Once a parse has succeeded, every
// placeholder in a tree is resolved: path elements hold attribute names
// and value operands their values.

// exprValue is an expression attribute value with the text its number had
// in the request, which some of DynamoDB's messages quote.
type exprValue struct {
	v    value
	text string
}

// pathElem is one step of a document path: a name (an attribute, or a key
// of a map) or, when index ≥ 0, a position in a list.
type pathElem struct {
	name  string
	index int
}

// docPath is a document path such as a.b[2].c.
type docPath []pathElem

// String formats the path as DynamoDB's messages do: [a, b, [2], c].
func (p docPath) String() string {
	parts := make([]string, len(p))
	for i, e := range p {
		if e.index >= 0 {
			parts[i] = "[" + strconv.Itoa(e.index) + "]"
		} else {
			parts[i] = e.name
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (p docPath) equal(q docPath) bool { return slices.Equal(p, q) }

// operandKind is the kind of an operand.
type operandKind uint8

const (
	opPath  operandKind = iota + 1
	opValue             // an expression attribute value
	opCall              // a function call
	opArith             // a + b or a - b, in SET only
)

// operand is something an expression compares, tests or writes.
type operand struct {
	kind operandKind
	path docPath    // opPath
	val  exprValue  // opValue
	fn   string     // opCall: the function; opArith: "+" or "-"
	args []*operand // opCall and opArith
}

// staticKind returns the type an operand is known to have before any item
// is read: a value's own, N for size(); 0 when it depends on the item.
func (o *operand) staticKind() kind {
	switch {
	case o.kind == opValue:
		return o.val.v.kind
	case o.kind == opCall && o.fn == "size":
		return kindN
	}
	return 0
}

// condKind is the kind of a condition.
type condKind uint8

const (
	cAnd condKind = iota + 1
	cOr
	cNot
	cCompare // args[0] op args[1]
	cBetween // args[0] BETWEEN args[1] AND args[2]
	cIn      // args[0] IN (args[1:])
	cCall    // a function: attribute_exists, begins_with, ...
)

// cond is a condition: a filter, a key condition or a write's guard.
type cond struct {
	kind   condKind
	op     string     // comparator of cCompare, function of cCall
	kids   []*cond    // cAnd, cOr, cNot
	args   []*operand // cCompare, cBetween, cIn, cCall
	parens bool       // written in parentheses
}

// updateAction is one action of an update expression.
type updateAction struct {
	clause string // SET, REMOVE, ADD or DELETE
	path   docPath
	val    *operand // nil for REMOVE
}

// javaString formats a scalar value as DynamoDB Local's messages quote it.
func (v exprValue) javaString() string {
	switch v.v.kind {
	case kindN:
		return "{N:" + v.text + "}"
	case kindB:
		return fmt.Sprintf("{B:java.nio.HeapByteBuffer[pos=0 lim=%d cap=%d]}", len(v.v.s), len(v.v.s))
	}
	return "{" + v.v.kind.String() + ":" + v.v.s + "}"
}
