package embedded

import (
	"testing"
)

// The messages below are DynamoDB Local's, as the differential suite
// compares them; here they hold without it.

func testValues() map[string]exprValue {
	n := func(s string) exprValue { v, _ := parseNumber(s); return exprValue{v: num(v), text: s} }
	return map[string]exprValue{
		":v": n("1"), ":w": n("9"), ":s": {v: str("x")}, ":l": {v: listOf()},
		":ss": {v: value{kind: kindSS, set: []string{"a"}}}, ":t": {v: str("X")},
	}
}

func TestConditionErrors(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"a = ", `Invalid ConditionExpression: Syntax error; token: "<EOF>", near: "= "`},
		{"a == :v", `Invalid ConditionExpression: Syntax error; token: "=", near: "== :v"`},
		{"size(a) > :v AND", `Invalid ConditionExpression: Syntax error; token: "<EOF>", near: "AND"`},
		{"a BETWEEN :v", `Invalid ConditionExpression: Syntax error; token: "<EOF>", near: ":v"`},
		{"a IN ()", `Invalid ConditionExpression: Syntax error; token: ")", near: "()"`},
		{"(a = :v", `Invalid ConditionExpression: Syntax error; token: "<EOF>", near: ":v"`},
		{"a = :v)", `Invalid ConditionExpression: Syntax error; token: ")", near: ":v)"`},
		{"a[x] = :v", `Invalid ConditionExpression: Syntax error; token: "x", near: "[x]"`},
		{"a = :v % 2", `Invalid ConditionExpression: Syntax error; token: "%", near: ":v % 2"`},
		{"a-b = :v", `Invalid ConditionExpression: Syntax error; token: "-", near: "a-b"`},
		{"1a = :v", `Invalid ConditionExpression: Syntax error; token: "1", near: "1a"`},
		{"_a = :v", `Invalid ConditionExpression: Syntax error; token: "_", near: "_a"`},
		{"a", `Invalid ConditionExpression: Syntax error; token: "<EOF>", near: "a"`},
		{"foo(a)", "Invalid ConditionExpression: Invalid function name; function: foo"},
		{"size(a)", "Invalid ConditionExpression: The function is not allowed to be used this way in an expression; function: size"},
		{"attribute_exists(:v)", "Invalid ConditionExpression: Operator or function requires a document path; operator or function: attribute_exists"},
		{"a.#x = :v", "Invalid ConditionExpression: An expression attribute name used in the document path is not defined; attribute name: #x"},
		{"a = :nope", "Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :nope"},
		{"name = :v", "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: name"},
		{"a = a", "Invalid ConditionExpression: The first operand must be distinct from the remaining operands for this operator or function; operator: =, first operand: [a]"},
		{"begins_with(a, :v)", "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N"},
		{"attribute_type(a, :t)", "Invalid ConditionExpression: Invalid attribute type name found; type: X, valid types: {N,BS,L,B,NULL,M,S,SS,NS,BOOL}"},
		{"a BETWEEN :w AND :v", "Invalid ConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {N:9}, upper bound operand: AttributeValue: {N:1}"},
		{"a BETWEEN :v AND :s", "Invalid ConditionExpression: The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: {N:1}, upper bound operand: AttributeValue: {S:x}"},
		{"a < :l", "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: <, operand type: L"},
		{"((a = :v))", "Invalid ConditionExpression: The expression has redundant parentheses;"},
		{"begins_with(a) AND b = :nope", "Invalid ConditionExpression: Incorrect number of operands for operator or function; operator or function: begins_with, number of operands: 1"},
		{"b = :nope AND begins_with(a)", "Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :nope"},
		{"#x = :nope AND name = :v", "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: name"},
		{"", "Invalid ConditionExpression: The expression can not be empty;"},
	}
	for _, c := range cases {
		p := newParser("ConditionExpression", c.expr, newExprContext(nil, testValues()))
		err := p.run(func() { p.parseCondition() })
		if err == nil || err.(*apiError).msg != c.want {
			t.Errorf("%q: %v\n want %s", c.expr, err, c.want)
		}
	}
}

