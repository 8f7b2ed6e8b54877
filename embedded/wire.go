package embedded

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The JSON form of attribute values on the wire ({"S":"x"}, {"N":"1"},
// {"M":{...}}, ...), read by a parser of its own and written by appending
// to a buffer: items are most of every request and answer, and
// encoding/json's reflection would cost more than the rest of a read.
//
// Invariant: a value the parser returns satisfies value.go's invariants
// (numbers canonical, sets non-empty without duplicates, binaries
// decoded, map names non-empty), or the parser returns the validation
// error DynamoDB gives for it.

// UnmarshalJSON decodes an item (or a key) from its JSON object.
func (it *item) UnmarshalJSON(b []byte) error {
	p := &avParser{data: b}
	m, err := p.attributes()
	if err != nil {
		return err
	}
	*it = m
	return nil
}

// UnmarshalJSON decodes one attribute value.
func (v *value) UnmarshalJSON(b []byte) error {
	p := &avParser{data: b}
	x, err := p.value()
	if err != nil {
		return err
	}
	*v = x
	return nil
}

// avParser reads attribute values from JSON text that encoding/json has
// already checked to be well-formed.
type avParser struct {
	data []byte
	pos  int
	// lastNumber is the text of the last number read, as sent.
	lastNumber string
}

// errSerialization is a body that is JSON but not of the shape DynamoDB
// expects.
func errSerialization(format string, args ...any) error {
	return &apiError{code: "SerializationException", msg: fmt.Sprintf(format, args...)}
}

func (p *avParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// peek returns the next byte that is not white space, or 0 at the end.
func (p *avParser) peek() byte {
	p.skipSpace()
	if p.pos < len(p.data) {
		return p.data[p.pos]
	}
	return 0
}

func (p *avParser) expect(c byte) error {
	if p.peek() != c {
		return errSerialization("expected %q at offset %d", c, p.pos)
	}
	p.pos++
	return nil
}

// attributes reads an object of attribute values by name.
func (p *avParser) attributes() (map[string]value, error) {
	if p.peek() == 'n' {
		p.pos += len("null")
		return nil, nil
	}
	if err := p.expect('{'); err != nil {
		return nil, err
	}
	m := map[string]value{}
	if p.peek() == '}' {
		p.pos++
		return m, nil
	}
	for {
		name, err := p.string()
		if err != nil {
			return nil, err
		}
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if name == "" {
			return nil, validation("Empty attribute name")
		}
		m[name] = v
		switch p.peek() {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return m, nil
		default:
			return nil, errSerialization("expected ',' or '}' at offset %d", p.pos)
		}
	}
}

// value reads one attribute value: an object with exactly one member,
// named by its type.
func (p *avParser) value() (value, error) {
	if err := p.expect('{'); err != nil {
		return value{}, err
	}
	var v value
	types := 0
	if p.peek() == '}' {
		p.pos++
		return value{}, validation("Supplied AttributeValue is empty, must contain exactly one of the supported datatypes")
	}
	for {
		name, err := p.string()
		if err != nil {
			return value{}, err
		}
		if err := p.expect(':'); err != nil {
			return value{}, err
		}
		k := kindByName(name)
		if k == 0 || p.peek() == 'n' {
			// Unknown members and nulls are ignored, as DynamoDB does.
			if err := p.skip(); err != nil {
				return value{}, err
			}
		} else {
			types++
			if v, err = p.member(k); err != nil {
				return value{}, err
			}
		}
		if p.peek() == ',' {
			p.pos++
			continue
		}
		if err := p.expect('}'); err != nil {
			return value{}, err
		}
		break
	}
	switch types {
	case 0:
		return value{}, validation("Supplied AttributeValue is empty, must contain exactly one of the supported datatypes")
	case 1:
		return v, nil
	}
	return value{}, validation("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes")
}

// member reads the contents of a value of kind k.
func (p *avParser) member(k kind) (value, error) {
	v := value{kind: k}
	switch k {
	case kindS:
		s, err := p.string()
		v.s = s
		return v, err
	case kindN:
		s, err := p.string()
		if err != nil {
			return v, err
		}
		p.lastNumber = s
		n, err := parseNumber(s)
		v.s = n.String()
		return v, err
	case kindB:
		s, err := p.string()
		if err != nil {
			return v, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return v, errSerialization("Base64 encoded length is expected a multiple of 4 bytes but found: %d", len(s))
		}
		v.s = string(b)
		return v, nil
	case kindBOOL, kindNULL:
		b, err := p.boolean()
		if err != nil {
			return v, err
		}
		if k == kindNULL && !b {
			return v, validation("One or more parameter values were invalid: Null attribute value types must have the value of true")
		}
		v.b = b && k == kindBOOL
		return v, nil
	case kindSS, kindNS, kindBS:
		return p.set(k)
	case kindL:
		if err := p.expect('['); err != nil {
			return v, err
		}
		v.list = []value{}
		if p.peek() == ']' {
			p.pos++
			return v, nil
		}
		for {
			e, err := p.value()
			if err != nil {
				return v, err
			}
			v.list = append(v.list, e)
			if p.peek() == ',' {
				p.pos++
				continue
			}
			return v, p.expect(']')
		}
	case kindM:
		m, err := p.attributes()
		if m == nil {
			m = map[string]value{}
		}
		v.m = m
		return v, err
	}
	return v, nil
}

// set reads the elements of a set and checks DynamoDB's rules: not empty,
// no duplicates, valid numbers.
func (p *avParser) set(k kind) (value, error) {
	v := value{kind: k}
	if err := p.expect('['); err != nil {
		return v, err
	}
	if p.peek() == ']' {
		p.pos++
	} else {
		for {
			s, err := p.string()
			if err != nil {
				return v, err
			}
			v.set = append(v.set, s)
			if p.peek() == ',' {
				p.pos++
				continue
			}
			if err := p.expect(']'); err != nil {
				return v, err
			}
			break
		}
	}
	return v, checkSet(&v)
}

// checkSet validates a set read from the wire: its elements decoded and
// canonical, not empty, without duplicates.
func checkSet(v *value) error {
	switch v.kind {
	case kindNS:
		for i, e := range v.set {
			n, err := parseNumber(e)
			if err != nil {
				return err
			}
			v.set[i] = n.String()
		}
	case kindBS:
		for i, e := range v.set {
			b, err := base64.StdEncoding.DecodeString(e)
			if err != nil {
				return errSerialization("Base64 encoded length is expected a multiple of 4 bytes but found: %d", len(e))
			}
			v.set[i] = string(b)
		}
	}
	if len(v.set) == 0 {
		switch v.kind {
		case kindSS:
			return validation("One or more parameter values were invalid: An string set  may not be empty")
		case kindNS:
			return validation("One or more parameter values were invalid: An number set  may not be empty")
		}
		return validation("One or more parameter values were invalid: Binary sets should not be empty")
	}
	seen := make(map[string]bool, len(v.set))
	for _, e := range v.set {
		if seen[e] {
			switch v.kind {
			case kindSS:
				return validation("One or more parameter values were invalid: Input collection %s contains duplicates", javaList(v.set))
			case kindNS:
				return validation("Input collection contains duplicates")
			}
			return validation("One or more parameter values were invalid: Input collection of type BS contains duplicates.")
		}
		seen[e] = true
	}
	return nil
}

// javaList formats strings as Java prints a list: [a, b].
func javaList(ss []string) string {
	b := []byte{'['}
	for i, s := range ss {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, s...)
	}
	return string(append(b, ']'))
}

func (p *avParser) boolean() (bool, error) {
	p.skipSpace()
	switch {
	case p.hasPrefix("true"):
		p.pos += 4
		return true, nil
	case p.hasPrefix("false"):
		p.pos += 5
		return false, nil
	}
	return false, errSerialization("expected a boolean at offset %d", p.pos)
}

func (p *avParser) hasPrefix(s string) bool {
	return len(p.data)-p.pos >= len(s) && string(p.data[p.pos:p.pos+len(s)]) == s
}

// skip passes over one JSON value of any kind.
func (p *avParser) skip() error {
	switch c := p.peek(); c {
	case '"':
		_, err := p.string()
		return err
	case '{', '[':
		depth := 0
		for p.pos < len(p.data) {
			switch p.data[p.pos] {
			case '"':
				if _, err := p.string(); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			p.pos++
			if depth == 0 {
				return nil
			}
		}
		return errSerialization("unexpected end of JSON")
	default:
		for p.pos < len(p.data) {
			switch p.data[p.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return nil
			}
			p.pos++
		}
		return nil
	}
}

// string reads a JSON string.
func (p *avParser) string() (string, error) {
	if p.peek() != '"' {
		return "", errSerialization("expected a string at offset %d", p.pos)
	}
	p.pos++
	start := p.pos
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			s := string(p.data[start:p.pos])
			p.pos++
			return s, nil
		}
		if c == '\\' {
			return p.escapedString(start)
		}
		p.pos++
	}
	return "", errSerialization("unterminated string")
}

