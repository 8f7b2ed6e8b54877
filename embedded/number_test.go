package embedded

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestParseNumber(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{"1.50", "1.5", ""},
		{"1e3", "1000", ""},
		{"0.001", "0.001", ""},
		{"1E-10", "0.0000000001", ""},
		{"-0", "0", ""},
		{"00012.3400", "12.34", ""},
		{"+5", "5", ""},
		{".5", "0.5", ""},
		{"5.", "5", ""},
		{"-.5", "-0.5", ""},
		{"+.5e+2", "50", ""},
		{"0e999", "0", ""},
		{"1E+125", "1" + zeros(125), ""},
		{"1E-130", "0." + zeros(129) + "1", ""},
		{"12345678901234567890123456789012345678", "12345678901234567890123456789012345678", ""},
		{"123456789012345678901234567890123456780", "123456789012345678901234567890123456780", ""},
		{"123456789012345678901234567890123456789", "", msgPrecision},
		{"1.000000000000000000000000000000000000000000000000001", "", msgPrecision},
		{"1E126", "", msgOverflow},
		{"1e2147483647", "", msgOverflow},
		{"1E-131", "", msgUnderflow},
		{"1e999999999999", "", msgNotANumber},
		{"1e-2147483648", "", msgNotANumber},
		{" 5", "", msgNotANumber},
		{"abc", "", msgNotANumber},
		{"0x10", "", msgNotANumber},
		{"NaN", "", msgNotANumber},
		{"1_000", "", msgNotANumber},
		{"-", "", msgNotANumber},
		{"1e", "", msgNotANumber},
		{"e5", "", msgNotANumber},
		{"1.2.3", "", msgNotANumber},
		{"", "", msgNotANumber},
	}
	for _, c := range cases {
		n, err := parseNumber(c.in)
		switch {
		case c.err != "" && (err == nil || err.(*apiError).msg != c.err):
			t.Errorf("parseNumber(%q) = %v, %v; want error %q", c.in, n, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("parseNumber(%q): %v", c.in, err)
		case c.err == "" && n.String() != c.want:
			t.Errorf("parseNumber(%q) = %s, want %s", c.in, n, c.want)
		}
	}
}

func zeros(n int) string { return string(bytes.Repeat([]byte{'0'}, n)) }

// randomNumber returns a number of up to 38 digits in range.
func randomNumber(r *rand.Rand) number {
	if r.IntN(10) == 0 {
		return number{}
	}
	d := make([]byte, 1+r.IntN(maxDigits))
	for i := range d {
		d[i] = byte('0' + r.IntN(10))
	}
	d[0] = byte('1' + r.IntN(9))
	for d[len(d)-1] == '0' {
		d = d[:len(d)-1]
	}
	return number{neg: r.IntN(2) == 0, digits: string(d), exp: r.IntN(40) - 20}
}

// rat returns n as an exact rational.
func rat(n number) *big.Rat {
	c, p := n.coefficient()
	r := new(big.Rat).SetInt(c)
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(p))), nil))
	if p >= 0 {
		return r.Mul(r, scale)
	}
	return r.Quo(r, scale)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestNumberOrder checks the comparison, the sum, the text and the key
// encoding of numbers against exact rational arithmetic.
func TestNumberOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		a, b := randomNumber(r), randomNumber(r)
		want := rat(a).Cmp(rat(b))
		if got := compareNumbers(a, b); got != want {
			t.Fatalf("compare(%s, %s) = %d, want %d", a, b, got, want)
		}
		ka, kb := a.appendKey(nil), b.appendKey(nil)
		if got := bytes.Compare(ka, kb); got != want {
			t.Fatalf("key order of %s and %s = %d, want %d", a, b, got, want)
		}
		back, rest, ok := readKeyNumber(append(ka, 0x42))
		if !ok || back != a || !bytes.Equal(rest, []byte{0x42}) {
			t.Fatalf("key of %s reads back as %v %v %v", a, back, rest, ok)
		}
		p, err := parseNumber(a.String())
		if err != nil || p != a {
			t.Fatalf("%s parses back as %v, %v", a, p, err)
		}
		sum, err := addNumbers(a, b)
		exact := new(big.Rat).Add(rat(a), rat(b))
		if err == nil && rat(sum).Cmp(exact) != 0 {
			t.Fatalf("%s + %s = %s, want %s", a, b, sum, exact.FloatString(40))
		}
	}
}

func TestNumberArithmetic(t *testing.T) {
	cases := []struct{ a, b, want, err string }{
		{"1E+100", "1", "", msgPrecision},
		{"12345678901234567890123456789012345678", "1", "12345678901234567890123456789012345679", ""},
		{"99999999999999999999999999999999999999", "1", "100000000000000000000000000000000000000", ""},
		{"9.9999999999999999999999999999999999999E+125", "1E+89", "", msgPrecision},
		{"1E-130", "-1E-130", "0", ""},
		{"0.1", "0.2", "0.3", ""},
		{"0.25", "0.75", "1", ""},
		{"1.5", "-1.5", "0", ""},
		{"5", "-5", "0", ""},
		{"1", "1E-50", "", msgPrecision},
	}
	for _, c := range cases {
		a, _ := parseNumber(c.a)
		b, _ := parseNumber(c.b)
		got, err := addNumbers(a, b)
		switch {
		case c.err != "" && (err == nil || err.(*apiError).msg != c.err):
			t.Errorf("%s + %s = %v, %v; want error %q", c.a, c.b, got, err, c.err)
		case c.err == "" && (err != nil || got.String() != c.want):
			t.Errorf("%s + %s = %v, %v; want %s", c.a, c.b, got, err, c.want)
		}
	}
}

func TestNumberSize(t *testing.T) {
	// Sizes measured on DynamoDB Local: one byte per pair of digits
	// aligned on the point, one more, and one more for a negative.
	cases := map[string]int{
		"0": 1, "1": 2, "12": 2, "123": 3, "12345": 4, "-123": 4, "0.001": 2, "1000": 2, "1.5": 3, "10": 2,
		"0.5": 2, "0.05": 2, "1.05": 3, "1E+125": 2, "-1": 3, "-0.5": 3, "100": 2, "1001": 3, "99": 2,
		"9999999999": 6, "0.011": 3, "101": 3, "11111111111111111111111111111111111111": 20,
	}
	for s, want := range cases {
		n, _ := parseNumber(s)
		if got := n.size(); got != want {
			t.Errorf("size of %s = %d, want %d", s, got, want)
		}
	}
}

// readKeyNumber decodes a number encoded by appendKey at the start of b and
// returns it with the bytes after it.
func readKeyNumber(b []byte) (number, []byte, bool) {
	if len(b) == 0 {
		return number{}, nil, false
	}
	switch b[0] {
	case 0x02:
		return number{}, b[1:], true
	case 0x03, 0x01:
		neg := b[0] == 0x01
		if len(b) < 3 {
			return number{}, nil, false
		}
		e := uint16(b[1])<<8 | uint16(b[2])
		end := byte(0x00)
		if neg {
			e, end = ^e, 0xFF
		}
		rest := b[3:]
		i := 0
		for i < len(rest) && rest[i] != end {
			i++
		}
		if i == len(rest) {
			return number{}, nil, false
		}
		d := make([]byte, i)
		for j := range d {
			d[j] = rest[j]
			if neg {
				d[j] = ^d[j]
			}
		}
		return number{neg: neg, digits: string(d), exp: int(e) - 0x8000}, rest[i+1:], true
	}
	return number{}, nil, false
}
