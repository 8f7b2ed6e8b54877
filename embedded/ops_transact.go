package embedded

import (
	"context"
	"errors"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// TransactWriteItems and TransactGetItems.
//
// Invariants of TransactWriteItems:
//   - all its actions, with their index and TTL entries, commit in one
//     bbolt transaction, or none does;
//   - every condition is evaluated against the items as they were before
//     the transaction; when one fails, the answer lists a reason for each
//     action in order (ConditionalCheckFailed, ValidationError or None)
//     and nothing is written;
//   - no two actions touch the same item; there are 1 to 100 actions of
//     at most 4 MB in all.

const (
	maxTransactItems = 100
	maxTransactBytes = 4 << 20
)

type conditionCheck struct {
	TableName                           string            `json:"TableName"`
	Key                                 item              `json:"Key"`
	ConditionExpression                 *string           `json:"ConditionExpression"`
	ExpressionAttributeNames            map[string]string `json:"ExpressionAttributeNames"`
	ExpressionAttributeValues           exprValues        `json:"ExpressionAttributeValues"`
	ReturnValuesOnConditionCheckFailure string            `json:"ReturnValuesOnConditionCheckFailure"`
}

type transactPut struct {
	TableName                           string            `json:"TableName"`
	Item                                item              `json:"Item"`
	ConditionExpression                 *string           `json:"ConditionExpression"`
	ExpressionAttributeNames            map[string]string `json:"ExpressionAttributeNames"`
	ExpressionAttributeValues           exprValues        `json:"ExpressionAttributeValues"`
	ReturnValuesOnConditionCheckFailure string            `json:"ReturnValuesOnConditionCheckFailure"`
}

type transactUpdate struct {
	TableName                           string            `json:"TableName"`
	Key                                 item              `json:"Key"`
	UpdateExpression                    *string           `json:"UpdateExpression"`
	ConditionExpression                 *string           `json:"ConditionExpression"`
	ExpressionAttributeNames            map[string]string `json:"ExpressionAttributeNames"`
	ExpressionAttributeValues           exprValues        `json:"ExpressionAttributeValues"`
	ReturnValuesOnConditionCheckFailure string            `json:"ReturnValuesOnConditionCheckFailure"`
}

type transactWriteItem struct {
	ConditionCheck *conditionCheck `json:"ConditionCheck"`
	Put            *transactPut    `json:"Put"`
	Delete         *conditionCheck `json:"Delete"`
	Update         *transactUpdate `json:"Update"`
}

// transactAction is one checked action of a transaction.
type transactAction struct {
	kind      string // ConditionCheck, Put, Delete or Update
	def       *tableDef
	key       []byte
	put       item
	update    *updateRequest
	cond      *cond
	onFailure string
	refused   error // a check that DynamoDB reports as the action's reason
}

// prepareAction checks one action of a transaction.
func (s *store) prepareAction(a transactWriteItem) (*transactAction, error) {
	n := 0
	for _, set := range []bool{a.ConditionCheck != nil, a.Put != nil, a.Delete != nil, a.Update != nil} {
		if set {
			n++
		}
	}
	switch n {
	case 0:
		return nil, validation("Invalid Request: TransactWriteRequest should contain Delete or Put or Update request")
	case 1:
	default:
		return nil, validation("TransactItems can only contain one of Check, Put, Update or Delete")
	}
	switch {
	case a.Put != nil:
		p := a.Put
		if err := checkOnFailure(p.ReturnValuesOnConditionCheckFailure); err != nil {
			return nil, err
		}
		r, err := s.preparePut(p.TableName, p.Item, p.ConditionExpression, p.ExpressionAttributeNames, p.ExpressionAttributeValues)
		if err != nil {
			return nil, err
		}
		return &transactAction{kind: "Put", def: r.def, key: r.key, put: r.item, cond: r.cond, onFailure: p.ReturnValuesOnConditionCheckFailure}, nil
	case a.Update != nil:
		u := a.Update
		if err := checkOnFailure(u.ReturnValuesOnConditionCheckFailure); err != nil {
			return nil, err
		}
		r, err := s.prepareUpdate(u.TableName, u.Key, u.UpdateExpression, u.ConditionExpression, u.ExpressionAttributeNames, u.ExpressionAttributeValues)
		act := &transactAction{kind: "Update", onFailure: u.ReturnValuesOnConditionCheckFailure}
		var apiErr *apiError
		if err != nil && errors.As(err, &apiErr) && strings.Contains(apiErr.msg, "This attribute is part of the key") {
			// DynamoDB reports this one as the action's reason.
			def, derr := s.tableOf(u.TableName)
			if derr != nil {
				return nil, derr
			}
			act.def, act.key, act.refused = def, itemKey(nil, def.keyAttrs(), u.Key), err
			return act, nil
		}
		if err != nil {
			return nil, err
		}
		act.def, act.key, act.update, act.cond = r.def, r.key, r, r.cond
		return act, nil
	}
	c, kind := a.ConditionCheck, "ConditionCheck"
	if a.Delete != nil {
		c, kind = a.Delete, "Delete"
	}
	if err := checkOnFailure(c.ReturnValuesOnConditionCheckFailure); err != nil {
		return nil, err
	}
	if kind == "ConditionCheck" && c.ConditionExpression == nil {
		return nil, validation("1 validation error detected: Value null at 'transactItems.1.member.conditionCheck.conditionExpression' failed to satisfy constraint: Member must not be null")
	}
	r, err := s.prepareKeyed(c.TableName, c.Key, c.ConditionExpression, c.ExpressionAttributeNames, c.ExpressionAttributeValues)
	if err != nil {
		return nil, err
	}
	return &transactAction{kind: kind, def: r.def, key: r.key, cond: r.cond, onFailure: c.ReturnValuesOnConditionCheckFailure}, nil
}

// payloadSize is what an action counts towards a transaction's 4 MB.
func payloadSize(a transactWriteItem) int {
	switch {
	case a.Put != nil:
		return a.Put.Item.size()
	case a.Update != nil:
		n := a.Update.Key.size()
		for _, v := range a.Update.ExpressionAttributeValues {
			n += v.v.size()
		}
		return n
	case a.Delete != nil:
		return a.Delete.Key.size()
	case a.ConditionCheck != nil:
		return a.ConditionCheck.Key.size()
	}
	return 0
}

// transactOutput is the answer of TransactWriteItems.
type transactOutput struct {
	capacity capacities
	mode     string
}

func (o *transactOutput) appendJSON(b []byte) []byte {
	b = append(b, '{')
	if wantsCapacity(o.mode) {
		b = append(b, `"ConsumedCapacity":`...)
		b = o.capacity.appendJSON(b, o.mode)
	}
	return append(b, '}')
}

func opTransactWriteItems(s *store, _ context.Context, body []byte) (any, error) {
	var in struct {
		TransactItems          []transactWriteItem `json:"TransactItems"`
		ClientRequestToken     *string             `json:"ClientRequestToken"`
		ReturnConsumedCapacity string              `json:"ReturnConsumedCapacity"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	switch {
	case len(in.TransactItems) == 0:
		return nil, validation("Value [] at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1")
	case len(in.TransactItems) > maxTransactItems:
		return nil, validation("Member must have length less than or equal to 100")
	case in.ClientRequestToken != nil && (len(*in.ClientRequestToken) > 36 || *in.ClientRequestToken == ""):
		return nil, validation("Value %s at 'clientRequestToken' failed to satisfy constraint: Member must have length less than or equal to 36", *in.ClientRequestToken)
	}
	actions := make([]*transactAction, len(in.TransactItems))
	seen := map[string]bool{}
	size := 0
	for i, a := range in.TransactItems {
		act, err := s.prepareAction(a)
		if err != nil {
			return nil, err
		}
		id := act.def.Name + "\x00" + string(act.key)
		if seen[id] {
			return nil, validation("Transaction request cannot include multiple operations on one item")
		}
		seen[id] = true
		actions[i] = act
		size += payloadSize(a)
	}
	if size > maxTransactBytes {
		return nil, validation("Transaction payload size cannot exceed 4MB. Payload Size: %d", size)
	}
	var hash []byte
	if in.ClientRequestToken != nil {
		hash = requestHash(in.TransactItems)
	}
	out := &transactOutput{mode: in.ReturnConsumedCapacity}
	err := s.commits.do(func(w *writer) error {
		out.capacity = capacities{}
		if in.ClientRequestToken != nil {
			rec, err := lookupToken(w.tx, *in.ClientRequestToken, s.now())
			if err != nil {
				return err
			}
			if rec != nil {
				if string(rec.Hash) != string(hash) {
					return errIdempotentMismatch()
				}
				out.capacity = restoreCapacities(rec.Capacity)
				return nil
			}
		}
		olds := make([]item, len(actions))
		news := make([]item, len(actions))
		reasons := make([]cancellationReason, len(actions))
		failed := false
		for i, a := range actions {
			old, err := getItem(w.tx, a.def.Name, a.key)
			if err != nil {
				return err
			}
			olds[i] = old
			reasons[i] = cancellationReason{Code: "None"}
			switch {
			case a.refused != nil:
				reasons[i] = cancellationReason{Code: "ValidationError", Message: a.refused.(*apiError).msg}
				failed = true
				continue
			case a.cond != nil && !evalCond(old, a.cond):
				reasons[i] = cancellationReason{Code: "ConditionalCheckFailed", Message: msgConditionFailed}
				if a.kind == "ConditionCheck" {
					reasons[i].Message += "."
				}
				if a.onFailure == "ALL_OLD" && old != nil {
					reasons[i].Item = old
				}
				failed = true
				continue
			}
			switch a.kind {
			case "Put":
				news[i] = a.put
			case "Update":
				it, err := a.update.apply(old)
				if err != nil {
					return err
				}
				news[i] = it
			}
		}
		if failed {
			codes := make([]string, len(reasons))
			for i, r := range reasons {
				codes[i] = r.Code
			}
			return &apiError{code: "TransactionCanceledException", reasons: reasons,
				msg: "Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]"}
		}
		for i, a := range actions {
			c := out.capacity.of(a.def.Name)
			switch a.kind {
			case "Put", "Update":
				w.put(a.def, a.key, olds[i], news[i])
				c.addWrite(a.def, olds[i], news[i], 2)
			case "Delete":
				if olds[i] != nil {
					w.delete(a.def, a.key, olds[i])
				}
				c.addWrite(a.def, olds[i], nil, 2)
			case "ConditionCheck":
				size := 0
				if olds[i] != nil {
					size = olds[i].size()
				}
				c.addTable(2 * readUnits(max(size, 1), true))
			}
		}
		if in.ClientRequestToken != nil {
			rec := &tokenRecord{Hash: hash, Expires: s.now().Add(tokenTTL).UnixNano(), Capacity: out.capacity.record()}
			token := *in.ClientRequestToken
			w.ops = append(w.ops, func(tx *bolt.Tx) error { return saveToken(tx, token, rec) })
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// transactGetOutput is the answer of TransactGetItems.
type transactGetOutput struct {
	items    [][]byte // each item's JSON, nil for none
	capacity capacities
	mode     string
}

func (o *transactGetOutput) appendJSON(b []byte) []byte {
	b = append(b, `{"Responses":[`...)
	for i, it := range o.items {
		if i > 0 {
			b = append(b, ',')
		}
		if it == nil {
			b = append(b, "{}"...)
			continue
		}
		b = append(b, `{"Item":`...)
		b = append(b, it...)
		b = append(b, '}')
	}
	b = append(b, ']')
	if wantsCapacity(o.mode) {
		b = append(b, `,"ConsumedCapacity":`...)
		b = o.capacity.appendJSON(b, o.mode)
	}
	return append(b, '}')
}

func opTransactGetItems(s *store, _ context.Context, body []byte) (any, error) {
	var in struct {
		TransactItems []struct {
			Get *struct {
				TableName                string            `json:"TableName"`
				Key                      item              `json:"Key"`
				ProjectionExpression     *string           `json:"ProjectionExpression"`
				ExpressionAttributeNames map[string]string `json:"ExpressionAttributeNames"`
			} `json:"Get"`
		} `json:"TransactItems"`
		ReturnConsumedCapacity string `json:"ReturnConsumedCapacity"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	switch {
	case len(in.TransactItems) == 0:
		return nil, validation("Value [] at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1")
	case len(in.TransactItems) > maxTransactItems:
		return nil, validation("Member must have length less than or equal to 100")
	}
	type get struct {
		def  *tableDef
		key  []byte
		proj *projection
	}
	gets := make([]get, len(in.TransactItems))
	seen := map[string]bool{}
	for i, t := range in.TransactItems {
		g := t.Get
		if g == nil {
			return nil, validation("Invalid Request: TransactGetItem should contain a Get request")
		}
		pr, err := readProjection(g.ExpressionAttributeNames, g.ProjectionExpression, nil)
		if err != nil {
			return nil, err
		}
		def, err := s.tableOf(g.TableName)
		if err != nil {
			return nil, err
		}
		if err := def.checkKey(g.Key); err != nil {
			return nil, err
		}
		key := itemKey(nil, def.keyAttrs(), g.Key)
		if id := def.Name + "\x00" + string(key); seen[id] {
			return nil, validation("Transaction request cannot include multiple operations on one item")
		} else {
			seen[id] = true
		}
		gets[i] = get{def: def, key: key, proj: pr}
	}
	out := &transactGetOutput{items: make([][]byte, len(gets)), mode: in.ReturnConsumedCapacity}
	err := s.db.View(func(tx *bolt.Tx) error {
		for i, g := range gets {
			b := items(tx, g.def.Name)
			if b == nil {
				return errResourceNotFound()
			}
			raw := b.Get(g.key)
			c := out.capacity.of(g.def.Name)
			if raw == nil {
				c.addTable(2 * readUnits(1, true))
				continue
			}
			size, err := storedSize(raw)
			if err != nil {
				return err
			}
			c.addTable(2 * readUnits(size, true))
			if g.proj == nil {
				if out.items[i], err = appendStoredJSON(nil, raw); err != nil {
					return err
				}
				continue
			}
			it, err := decodeItem(raw)
			if err != nil {
				return err
			}
			out.items[i] = appendItem(nil, g.proj.apply(it))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
