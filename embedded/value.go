package embedded

import (
	"bytes"
	"slices"
	"strings"
)

// Attribute values: the ten types of DynamoDB and what they mean: equality,
// order, and the size DynamoDB bills and limits.
//
// Invariants of a value v, once it was decoded from a request or from
// storage:
//   - v.kind is one of the ten kinds; only the fields of that kind are set;
//   - a number (N, and each element of NS) is held in its canonical text
//     (number.String), so two numbers are equal exactly when their texts
//     are;
//   - B and BS hold raw bytes (base64 only on the wire);
//   - a set is never empty and holds no element twice; its order is
//     meaningless;
//   - a map's names are never empty strings.

// kind is the type of an attribute value.
type kind uint8

const (
	kindS kind = iota + 1
	kindN
	kindB
	kindBOOL
	kindNULL
	kindSS
	kindNS
	kindBS
	kindL
	kindM
)

// kindNames are the type names of DynamoDB's wire format and of
// attribute_type.
var kindNames = [...]string{"", "S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS", "L", "M"}

func (k kind) String() string { return kindNames[k] }

// kindByName returns the kind of a type name, or 0.
func kindByName(name string) kind {
	for k, n := range kindNames {
		if n == name && k != 0 {
			return kind(k)
		}
	}
	return 0
}

// value is one attribute value.
type value struct {
	kind kind
	s    string           // S; N as canonical text; B as raw bytes
	b    bool             // BOOL
	set  []string         // SS; NS as canonical texts; BS as raw bytes
	list []value          // L
	m    map[string]value // M
}

// item is a whole item, or a key: attribute values by name.
type item map[string]value

// num returns the value of a number.
func num(n number) value { return value{kind: kindN, s: n.String()} }

// number returns the number of an N value; its text is canonical, so it
// parses.
func (v value) number() number {
	n, _ := parseNumber(v.s)
	return n
}

// isSet reports whether v is a set.
func (v value) isSet() bool { return v.kind == kindSS || v.kind == kindNS || v.kind == kindBS }

// equal reports whether a and b are the same value as DynamoDB compares
// them: the same type and contents; sets whatever their order.
func equal(a, b value) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case kindS, kindN, kindB:
		return a.s == b.s
	case kindBOOL:
		return a.b == b.b
	case kindNULL:
		return true
	case kindSS, kindNS, kindBS:
		if len(a.set) != len(b.set) {
			return false
		}
		for _, e := range a.set {
			if !slices.Contains(b.set, e) {
				return false
			}
		}
		return true
	case kindL:
		if len(a.list) != len(b.list) {
			return false
		}
		for i := range a.list {
			if !equal(a.list[i], b.list[i]) {
				return false
			}
		}
		return true
	case kindM:
		if len(a.m) != len(b.m) {
			return false
		}
		for k, av := range a.m {
			bv, ok := b.m[k]
			if !ok || !equal(av, bv) {
				return false
			}
		}
		return true
	}
	return false
}

// compareValues orders two values of the same scalar type (S by UTF-8
// bytes, N numerically, B by unsigned bytes). ok is false for other types,
// or types that differ: such a comparison is false in DynamoDB.
func compareValues(a, b value) (c int, ok bool) {
	if a.kind != b.kind {
		return 0, false
	}
	switch a.kind {
	case kindS, kindB:
		return strings.Compare(a.s, b.s), true
	case kindN:
		return compareNumbers(a.number(), b.number()), true
	}
	return 0, false
}

// size returns the bytes DynamoDB counts for v: strings and binaries their
// length, numbers about one byte per two digits, one byte for BOOL and
// NULL, and for lists and maps three bytes, one per element, and their
// elements (with the names of a map's).
func (v value) size() int {
	switch v.kind {
	case kindS, kindB:
		return len(v.s)
	case kindN:
		return v.number().size()
	case kindBOOL, kindNULL:
		return 1
	case kindSS, kindBS:
		n := 0
		for _, e := range v.set {
			n += len(e)
		}
		return n
	case kindNS:
		n := 0
		for _, e := range v.set {
			d, _ := parseNumber(e)
			n += d.size()
		}
		return n
	case kindL:
		n := 3
		for _, e := range v.list {
			n += 1 + e.size()
		}
		return n
	case kindM:
		n := 3
		for k, e := range v.m {
			n += 1 + len(k) + e.size()
		}
		return n
	}
	return 0
}

// size returns the item's size as DynamoDB counts it against the 400 KB
// limit and bills it: the length of each attribute's name plus its value's
// size.
func (it item) size() int {
	n := 0
	for k, v := range it {
		n += len(k) + v.size()
	}
	return n
}

// clone returns a deep copy of v, so an update can change it while the
// item as read stays as it was.
func (v value) clone() value {
	switch v.kind {
	case kindSS, kindNS, kindBS:
		v.set = slices.Clone(v.set)
	case kindL:
		l := make([]value, len(v.list))
		for i, e := range v.list {
			l[i] = e.clone()
		}
		v.list = l
	case kindM:
		m := make(map[string]value, len(v.m))
		for k, e := range v.m {
			m[k] = e.clone()
		}
		v.m = m
	}
	return v
}

func (it item) clone() item {
	if it == nil {
		return nil
	}
	out := make(item, len(it))
	for k, v := range it {
		out[k] = v.clone()
	}
	return out
}

// contains reports whether v contains e as DynamoDB's contains function
// means it: a substring of a string, a subsequence of bytes of a binary, an
// element of a set (of the set's element type), or an element of a list
// (any type).
func contains(v, e value) bool {
	switch v.kind {
	case kindS:
		return e.kind == kindS && strings.Contains(v.s, e.s)
	case kindB:
		return e.kind == kindB && bytes.Contains([]byte(v.s), []byte(e.s))
	case kindSS:
		return e.kind == kindS && slices.Contains(v.set, e.s)
	case kindNS:
		return e.kind == kindN && slices.Contains(v.set, e.s)
	case kindBS:
		return e.kind == kindB && slices.Contains(v.set, e.s)
	case kindL:
		for _, x := range v.list {
			if equal(x, e) {
				return true
			}
		}
	}
	return false
}
