package embedded

// The meaning checks of DynamoDB's expressions, made on the trees the
// parser (parse.go) builds while it parses: the functions and their
// operand counts, distinct operands, operand types and overlapping paths.
// Each check records its error with a class (errClass) instead of
// stopping the parse; the error the request gets is the first of the
// lowest class, in DynamoDB's order.

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
