package embedded

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The parser of DynamoDB's expressions: a recursive descent over the
// tokens of lex, building the trees that eval.go and update.go run.
//
// Grammar (keywords in any case):
//
//	condition  = or
//	or         = and { "OR" and }
//	and        = not { "AND" not }
//	not        = "NOT" not | primary
//	primary    = "(" condition ")"
//	           | operand comparator operand
//	           | operand "BETWEEN" operand "AND" operand
//	           | operand "IN" "(" operand { "," operand } ")"
//	           | function
//	comparator = "=" | "<>" | "<" | "<=" | ">" | ">="
//	operand    = path | ":value" | function | "(" operand ")"
//	function   = name "(" operand { "," operand } ")"
//	path       = element { "." element | "[" digits "]" }
//	element    = name | "#name"
//
//	projection = path { "," path }
//
//	update     = clause { clause }
//	clause     = "SET" set { "," set } | "REMOVE" path { "," path }
//	           | "ADD" path operand { "," path operand }
//	           | "DELETE" path operand { "," path operand }
//	set        = path "=" operand [ ("+" | "-") operand ]
//
// Invariants:
//   - a syntax error stops the parse; its message names the token where
//     the parse could not go on and the source from the token before it to
//     the token after it, as DynamoDB's does;
//   - every other error is recorded while the whole expression is parsed,
//     and the one returned is the first of the highest class, in
//     DynamoDB's order (errClass);
//   - once parse succeeds, every placeholder in the tree is resolved: path
//     elements hold attribute names and value operands their values, and
//     the placeholders used are marked in the request's exprContext.

// exprContext is what the expressions of one request share: the
// placeholders given and those the expressions used.
type exprContext struct {
	names      map[string]string
	values     map[string]exprValue
	usedNames  map[string]bool
	usedValues map[string]bool
}

// exprValue is an expression attribute value with the text its number had
// in the request, which some of DynamoDB's messages quote.
type exprValue struct {
	v    value
	text string
}

func newExprContext(names map[string]string, values map[string]exprValue) *exprContext {
	return &exprContext{names: names, values: values, usedNames: map[string]bool{}, usedValues: map[string]bool{}}
}

// unused returns the error DynamoDB gives for placeholders that no
// expression of the request used, or nil.
func (c *exprContext) unused() error {
	var names, values []string
	for k := range c.names {
		if !c.usedNames[k] {
			names = append(names, k)
		}
	}
	for k := range c.values {
		if !c.usedValues[k] {
			values = append(values, k)
		}
	}
	if len(values) > 0 {
		slices.Sort(values)
		return validation("Value provided in ExpressionAttributeValues unused in expressions: keys: {%s}", strings.Join(values, ", "))
	}
	if len(names) > 0 {
		slices.Sort(names)
		return validation("Value provided in ExpressionAttributeNames unused in expressions: keys: {%s}", strings.Join(names, ", "))
	}
	return nil
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

// errClass orders the errors found after parsing: the first error of the
// lowest class is the one DynamoDB reports.
type errClass uint8

const (
	errParens errClass = iota
	errUnknownFunction
	errMisusedFunction
	errReserved
	errOperands // undefined placeholders, operand counts, types: in source order
	numErrClasses
)

// parser parses one expression of a request.
type parser struct {
	what string // "ConditionExpression", "UpdateExpression", ...
	src  string
	toks []token
	i    int
	ctx  *exprContext
	errs [numErrClasses]error
}

// syntaxError stops a parse; at is the index of the token where it could
// not go on.
type syntaxError struct {
	err error
	at  int
}

func newParser(what, src string, ctx *exprContext) *parser {
	return &parser{what: what, src: src, toks: lex(src), ctx: ctx}
}

// run calls parse, turning a syntax error into its error, and returns the
// first error recorded, if any.
func (p *parser) run(parse func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(syntaxError)
			if !ok {
				panic(r)
			}
			err = se.err
		}
	}()
	if strings.TrimSpace(p.src) == "" {
		return p.invalid("The expression can not be empty;")
	}
	parse()
	for _, e := range p.errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// invalid returns a validation error about this expression.
func (p *parser) invalid(format string, args ...any) error {
	return validation("Invalid "+p.what+": "+format, args...)
}

