package dynamo

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// The answers of GetItem, Query and Scan are most of what a page costs the
// client: the SDK's generic deserializer walks every attribute of every
// item through schema lookups and closures, and grows each item's map
// from empty. readsProtocol decodes these three answers itself, in one
// pass over the body, into the same output the SDK builds.
//
// Invariant: a call returns exactly what the SDK's own protocol returns for
// the same answer. The decoder takes a strict subset of the JSON the SDK
// takes (no nulls, no binary values, no member it does not know, no
// member twice, no number or escape the SDK might read differently) and
// hands anything else, and every error answer, to the SDK's protocol.
// decode_test.go compares the two on generated and fuzzed answers.

// readsProtocol is the client's protocol with the reads' answers decoded
// by decodeRead.
type readsProtocol struct {
	smithyhttp.ClientProtocol
}

// DeserializeResponse decodes a successful GetItem, Query or Scan answer
// into out; it leaves every other answer to the wrapped protocol.
func (p readsProtocol) DeserializeResponse(ctx context.Context, schema *smithy.OperationSchema, reg *smithy.TypeRegistry, resp *smithyhttp.Response, out smithy.Deserializable) error {
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return p.ClientProtocol.DeserializeResponse(ctx, schema, reg, resp, out)
	}
	switch out.(type) {
	case *dynamodb.GetItemOutput, *dynamodb.QueryOutput, *dynamodb.ScanOutput:
	default:
		return p.ClientProtocol.DeserializeResponse(ctx, schema, reg, resp, out)
	}
	buf := bodies.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBody {
			buf.Reset()
			bodies.Put(buf)
		}
	}()
	if resp.ContentLength > 0 && resp.ContentLength <= maxPooledBody {
		buf.Grow(int(resp.ContentLength) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return &smithy.DeserializationError{Err: err}
	}
	body := buf.Bytes()
	if len(body) == 0 || decodeRead(body, out) {
		return nil
	}
	// The body is read again; closing it still closes (and checks) the
	// original.
	resp.Body = struct {
		io.Reader
		io.Closer
	}{bytes.NewReader(body), resp.Body}
	return p.ClientProtocol.DeserializeResponse(ctx, schema, reg, resp, out)
}

// bodies holds the buffers answers are read into: decodeRead copies out
// what it keeps. A buffer that grew past maxPooledBody is let go.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 1 << 20

// decodeRead decodes body into out, a *GetItemOutput, *QueryOutput or
// *ScanOutput, and reports whether it could; out is left as it was when it
// could not.
func decodeRead(body []byte, out smithy.Deserializable) bool {
	r := &reader{b: body}
	switch o := out.(type) {
	case *dynamodb.GetItemOutput:
		var v dynamodb.GetItemOutput
		if !r.object(func(name []byte) bool {
			switch string(name) {
			case "Item":
				return v.Item == nil && r.item(&v.Item)
			case "ConsumedCapacity":
				return v.ConsumedCapacity == nil && r.capacity(&v.ConsumedCapacity)
			}
			return false
		}) || !r.end() {
			return false
		}
		*o = v
	case *dynamodb.QueryOutput:
		var v dynamodb.QueryOutput
		if !r.page(&v.Items, &v.Count, &v.ScannedCount, &v.LastEvaluatedKey, &v.ConsumedCapacity) {
			return false
		}
		*o = v
	case *dynamodb.ScanOutput:
		var v dynamodb.ScanOutput
		if !r.page(&v.Items, &v.Count, &v.ScannedCount, &v.LastEvaluatedKey, &v.ConsumedCapacity) {
			return false
		}
		*o = v
	default:
		return false
	}
	return true
}

// reader reads one answer. Its strings are copied into arena blocks, its
// string and number values come from slabs: a few allocations for a page
// instead of one per attribute.
type reader struct {
	b     []byte
	i     int
	arena []byte
	pairs []pair
	s     []types.AttributeValueMemberS
	n     []types.AttributeValueMemberN
	seen  uint8
}

type pair struct {
	k string
	v types.AttributeValue
}

const (
	arenaBlock = 4096
	slabSize   = 64
)

