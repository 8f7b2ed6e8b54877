package embedded

// The lexer of DynamoDB's expression language (condition, filter, key
// condition, projection and update expressions).
//
// Invariants: lex returns every token of the source in order, each with
// the byte offsets [pos, end) of its text in the source, the last one
// tokEOF at the source's end; white space is the only text between
// tokens. A character the language does not know becomes a tokBad token
// of its own, so the parser reports it as DynamoDB does: as the token of a
// syntax error.

// tokenKind is the class of a token.
type tokenKind uint8

const (
	tokEOF     tokenKind = iota
	tokName              // a name: a letter, then letters, digits and '_'
	tokNameRef           // an expression attribute name: '#' and name characters
	tokValRef            // an expression attribute value: ':' and name characters
	tokNumber            // digits, as in a list index
	tokPunct             // an operator or punctuation: = <> < <= > >= ( ) [ ] , . + -
	tokBad               // any other character
)

// token is one token of an expression.
type token struct {
	kind     tokenKind
	text     string
	pos, end int
}

// is reports whether t is the punctuation or the keyword (in any case) s.
func (t token) is(s string) bool {
	switch t.kind {
	case tokPunct:
		return t.text == s
	case tokName:
		return equalFold(t.text, s)
	}
	return false
}

// equalFold compares ASCII words case-insensitively.
func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isNameChar(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_'
}

// lex splits src into tokens.
func lex(src string) []token {
	var out []token
	i := 0
	for {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
			i++
		}
		if i == len(src) {
			return append(out, token{kind: tokEOF, text: "<EOF>", pos: i, end: i})
		}
		start := i
		c := src[i]
		kind := tokBad
		switch {
		case isLetter(c):
			kind = tokName
			for i++; i < len(src) && isNameChar(src[i]); i++ {
			}
		case c == '#' || c == ':':
			kind = tokNameRef
			if c == ':' {
				kind = tokValRef
			}
			for i++; i < len(src) && isNameChar(src[i]); i++ {
			}
		case isDigit(c):
			kind = tokNumber
			for i++; i < len(src) && isDigit(src[i]); i++ {
			}
		case c == '<' || c == '>':
			kind = tokPunct
			i++
			if i < len(src) && (src[i] == '=' || c == '<' && src[i] == '>') {
				i++
			}
		case c == '=' || c == '(' || c == ')' || c == '[' || c == ']' || c == ',' || c == '.' || c == '+' || c == '-':
			kind = tokPunct
			i++
		default:
			// One character, whole if it is not ASCII.
			i++
			for i < len(src) && src[i]&0xC0 == 0x80 {
				i++
			}
		}
		out = append(out, token{kind: kind, text: src[start:i], pos: start, end: i})
	}
}