func TestUpdateErrors(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"SET a", `Invalid UpdateExpression: Syntax error; token: "<EOF>", near: "a"`},
		{"SET a = :v b = :v", `Invalid UpdateExpression: Syntax error; token: "b", near: ":v b ="`},
		{"SET a = :v SET b = :v", `Invalid UpdateExpression: The "SET" section can only be used once in an update expression;`},
		{"SET a = :v REMOVE a", "Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a]"},
		{"SET a[1] = :v, a.b = :v", "Invalid UpdateExpression: Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [a, [1]], path two: [a, b]"},
		{"SET a = :v + :v + :v", `Invalid UpdateExpression: Syntax error; token: "+", near: ":v + :v"`},
		{"SET a = list_append(:v)", "Invalid UpdateExpression: Incorrect number of operands for operator or function; operator or function: list_append, number of operands: 1"},
		{"SET a = size(a)", "Invalid UpdateExpression: The function is not allowed in an update expression; function: size"},
		{"SET a = if_not_exists(:v, a)", "Invalid UpdateExpression: Operator or function requires a document path; operator or function: if_not_exists"},
		{"SET a = :s + :v", "Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: +, operand type: S"},
		{"DELETE a :v", "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: DELETE, operand type: NUMBER, typeSet: ALLOWED_FOR_DELETE_OPERAND"},
		{"ADD a :s", "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ADD, operand type: STRING, typeSet: ALLOWED_FOR_ADD_OPERAND"},
		{"REMOVE :v", `Invalid UpdateExpression: Syntax error; token: ":v", near: "REMOVE :v"`},
		{"", "Invalid UpdateExpression: The expression can not be empty;"},
	}
	for _, c := range cases {
		p := newParser("UpdateExpression", c.expr, newExprContext(nil, testValues()))
		err := p.run(func() { p.parseUpdate() })
		if err == nil || err.(*apiError).msg != c.want {
			t.Errorf("%q: %v\n want %s", c.expr, err, c.want)
		}
	}
}

// TestUpdates applies updates to an item and checks what they make of it.
func TestUpdates(t *testing.T) {
	base := func() item {
		n, _ := parseNumber("5")
		return item{
			"n": num(n), "s": str("str"),
			"l":  listOf(str("a"), str("b"), str("c")),
			"m":  mapOf(map[string]value{"k": str("v"), "e": mapOf(nil)}),
			"ss": {kind: kindSS, set: []string{"a", "b"}},
		}
	}
	vals := map[string]exprValue{
		":one": {v: value{kind: kindN, s: "1"}}, ":x": {v: str("x")},
		":ab": {v: value{kind: kindSS, set: []string{"a", "b"}}}, ":l": {v: listOf(str("z"))},
	}
	cases := []struct{ expr, want, err string }{
		{"SET n = n + :one", `{"N":"6"}`, ""},
		{"SET q = q + :one", "", msgMissingValue},
		{"SET s = s + :one", "", msgWrongType},
		{"SET m.x = :x", `{"M":{"e":{"M":{}},"k":{"S":"v"},"x":{"S":"x"}}}`, ""},
		{"SET m.e.x = :x", `{"M":{"e":{"M":{"x":{"S":"x"}}},"k":{"S":"v"}}}`, ""},
		{"SET m.zz.x = :x", "", msgInvalidPath},
		{"SET l[10] = :x", `{"L":[{"S":"a"},{"S":"b"},{"S":"c"},{"S":"x"}]}`, ""},
		{"SET l = list_append(:l, l)", `{"L":[{"S":"z"},{"S":"a"},{"S":"b"},{"S":"c"}]}`, ""},
		{"REMOVE l[1], l[0]", `{"L":[{"S":"c"}]}`, ""},
		{"REMOVE l[10]", `{"L":[{"S":"a"},{"S":"b"},{"S":"c"}]}`, ""},
		{"REMOVE m.k, m.e", `{"M":{}}`, ""},
		{"REMOVE m.zz.x", "", msgInvalidPath},
		{"ADD n :one", `{"N":"6"}`, ""},
		{"ADD ss :ab", `{"SS":["a","b"]}`, ""},
		{"DELETE ss :ab", "none", ""},
		{"ADD s :one", "", msgWrongType},
	}
	for _, c := range cases {
		ctx := newExprContext(nil, vals)
		p := newParser("UpdateExpression", c.expr, ctx)
		var acts []updateAction
		if err := p.run(func() { acts = p.parseUpdate() }); err != nil {
			t.Fatalf("%q: %v", c.expr, err)
		}
		before := base()
		it, err := applyUpdate(before, acts)
		if c.err != "" {
			if err == nil || err.(*apiError).msg != c.err {
				t.Errorf("%q: %v, want %q", c.expr, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.expr, err)
		}
		got := "none"
		if v, ok := it[acts[0].path[0].name]; ok {
			got = string(canonicalJSON(v))
		}
		if got != c.want {
			t.Errorf("%q: %s, want %s", c.expr, got, c.want)
		}
		if string(canonicalJSON(mapOf(before))) != string(canonicalJSON(mapOf(base()))) {
			t.Errorf("%q changed the item it was given", c.expr)
		}
	}
}

// canonicalJSON is appendValue with maps in key order, for comparisons.
func canonicalJSON(v value) []byte {
	if v.kind != kindM {
		if v.kind == kindL {
			b := []byte(`{"L":[`)
			for i, e := range v.list {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, canonicalJSON(e)...)
			}
			return append(b, "]}"...)
		}
		return appendValue(nil, v)
	}
	b := []byte(`{"M":{`)
	for i, k := range sortedKeys(v.m) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = append(b, canonicalJSON(v.m[k])...)
	}
	return append(b, "}}"...)
}