// record keeps err if it is the first of its class.
func (p *parser) record(class errClass, format string, args ...any) {
	if p.errs[class] == nil {
		p.errs[class] = p.invalid(format, args...)
	}
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// fail stops the parse with a syntax error at the current token.
func (p *parser) fail() {
	t := p.toks[p.i]
	from := t.pos
	if p.i > 0 {
		from = p.toks[p.i-1].pos
	}
	to := t.end
	if t.kind == tokEOF {
		to = len(p.src)
	} else if p.i+1 < len(p.toks) {
		to = p.toks[p.i+1].end
	}
	panic(syntaxError{err: p.invalid("Syntax error; token: %q, near: %q", t.text, p.src[from:to]), at: p.i})
}

func (p *parser) expect(s string) {
	if !p.peek().is(s) {
		p.fail()
	}
	p.next()
}

// parseCondition parses a whole condition expression.
func (p *parser) parseCondition() *cond {
	c := p.or()
	if p.peek().kind != tokEOF {
		p.fail()
	}
	if c.kind == cCall && c.op == "size" {
		p.record(errMisusedFunction, "The function is not allowed to be used this way in an expression; function: size")
	}
	return c
}

func (p *parser) or() *cond {
	c := p.and()
	for p.peek().is("OR") {
		p.next()
		c = &cond{kind: cOr, kids: []*cond{c, p.and()}}
	}
	return c
}

func (p *parser) and() *cond {
	c := p.not()
	for p.peek().is("AND") {
		p.next()
		c = &cond{kind: cAnd, kids: []*cond{c, p.not()}}
	}
	return c
}

func (p *parser) not() *cond {
	if p.peek().is("NOT") {
		p.next()
		return &cond{kind: cNot, kids: []*cond{p.not()}}
	}
	return p.primary()
}

func (p *parser) primary() *cond {
	if p.peek().is("(") {
		// A condition in parentheses, or a comparison whose first operand
		// is in parentheses: try the first, then the second, and report
		// the syntax error of the one that got further.
		start, errs := p.i, p.errs
		c, failed := p.tryGroup()
		if failed == nil {
			return c
		}
		p.i, p.errs = start, errs
		defer func() {
			if r := recover(); r != nil {
				se, ok := r.(syntaxError)
				if ok && failed.at > se.at {
					panic(*failed)
				}
				panic(r)
			}
		}()
	}
	first := p.operand()
	t := p.peek()
	switch {
	case t.kind == tokPunct && (t.text == "=" || t.text == "<>" || t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">="):
		p.next()
		c := &cond{kind: cCompare, op: t.text, args: []*operand{first, p.operand()}}
		p.checkCondition(c)
		return c
	case t.is("BETWEEN"):
		p.next()
		lo := p.operand()
		p.expect("AND")
		c := &cond{kind: cBetween, op: "BETWEEN", args: []*operand{first, lo, p.operand()}}
		p.checkCondition(c)
		return c
	case t.is("IN"):
		p.next()
		p.expect("(")
		c := &cond{kind: cIn, op: "IN", args: []*operand{first, p.operand()}}
		for p.peek().is(",") {
			p.next()
			c.args = append(c.args, p.operand())
		}
		p.expect(")")
		p.checkCondition(c)
		return c
	}
	if first.kind == opCall {
		c := &cond{kind: cCall, op: first.fn, args: first.args}
		p.checkFunction(c.op, c.args)
		return c
	}
	p.fail()
	return nil
}

// tryGroup parses "(" condition ")", or returns the syntax error that
// shows it is not one.
func (p *parser) tryGroup() (c *cond, failed *syntaxError) {
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(syntaxError)
			if !ok {
				panic(r)
			}
			failed = &se
		}
	}()
	p.expect("(")
	inner := p.or()
	p.expect(")")
	if inner.parens {
		p.record(errParens, "The expression has redundant parentheses;")
	}
	if inner.kind == cCall && inner.op == "size" {
		p.record(errMisusedFunction, "The function is not allowed to be used this way in an expression; function: size")
	}
	out := *inner
	out.parens = true
	return &out, nil
}

