package embedded

import (
	"errors"
	"regexp"
	"strings"
)

// What the operations' inputs share: expression attribute names and
// values, the expressions that use them, and the options of answers.

// exprValues are ExpressionAttributeValues. They keep each number's text
// as sent, which some messages quote.
type exprValues map[string]exprValue

// UnmarshalJSON reads the values; an invalid one is refused with
// DynamoDB's message, naming its placeholder.
func (ev *exprValues) UnmarshalJSON(b []byte) error {
	p := &avParser{data: b}
	if p.peek() == 'n' {
		return nil
	}
	if err := p.expect('{'); err != nil {
		return err
	}
	m := exprValues{}
	if p.peek() == '}' {
		*ev = m
		return nil
	}
	for {
		name, err := p.string()
		if err != nil {
			return err
		}
		if err := p.expect(':'); err != nil {
			return err
		}
		p.lastNumber = ""
		v, err := p.value()
		if err != nil {
			var apiErr *apiError
			if errors.As(err, &apiErr) && apiErr.code == "ValidationException" {
				return validation("ExpressionAttributeValues contains invalid value: %s for key %s", apiErr.msg, name)
			}
			return err
		}
		m[name] = exprValue{v: v, text: p.lastNumber}
		switch p.peek() {
		case ',':
			p.pos++
		case '}':
			p.pos++
			*ev = m
			return nil
		default:
			return errSerialization("expected ',' or '}' at offset %d", p.pos)
		}
	}
}

var placeholderPattern = regexp.MustCompile(`^[#:][A-Za-z0-9_]+$`)

// expressions holds the expressions of one request and the placeholders
// they share.
type expressions struct {
	ctx    *exprContext
	names  map[string]string
	values exprValues
	given  []string // the expressions the request has, by parameter name
}

// newExpressions checks the placeholders of a request whose expressions
// are those of exprs with a non-nil value (by parameter name, for
// messages), and returns what parses them.
func newExpressions(names map[string]string, values exprValues, exprs map[string]*string, order ...string) (*expressions, error) {
	e := &expressions{names: names, values: values}
	for _, name := range order {
		if s := exprs[name]; s != nil {
			e.given = append(e.given, name)
		}
	}
	if names != nil && len(names) == 0 && len(e.given) > 0 {
		return nil, validation("ExpressionAttributeNames must not be empty")
	}
	if values != nil && len(values) == 0 && len(e.given) > 0 {
		return nil, validation("ExpressionAttributeValues must not be empty")
	}
	for k := range names {
		if !placeholderPattern.MatchString(k) || k[0] != '#' {
			return nil, validation("ExpressionAttributeNames contains invalid key: Syntax error; key: %q", k)
		}
	}
	for k := range values {
		if !placeholderPattern.MatchString(k) || k[0] != ':' {
			return nil, validation("ExpressionAttributeValues contains invalid key: Syntax error; key: %q", k)
		}
	}
	if len(e.given) == 0 {
		if len(names) > 0 {
			return nil, validation("ExpressionAttributeNames can only be specified when using expressions")
		}
		if len(values) > 0 {
			return nil, validation("ExpressionAttributeValues can only be specified when using expressions: %s %s null", joinNames(order), isAre(len(order)))
		}
	}
	e.ctx = newExprContext(names, values)
	return e, nil
}

func joinNames(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// condition parses a condition expression (ConditionExpression,
// FilterExpression, KeyConditionExpression); nil for none.
func (e *expressions) condition(what string, src *string) (*cond, error) {
	if src == nil {
		return nil, nil
	}
	p := newParser(what, *src, e.ctx)
	var c *cond
	err := p.run(func() { c = p.parseCondition() })
	return c, err
}

// projection parses a ProjectionExpression; nil for none.
func (e *expressions) projection(src *string) (*projection, []docPath, error) {
	if src == nil {
		return nil, nil, nil
	}
	p := newParser("ProjectionExpression", *src, e.ctx)
	var paths []docPath
	if err := p.run(func() { paths = p.parseProjection() }); err != nil {
		return nil, nil, err
	}
	return newProjection(paths), paths, nil
}

// update parses an UpdateExpression; nil for none.
func (e *expressions) update(src *string) ([]updateAction, error) {
	if src == nil {
		return nil, nil
	}
	p := newParser("UpdateExpression", *src, e.ctx)
	var actions []updateAction
	err := p.run(func() { actions = p.parseUpdate() })
	return actions, err
}

// done returns the error DynamoDB gives when a placeholder was not used.
func (e *expressions) done() error { return e.ctx.unused() }

// legacy holds the parameters of DynamoDB's API from before expressions,
// which the engine does not take (but AttributesToGet).
type legacy struct {
	Expected            map[string]any `json:"Expected"`
	AttributeUpdates    map[string]any `json:"AttributeUpdates"`
	ConditionalOperator *string        `json:"ConditionalOperator"`
	KeyConditions       map[string]any `json:"KeyConditions"`
	QueryFilter         map[string]any `json:"QueryFilter"`
	ScanFilter          map[string]any `json:"ScanFilter"`
}

// check refuses the legacy parameters, naming the one that was sent.
func (l *legacy) check() error {
	for name, set := range map[string]bool{
		"Expected": l.Expected != nil, "AttributeUpdates": l.AttributeUpdates != nil, "ConditionalOperator": l.ConditionalOperator != nil,
		"KeyConditions": l.KeyConditions != nil, "QueryFilter": l.QueryFilter != nil, "ScanFilter": l.ScanFilter != nil,
	} {
		if set {
			return validation("The legacy parameter %s is not supported by this engine; use expressions instead", name)
		}
	}
	return nil
}

// returnValues checks ReturnValues against those an operation allows.
func returnValues(v string, allowed ...string) error {
	if v == "" || v == "NONE" {
		return nil
	}
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return validation("Return values set to invalid value")
}

// tableOf returns the definition of a table, or ResourceNotFoundException.
func (s *store) tableOf(name string) (*tableDef, error) {
	if err := checkTableName(name); err != nil {
		return nil, err
	}
	def := s.table(name)
	if def == nil {
		return nil, errResourceNotFound()
	}
	return def, nil
}
