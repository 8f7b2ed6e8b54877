package embedded

import (
	"slices"
	"strconv"
	"strings"
)

// The parser of DynamoDB's expressions: a recursive descent over the
// tokens of lex, building the trees of node.go that eval.go and update.go
// run, and making the meaning checks of check.go as it goes.
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
