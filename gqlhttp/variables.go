package gqlhttp

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Variables are coerced as the GraphQL specification says (Input
// Coercion), which gqlparser does not quite: it takes the string "10" for
// an Int, any 64-bit number, and enum values in any case, and reports 1.5
// as "value 0". Here an Int is a JSON number without a fraction that fits
// in 32 bits, a Float any number, a String or Boolean only that, an ID a
// string or an integer, an enum value one of its names exactly, an input
// object only its fields with the required ones given, and a single value
// stands for a list of one. A value that does not coerce is a request
// error whose message names the variable, the value and where it sits, in
// graphql-js's words; suggestions of names are never given.

// integralNumbers rewrites, in place, every JSON number of vars that is an
// integer written as a float (1.0, 1e3) as the integer, which is what it
// is in JSON: gqlparser's own pass, which runs first, takes only the
// latter for an Int.
func integralNumbers(vars map[string]any) {
	for k, v := range vars {
		vars[k] = integral(v)
	}
}

func integral(v any) any {
	switch v := v.(type) {
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return v
		}
		if f, ok := number(v); ok && math.Abs(f) < 1<<63 {
			return json.Number(strconv.FormatInt(int64(f), 10))
		}
	case []any:
		for i := range v {
			v[i] = integral(v[i])
		}
	case map[string]any:
		integralNumbers(v)
	}
	return v
}

// coerceVariables returns the variables of op coerced from the JSON values
// in raw, or the error of the first that does not coerce. Custom scalars
// (DateTime) pass as they are: their own unmarshalling checks them.
func coerceVariables(schema *ast.Schema, op *ast.OperationDefinition, raw map[string]any) (map[string]any, *gqlerror.Error) {
	out := make(map[string]any, len(op.VariableDefinitions))
	for _, def := range op.VariableDefinitions {
		name := def.Variable
		v, given := raw[name]
		fail := func(format string, args ...any) *gqlerror.Error {
			err := gqlerror.ErrorPathf(ast.Path{ast.PathName("variable"), ast.PathName(name)}, format, args...)
			errcode.Set(err, errcode.ValidationFailed)
			return err
		}
		switch {
		case !given && def.DefaultValue == nil && def.Type.NonNull:
			return nil, fail("Variable \"$%s\" of required type %q was not provided.", name, def.Type.String())
		case !given:
			continue // the default, if any, is the document's and already valid
		case v == nil && def.Type.NonNull:
			return nil, fail("Variable \"$%s\" of non-null type %q must not be null.", name, def.Type.String())
		}
		c := coercion{schema: schema}
		coerced, ok := c.value(v, def.Type, name)
		if !ok {
			at := ""
			if c.at != name {
				at = fmt.Sprintf(" at %q", c.at)
			}
			return nil, fail("Variable \"$%s\" got invalid value %s%s; %s", name, printValue(v), at, c.reason)
		}
		out[name] = coerced
	}
	return out, nil
}

// coercion coerces one variable; on failure, at is where in it and reason
// why.
type coercion struct {
	schema *ast.Schema
	at     string
	reason string
}

func (c *coercion) fail(at, format string, args ...any) (any, bool) {
	c.at, c.reason = at, fmt.Sprintf(format, args...)
	return nil, false
}

// value coerces v to typ; path names v within its variable.
func (c *coercion) value(v any, typ *ast.Type, path string) (any, bool) {
	if v == nil {
		if typ.NonNull {
			return c.fail(path, "Expected non-nullable type %q not to be null.", typ.String())
		}
		return nil, true
	}
	if typ.Elem != nil {
		items, isList := v.([]any)
		if !isList {
			// A single value stands for a list of one.
			one, ok := c.value(v, typ.Elem, path)
			return []any{one}, ok
		}
		out := make([]any, len(items))
		for i, item := range items {
			var ok bool
			if out[i], ok = c.value(item, typ.Elem, path+"["+strconv.Itoa(i)+"]"); !ok {
				return nil, false
			}
		}
		return out, true
	}
	def := c.schema.Types[typ.NamedType]
	if def == nil {
		return c.fail(path, "Unknown type %q.", typ.NamedType)
	}
	switch def.Kind {
	case ast.Enum:
		s, isString := v.(string)
		switch {
		case !isString:
			return c.fail(path, "Enum %q cannot represent non-string value: %s.", def.Name, printValue(v))
		case def.EnumValues.ForName(s) == nil:
			return c.fail(path, "Value %q does not exist in %q enum.", s, def.Name)
		}
		return s, true
	case ast.InputObject:
		return c.object(v, def, path)
	}
	switch def.Name {
	case "Int":
		n, integral := number(v)
		switch {
		case !integral:
			return c.fail(path, "Int cannot represent non-integer value: %s", printValue(v))
		case n < math.MinInt32 || n > math.MaxInt32:
			return c.fail(path, "Int cannot represent non 32-bit signed integer value: %s", printValue(v))
		}
		return int64(n), true
	case "Float":
		if f, ok := float(v); ok {
			return f, true
		}
		return c.fail(path, "Float cannot represent non numeric value: %s", printValue(v))
	case "String":
		if s, ok := v.(string); ok {
			return s, true
		}
		return c.fail(path, "String cannot represent a non string value: %s", printValue(v))
	case "Boolean":
		if b, ok := v.(bool); ok {
			return b, true
		}
		return c.fail(path, "Boolean cannot represent a non boolean value: %s", printValue(v))
	case "ID":
		if s, ok := v.(string); ok {
			return s, true
		}
		if n, integral := number(v); integral && n >= -(1<<53) && n <= 1<<53 {
			return strconv.FormatInt(int64(n), 10), true
		}
		return c.fail(path, "ID cannot represent value: %s", printValue(v))
	}
	return v, true // a custom scalar checks itself
}

// object coerces an input object.
func (c *coercion) object(v any, def *ast.Definition, path string) (any, bool) {
	fields, isObject := v.(map[string]any)
	if !isObject {
		return c.fail(path, "Expected type %q to be an object.", def.Name)
	}
	for name := range fields {
		if def.Fields.ForName(name) == nil {
			return c.fail(path, "Field %q is not defined by type %q.", name, def.Name)
		}
	}
	out := make(map[string]any, len(fields))
	for _, f := range def.Fields {
		fv, given := fields[f.Name]
		if !given {
			if f.Type.NonNull && f.DefaultValue == nil {
				return c.fail(path, "Field %q of required type %q was not provided.", f.Name, f.Type.String())
			}
			continue
		}
		coerced, ok := c.value(fv, f.Type, path+"."+f.Name)
		if !ok {
			return nil, false
		}
		out[f.Name] = coerced
	}
	return out, true
}

// number returns the value of a JSON number and whether it is an integer
// (1.0 and 1e3 are). Anything but a number is not an integer.
func number(v any) (float64, bool) {
	f, ok := float(v)
	if !ok || math.IsInf(f, 0) || math.IsNaN(f) || f != math.Trunc(f) {
		return 0, false
	}
	return f, true
}

// float returns the value of a JSON number.
func float(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	}
	return 0, false
}

// printValue writes v as the client sent it, as JSON.
func printValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return strings.ToValidUTF8(s, "")
}
