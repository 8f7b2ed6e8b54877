package embedded

import (
	"context"

	bolt "go.etcd.io/bbolt"
)

// Operations on one item: GetItem, PutItem, UpdateItem and DeleteItem.
// Reads run in a bbolt read transaction and never wait for writers;
// writes run through the committer.

// maxItemSize is DynamoDB's limit on an item's size.
const maxItemSize = 400 * 1024

// itemOutput is the answer of an item operation: the item (as "Item" or
// "Attributes"), stored or decoded, and the capacity consumed.
type itemOutput struct {
	member   string
	raw      []byte // the item as stored, when it is returned whole
	it       item   // else the item, or nil for none
	capacity *consumed
	mode     string
}

func (o *itemOutput) appendJSON(b []byte) []byte {
	b = append(b, '{')
	sep := false
	if o.raw != nil {
		b = append(b, `"`+o.member+`":`...)
		var err error
		if b, err = appendStoredJSON(b, o.raw); err != nil {
			panic(err) // checked when the item was read
		}
		sep = true
	} else if o.it != nil {
		b = append(b, `"`+o.member+`":`...)
		b = appendItem(b, o.it)
		sep = true
	}
	if o.capacity != nil && wantsCapacity(o.mode) {
		if sep {
			b = append(b, ',')
		}
		b = append(b, `"ConsumedCapacity":`...)
		b = o.capacity.appendJSON(b, o.mode)
	}
	return append(b, '}')
}

type getItemInput struct {
	TableName                string            `json:"TableName"`
	Key                      item              `json:"Key"`
	ConsistentRead           bool              `json:"ConsistentRead"`
	ProjectionExpression     *string           `json:"ProjectionExpression"`
	ExpressionAttributeNames map[string]string `json:"ExpressionAttributeNames"`
	AttributesToGet          []string          `json:"AttributesToGet"`
	ReturnConsumedCapacity   string            `json:"ReturnConsumedCapacity"`
}

// readProjection returns the projection of a read: its
// ProjectionExpression or its legacy AttributesToGet, not both.
func readProjection(names map[string]string, expr *string, attrs []string) (*projection, error) {
	if expr != nil && attrs != nil {
		return nil, validation("Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}")
	}
	if attrs != nil {
		paths := make([]docPath, len(attrs))
		for i, a := range attrs {
			paths[i] = docPath{{name: a, index: -1}}
		}
		return newProjection(paths), nil
	}
	e, err := newExpressions(names, nil, map[string]*string{"ProjectionExpression": expr}, "ProjectionExpression")
	if err != nil {
		return nil, err
	}
	pr, _, err := e.projection(expr)
	if err != nil {
		return nil, err
	}
	return pr, e.done()
}

