package embedded

import (
	"math/big"
	"strconv"
	"strings"
)

// Numbers are DynamoDB's decimal numbers: at most 38 significant digits,
// magnitudes from 1E-130 to 9.9999999999999999999999999999999999999E+125,
// exact arithmetic.
//
// Invariants of a number n:
//   - n.digits holds the significant digits, without leading or trailing
//     zeros: it starts and ends with a digit 1-9, or is empty for zero;
//   - its value is 0.<digits> × 10^n.exp, so the first significant digit
//     has the weight 10^(n.exp-1);
//   - zero has digits "", exp 0 and is never negative;
//   - len(n.digits) ≤ maxDigits and minExp ≤ n.exp-1 ≤ maxExp once
//     parseNumber or add returned it without an error.
//
// So equal values have equal representations, and the canonical text,
// comparisons, sizes and key encodings follow from the fields alone.
type number struct {
	neg    bool
	digits string
	exp    int
}

const (
	maxDigits = 38
	maxExp    = 125  // largest power of ten of a number's first digit
	minExp    = -130 // smallest power of ten of a number's first digit
)

// The messages DynamoDB gives for numbers it cannot store.
const (
	msgNotANumber = "A value provided cannot be converted into a number"
	msgPrecision  = "DynamoDB only supports precision up to 38 digits"
	msgOverflow   = "Number overflow. Attempting to store a number with magnitude larger than supported range"
	msgUnderflow  = "Number underflow. Attempting to store a number with magnitude smaller than supported range"
)

// parseNumber parses the text of a number as DynamoDB accepts it: an
// optional sign, digits with an optional decimal point (at least one
// digit), and an optional exponent. It returns a validation error with
// DynamoDB's message when s is not a number or cannot be stored.
func parseNumber(s string) (number, error) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var mant []byte // every digit of the mantissa, the point removed
	point := -1     // how many digits come before the point
	for ; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			mant = append(mant, c)
		} else if c == '.' && point < 0 {
			point = len(mant)
		} else {
			break
		}
	}
	if len(mant) == 0 {
		return number{}, validation(msgNotANumber)
	}
	if point < 0 {
		point = len(mant)
	}
	var e int64
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return number{}, validation(msgNotANumber)
		}
		v, err := strconv.ParseInt(s[i+1:], 10, 32)
		if err != nil {
			return number{}, validation(msgNotANumber)
		}
		e = v
	}
	// DynamoDB parses numbers as Java's BigDecimal does, whose scale (the
	// digits after the point less the exponent) must fit in 32 bits.
	if scale := int64(len(mant)-point) - e; scale > 1<<31-1 || scale < -1<<31 {
		return number{}, validation(msgNotANumber)
	}
	// The value is 0.<mant> × 10^(point+e); drop the zeros at both ends.
	exp := int64(point) + e
	lead := 0
	for lead < len(mant) && mant[lead] == '0' {
		lead++
	}
	digits := strings.TrimRight(string(mant[lead:]), "0")
	if digits == "" {
		return number{}, nil
	}
	exp -= int64(lead)
	switch {
	case len(digits) > maxDigits:
		return number{}, validation(msgPrecision)
	case exp-1 > maxExp:
		return number{}, validation(msgOverflow)
	case exp-1 < minExp:
		return number{}, validation(msgUnderflow)
	}
	return number{neg: neg, digits: digits, exp: int(exp)}, nil
}

// check returns the error DynamoDB gives for a number it cannot store, or
// nil.
func (n number) check() error {
	switch {
	case n.digits == "":
		return nil
	case len(n.digits) > maxDigits:
		return validation(msgPrecision)
	case n.exp-1 > maxExp:
		return validation(msgOverflow)
	case n.exp-1 < minExp:
		return validation(msgUnderflow)
	}
	return nil
}

