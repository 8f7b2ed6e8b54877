package embedded

import (
	"context"
	"encoding/json"

	bolt "go.etcd.io/bbolt"
)

// BatchGetItem and BatchWriteItem. A batch of gets reads in one read
// transaction; a batch of writes commits in one transaction (atomic here,
// which DynamoDB does not promise: a caller that handles
// UnprocessedItems works with both).

const (
	maxBatchGetKeys   = 100
	maxBatchWrites    = 25
	maxBatchGetAnswer = 16 << 20
)

type keysAndAttributes struct {
	Keys                     []item            `json:"Keys"`
	ProjectionExpression     *string           `json:"ProjectionExpression"`
	ExpressionAttributeNames map[string]string `json:"ExpressionAttributeNames"`
	ConsistentRead           bool              `json:"ConsistentRead"`
	AttributesToGet          []string          `json:"AttributesToGet"`
}

// batchGetOutput is BatchGetItem's answer.
type batchGetOutput struct {
	tables      []string
	responses   map[string][]byte // items' JSON, comma separated
	unprocessed map[string]*keysAndAttributes
	capacity    capacities
	mode        string
}

func (o *batchGetOutput) appendJSON(b []byte) []byte {
	b = append(b, `{"Responses":{`...)
	for i, t := range o.tables {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, t)
		b = append(b, ":["...)
		b = append(b, o.responses[t]...)
		b = append(b, ']')
	}
	b = append(b, `},"UnprocessedKeys":`...)
	raw, _ := json.Marshal(o.unprocessed)
	b = append(b, raw...)
	if wantsCapacity(o.mode) {
		b = append(b, `,"ConsumedCapacity":`...)
		b = o.capacity.appendJSON(b, o.mode)
	}
	return append(b, '}')
}

// MarshalJSON writes an item for the unprocessed keys of an answer.
func (it item) MarshalJSON() ([]byte, error) { return appendItem(nil, it), nil }