func opGetItem(s *store, _ context.Context, body []byte) (any, error) {
	var in getItemInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	pr, err := readProjection(in.ExpressionAttributeNames, in.ProjectionExpression, in.AttributesToGet)
	if err != nil {
		return nil, err
	}
	def, err := s.tableOf(in.TableName)
	if err != nil {
		return nil, err
	}
	if err := def.checkKey(in.Key); err != nil {
		return nil, err
	}
	key := itemKey(nil, def.keyAttrs(), in.Key)
	out := &itemOutput{member: "Item", mode: in.ReturnConsumedCapacity, capacity: &consumed{table: def.Name}}
	err = s.db.View(func(tx *bolt.Tx) error {
		b := items(tx, def.Name)
		if b == nil {
			return errResourceNotFound()
		}
		raw := b.Get(key)
		if raw == nil {
			out.capacity.addTable(readUnits(1, in.ConsistentRead))
			return nil
		}
		size, err := storedSize(raw)
		if err != nil {
			return err
		}
		out.capacity.addTable(readUnits(size, in.ConsistentRead))
		if pr == nil {
			out.raw = append([]byte(nil), raw...)
			return nil
		}
		it, err := decodeItem(raw)
		if err != nil {
			return err
		}
		out.it = pr.apply(it)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// conditionFailed returns the error of a failed condition, with the item
// as it was when the request asks for it.
func conditionFailed(onFailure string, old item) error {
	if onFailure == "ALL_OLD" && old != nil {
		return errConditionFailed(old)
	}
	return errConditionFailed(nil)
}

// checkOnFailure checks ReturnValuesOnConditionCheckFailure.
func checkOnFailure(v string) error {
	if v != "" && v != "NONE" && v != "ALL_OLD" {
		return validation("1 validation error detected: Value '%s' at 'returnValuesOnConditionCheckFailure' failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, NONE]", v)
	}
	return nil
}

// writeOptions are the members PutItem, UpdateItem and DeleteItem share.
type writeOptions struct {
	legacy
	TableName                           string            `json:"TableName"`
	ConditionExpression                 *string           `json:"ConditionExpression"`
	ExpressionAttributeNames            map[string]string `json:"ExpressionAttributeNames"`
	ExpressionAttributeValues           exprValues        `json:"ExpressionAttributeValues"`
	ReturnValues                        string            `json:"ReturnValues"`
	ReturnValuesOnConditionCheckFailure string            `json:"ReturnValuesOnConditionCheckFailure"`
	ReturnConsumedCapacity              string            `json:"ReturnConsumedCapacity"`
}

// check refuses legacy parameters and a ReturnValues or
// ReturnValuesOnConditionCheckFailure the operation does not allow.
func (o *writeOptions) check(allowed ...string) error {
	if err := o.legacy.check(); err != nil {
		return err
	}
	if err := returnValues(o.ReturnValues, allowed...); err != nil {
		return err
	}
	return checkOnFailure(o.ReturnValuesOnConditionCheckFailure)
}

// current reads the item a single-item write changes and checks its
// condition against it.
func (o *writeOptions) current(w *writer, def *tableDef, key []byte, c *cond) (item, error) {
	old, err := getItem(w.tx, def.Name, key)
	if err != nil {
		return nil, err
	}
	if c != nil && !evalCond(old, c) {
		return nil, conditionFailed(o.ReturnValuesOnConditionCheckFailure, old)
	}
	return old, nil
}

type putItemInput struct {
	writeOptions
	Item item `json:"Item"`
}

// putRequest is a checked put: of PutItem, BatchWriteItem or a
// transaction.
type putRequest struct {
	def  *tableDef
	key  []byte
	item item
	cond *cond
}

// parseCondition parses the ConditionExpression of a request that has no
// other expression, with its placeholders; nil when there is none.
func parseCondition(expr *string, names map[string]string, values exprValues) (*cond, error) {
	e, err := newExpressions(names, values, map[string]*string{"ConditionExpression": expr}, "ConditionExpression")
	if err != nil {
		return nil, err
	}
	c, err := e.condition("ConditionExpression", expr)
	if err != nil {
		return nil, err
	}
	if err := e.done(); err != nil {
		return nil, err
	}
	return c, nil
}

// preparePut checks a put of it on the table name with the condition
// expression cond.
func (s *store) preparePut(table string, it item, cond *string, names map[string]string, values exprValues) (*putRequest, error) {
	c, err := parseCondition(cond, names, values)
	if err != nil {
		return nil, err
	}
	def, err := s.tableOf(table)
	if err != nil {
		return nil, err
	}
	if err := def.checkItem(it); err != nil {
		return nil, err
	}
	if it.size() > maxItemSize {
		return nil, validation("Item size has exceeded the maximum allowed size")
	}
	return &putRequest{def: def, key: itemKey(nil, def.keyAttrs(), it), item: it, cond: c}, nil
}

func opPutItem(s *store, _ context.Context, body []byte) (any, error) {
	var in putItemInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := in.check("ALL_OLD"); err != nil {
		return nil, err
	}
	req, err := s.preparePut(in.TableName, in.Item, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	if err != nil {
		return nil, err
	}
	out := &itemOutput{member: "Attributes", mode: in.ReturnConsumedCapacity}
	err = s.commits.do(func(w *writer) error {
		old, err := in.current(w, req.def, req.key, req.cond)
		if err != nil {
			return err
		}
		w.put(req.def, req.key, old, req.item)
		out.capacity = &consumed{table: req.def.Name}
		out.capacity.addWrite(req.def, old, req.item, 1)
		out.it = nil
		if in.ReturnValues == "ALL_OLD" {
			out.it = old
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

type updateItemInput struct {
	writeOptions
	Key              item    `json:"Key"`
	UpdateExpression *string `json:"UpdateExpression"`
}

// updateRequest is a checked update, of UpdateItem or a transaction.
type updateRequest struct {
	def     *tableDef
	key     []byte
	keyItem item
	actions []updateAction
	cond    *cond
}

// prepareUpdate checks an update of the item key on the table.
func (s *store) prepareUpdate(table string, key item, update, cond *string, names map[string]string, values exprValues) (*updateRequest, error) {
	e, err := newExpressions(names, values, map[string]*string{"UpdateExpression": update, "ConditionExpression": cond}, "UpdateExpression", "ConditionExpression")
	if err != nil {
		return nil, err
	}
	actions, err := e.update(update)
	if err != nil {
		return nil, err
	}
	c, err := e.condition("ConditionExpression", cond)
	if err != nil {
		return nil, err
	}
	if err := e.done(); err != nil {
		return nil, err
	}
	def, err := s.tableOf(table)
	if err != nil {
		return nil, err
	}
	if err := def.checkKey(key); err != nil {
		return nil, err
	}
	for _, a := range actions {
		if def.isKey(a.path[0].name) {
			return nil, validation("One or more parameter values were invalid: Cannot update attribute %s. This attribute is part of the key", a.path[0].name)
		}
	}
	return &updateRequest{def: def, key: itemKey(nil, def.keyAttrs(), key), keyItem: key, actions: actions, cond: c}, nil
}

// apply returns the item old becomes, or the error DynamoDB gives for an
// update that cannot apply to it.
func (r *updateRequest) apply(old item) (item, error) {
	base := old
	if base == nil {
		base = r.keyItem
	}
	it, err := applyUpdate(base, r.actions)
	if err != nil {
		return nil, err
	}
	if it.size() > maxItemSize {
		return nil, validation("Item size to update has exceeded the maximum allowed size")
	}
	if err := r.def.checkIndexKeys(it); err != nil {
		return nil, err
	}
	return it, nil
}

// updated returns the attributes of it that the actions touched: for each
// action whose path is in it, the whole top-level attribute, as DynamoDB
// Local returns them.
func (r *updateRequest) updated(it item) item {
	out := item{}
	for _, a := range r.actions {
		if _, ok := resolve(it, a.path); ok {
			out[a.path[0].name] = it[a.path[0].name]
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func opUpdateItem(s *store, _ context.Context, body []byte) (any, error) {
	var in updateItemInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := in.check("ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATED_NEW"); err != nil {
		return nil, err
	}
	req, err := s.prepareUpdate(in.TableName, in.Key, in.UpdateExpression, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	if err != nil {
		return nil, err
	}
	out := &itemOutput{member: "Attributes", mode: in.ReturnConsumedCapacity}
	err = s.commits.do(func(w *writer) error {
		old, err := in.current(w, req.def, req.key, req.cond)
		if err != nil {
			return err
		}
		it, err := req.apply(old)
		if err != nil {
			return err
		}
		w.put(req.def, req.key, old, it)
		out.capacity = &consumed{table: req.def.Name}
		out.capacity.addWrite(req.def, old, it, 1)
		switch in.ReturnValues {
		case "ALL_OLD":
			out.it = old
		case "ALL_NEW":
			out.it = it
		case "UPDATED_OLD":
			out.it = req.updated(old)
		case "UPDATED_NEW":
			out.it = req.updated(it)
		default:
			out.it = nil
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

type deleteItemInput struct {
	writeOptions
	Key item `json:"Key"`
}

// keyRequest is a checked request on one item by its key: a delete or a
// condition check.
type keyRequest struct {
	def  *tableDef
	key  []byte
	cond *cond
}

// prepareKeyed checks a request on the item key of the table with a
// condition expression.
func (s *store) prepareKeyed(table string, key item, cond *string, names map[string]string, values exprValues) (*keyRequest, error) {
	c, err := parseCondition(cond, names, values)
	if err != nil {
		return nil, err
	}
	def, err := s.tableOf(table)
	if err != nil {
		return nil, err
	}
	if err := def.checkKey(key); err != nil {
		return nil, err
	}
	return &keyRequest{def: def, key: itemKey(nil, def.keyAttrs(), key), cond: c}, nil
}

func opDeleteItem(s *store, _ context.Context, body []byte) (any, error) {
	var in deleteItemInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := in.check("ALL_OLD"); err != nil {
		return nil, err
	}
	req, err := s.prepareKeyed(in.TableName, in.Key, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
	if err != nil {
		return nil, err
	}
	out := &itemOutput{member: "Attributes", mode: in.ReturnConsumedCapacity}
	err = s.commits.do(func(w *writer) error {
		old, err := in.current(w, req.def, req.key, req.cond)
		if err != nil {
			return err
		}
		if old != nil {
			w.delete(req.def, req.key, old)
		}
		out.capacity = &consumed{table: req.def.Name}
		out.capacity.addWrite(req.def, old, nil, 1)
		out.it = nil
		if in.ReturnValues == "ALL_OLD" {
			out.it = old
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
