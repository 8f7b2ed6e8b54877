package embedded

import (
	"math"
	"slices"
	"strconv"
)

// Consumed capacity, as DynamoDB bills it and reports it when
// ReturnConsumedCapacity asks (TOTAL: per table; INDEXES: with the table
// and each index apart).
//
//   - Reads bill 4 KB units of what they read, rounded up: GetItem per
//     item (one unit when there is none), Query and Scan the sum of the
//     items they went through before any filter, BatchGetItem each item
//     apart. Eventually consistent reads bill half.
//   - Writes bill 1 KB units of the larger of the item before and after,
//     at least one. Each index whose entry changes bills its entry's
//     size: a new entry its new size, a removed one its old size, a moved
//     one both, a changed one the larger of its two sizes; an entry that
//     stays as it was bills nothing.
//   - Transactions bill twice that; a ConditionCheck as much as a write
//     of its item; TransactGetItems twice a consistent read.
//
// Where DynamoDB Local bills otherwise than this, the differential suite
// shows it and the package documentation lists it.

// consumed is the capacity one request consumed on one table.
type consumed struct {
	table   string
	total   float64
	ofTable float64
	global  map[string]float64
	local   map[string]float64
}

// readUnits returns the units of reading size bytes.
func readUnits(size int, consistent bool) float64 {
	u := math.Ceil(float64(size) / 4096)
	if !consistent {
		u /= 2
	}
	return u
}

// writeUnits returns the units of writing an item of size bytes.
func writeUnits(size int) float64 {
	return max(1, math.Ceil(float64(size)/1024))
}

// addTable adds units billed to the table itself.
func (c *consumed) addTable(u float64) {
	c.ofTable += u
	c.total += u
}

// addIndex adds units billed to an index.
func (c *consumed) addIndex(ix *indexDef, u float64) {
	m := &c.global
	if ix.Local {
		m = &c.local
	}
	if *m == nil {
		*m = map[string]float64{}
	}
	(*m)[ix.Name] += u
	c.total += u
}

// addWrite adds the units of changing an item from old to new (either may
// be nil), with its index entries, times factor (2 in transactions).
func (c *consumed) addWrite(def *tableDef, old, new item, factor float64) {
	size := 0
	if old != nil {
		size = old.size()
	}
	if new != nil {
		size = max(size, new.size())
	}
	c.addTable(factor * writeUnits(size))
	for i := range def.Indexes {
		ix := &def.Indexes[i]
		oldIn := old != nil && ix.inIndex(old)
		newIn := new != nil && ix.inIndex(new)
		var oldEntry, newEntry item
		if oldIn {
			oldEntry = ix.project(def, old)
		}
		if newIn {
			newEntry = ix.project(def, new)
		}
		u := 0.0
		switch {
		case oldIn && newIn && sameIndexKey(ix, old, new):
			if !equal(value{kind: kindM, m: oldEntry}, value{kind: kindM, m: newEntry}) {
				u = writeUnits(max(oldEntry.size(), newEntry.size()))
			}
		default:
			if oldIn {
				u += writeUnits(oldEntry.size())
			}
			if newIn {
				u += writeUnits(newEntry.size())
			}
		}
		if u > 0 {
			c.addIndex(ix, factor*u)
		}
	}
}

// sameIndexKey reports whether a and b have the same key in the index.
func sameIndexKey(ix *indexDef, a, b item) bool {
	for _, k := range ix.keyAttrs() {
		if !equal(a[k.Name], b[k.Name]) {
			return false
		}
	}
	return true
}

// project returns the attributes of it that the index holds.
func (ix *indexDef) project(def *tableDef, it item) item {
	if ix.Projection == "ALL" {
		return it
	}
	out := item{}
	keep := func(name string) {
		if v, ok := it[name]; ok {
			out[name] = v
		}
	}
	for _, k := range def.keyAttrs() {
		keep(k.Name)
	}
	for _, k := range ix.keyAttrs() {
		keep(k.Name)
	}
	for _, n := range ix.NonKey {
		keep(n)
	}
	return out
}

// appendCapacity appends the JSON of c as ReturnConsumedCapacity mode asks.
func (c *consumed) appendJSON(b []byte, mode string) []byte {
	b = append(b, `{"TableName":`...)
	b = appendString(b, c.table)
	b = append(b, `,"CapacityUnits":`...)
	b = appendUnits(b, c.total)
	if mode == "INDEXES" {
		b = append(b, `,"Table":{"CapacityUnits":`...)
		b = appendUnits(b, c.ofTable)
		b = append(b, '}')
		for _, part := range []struct {
			name string
			m    map[string]float64
		}{{"GlobalSecondaryIndexes", c.global}, {"LocalSecondaryIndexes", c.local}} {
			if len(part.m) == 0 {
				continue
			}
			b = append(b, `,"`...)
			b = append(b, part.name...)
			b = append(b, `":{`...)
			names := make([]string, 0, len(part.m))
			for n := range part.m {
				names = append(names, n)
			}
			slices.Sort(names)
			for i, n := range names {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendString(b, n)
				b = append(b, `:{"CapacityUnits":`...)
				b = appendUnits(b, part.m[n])
				b = append(b, '}')
			}
			b = append(b, '}')
		}
	}
	return append(b, '}')
}

// appendUnits writes units as DynamoDB does: with a decimal point.
func appendUnits(b []byte, u float64) []byte {
	b = strconv.AppendFloat(b, u, 'f', -1, 64)
	if u == math.Trunc(u) {
		b = append(b, ".0"...)
	}
	return b
}

// wantsCapacity reports whether ReturnConsumedCapacity asks for it.
func wantsCapacity(mode string) bool { return mode == "TOTAL" || mode == "INDEXES" }

// capacities collects the capacity of a request over several tables, in
// the order they were first used.
type capacities struct {
	order []*consumed
}

func (cs *capacities) of(table string) *consumed {
	for _, c := range cs.order {
		if c.table == table {
			return c
		}
	}
	c := &consumed{table: table}
	cs.order = append(cs.order, c)
	return c
}

// appendJSON appends the list of capacities.
func (cs *capacities) appendJSON(b []byte, mode string) []byte {
	b = append(b, '[')
	for i, c := range cs.order {
		if i > 0 {
			b = append(b, ',')
		}
		b = c.appendJSON(b, mode)
	}
	return append(b, ']')
}
