package embedded

import "strings"

// Key conditions of a Query: which partition, and which range of sort
// keys in it, as a range of storage keys.
//
// A key condition is the partition key = a value, and at most one
// condition on the sort key: =, <, <=, >, >=, BETWEEN or begins_with.
// Invariant: bounds returns exactly the storage keys (keys.go) of the
// items whose keys satisfy the condition, as one contiguous range.

// keyRange is a checked key condition.
type keyRange struct {
	hash   value
	op     string // "" for the whole partition
	lo, hi value  // lo for one-sided operators and begins_with
	prefix []byte // hash(pk) | enc(pk)
}

// keyConditions checks a parsed KeyConditionExpression against the key
// attributes of what is queried.
func keyConditions(c *cond, keys []keyAttr) (*keyRange, error) {
	var parts []*cond
	var walk func(c *cond) error
	walk = func(c *cond) error {
		switch c.kind {
		case cAnd:
			for _, k := range c.kids {
				if err := walk(k); err != nil {
					return err
				}
			}
			return nil
		case cOr:
			return validation("Invalid operator used in KeyConditionExpression: OR")
		case cNot:
			return validation("Invalid operator used in KeyConditionExpression: NOT")
		case cIn:
			return validation("Invalid operator used in KeyConditionExpression: IN")
		case cCompare:
			if c.op == "<>" {
				return validation("Invalid operator used in KeyConditionExpression: <>")
			}
		case cCall:
			if c.op != "begins_with" {
				return validation("Invalid operator used in KeyConditionExpression: %s", c.op)
			}
		}
		parts = append(parts, c)
		return nil
	}
	if err := walk(c); err != nil {
		return nil, err
	}
	kr := &keyRange{}
	seen := map[string]bool{}
	for _, p := range parts {
		name, op, vals, err := keyPart(p)
		if err != nil {
			return nil, err
		}
		var attr *keyAttr
		for i := range keys {
			if keys[i].Name == name {
				attr = &keys[i]
			}
		}
		if attr == nil {
			return nil, validation("Query condition missed key schema element")
		}
		if seen[name] {
			return nil, validation("KeyConditionExpressions must only contain one condition per key")
		}
		seen[name] = true
		for _, v := range vals {
			if v.kind != attr.Kind {
				return nil, validation("One or more parameter values were invalid: Condition parameter type does not match schema type")
			}
		}
		if name == keys[0].Name {
			if op != "=" {
				return nil, validation("Query key condition not supported")
			}
			kr.hash = vals[0]
			continue
		}
		kr.op, kr.lo = op, vals[0]
		if len(vals) > 1 {
			kr.hi = vals[1]
		}
	}
	if !seen[keys[0].Name] {
		return nil, validation("Query condition missed key schema element")
	}
	kr.prefix = appendPartition(nil, kr.hash)
	return kr, nil
}

// keyPart returns the attribute, the operator and the values of one key
// condition, with a value on the left of a comparison moved to the right.
func keyPart(c *cond) (string, string, []value, error) {
	flip := map[string]string{"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
	switch c.kind {
	case cCompare:
		a, b, op := c.args[0], c.args[1], c.op
		if a.kind == opValue && b.kind == opPath {
			a, b, op = b, a, flip[op]
		}
		if a.kind != opPath || b.kind != opValue {
			return "", "", nil, validation("Invalid KeyConditionExpression: Key attributes must be compared with values")
		}
		name, err := keyName(a.path)
		return name, op, []value{b.val.v}, err
	case cBetween:
		a, lo, hi := c.args[0], c.args[1], c.args[2]
		if a.kind != opPath || lo.kind != opValue || hi.kind != opValue {
			return "", "", nil, validation("Invalid KeyConditionExpression: Key attributes must be compared with values")
		}
		name, err := keyName(a.path)
		return name, "BETWEEN", []value{lo.val.v, hi.val.v}, err
	case cCall: // begins_with
		a, b := c.args[0], c.args[1]
		if a.kind != opPath || b.kind != opValue {
			return "", "", nil, validation("Invalid KeyConditionExpression: Key attributes must be compared with values")
		}
		name, err := keyName(a.path)
		return name, "begins_with", []value{b.val.v}, err
	}
	return "", "", nil, validation("Query key condition not supported")
}

// keyName returns the attribute of a key condition's path, which must be
// a top-level attribute.
func keyName(p docPath) (string, error) {
	if len(p) > 1 {
		return "", validation("Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: %s", p[0].name)
	}
	return p[0].name, nil
}

// bounds returns the storage key range [from, to) of the condition; to is
// nil when the range is open at the end.
func (kr *keyRange) bounds() (from, to []byte) {
	p := kr.prefix
	at := func(v value) []byte { return appendKeyPart(append([]byte(nil), p...), v) }
	switch kr.op {
	case "=":
		k := at(kr.lo)
		return k, prefixEnd(k)
	case "<":
		return p, at(kr.lo)
	case "<=":
		return p, prefixEnd(at(kr.lo))
	case ">":
		return prefixEnd(at(kr.lo)), prefixEnd(p)
	case ">=":
		return at(kr.lo), prefixEnd(p)
	case "BETWEEN":
		return at(kr.lo), prefixEnd(at(kr.hi))
	case "begins_with":
		k := append([]byte(nil), p...)
		for i := 0; i < len(kr.lo.s); i++ {
			k = append(k, kr.lo.s[i])
			if kr.lo.s[i] == 0 {
				k = append(k, 0xFF)
			}
		}
		return k, prefixEnd(k)
	}
	return p, prefixEnd(p)
}

// matches reports whether a sort key value satisfies the condition.
func (kr *keyRange) matches(v value) bool {
	c, ok := compareValues(v, kr.lo)
	switch kr.op {
	case "":
		return true
	case "=":
		return ok && c == 0
	case "<":
		return ok && c < 0
	case "<=":
		return ok && c <= 0
	case ">":
		return ok && c > 0
	case ">=":
		return ok && c >= 0
	case "BETWEEN":
		c2, ok2 := compareValues(v, kr.hi)
		return ok && ok2 && c >= 0 && c2 <= 0
	case "begins_with":
		return v.kind == kr.lo.kind && strings.HasPrefix(v.s, kr.lo.s)
	}
	return false
}

// prefixEnd returns the smallest key greater than every key that starts
// with p, or nil when there is none.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