// escapedString reads the rest of a string with escapes, from start.
func (p *avParser) escapedString(start int) (string, error) {
	b := append([]byte(nil), p.data[start:p.pos]...)
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(b), nil
		case c != '\\':
			b = append(b, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.data) {
			break
		}
		e := p.data[p.pos+1]
		p.pos += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", errSerialization("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if p.hasPrefix(`\u`) {
					p.pos += 2
					r2, _ = p.hex4()
				}
				r = utf16.DecodeRune(r, r2)
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", errSerialization("bad escape \\%c", e)
		}
	}
	return "", errSerialization("unterminated string")
}

func (p *avParser) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.pos += 4
	return rune(v), true
}

// appendValue appends v's JSON form.
func appendValue(b []byte, v value) []byte {
	b = append(b, `{"`...)
	b = append(b, kindNames[v.kind]...)
	b = append(b, `":`...)
	switch v.kind {
	case kindS, kindN:
		b = appendString(b, v.s)
	case kindB:
		b = appendBase64(b, v.s)
	case kindBOOL:
		b = strconv.AppendBool(b, v.b)
	case kindNULL:
		b = append(b, "true"...)
	case kindSS, kindNS, kindBS:
		b = append(b, '[')
		for i, e := range v.set {
			if i > 0 {
				b = append(b, ',')
			}
			if v.kind == kindBS {
				b = appendBase64(b, e)
			} else {
				b = appendString(b, e)
			}
		}
		b = append(b, ']')
	case kindL:
		b = append(b, '[')
		for i, e := range v.list {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		b = append(b, ']')
	case kindM:
		b = appendItem(b, v.m)
	}
	return append(b, '}')
}

// appendItem appends the JSON object of an item or map.
func appendItem(b []byte, m map[string]value) []byte {
	b = append(b, '{')
	first := true
	for k, v := range m {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, k)
		b = append(b, ':')
		b = appendValue(b, v)
	}
	return append(b, '}')
}

func appendBase64(b []byte, s string) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, []byte(s))
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendEscaped(b, s)
	return append(b, '"')
}

// appendEscaped appends s escaped for a JSON string, without the quotes.
func appendEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainASCII[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}