// operand parses a path, a value, a function call or one of these in
// parentheses.
func (p *parser) operand() *operand {
	t := p.peek()
	switch t.kind {
	case tokValRef:
		p.next()
		return &operand{kind: opValue, val: p.value(t)}
	case tokName, tokNameRef:
		if t.kind == tokName && p.toks[p.i+1].is("(") {
			return p.call()
		}
		return &operand{kind: opPath, path: p.path()}
	case tokPunct:
		if t.text == "(" {
			p.next()
			nested := p.peek().is("(")
			o := p.operand()
			if nested && p.toks[p.i-1].is(")") && p.peek().is(")") {
				// ((x)): the inner parentheses hold all the outer ones do.
				p.record(errParens, "The expression has redundant parentheses;")
			}
			p.expect(")")
			return o
		}
	}
	p.fail()
	return nil
}

// call parses a function call: name ( operand, ... ).
func (p *parser) call() *operand {
	name := p.next().text
	p.expect("(")
	o := &operand{kind: opCall, fn: name, args: []*operand{p.operand()}}
	for p.peek().is(",") {
		p.next()
		o.args = append(o.args, p.operand())
	}
	p.expect(")")
	return o
}

// path parses a document path and resolves its placeholders.
func (p *parser) path() docPath {
	var path docPath
	path = append(path, p.element())
	for {
		switch {
		case p.peek().is("."):
			p.next()
			path = append(path, p.element())
		case p.peek().is("["):
			p.next()
			t := p.peek()
			if t.kind != tokNumber {
				p.fail()
			}
			p.next()
			n, err := strconv.Atoi(t.text)
			if err != nil {
				p.fail()
			}
			p.expect("]")
			path = append(path, pathElem{index: n})
		default:
			return path
		}
	}
}

// element parses one name of a path.
func (p *parser) element() pathElem {
	t := p.peek()
	switch t.kind {
	case tokName:
		p.next()
		if isReserved(t.text) {
			p.record(errReserved, "Attribute name is a reserved keyword; reserved keyword: %s", t.text)
		}
		return pathElem{name: t.text, index: -1}
	case tokNameRef:
		p.next()
		name, ok := p.ctx.names[t.text]
		if !ok {
			p.record(errOperands, "An expression attribute name used in the document path is not defined; attribute name: %s", t.text)
		}
		p.ctx.usedNames[t.text] = true
		return pathElem{name: name, index: -1}
	}
	p.fail()
	return pathElem{}
}

// value resolves a value placeholder.
func (p *parser) value(t token) exprValue {
	v, ok := p.ctx.values[t.text]
	if !ok {
		p.record(errOperands, "An expression attribute value used in expression is not defined; attribute value: %s", t.text)
	}
	p.ctx.usedValues[t.text] = true
	return v
}

// conditionFunctions are the functions of conditions, with their operand
// counts.
var conditionFunctions = map[string]int{
	"attribute_exists": 1, "attribute_not_exists": 1, "attribute_type": 2,
	"begins_with": 2, "contains": 2, "size": 1,
}