// String returns the number as DynamoDB returns it: plain notation without
// an exponent, no leading zeros but one before the point, no trailing
// zeros after it, "-" for negatives and "0" for zero.
func (n number) String() string {
	if n.digits == "" {
		return "0"
	}
	var b strings.Builder
	if n.neg {
		b.WriteByte('-')
	}
	switch {
	case n.exp <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -n.exp))
		b.WriteString(n.digits)
	case n.exp >= len(n.digits):
		b.WriteString(n.digits)
		b.WriteString(strings.Repeat("0", n.exp-len(n.digits)))
	default:
		b.WriteString(n.digits[:n.exp])
		b.WriteByte('.')
		b.WriteString(n.digits[n.exp:])
	}
	return b.String()
}

// sign returns -1, 0 or 1.
func (n number) sign() int {
	switch {
	case n.digits == "":
		return 0
	case n.neg:
		return -1
	}
	return 1
}

// compareNumbers returns -1, 0 or 1 as a is less than, equal to or greater
// than b.
func compareNumbers(a, b number) int {
	sa, sb := a.sign(), b.sign()
	if sa != sb {
		if sa < sb {
			return -1
		}
		return 1
	}
	if sa == 0 {
		return 0
	}
	// Same sign: compare magnitudes, then flip for negatives.
	c := 0
	switch {
	case a.exp != b.exp:
		c = 1
		if a.exp < b.exp {
			c = -1
		}
	default:
		c = strings.Compare(a.digits, b.digits)
	}
	return c * sa
}

// coefficient returns the number as an integer c and a power of ten p with
// value c × 10^p.
func (n number) coefficient() (*big.Int, int) {
	c := new(big.Int)
	if n.digits == "" {
		return c, 0
	}
	c.SetString(n.digits, 10)
	if n.neg {
		c.Neg(c)
	}
	return c, n.exp - len(n.digits)
}

var bigTen = big.NewInt(10)

// addNumbers returns a+b exactly, or the error DynamoDB gives when the sum
// cannot be stored (more than 38 digits, or out of range).
func addNumbers(a, b number) (number, error) {
	ca, pa := a.coefficient()
	cb, pb := b.coefficient()
	p := min(pa, pb)
	ca.Mul(ca, new(big.Int).Exp(bigTen, big.NewInt(int64(pa-p)), nil))
	cb.Mul(cb, new(big.Int).Exp(bigTen, big.NewInt(int64(pb-p)), nil))
	sum := ca.Add(ca, cb)
	n := number{neg: sum.Sign() < 0}
	text := sum.Text(10)
	text = strings.TrimPrefix(text, "-")
	trimmed := strings.TrimRight(text, "0")
	if trimmed == "" {
		return number{}, nil
	}
	n.digits = trimmed
	n.exp = p + len(text)
	return n, n.check()
}

// negate returns -n.
func (n number) negate() number {
	if n.digits != "" {
		n.neg = !n.neg
	}
	return n
}

// size returns the bytes DynamoDB counts for the number in an item's size:
// one per pair of digits (aligned on the decimal point, as DynamoDB stores
// them in base 100), one more, and one more for a negative number.
func (n number) size() int {
	if n.digits == "" {
		return 1
	}
	// Pad the digits on both sides so that the point falls between pairs.
	lead := ((n.exp%2)+2)%2 != 0 // an odd count of digits before the point
	l := len(n.digits)
	if lead {
		l++
	}
	pairs := (l + 1) / 2
	s := 1 + pairs
	if n.neg {
		s++
	}
	return s
}

// appendKey appends an encoding of n whose byte order is the numbers'
// order and which no other number's encoding has as a prefix: a class byte
// (negative, zero, positive), the exponent, then the digits ended by a
// terminator, all complemented for negatives.
func (n number) appendKey(dst []byte) []byte {
	switch n.sign() {
	case 0:
		return append(dst, 0x02)
	case 1:
		e := uint16(n.exp + 0x8000)
		dst = append(dst, 0x03, byte(e>>8), byte(e))
		dst = append(dst, n.digits...)
		return append(dst, 0x00)
	}
	e := ^uint16(n.exp + 0x8000)
	dst = append(dst, 0x01, byte(e>>8), byte(e))
	for i := 0; i < len(n.digits); i++ {
		dst = append(dst, ^n.digits[i])
	}
	return append(dst, 0xFF)
}