func (r *reader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// consume skips white space and c, and reports whether c was next.
func (r *reader) consume(c byte) bool {
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// end reports whether nothing but white space is left.
func (r *reader) end() bool {
	r.ws()
	return r.i == len(r.b)
}

// object reads an object whose member names need no unescaping, calling
// member with each name positioned at its value.
func (r *reader) object(member func(name []byte) bool) bool {
	if !r.consume('{') {
		return false
	}
	if r.consume('}') {
		return true
	}
	for {
		name, ok := r.plainString()
		if !ok || !r.consume(':') || !member(name) {
			return false
		}
		if r.consume('}') {
			return true
		}
		if !r.consume(',') {
			return false
		}
	}
}

// once reports whether bit has not been seen before in the current
// object, and marks it.
func (r *reader) once(bit uint8) bool {
	if r.seen&bit != 0 {
		return false
	}
	r.seen |= bit
	return true
}

// page reads a Query or Scan answer.
func (r *reader) page(items *[]map[string]types.AttributeValue, count, scanned *int32, last *map[string]types.AttributeValue, cc **types.ConsumedCapacity) bool {
	return r.object(func(name []byte) bool {
		switch string(name) {
		case "Items":
			return r.once(1) && r.items(items)
		case "Count":
			return r.once(2) && r.int32(count)
		case "ScannedCount":
			return r.once(4) && r.int32(scanned)
		case "LastEvaluatedKey":
			return r.once(8) && r.item(last)
		case "ConsumedCapacity":
			return r.once(16) && r.capacity(cc)
		}
		return false
	}) && r.end()
}

func (r *reader) items(dst *[]map[string]types.AttributeValue) bool {
	if !r.consume('[') {
		return false
	}
	items := make([]map[string]types.AttributeValue, 0)
	if !r.consume(']') {
		for {
			var it map[string]types.AttributeValue
			if !r.item(&it) {
				return false
			}
			items = append(items, it)
			if r.consume(']') {
				break
			}
			if !r.consume(',') {
				return false
			}
		}
	}
	*dst = items
	return true
}

// item reads a map of attribute values. Its pairs are gathered first, so
// the map is made at its size.
func (r *reader) item(dst *map[string]types.AttributeValue) bool {
	if !r.consume('{') {
		return false
	}
	start := len(r.pairs)
	if !r.consume('}') {
		for {
			k, ok := r.string()
			if !ok || !r.consume(':') {
				return false
			}
			v, ok := r.value()
			if !ok {
				return false
			}
			r.pairs = append(r.pairs, pair{k, v})
			if r.consume('}') {
				break
			}
			if !r.consume(',') {
				return false
			}
		}
	}
	m := make(map[string]types.AttributeValue, len(r.pairs)-start)
	for _, p := range r.pairs[start:] {
		m[p.k] = p.v
	}
	clear(r.pairs[start:])
	r.pairs = r.pairs[:start]
	*dst = m
	return true
}

// value reads an attribute value: an object of exactly one member.
func (r *reader) value() (types.AttributeValue, bool) {
	if !r.consume('{') {
		return nil, false
	}
	name, ok := r.plainString()
	if !ok || !r.consume(':') {
		return nil, false
	}
	var v types.AttributeValue
	switch string(name) {
	case "S":
		s, ok := r.string()
		if !ok {
			return nil, false
		}
		p := next(&r.s)
		p.Value = s
		v = p
	case "N":
		s, ok := r.string()
		if !ok {
			return nil, false
		}
		p := next(&r.n)
		p.Value = s
		v = p
	case "BOOL", "NULL":
		b, ok := r.bool()
		if !ok {
			return nil, false
		}
		if name[0] == 'B' {
			v = &types.AttributeValueMemberBOOL{Value: b}
		} else {
			v = &types.AttributeValueMemberNULL{Value: b}
		}
	case "M":
		m := &types.AttributeValueMemberM{}
		if !r.item(&m.Value) {
			return nil, false
		}
		v = m
	case "L":
		l := &types.AttributeValueMemberL{Value: make([]types.AttributeValue, 0)}
		if !r.list(func() bool {
			e, ok := r.value()
			l.Value = append(l.Value, e)
			return ok
		}) {
			return nil, false
		}
		v = l
	case "SS", "NS":
		set := make([]string, 0)
		if !r.list(func() bool {
			s, ok := r.string()
			set = append(set, s)
			return ok
		}) {
			return nil, false
		}
		if name[0] == 'S' {
			v = &types.AttributeValueMemberSS{Value: set}
		} else {
			v = &types.AttributeValueMemberNS{Value: set}
		}
	default:
		return nil, false
	}
	return v, r.consume('}')
}

// list reads an array, calling elem positioned at each element.
func (r *reader) list(elem func() bool) bool {
	if !r.consume('[') {
		return false
	}
	if r.consume(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if r.consume(']') {
			return true
		}
		if !r.consume(',') {
			return false
		}
	}
}

func (r *reader) bool() (bool, bool) {
	r.ws()
	switch {
	case bytes.HasPrefix(r.b[r.i:], []byte("true")):
		r.i += 4
		return true, true
	case bytes.HasPrefix(r.b[r.i:], []byte("false")):
		r.i += 5
		return false, true
	}
	return false, false
}

// capacity reads a ConsumedCapacity: the table's name and units, and the
// table's own share; the indexes' shares are left to the SDK.
func (r *reader) capacity(dst **types.ConsumedCapacity) bool {
	cc := &types.ConsumedCapacity{}
	if !r.object(func(name []byte) bool {
		switch string(name) {
		case "TableName":
			if cc.TableName != nil {
				return false
			}
			s, ok := r.string()
			cc.TableName = &s
			return ok
		case "Table":
			if cc.Table != nil {
				return false
			}
			cc.Table = &types.Capacity{}
			return r.object(func(name []byte) bool {
				return r.units(name, &cc.Table.CapacityUnits, &cc.Table.ReadCapacityUnits, &cc.Table.WriteCapacityUnits)
			})
		}
		return r.units(name, &cc.CapacityUnits, &cc.ReadCapacityUnits, &cc.WriteCapacityUnits)
	}) {
		return false
	}
	*dst = cc
	return true
}

// units reads the capacity member name into the one of total, read and
// write it names.
func (r *reader) units(name []byte, total, read, write **float64) bool {
	var dst **float64
	switch string(name) {
	case "CapacityUnits":
		dst = total
	case "ReadCapacityUnits":
		dst = read
	case "WriteCapacityUnits":
		dst = write
	default:
		return false
	}
	if *dst != nil {
		return false
	}
	tok, ok := r.number()
	// The SDK reads a long integer its own way; such a number is left to it.
	if !ok || len(tok) > 15 {
		return false
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return false
	}
	*dst = &f
	return true
}

func (r *reader) int32(dst *int32) bool {
	tok, ok := r.number()
	if !ok {
		return false
	}
	n, err := strconv.ParseInt(string(tok), 10, 32)
	*dst = int32(n)
	return err == nil
}

// number returns the next token if it is a JSON number.
func (r *reader) number() ([]byte, bool) {
	r.ws()
	start, b := r.i, r.b
	i := start
	digits := func() bool {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if !digits() {
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return nil, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return nil, false
		}
	}
	r.i = i
	return b[start:i], true
}

// plainString returns the bytes of a string that has no escape, uncopied.
func (r *reader) plainString() ([]byte, bool) {
	if !r.consume('"') {
		return nil, false
	}
	start := r.i
	for i := start; i < len(r.b); i++ {
		switch c := r.b[i]; {
		case c == '"':
			r.i = i + 1
			return r.b[start:i], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// string returns the next string, unescaped as encoding/json does (the
// SDK's rules), and copied out of the body.
func (r *reader) string() (string, bool) {
	r.ws()
	start := r.i
	raw, ok := r.plainString()
	if ok {
		return r.copy(raw), true
	}
	// An escape: find the end of the string, and let encoding/json read it.
	r.i = start
	if !r.consume('"') {
		return "", false
	}
	for i := r.i; i < len(r.b); i++ {
		switch c := r.b[i]; {
		case c == '\\':
			i++
		case c < 0x20:
			return "", false
		case c == '"':
			var s string
			if json.Unmarshal(r.b[start:i+1], &s) != nil {
				return "", false
			}
			r.i = i + 1
			return r.copy([]byte(s)), true
		}
	}
	return "", false
}

// copy returns b as a string in the current arena block; a long string,
// or one that does not fit, gets its own.
func (r *reader) copy(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > arenaBlock/4 {
		return string(b)
	}
	if len(b) > cap(r.arena)-len(r.arena) {
		r.arena = make([]byte, 0, arenaBlock)
	}
	off := len(r.arena)
	r.arena = append(r.arena, b...)
	return unsafe.String(&r.arena[off], len(b))
}

// next returns the next free element of slab, a new slab of slabSize
// when it is used up.
func next[T any](slab *[]T) *T {
	if len(*slab) == 0 {
		*slab = make([]T, slabSize)
	}
	p := &(*slab)[0]
	*slab = (*slab)[1:]
	return p
}
