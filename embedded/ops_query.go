package embedded

import (
	"bytes"
	"context"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// Query and Scan: range scans of the table's or an index's B+tree in one
// bbolt read transaction, which never waits for a writer.
//
// Invariants of a page, as DynamoDB makes them:
//   - it holds the items in key order (Query: sort key order, descending
//     with ScanIndexForward false; Scan: storage order) from just after
//     ExclusiveStartKey;
//   - it ends after Limit items were read, or after the item that brought
//     what was read to 1 MB, and then LastEvaluatedKey is the key of the
//     last item read (even when no item follows), with the index's key
//     attributes for a read of an index; it ends at the end of the range
//     otherwise, without LastEvaluatedKey;
//   - the filter decides which items read are returned, never how many
//     are read: Count ≤ ScannedCount, and capacity bills all read.

// maxPageBytes is the most a page reads before it ends.
const maxPageBytes = 1 << 20

type queryInput struct {
	TableName                 string            `json:"TableName"`
	IndexName                 *string           `json:"IndexName"`
	KeyConditionExpression    *string           `json:"KeyConditionExpression"`
	FilterExpression          *string           `json:"FilterExpression"`
	ProjectionExpression      *string           `json:"ProjectionExpression"`
	ExpressionAttributeNames  map[string]string `json:"ExpressionAttributeNames"`
	ExpressionAttributeValues exprValues        `json:"ExpressionAttributeValues"`
	ScanIndexForward          *bool             `json:"ScanIndexForward"`
	Limit                     *int              `json:"Limit"`
	ExclusiveStartKey         item              `json:"ExclusiveStartKey"`
	ConsistentRead            bool              `json:"ConsistentRead"`
	Select                    string            `json:"Select"`
	ReturnConsumedCapacity    string            `json:"ReturnConsumedCapacity"`
	Segment                   *int              `json:"Segment"`
	TotalSegments             *int              `json:"TotalSegments"`
	legacy
}

// readPlan is a checked Query or Scan.
type readPlan struct {
	def     *tableDef
	ix      *indexDef // nil for the table
	keys    []keyAttr // the key attributes of what is read
	from    []byte    // first key of the range
	to      []byte    // end of the range (exclusive), nil for none
	start   []byte    // ExclusiveStartKey's storage key, or nil
	forward bool
	limit   int
	filter  *cond
	proj    *projection
	count   bool // Select COUNT
	consist bool
	mode    string
	keyCond *keyRange // a Query's key condition
}

// page is the answer of a Query or Scan.
type page struct {
	// items is the start of the answer, `{"Items":[` and the items' JSON,
	// comma separated (empty for Select COUNT): answer ends it in place,
	// so the items, most of the answer, are not copied.
	items    []byte
	count    int
	scanned  int
	last     item
	noItems  bool
	capacity *consumed
	mode     string
}

const itemsStart = `{"Items":[`

// answer returns the page's JSON, ended on the buffer of its items.
func (p *page) answer() []byte {
	b := p.items
	if p.noItems {
		b = append(b, '{')
	} else {
		b = append(b, "],"...)
	}
	b = append(b, `"Count":`...)
	b = strconv.AppendInt(b, int64(p.count), 10)
	b = append(b, `,"ScannedCount":`...)
	b = strconv.AppendInt(b, int64(p.scanned), 10)
	if p.last != nil {
		b = append(b, `,"LastEvaluatedKey":`...)
		b = appendItem(b, p.last)
	}
	if wantsCapacity(p.mode) {
		b = append(b, `,"ConsumedCapacity":`...)
		b = p.capacity.appendJSON(b, p.mode)
	}
	return append(b, '}')
}

// planRead checks what Query and Scan share: the index, Select, the
// projection, Limit and consistency.
func (s *store) planRead(in *queryInput, e *expressions, isQuery bool) (*readPlan, error) {
	pl := &readPlan{forward: true, consist: in.ConsistentRead, mode: in.ReturnConsumedCapacity}
	if in.Limit != nil {
		if *in.Limit < 1 {
			return nil, validation("Limit must be greater than or equal to 1")
		}
		pl.limit = *in.Limit
	}
	if in.ScanIndexForward != nil {
		pl.forward = *in.ScanIndexForward
	}
	what := "FilterExpression"
	filter, err := e.condition(what, in.FilterExpression)
	if err != nil {
		return nil, err
	}
	pl.filter = filter
	proj, _, err := e.projection(in.ProjectionExpression)
	if err != nil {
		return nil, err
	}
	pl.proj = proj
	def, err := s.tableOf(in.TableName)
	if err != nil {
		return nil, err
	}
	pl.def, pl.keys = def, def.keyAttrs()
	if in.IndexName != nil {
		pl.ix = def.index(*in.IndexName)
		if pl.ix == nil {
			return nil, validation("The table does not have the specified index: %s", *in.IndexName)
		}
		pl.keys = pl.ix.keyAttrs()
		if in.ConsistentRead && !pl.ix.Local {
			return nil, validation("Consistent reads are not supported on global secondary indexes")
		}
	}
	switch in.Select {
	case "", "ALL_ATTRIBUTES":
		if in.Select != "" && in.ProjectionExpression != nil {
			return nil, validation("Cannot specify the ProjectionExpression when choosing to get ALL_ATTRIBUTES")
		}
	case "ALL_PROJECTED_ATTRIBUTES":
		if pl.ix == nil {
			return nil, validation("ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName")
		}
	case "SPECIFIC_ATTRIBUTES":
		if in.ProjectionExpression == nil {
			return nil, validation("Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES")
		}
	case "COUNT":
		if in.ProjectionExpression != nil {
			return nil, validation("Cannot specify the ProjectionExpression when choosing to get COUNT")
		}
		pl.count = true
	default:
		return nil, validation("1 validation error detected: Value '%s' at 'select' failed to satisfy constraint: Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]", in.Select)
	}
	if isQuery && filter != nil {
		if err := checkFilterKeys(filter, pl.keys); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

// checkFilterKeys refuses a Query filter on the key attributes of what is
// queried: the key condition is the place for them.
func checkFilterKeys(c *cond, keys []keyAttr) error {
	for _, k := range c.kids {
		if err := checkFilterKeys(k, keys); err != nil {
			return err
		}
	}
	var check func(o *operand) error
	check = func(o *operand) error {
		if o.kind == opPath {
			for _, k := range keys {
				if o.path[0].name != k.Name {
					continue
				}
				if len(o.path) > 1 {
					return validation("Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: %s", k.Name)
				}
				return validation("Filter Expression can only contain non-primary key attributes: Primary key attribute: %s", k.Name)
			}
		}
		for _, a := range o.args {
			if err := check(a); err != nil {
				return err
			}
		}
		return nil
	}
	for _, a := range c.args {
		if err := check(a); err != nil {
			return err
		}
	}
	return nil
}

func opQuery(s *store, _ context.Context, body []byte) (any, error) {
	var in queryInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	if in.KeyConditionExpression == nil {
		return nil, validation("Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.")
	}
	e, err := newExpressions(in.ExpressionAttributeNames, in.ExpressionAttributeValues, map[string]*string{
		"KeyConditionExpression": in.KeyConditionExpression, "FilterExpression": in.FilterExpression, "ProjectionExpression": in.ProjectionExpression,
	}, "KeyConditionExpression", "FilterExpression", "ProjectionExpression")
	if err != nil {
		return nil, err
	}
	kc, err := e.condition("KeyConditionExpression", in.KeyConditionExpression)
	if err != nil {
		return nil, err
	}
	pl, err := s.planRead(&in, e, true)
	if err != nil {
		return nil, err
	}
	if err := e.done(); err != nil {
		return nil, err
	}
	kr, err := keyConditions(kc, pl.keys)
	if err != nil {
		return nil, err
	}
	pl.from, pl.to = kr.bounds()
	pl.keyCond = kr
	if in.ExclusiveStartKey != nil {
		if err := pl.startAt(in.ExclusiveStartKey, kr); err != nil {
			return nil, err
		}
	}
	return s.read(pl)
}

func opScan(s *store, _ context.Context, body []byte) (any, error) {
	var in queryInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	e, err := newExpressions(in.ExpressionAttributeNames, in.ExpressionAttributeValues, map[string]*string{
		"FilterExpression": in.FilterExpression, "ProjectionExpression": in.ProjectionExpression,
	}, "FilterExpression", "ProjectionExpression")
	if err != nil {
		return nil, err
	}
	pl, err := s.planRead(&in, e, false)
	if err != nil {
		return nil, err
	}
	if err := e.done(); err != nil {
		return nil, err
	}
	switch {
	case in.Segment != nil && in.TotalSegments == nil:
		return nil, validation("If segment is specified, total segment must also be specified")
	case in.TotalSegments != nil && in.Segment == nil:
		return nil, validation("If total segments is specified, a particular segment must also be specified for this request")
	case in.TotalSegments != nil && (*in.TotalSegments < 1 || *in.TotalSegments > 1000000):
		return nil, validation("1 validation error detected: Value '%d' at 'totalSegments' failed to satisfy constraint: Member must have value less than or equal to 1000000", *in.TotalSegments)
	case in.Segment != nil && (*in.Segment < 0 || *in.Segment >= *in.TotalSegments):
		return nil, validation("1 validation error detected: Value '%d' at 'segment' failed to satisfy constraint: Member must have value less than or equal to %d", *in.Segment, *in.TotalSegments-1)
	}
	if in.Segment != nil {
		pl.from, pl.to = segmentBounds(*in.Segment, *in.TotalSegments)
	}
	if in.ExclusiveStartKey != nil {
		key, err := pl.startKey(in.ExclusiveStartKey)
		if err != nil {
			return nil, err
		}
		if bytes.Compare(key, pl.from) < 0 || pl.to != nil && bytes.Compare(key, pl.to) >= 0 {
			return nil, validation("Exclusive start key must lie within the segment")
		}
		pl.start = key
	}
	return s.read(pl)
}

// startKey returns the storage key of an ExclusiveStartKey, checked
// against the keys of the table and, for an index, the index.
func (pl *readPlan) startKey(esk item) ([]byte, error) {
	want := pl.def.keyAttrs()
	if pl.ix != nil {
		for _, k := range pl.ix.keyAttrs() {
			if !pl.def.isKey(k.Name) {
				want = append(want, k)
			}
		}
	}
	if len(esk) != len(want) {
		if pl.ix != nil {
			return nil, validation("The provided starting key is invalid")
		}
		return nil, validation("Exclusive Start Key must have same size as table's key schema")
	}
	for _, k := range want {
		v, ok := esk[k.Name]
		if !ok {
			return nil, validation("The provided starting key is invalid")
		}
		if v.kind != k.Kind {
			return nil, validation("Type mismatch for attribute to update")
		}
	}
	key := itemKey(nil, pl.def.keyAttrs(), esk)
	if pl.ix == nil {
		return key, nil
	}
	return append(itemKey(nil, pl.ix.keyAttrs(), esk), key...), nil
}

// startAt sets where a Query starts, after checking that the
// ExclusiveStartKey lies in the range of its key condition.
func (pl *readPlan) startAt(esk item, kr *keyRange) error {
	key, err := pl.startKey(esk)
	if err != nil {
		return err
	}
	if !equal(esk[pl.keys[0].Name], kr.hash) || len(pl.keys) > 1 && !kr.matches(esk[pl.keys[1].Name]) {
		return validation("The provided starting key does not match the range key predicate")
	}
	pl.start = key
	return nil
}

// read runs a checked Query or Scan.
func (s *store) read(pl *readPlan) (*page, error) {
	out := &page{mode: pl.mode, noItems: pl.count, capacity: &consumed{table: pl.def.Name}, items: answerBuffer()}
	if !pl.count {
		out.items = append(out.items, itemsStart...)
	}
	bytesRead := 0
	err := s.db.View(func(tx *bolt.Tx) error {
		itemsB := items(tx, pl.def.Name)
		if itemsB == nil {
			return errResourceNotFound()
		}
		src := itemsB
		if pl.ix != nil {
			if src = indexBucket(tx, pl.def.Name, pl.ix.Name); src == nil {
				return errResourceNotFound()
			}
		}
		c := src.Cursor()
		k, v := pl.first(c)
		for ; k != nil; k, v = pl.next(c) {
			raw := v
			if pl.ix != nil {
				if raw = itemsB.Get(v); raw == nil {
					continue
				}
			}
			size, err := storedSize(raw)
			if err != nil {
				return err
			}
			bytesRead += size
			out.scanned++
			stop := pl.limit > 0 && out.scanned == pl.limit || bytesRead >= maxPageBytes
			if err := pl.emit(out, raw, stop); err != nil {
				return err
			}
			if stop {
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	u := readUnits(bytesRead, pl.consist)
	if pl.ix != nil {
		out.capacity.addIndex(pl.ix, u)
	} else {
		out.capacity.addTable(u)
	}
	return out, nil
}

// emit adds one item read to the page: to its items when it passes the
// filter, and as its last key when the page ends with it.
func (pl *readPlan) emit(out *page, raw []byte, last bool) error {
	var it item
	decoded := func() (item, error) {
		if it == nil {
			var err error
			it, err = decodeItem(raw)
			return it, err
		}
		return it, nil
	}
	if last {
		it, err := decoded()
		if err != nil {
			return err
		}
		if pl.endsAt(it) {
			last = false
		} else {
			out.last = pl.def.keyOf(it)
		}
	}
	if last {
		it, _ := decoded()
		if pl.ix != nil {
			for _, k := range pl.ix.keyAttrs() {
				out.last[k.Name] = it[k.Name]
			}
		}
	}
	if pl.filter != nil {
		it, err := decoded()
		if err != nil {
			return err
		}
		if !evalCond(it, pl.filter) {
			return nil
		}
	}
	out.count++
	if pl.count {
		return nil
	}
	if out.count > 1 {
		out.items = append(out.items, ',')
	}
	if pl.proj == nil && (pl.ix == nil || pl.ix.Projection == "ALL") {
		var err error
		out.items, err = appendStoredJSON(out.items, raw)
		return err
	}
	it, err := decoded()
	if err != nil {
		return err
	}
	if pl.ix != nil {
		it = pl.ix.project(pl.def, it)
	}
	if pl.proj != nil {
		it = pl.proj.apply(it)
	}
	out.items = appendItem(out.items, it)
	return nil
}

// endsAt reports whether it is the last item the Query's key condition
// can hold: its sort key is the inclusive bound the Query reads towards.
// DynamoDB Local ends such a page of a table (not of an index) without
// LastEvaluatedKey, though the Limit was reached; after any other item it
// returns one.
func (pl *readPlan) endsAt(it item) bool {
	kr := pl.keyCond
	if kr == nil || pl.ix != nil {
		return false
	}
	if len(pl.keys) < 2 {
		return true // the key condition names the whole key
	}
	sk := it[pl.keys[1].Name]
	bound := value{}
	switch {
	case pl.forward && kr.op == "<=":
		bound = kr.lo
	case pl.forward && kr.op == "BETWEEN":
		bound = kr.hi
	case !pl.forward && (kr.op == ">=" || kr.op == "BETWEEN"):
		bound = kr.lo
	default:
		return false
	}
	return equal(sk, bound)
}

// first positions the cursor on the first entry of the range (after the
// start key, if any), in the plan's direction.
func (pl *readPlan) first(c *bolt.Cursor) ([]byte, []byte) {
	var k, v []byte
	switch {
	case pl.forward && pl.start != nil:
		k, v = c.Seek(pl.start)
		if k != nil && bytes.Equal(k, pl.start) {
			k, v = c.Next()
		}
	case pl.forward:
		k, v = c.Seek(pl.from)
	default:
		end := pl.to
		if pl.start != nil {
			end = pl.start
		}
		if end == nil {
			k, v = c.Last()
		} else if k, _ = c.Seek(end); k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	}
	return pl.inRange(k, v)
}

func (pl *readPlan) next(c *bolt.Cursor) ([]byte, []byte) {
	if pl.forward {
		return pl.inRange(c.Next())
	}
	return pl.inRange(c.Prev())
}

// inRange returns k and v if k lies in the plan's range, else nils.
func (pl *readPlan) inRange(k, v []byte) ([]byte, []byte) {
	if k == nil || bytes.Compare(k, pl.from) < 0 || pl.to != nil && bytes.Compare(k, pl.to) >= 0 {
		return nil, nil
	}
	return k, v
}
