package embedded

import (
	"slices"
)

// Applying an update expression to an item.
//
// Invariants, as DynamoDB defines them:
//   - every operand is evaluated against the item as it was before the
//     update, so the order of the actions does not change their values;
//   - the actions never touch the item that was read: applyUpdate works
//     on a copy and returns it, or an error and no item;
//   - list positions in REMOVE are positions in the list as it was:
//     removing [1] and [0] removes the first two elements;
//   - a set that DELETE empties is removed, since sets are never empty;
//   - SET of a position past a list's end appends; REMOVE of one does
//     nothing.

// Messages of updates that cannot apply to the item.
const (
	msgInvalidPath  = "The document path provided in the update expression is invalid for update"
	msgMissingValue = "The provided expression refers to an attribute that does not exist in the item"
	msgWrongType    = "An operand in the update expression has an incorrect data type"
)

// applyUpdate returns old (which may be empty) with actions applied.
func applyUpdate(old item, actions []updateAction) (item, error) {
	// Evaluate every operand first, against the item as it was.
	vals := make([]value, len(actions))
	for i, a := range actions {
		if a.val == nil {
			continue
		}
		v, err := updateValue(old, a.val)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	it := old.clone()
	if it == nil {
		it = item{}
	}
	var removes []int
	for i, a := range actions {
		var err error
		switch a.clause {
		case "SET":
			err = setPath(it, a.path, vals[i].clone())
		case "REMOVE":
			removes = append(removes, i)
		case "ADD":
			err = addPath(it, a.path, vals[i])
		case "DELETE":
			err = deletePath(it, a.path, vals[i])
		}
		if err != nil {
			return nil, err
		}
	}
	// Remove list elements from the highest position down, so the
	// positions stay those of the list as it was.
	slices.SortStableFunc(removes, func(x, y int) int {
		return actions[y].path[len(actions[y].path)-1].index - actions[x].path[len(actions[x].path)-1].index
	})
	for _, i := range removes {
		if err := removePath(it, actions[i].path); err != nil {
			return nil, err
		}
	}
	return it, nil
}

// updateOperands evaluates both operands of o, which must be of kind k.
func updateOperands(it item, o *operand, k kind) (value, value, error) {
	a, err := updateValue(it, o.args[0])
	if err != nil {
		return value{}, value{}, err
	}
	b, err := updateValue(it, o.args[1])
	if err != nil {
		return value{}, value{}, err
	}
	if a.kind != k || b.kind != k {
		return value{}, value{}, validation(msgWrongType)
	}
	return a, b, nil
}

// updateValue evaluates an operand of an update against the item.
func updateValue(it item, o *operand) (value, error) {
	switch o.kind {
	case opValue:
		return o.val.v, nil
	case opPath:
		v, ok := resolve(it, o.path)
		if !ok {
			return value{}, validation(msgMissingValue)
		}
		return v, nil
	case opArith:
		a, b, err := updateOperands(it, o, kindN)
		if err != nil {
			return value{}, err
		}
		y := b.number()
		if o.fn == "-" {
			y = y.negate()
		}
		n, err := addNumbers(a.number(), y)
		if err != nil {
			return value{}, err
		}
		return num(n), nil
	case opCall:
		switch o.fn {
		case "if_not_exists":
			if v, ok := resolve(it, o.args[0].path); ok {
				return v, nil
			}
			return updateValue(it, o.args[1])
		case "list_append":
			a, b, err := updateOperands(it, o, kindL)
			if err != nil {
				return value{}, err
			}
			l := make([]value, 0, len(a.list)+len(b.list))
			l = append(append(l, a.list...), b.list...)
			return value{kind: kindL, list: l}, nil
		}
	}
	return value{}, validation(msgWrongType)
}

// setPath stores v at p.
func setPath(it item, p docPath, v value) error {
	return modify(it, p, func(old value, exists bool) (value, bool, error) { return v, true, nil })
}

// modify replaces the value at p with what change returns for the old
// value (and whether there was one); keep false removes it.
func modify(it item, p docPath, change func(old value, exists bool) (v value, keep bool, err error)) error {
	if len(p) == 1 {
		old, exists := it[p[0].name]
		v, keep, err := change(old, exists)
		if err != nil {
			return err
		}
		if keep {
			it[p[0].name] = v
		} else {
			delete(it, p[0].name)
		}
		return nil
	}
	// Walk down, then rebuild the path's values on the way back up: maps
	// and lists inside the item are values, shared with nothing (the item
	// is a copy).
	root, ok := it[p[0].name]
	if !ok {
		return validation(msgInvalidPath)
	}
	nv, err := modifyIn(root, p[1:], change)
	if err != nil {
		return err
	}
	it[p[0].name] = nv
	return nil
}

func modifyIn(v value, p docPath, change func(old value, exists bool) (value, bool, error)) (value, error) {
	e := p[0]
	switch {
	case e.index >= 0 && v.kind == kindL:
		if len(p) == 1 {
			exists := e.index < len(v.list)
			var old value
			if exists {
				old = v.list[e.index]
			}
			nv, keep, err := change(old, exists)
			if err != nil {
				return v, err
			}
			switch {
			case keep && exists:
				v.list[e.index] = nv
			case keep:
				v.list = append(v.list, nv)
			case exists:
				v.list = slices.Delete(v.list, e.index, e.index+1)
			}
			return v, nil
		}
		if e.index >= len(v.list) {
			return v, validation(msgInvalidPath)
		}
		nv, err := modifyIn(v.list[e.index], p[1:], change)
		if err != nil {
			return v, err
		}
		v.list[e.index] = nv
		return v, nil
	case e.index < 0 && v.kind == kindM:
		old, exists := v.m[e.name]
		if len(p) == 1 {
			nv, keep, err := change(old, exists)
			if err != nil {
				return v, err
			}
			if keep {
				v.m[e.name] = nv
			} else {
				delete(v.m, e.name)
			}
			return v, nil
		}
		if !exists {
			return v, validation(msgInvalidPath)
		}
		nv, err := modifyIn(old, p[1:], change)
		if err != nil {
			return v, err
		}
		v.m[e.name] = nv
		return v, nil
	}
	return v, validation(msgInvalidPath)
}

// removePath removes the value at p, if there is one.
func removePath(it item, p docPath) error {
	return modify(it, p, func(old value, exists bool) (value, bool, error) { return value{}, false, nil })
}

// addPath adds v to the number or set at p, or stores it there if there is
// none.
func addPath(it item, p docPath, v value) error {
	return modify(it, p, func(old value, exists bool) (value, bool, error) {
		if !exists {
			return v, true, nil
		}
		switch {
		case old.kind == kindN && v.kind == kindN:
			n, err := addNumbers(old.number(), v.number())
			if err != nil {
				return old, true, err
			}
			return num(n), true, nil
		case old.isSet() && old.kind == v.kind:
			out := old
			out.set = slices.Clone(old.set)
			for _, e := range v.set {
				if !slices.Contains(out.set, e) {
					out.set = append(out.set, e)
				}
			}
			return out, true, nil
		}
		return old, true, validation(msgWrongType)
	})
}

// deletePath removes v's elements from the set at p; an emptied set goes.
func deletePath(it item, p docPath, v value) error {
	return modify(it, p, func(old value, exists bool) (value, bool, error) {
		if !exists {
			return old, false, nil
		}
		if old.kind != v.kind || !old.isSet() {
			return old, true, validation(msgWrongType)
		}
		out := old
		out.set = nil
		for _, e := range old.set {
			if !slices.Contains(v.set, e) {
				out.set = append(out.set, e)
			}
		}
		return out, len(out.set) > 0, nil
	})
}
