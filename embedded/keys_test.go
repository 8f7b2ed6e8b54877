package embedded

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

func randomBytes(r *rand.Rand) string {
	b := make([]byte, r.IntN(6))
	for i := range b {
		b[i] = []byte{0x00, 0x01, 'a', 'b', 0xFE, 0xFF}[r.IntN(6)]
	}
	return string(b)
}

// TestKeyOrder checks that storage keys of items in one partition are in
// sort key order, and that partitions never interleave.
func TestKeyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range []kind{kindS, kindB, kindN} {
		attrs := []keyAttr{{Name: "PK", Kind: kindS}, {Name: "SK", Kind: k}}
		for range 5000 {
			var a, b value
			if k == kindN {
				a, b = num(randomNumber(r)), num(randomNumber(r))
			} else {
				a, b = value{kind: k, s: randomBytes(r)}, value{kind: k, s: randomBytes(r)}
			}
			pa, pb := str(randomBytes(r)), str(randomBytes(r))
			if r.IntN(2) == 0 {
				pb = pa
			}
			ka := itemKey(nil, attrs, item{"PK": pa, "SK": a})
			kb := itemKey(nil, attrs, item{"PK": pb, "SK": b})
			if pa.s != pb.s {
				// Different partitions: neither's prefix holds the other's key.
				prefixA := appendPartition(nil, pa)
				if bytes.HasPrefix(kb, prefixA) {
					t.Fatalf("partition %q holds a key of partition %q", pa.s, pb.s)
				}
				continue
			}
			want, _ := compareValues(a, b)
			if got := bytes.Compare(ka, kb); got != want {
				t.Fatalf("%s %q vs %q: key order %d, want %d", k, a.s, b.s, got, want)
			}
		}
	}
}

// TestKeyRanges checks that the bounds of key conditions hold exactly the
// keys that satisfy them.
func TestKeyRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	attrs := []keyAttr{{Name: "PK", Kind: kindS}, {Name: "SK", Kind: kindS}}
	for range 3000 {
		kr := &keyRange{hash: str("p"), op: []string{"", "=", "<", "<=", ">", ">=", "BETWEEN", "begins_with"}[r.IntN(8)], lo: str(randomBytes(r)), hi: str(randomBytes(r))}
		if c, _ := compareValues(kr.lo, kr.hi); kr.op == "BETWEEN" && c > 0 {
			kr.lo, kr.hi = kr.hi, kr.lo
		}
		kr.prefix = appendPartition(nil, kr.hash)
		from, to := kr.bounds()
		sk := str(randomBytes(r))
		k := itemKey(nil, attrs, item{"PK": str("p"), "SK": sk})
		in := bytes.Compare(k, from) >= 0 && (to == nil || bytes.Compare(k, to) < 0)
		if in != kr.matches(sk) {
			t.Fatalf("%s %q..%q and %q: in range %v, matches %v", kr.op, kr.lo.s, kr.hi.s, sk.s, in, kr.matches(sk))
		}
	}
}

func TestSegments(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 1000} {
		var prevTo []byte
		for i := range n {
			from, to := segmentBounds(i, n)
			if i == 0 && !bytes.Equal(from, []byte{0, 0, 0, 0}) || i > 0 && !bytes.Equal(from, prevTo) {
				t.Fatalf("segment %d of %d starts at %x after %x", i, n, from, prevTo)
			}
			if (i == n-1) != (to == nil) {
				t.Fatalf("segment %d of %d ends at %x", i, n, to)
			}
			prevTo = to
		}
	}
}

// randomString returns a short string of valid UTF-8, as JSON carries.
func randomString(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(6) {
		b.WriteString([]string{"\x00", "\x01", "a", "b", "é", "\"", "\u2028", "\\"}[r.IntN(8)])
	}
	return b.String()
}

// randomValue returns a random attribute value, nested up to depth.
func randomValue(r *rand.Rand, depth int) value {
	k := kind(1 + r.IntN(10))
	if depth == 0 && (k == kindL || k == kindM) {
		k = kindS
	}
	switch k {
	case kindS:
		return value{kind: k, s: randomString(r)}
	case kindB:
		return value{kind: k, s: randomBytes(r)}
	case kindN:
		return num(randomNumber(r))
	case kindBOOL:
		return boolean(r.IntN(2) == 0)
	case kindNULL:
		return value{kind: kindNULL}
	case kindSS, kindBS:
		return value{kind: k, set: []string{"a", "b\x00", "\"c\""}[:1+r.IntN(3)]}
	case kindNS:
		return value{kind: k, set: []string{"1", "-2.5"}[:1+r.IntN(2)]}
	case kindL:
		l := []value{}
		for range r.IntN(4) {
			l = append(l, randomValue(r, depth-1))
		}
		return listOf(l...)
	}
	m := map[string]value{}
	for range r.IntN(4) {
		m[randomString(r)+"k"] = randomValue(r, depth-1)
	}
	return mapOf(m)
}

// TestCodec checks that stored items decode to themselves, that their JSON
// written from the stored form is their JSON, and that the stored size is
// their size.
func TestCodec(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		it := item{}
		for range r.IntN(6) {
			it[randomString(r)+"a"] = randomValue(r, 3)
		}
		raw := encodeItem(it)
		back, err := decodeItem(raw)
		if err != nil || !equal(mapOf(back), mapOf(it)) {
			t.Fatalf("%v decodes as %v, %v", it, back, err)
		}
		if n, err := storedSize(raw); err != nil || n != it.size() {
			t.Fatalf("stored size %d, %v; want %d", n, err, it.size())
		}
		js, err := appendStoredJSON(nil, raw)
		if err != nil {
			t.Fatal(err)
		}
		var parsed item
		if err := parsed.UnmarshalJSON(js); err != nil || !equal(mapOf(parsed), mapOf(it)) {
			t.Fatalf("JSON %s of %v reads as %v, %v", js, it, parsed, err)
		}
		if _, err := decodeItem(raw[:len(raw)/2]); len(raw) > 3 && err == nil {
			t.Fatalf("half of %x decodes", raw)
		}
	}
}

func str(s string) value       { return value{kind: kindS, s: s} }
func boolean(b bool) value     { return value{kind: kindBOOL, b: b} }
func listOf(vs ...value) value { return value{kind: kindL, list: vs} }
func mapOf(m map[string]value) value {
	if m == nil {
		m = map[string]value{}
	}
	return value{kind: kindM, m: m}
}