func opBatchGetItem(s *store, _ context.Context, body []byte) (any, error) {
	var in struct {
		RequestItems           map[string]*keysAndAttributes `json:"RequestItems"`
		ReturnConsumedCapacity string                        `json:"ReturnConsumedCapacity"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if len(in.RequestItems) == 0 {
		return nil, validation("1 validation error detected: Value null at 'requestItems' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	type request struct {
		def  *tableDef
		ka   *keysAndAttributes
		proj *projection
		keys [][]byte
	}
	var reqs []request
	total := 0
	for table, ka := range in.RequestItems {
		if ka == nil || len(ka.Keys) == 0 {
			return nil, validation("1 validation error detected: Value null at 'requestItems.%s.member.keys' failed to satisfy constraint: Member must have length greater than or equal to 1", table)
		}
		total += len(ka.Keys)
		if total > maxBatchGetKeys {
			return nil, validation("Too many items requested for the BatchGetItem call")
		}
		pr, err := readProjection(ka.ExpressionAttributeNames, ka.ProjectionExpression, ka.AttributesToGet)
		if err != nil {
			return nil, err
		}
		def, err := s.tableOf(table)
		if err != nil {
			return nil, err
		}
		r := request{def: def, ka: ka, proj: pr}
		seen := map[string]bool{}
		for _, k := range ka.Keys {
			if err := def.checkKey(k); err != nil {
				return nil, err
			}
			sk := itemKey(nil, def.keyAttrs(), k)
			if seen[string(sk)] {
				return nil, validation("Provided list of item keys contains duplicates")
			}
			seen[string(sk)] = true
			r.keys = append(r.keys, sk)
		}
		reqs = append(reqs, r)
	}
	out := &batchGetOutput{responses: map[string][]byte{}, unprocessed: map[string]*keysAndAttributes{}, mode: in.ReturnConsumedCapacity}
	answered := 0
	err := s.db.View(func(tx *bolt.Tx) error {
		for _, r := range reqs {
			b := items(tx, r.def.Name)
			if b == nil {
				return errResourceNotFound()
			}
			out.tables = append(out.tables, r.def.Name)
			buf := out.responses[r.def.Name]
			c := out.capacity.of(r.def.Name)
			for i, key := range r.keys {
				if answered > maxBatchGetAnswer {
					u := out.unprocessed[r.def.Name]
					if u == nil {
						cp := *r.ka
						cp.Keys = nil
						u = &cp
						out.unprocessed[r.def.Name] = u
					}
					u.Keys = append(u.Keys, r.ka.Keys[i])
					continue
				}
				raw := b.Get(key)
				if raw == nil {
					continue
				}
				size, err := storedSize(raw)
				if err != nil {
					return err
				}
				c.addTable(readUnits(size, r.ka.ConsistentRead))
				if len(buf) > 0 {
					buf = append(buf, ',')
				}
				start := len(buf)
				if r.proj == nil {
					if buf, err = appendStoredJSON(buf, raw); err != nil {
						return err
					}
				} else {
					it, err := decodeItem(raw)
					if err != nil {
						return err
					}
					buf = appendItem(buf, r.proj.apply(it))
				}
				answered += len(buf) - start
			}
			out.responses[r.def.Name] = buf
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

type writeRequest struct {
	PutRequest *struct {
		Item item `json:"Item"`
	} `json:"PutRequest"`
	DeleteRequest *struct {
		Key item `json:"Key"`
	} `json:"DeleteRequest"`
}

// batchWriteOutput is BatchWriteItem's answer.
type batchWriteOutput struct {
	capacity capacities
	mode     string
}

func (o *batchWriteOutput) appendJSON(b []byte) []byte {
	b = append(b, `{"UnprocessedItems":{}`...)
	if wantsCapacity(o.mode) {
		b = append(b, `,"ConsumedCapacity":`...)
		b = o.capacity.appendJSON(b, o.mode)
	}
	return append(b, '}')
}

func opBatchWriteItem(s *store, _ context.Context, body []byte) (any, error) {
	var in struct {
		RequestItems           map[string][]writeRequest `json:"RequestItems"`
		ReturnConsumedCapacity string                    `json:"ReturnConsumedCapacity"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if len(in.RequestItems) == 0 {
		return nil, validation("1 validation error detected: Value null at 'requestItems' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	type write struct {
		def  *tableDef
		key  []byte
		item item // nil: delete
	}
	total := 0
	for _, reqs := range in.RequestItems {
		total += len(reqs)
	}
	if total > maxBatchWrites {
		return nil, validation("Too many items requested for the BatchWriteItem call")
	}
	var writes []write
	for table, reqs := range in.RequestItems {
		if len(reqs) == 0 || len(reqs) > maxBatchWrites {
			return nil, validation("1 validation error detected: Value at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]")
		}
		def, err := s.tableOf(table)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, r := range reqs {
			var w write
			switch {
			case r.PutRequest != nil && r.DeleteRequest == nil:
				it := r.PutRequest.Item
				if err := def.checkItem(it); err != nil {
					return nil, err
				}
				if it.size() > maxItemSize {
					return nil, validation("Item size has exceeded the maximum allowed size")
				}
				w = write{def: def, key: itemKey(nil, def.keyAttrs(), it), item: it}
			case r.DeleteRequest != nil && r.PutRequest == nil:
				if err := def.checkKey(r.DeleteRequest.Key); err != nil {
					return nil, err
				}
				w = write{def: def, key: itemKey(nil, def.keyAttrs(), r.DeleteRequest.Key)}
			default:
				return nil, validation("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes")
			}
			if seen[string(w.key)] {
				return nil, validation("Provided list of item keys contains duplicates")
			}
			seen[string(w.key)] = true
			writes = append(writes, w)
		}
	}
	out := &batchWriteOutput{mode: in.ReturnConsumedCapacity}
	err := s.commits.do(func(w *writer) error {
		out.capacity = capacities{}
		for _, wr := range writes {
			old, err := getItem(w.tx, wr.def.Name, wr.key)
			if err != nil {
				return err
			}
			c := out.capacity.of(wr.def.Name)
			switch {
			case wr.item != nil:
				w.put(wr.def, wr.key, old, wr.item)
				c.addWrite(wr.def, old, wr.item, 1)
			default:
				if old != nil {
					w.delete(wr.def, wr.key, old)
				}
				c.addWrite(wr.def, old, nil, 1)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
