package embedded

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// The binary form of items as stored in the data file.
//
//	item   = version(1) size(uvarint) count(uvarint) { name value }
//	name   = len(uvarint) bytes
//	value  = kind(1) body
//	body   = S, N, B: len bytes | BOOL: 0 or 1 | NULL: nothing
//	       | SS, NS, BS: count { len bytes } | L: count { value }
//	       | M: count { name value }
//
// Invariants: an encoded item decodes to an equal item; size is the item's
// DynamoDB size (value.go), kept so that reads bill and limit pages without
// decoding; numbers are stored in canonical text. The version byte lets a
// later format be told apart; decoding any other version is an error, never
// a guess.

const codecVersion = 1

var errCorrupt = errors.New("embedded: stored item is corrupt")

// encodeItem returns the stored form of it.
func encodeItem(it item) []byte {
	b := make([]byte, 0, 64)
	b = append(b, codecVersion)
	b = binary.AppendUvarint(b, uint64(it.size()))
	b = binary.AppendUvarint(b, uint64(len(it)))
	for k, v := range it {
		b = appendBytes(b, k)
		b = appendStored(b, v)
	}
	return b
}

func appendBytes(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStored(b []byte, v value) []byte {
	b = append(b, byte(v.kind))
	switch v.kind {
	case kindS, kindN, kindB:
		b = appendBytes(b, v.s)
	case kindBOOL:
		if v.b {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	case kindSS, kindNS, kindBS:
		b = binary.AppendUvarint(b, uint64(len(v.set)))
		for _, e := range v.set {
			b = appendBytes(b, e)
		}
	case kindL:
		b = binary.AppendUvarint(b, uint64(len(v.list)))
		for _, e := range v.list {
			b = appendStored(b, e)
		}
	case kindM:
		b = binary.AppendUvarint(b, uint64(len(v.m)))
		for k, e := range v.m {
			b = appendBytes(b, k)
			b = appendStored(b, e)
		}
	}
	return b
}

// storedSize returns the DynamoDB size of a stored item without decoding
// it.
func storedSize(b []byte) (int, error) {
	if len(b) == 0 || b[0] != codecVersion {
		return 0, errCorrupt
	}
	n, w := binary.Uvarint(b[1:])
	if w <= 0 {
		return 0, errCorrupt
	}
	return int(n), nil
}

// decoder reads a stored item. It copies everything it returns, so the
// item outlives the transaction the bytes came from.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() int {
	n, w := binary.Uvarint(d.b)
	if w <= 0 || n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	d.b = d.b[w:]
	return int(n)
}

// skipSize passes over the item's size, which unlike every other number
// of the format bounds nothing that follows.
func (d *decoder) skipSize() {
	if _, w := binary.Uvarint(d.b); w > 0 {
		d.b = d.b[w:]
		return
	}
	d.fail()
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
	d.b = nil
}

func (d *decoder) bytes() string {
	n := d.uvarint()
	if n > len(d.b) {
		d.fail()
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

// decodeItem returns the item stored as b.
func decodeItem(b []byte) (item, error) {
	if len(b) == 0 || b[0] != codecVersion {
		return nil, errCorrupt
	}
	d := &decoder{b: b[1:]}
	d.skipSize()
	n := d.uvarint()
	it := make(item, n)
	for i := 0; i < n && d.err == nil; i++ {
		k := d.bytes()
		it[k] = d.value()
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errCorrupt
	}
	return it, nil
}

func (d *decoder) value() value {
	v := value{kind: kind(d.byte())}
	switch v.kind {
	case kindS, kindN, kindB:
		v.s = d.bytes()
	case kindBOOL:
		v.b = d.byte() == 1
	case kindNULL:
	case kindSS, kindNS, kindBS:
		n := d.uvarint()
		v.set = make([]string, 0, min(n, 1024))
		for i := 0; i < n && d.err == nil; i++ {
			v.set = append(v.set, d.bytes())
		}
	case kindL:
		n := d.uvarint()
		v.list = make([]value, 0, min(n, 1024))
		for i := 0; i < n && d.err == nil; i++ {
			v.list = append(v.list, d.value())
		}
	case kindM:
		n := d.uvarint()
		v.m = make(map[string]value, min(n, 1024))
		for i := 0; i < n && d.err == nil; i++ {
			k := d.bytes()
			v.m[k] = d.value()
		}
	default:
		d.fail()
	}
	return v
}

// appendStoredJSON appends the JSON of a stored item without building its
// values: the path of reads that return whole items.
func appendStoredJSON(dst []byte, b []byte) ([]byte, error) {
	if len(b) == 0 || b[0] != codecVersion {
		return dst, errCorrupt
	}
	d := &decoder{b: b[1:]}
	d.skipSize()
	dst = d.jsonMembers(dst, d.uvarint())
	if d.err != nil || len(d.b) != 0 {
		return dst, errCorrupt
	}
	return dst, nil
}

// rawBytes returns the next length-prefixed bytes without copying them.
func (d *decoder) rawBytes() []byte {
	n := d.uvarint()
	if n > len(d.b) {
		d.fail()
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) jsonMembers(dst []byte, n int) []byte {
	dst = append(dst, '{')
	for i := 0; i < n && d.err == nil; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendStringBytes(dst, d.rawBytes())
		dst = append(dst, ':')
		dst = d.jsonValue(dst)
	}
	return append(dst, '}')
}

func (d *decoder) jsonValue(dst []byte) []byte {
	k := kind(d.byte())
	if k == 0 || int(k) >= len(kindNames) {
		d.fail()
		return dst
	}
	dst = append(dst, `{"`...)
	dst = append(dst, kindNames[k]...)
	dst = append(dst, `":`...)
	switch k {
	case kindS, kindN:
		dst = appendStringBytes(dst, d.rawBytes())
	case kindB:
		dst = appendBase64(dst, string(d.rawBytes()))
	case kindBOOL:
		dst = strconv.AppendBool(dst, d.byte() == 1)
	case kindNULL:
		dst = append(dst, "true"...)
	case kindSS, kindNS, kindBS:
		n := d.uvarint()
		dst = append(dst, '[')
		for i := 0; i < n && d.err == nil; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			if k == kindBS {
				dst = appendBase64(dst, string(d.rawBytes()))
			} else {
				dst = appendStringBytes(dst, d.rawBytes())
			}
		}
		dst = append(dst, ']')
	case kindL:
		n := d.uvarint()
		dst = append(dst, '[')
		for i := 0; i < n && d.err == nil; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = d.jsonValue(dst)
		}
		dst = append(dst, ']')
	case kindM:
		dst = d.jsonMembers(dst, d.uvarint())
	}
	return append(dst, '}')
}

// appendStringBytes is appendString for bytes. ASCII text that needs no
// escape, most of what items hold, is copied in runs.
func appendStringBytes(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		if plainASCII[s[i]] {
			continue
		}
		// Something to escape, or a multi-byte character: the general
		// path takes the rest.
		dst = append(dst, s[:i]...)
		dst = appendEscaped(dst, string(s[i:]))
		return append(dst, '"')
	}
	dst = append(dst, s...)
	return append(dst, '"')
}

// plainASCII marks the bytes a JSON string holds as they are.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
