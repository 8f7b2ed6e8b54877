package embedded

import (
	"encoding/binary"
	"hash/fnv"
)

// The order-preserving encoding of keys, so that a Query is a range scan of
// a B+tree and a Scan segment a contiguous range.
//
// A table item is stored under
//
//	hash(pk) | enc(pk) | enc(sk)
//
// and an index entry under
//
//	hash(ipk) | enc(ipk) | enc(isk) | table key
//
// where hash is 4 bytes (big-endian FNV-1a of enc(pk)) and enc is:
//   - S and B: the bytes, 0x00 escaped as 0x00 0xFF, ended by 0x00 0x01;
//   - N: number.appendKey (class byte, exponent, digits, terminator).
//
// Invariants:
//   - for two values of the same type, enc(a) < enc(b) bytewise exactly
//     when a < b in DynamoDB's order (UTF-8 bytes, unsigned bytes, numeric),
//     and no encoding is a prefix of another; so all items of a partition
//     are contiguous, in sort key order, and a partition's prefix
//     hash(pk)|enc(pk) is shared by no other partition;
//   - the partitions themselves are ordered by their hash: a Scan sees them
//     in an order unrelated to their keys, as in DynamoDB, and segment i of
//     n is the hash range [i·2³²/n, (i+1)·2³²/n);
//   - an index entry's key ends with the table key of its item, so entries
//     with equal index keys are ordered by table key and never collide.

// appendKeyPart appends the encoding of a key value (S, N or B).
func appendKeyPart(dst []byte, v value) []byte {
	if v.kind == kindN {
		return v.number().appendKey(dst)
	}
	for i := 0; i < len(v.s); i++ {
		c := v.s[i]
		dst = append(dst, c)
		if c == 0 {
			dst = append(dst, 0xFF)
		}
	}
	return append(dst, 0x00, 0x01)
}

// partitionHash returns the hash that orders partitions.
func partitionHash(encPK []byte) uint32 {
	h := fnv.New32a()
	h.Write(encPK)
	return h.Sum32()
}

// appendPartition appends hash(pk) | enc(pk).
func appendPartition(dst []byte, pk value) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = appendKeyPart(dst, pk)
	binary.BigEndian.PutUint32(dst[start:], partitionHash(dst[start+4:]))
	return dst
}

// itemKey returns the storage key of the item (or key) it in a table or
// index with the key attributes attrs. The attributes must be present.
func itemKey(dst []byte, attrs []keyAttr, it item) []byte {
	dst = appendPartition(dst, it[attrs[0].Name])
	if len(attrs) > 1 {
		dst = appendKeyPart(dst, it[attrs[1].Name])
	}
	return dst
}

// segmentBounds returns the key range [from, to) of scan segment i of n;
// to is nil for the last.
func segmentBounds(i, n int) (from, to []byte) {
	lo := uint64(i) << 32 / uint64(n)
	if uint64(i)<<32%uint64(n) != 0 {
		lo++
	}
	from = binary.BigEndian.AppendUint32(nil, uint32(lo))
	if i == n-1 {
		return from, nil
	}
	hi := uint64(i+1) << 32 / uint64(n)
	if uint64(i+1)<<32%uint64(n) != 0 {
		hi++
	}
	return from, binary.BigEndian.AppendUint32(nil, uint32(hi))
}

// Messages of keys DynamoDB refuses.
const (
	msgKeyCount    = "The number of conditions on the keys is invalid"
	msgKeyMissing  = "One of the required keys was not given a value"
	msgKeyType     = "One or more parameter values were invalid: Type mismatch for key"
	msgKeyTooLarge = "Hash primary key values must be under 2048 bytes, and range primary key values must be under 1024 bytes"
)

// checkKeyValue returns the error DynamoDB gives for a value of a table key
// attribute a that it refuses: of another type, empty, or too long.
func checkKeyValue(a keyAttr, v value, isHash bool) error {
	if v.kind != a.Kind {
		return validation(msgKeyType)
	}
	if v.kind == kindS && v.s == "" {
		return validation("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: %s", a.Name)
	}
	if v.kind == kindB && v.s == "" {
		return validation("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty binary value. Key: %s", a.Name)
	}
	if isHash && len(v.s) > 2048 || !isHash && len(v.s) > 1024 {
		return validation(msgKeyTooLarge)
	}
	return nil
}

// checkKey returns the error DynamoDB gives for the Key of a request on
// the table that is not exactly its key.
func (d *tableDef) checkKey(key item) error {
	attrs := d.keyAttrs()
	if len(key) != len(attrs) {
		return validation(msgKeyCount)
	}
	for i, a := range attrs {
		v, ok := key[a.Name]
		if !ok {
			return validation(msgKeyMissing)
		}
		if err := checkKeyValue(a, v, i == 0); err != nil {
			return err
		}
	}
	return nil
}

// keyOf returns the key attributes of it.
func (d *tableDef) keyOf(it item) item {
	out := item{d.Hash.Name: it[d.Hash.Name]}
	if d.Range != nil {
		out[d.Range.Name] = it[d.Range.Name]
	}
	return out
}

// checkItem returns the error DynamoDB gives for an item the table cannot
// hold: a key attribute missing or refused, an index key of the wrong type
// or empty, or over 400 KB. (DynamoDB checks size elsewhere for updates,
// with another message: see ops.)
func (d *tableDef) checkItem(it item) error {
	for i, a := range d.keyAttrs() {
		v, ok := it[a.Name]
		if !ok {
			return validation(msgKeyMissing)
		}
		if err := checkKeyValue(a, v, i == 0); err != nil {
			return err
		}
	}
	return d.checkIndexKeys(it)
}

// checkIndexKeys returns the error DynamoDB gives for an item whose index
// key attributes have the wrong type or are empty.
func (d *tableDef) checkIndexKeys(it item) error {
	for _, ix := range d.Indexes {
		for _, a := range ix.keyAttrs() {
			v, ok := it[a.Name]
			if !ok || d.isKey(a.Name) {
				continue
			}
			if v.kind != a.Kind {
				return validation("One or more parameter values were invalid: Type mismatch for Index Key")
			}
			if (v.kind == kindS || v.kind == kindB) && v.s == "" {
				return validation("One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty string value. IndexName: %s, IndexKey: %s", ix.Name, a.Name)
			}
		}
	}
	return nil
}

// inIndex reports whether it has an entry in the index: every key
// attribute of the index present.
func (ix *indexDef) inIndex(it item) bool {
	for _, a := range ix.keyAttrs() {
		if v, ok := it[a.Name]; !ok || v.kind != a.Kind {
			return false
		}
	}
	return true
}