// checkCondition checks a comparison, BETWEEN or IN: the functions in its
// operands, distinct operands, and the operands' types.
func (p *parser) checkCondition(c *cond) {
	for _, a := range c.args {
		p.checkOperand(a)
	}
	first := c.args[0]
	if first.kind == opPath {
		for _, a := range c.args[1:] {
			if a.kind == opPath && a.path.equal(first.path) {
				p.record(errOperands, "The first operand must be distinct from the remaining operands for this operator or function; operator: %s, first operand: %s", c.op, first.path)
				break
			}
		}
	}
	switch c.kind {
	case cCompare:
		if c.op != "=" && c.op != "<>" {
			for _, a := range c.args {
				if k := a.staticKind(); k != 0 && k != kindS && k != kindN && k != kindB {
					p.record(errOperands, "Incorrect operand type for operator or function; operator or function: %s, operand type: %s", c.op, k)
				}
			}
		}
	case cBetween:
		for _, a := range c.args {
			if k := a.staticKind(); k != 0 && k != kindS && k != kindN && k != kindB {
				p.record(errOperands, "Incorrect operand type for operator or function; operator or function: BETWEEN, operand type: %s", k)
				return
			}
		}
		lo, hi := c.args[1], c.args[2]
		if lo.kind != opValue || hi.kind != opValue || lo.val.v.kind == 0 || hi.val.v.kind == 0 {
			return
		}
		if lo.val.v.kind != hi.val.v.kind {
			p.record(errOperands, "The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: %s, upper bound operand: AttributeValue: %s", lo.val.javaString(), hi.val.javaString())
		} else if cmp, _ := compareValues(lo.val.v, hi.val.v); cmp > 0 {
			p.record(errOperands, "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: %s, upper bound operand: AttributeValue: %s", lo.val.javaString(), hi.val.javaString())
		}
	}
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

// checkOperand checks an operand of a comparison: only size() may be
// called there.
func (p *parser) checkOperand(o *operand) {
	if o.kind != opCall {
		return
	}
	if _, ok := conditionFunctions[o.fn]; !ok {
		p.record(errUnknownFunction, "Invalid function name; function: %s", o.fn)
		return
	}
	if o.fn != "size" {
		p.record(errMisusedFunction, "The function is not allowed to be used this way in an expression; function: %s", o.fn)
		return
	}
	p.checkFunction(o.fn, o.args)
}

// checkFunction checks a call of a condition function: its name, its
// operand count, distinct operands and their types.
func (p *parser) checkFunction(name string, args []*operand) {
	n, ok := conditionFunctions[name]
	if !ok {
		p.record(errUnknownFunction, "Invalid function name; function: %s", name)
		return
	}
	for _, a := range args {
		if a.kind == opCall {
			p.checkOperand(a)
		}
	}
	if len(args) != n {
		p.record(errOperands, "Incorrect number of operands for operator or function; operator or function: %s, number of operands: %d", name, len(args))
		return
	}
	if n == 2 && args[0].kind == opPath && args[1].kind == opPath && args[0].path.equal(args[1].path) {
		p.record(errOperands, "The first operand must be distinct from the remaining operands for this operator or function; operator: %s, first operand: %s", name, args[0].path)
		return
	}
	switch name {
	case "attribute_exists", "attribute_not_exists":
		if args[0].kind != opPath {
			p.record(errOperands, "Operator or function requires a document path; operator or function: %s", name)
		}
	case "begins_with":
		for _, a := range args {
			if k := a.staticKind(); k != 0 && k != kindS && k != kindB {
				p.record(errOperands, "Incorrect operand type for operator or function; operator or function: %s, operand type: %s", name, k)
				return
			}
		}
	case "attribute_type":
		t := args[1]
		if k := t.staticKind(); k != kindS {
			typ := "{NS,SS,L,BS,N,M,B,BOOL,NULL,S}"
			if k != 0 {
				typ = k.String()
			}
			p.record(errOperands, "Incorrect operand type for operator or function; operator or function: %s, operand type: %s", name, typ)
			return
		}
		if t.kind == opValue && kindByName(t.val.v.s) == 0 {
			p.record(errOperands, "Invalid attribute type name found; type: %s, valid types: {N,BS,L,B,NULL,M,S,SS,NS,BOOL}", t.val.v.s)
		}
	case "size":
		if k := args[0].staticKind(); k == kindN || k == kindBOOL || k == kindNULL {
			p.record(errOperands, "Incorrect operand type for operator or function; operator or function: %s, operand type: %s", name, k)
		}
	}
}

// parseProjection parses a projection expression.
func (p *parser) parseProjection() []docPath {
	paths := []docPath{p.path()}
	for p.peek().is(",") {
		p.next()
		paths = append(paths, p.path())
	}
	if p.peek().kind != tokEOF {
		p.fail()
	}
	p.checkOverlaps(paths)
	return paths
}

// checkOverlaps records the error DynamoDB gives when one path is a
// prefix of another (they overlap) or when two paths go on from the same
// prefix as a name and as an index (they conflict).
func (p *parser) checkOverlaps(paths []docPath) {
	for i, a := range paths {
		for _, b := range paths[:i] {
			n := min(len(a), len(b))
			j := 0
			for j < n && a[j] == b[j] {
				j++
			}
			switch {
			case j == n:
				p.record(errOperands, "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: %s, path two: %s", b, a)
				return
			case (a[j].index >= 0) != (b[j].index >= 0):
				p.record(errOperands, "Two document paths conflict with each other; must remove or rewrite one of these paths; path one: %s, path two: %s", b, a)
				return
			}
		}
	}
}

// parseUpdate parses an update expression.
func (p *parser) parseUpdate() []updateAction {
	var actions []updateAction
	seen := map[string]bool{}
	for {
		t := p.peek()
		clause := ""
		for _, c := range []string{"SET", "REMOVE", "ADD", "DELETE"} {
			if t.is(c) {
				clause = c
			}
		}
		if clause == "" {
			p.fail()
		}
		p.next()
		if seen[clause] {
			panic(syntaxError{err: p.invalid("The %q section can only be used once in an update expression;", clause), at: p.i})
		}
		seen[clause] = true
		for {
			actions = append(actions, p.updateAction(clause))
			if !p.peek().is(",") {
				break
			}
			p.next()
		}
		if p.peek().kind == tokEOF {
			break
		}
	}
	paths := make([]docPath, len(actions))
	for i, a := range actions {
		paths[i] = a.path
	}
	p.checkOverlaps(paths)
	return actions
}

func (p *parser) updateAction(clause string) updateAction {
	a := updateAction{clause: clause, path: p.path()}
	switch clause {
	case "SET":
		p.expect("=")
		v := p.updateOperand()
		if t := p.peek(); t.is("+") || t.is("-") {
			p.next()
			v = &operand{kind: opArith, fn: t.text, args: []*operand{v, p.updateOperand()}}
			for _, a := range v.args {
				if k := a.staticKind(); a.kind == opValue && k != 0 && k != kindN {
					p.record(errOperands, "Incorrect operand type for operator or function; operator or function: %s, operand type: %s", t.text, k)
				}
			}
		}
		a.val = v
	case "ADD", "DELETE":
		a.val = p.updateOperand()
		if a.val.kind == opValue && a.val.val.v.kind != 0 {
			p.checkAddDelete(clause, a.val.val.v.kind)
		}
	}
	return a
}

// checkAddDelete checks the type of the value of ADD (a number or a set) or
// DELETE (a set).
func (p *parser) checkAddDelete(clause string, k kind) {
	ok := k.isSetKind() || clause == "ADD" && k == kindN
	if !ok {
		allowed := "ALLOWED_FOR_ADD_OPERAND"
		if clause == "DELETE" {
			allowed = "ALLOWED_FOR_DELETE_OPERAND"
		}
		p.record(errOperands, "Incorrect operand type for operator or function; operator: %s, operand type: %s, typeSet: %s", clause, k.longName(), allowed)
	}
}

// updateFunctions are the functions of update expressions, with their
// operand counts.
var updateFunctions = map[string]int{"if_not_exists": 2, "list_append": 2}

// updateOperand parses an operand of an update action: a path, a value, or
// if_not_exists or list_append of operands.
func (p *parser) updateOperand() *operand {
	t := p.peek()
	if t.kind != tokValRef && t.kind != tokName && t.kind != tokNameRef && !t.is("(") {
		p.fail()
	}
	o := p.operand()
	p.checkUpdateOperand(o)
	return o
}

// checkUpdateOperand checks the functions an update operand calls.
func (p *parser) checkUpdateOperand(o *operand) {
	if o.kind != opCall {
		return
	}
	n, ok := updateFunctions[o.fn]
	switch {
	case !ok && conditionFunctions[o.fn] != 0:
		p.record(errMisusedFunction, "The function is not allowed in an update expression; function: %s", o.fn)
		return
	case !ok:
		p.record(errUnknownFunction, "Invalid function name; function: %s", o.fn)
		return
	}
	for _, a := range o.args {
		p.checkUpdateOperand(a)
	}
	switch {
	case len(o.args) != n:
		p.record(errOperands, "Incorrect number of operands for operator or function; operator or function: %s, number of operands: %d", o.fn, len(o.args))
	case o.fn == "if_not_exists" && o.args[0].kind != opPath:
		p.record(errOperands, "Operator or function requires a document path; operator or function: %s", o.fn)
	case o.fn == "list_append":
		for _, a := range o.args {
			if k := a.staticKind(); a.kind == opValue && k != 0 && k != kindL {
				p.record(errOperands, "Incorrect operand type for operator or function; operator or function: %s, operand type: %s", o.fn, k)
			}
		}
	}
}

func (k kind) isSetKind() bool { return k == kindSS || k == kindNS || k == kindBS }

// longName is the name DynamoDB's messages give a type in update errors.
func (k kind) longName() string {
	switch k {
	case kindS:
		return "STRING"
	case kindN:
		return "NUMBER"
	case kindB:
		return "BINARY"
	case kindBOOL:
		return "BOOLEAN"
	case kindNULL:
		return "NULL"
	case kindSS:
		return "STRING_SET"
	case kindNS:
		return "NUMBER_SET"
	case kindBS:
		return "BINARY_SET"
	case kindL:
		return "LIST"
	case kindM:
		return "MAP"
	}
	return ""
}
