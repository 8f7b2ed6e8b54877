package embedded

import (
	"context"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// Operations on tables: CreateTable, DescribeTable, ListTables,
// DeleteTable, UpdateTimeToLive and DescribeTimeToLive. Tables are ACTIVE
// as soon as they are created: there is nothing to wait for here.

const region = "us-east-1"

func opCreateTable(s *store, _ context.Context, body []byte) (any, error) {
	var in createTableInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	def, err := newTableDef(&in, s.now())
	if err != nil {
		return nil, err
	}
	err = s.commits.do(func(w *writer) error {
		if w.tx.Bucket(bucketTables).Get([]byte(def.Name)) != nil {
			return errResourceInUse("Cannot create preexisting table")
		}
		w.ops = append(w.ops, func(tx *bolt.Tx) error { return createTableBuckets(tx, def) })
		w.after = append(w.after, func() { s.setTable(def.Name, def) })
		return nil
	})
	if err != nil {
		return nil, err
	}
	return struct {
		TableDescription *tableDescription `json:"TableDescription"`
	}{def.describe(region, "ACTIVE", nil)}, nil
}

type tableNameInput struct {
	TableName string `json:"TableName"`
}

func opDescribeTable(s *store, _ context.Context, body []byte) (any, error) {
	var in tableNameInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	def, err := s.tableOf(in.TableName)
	if err != nil {
		return nil, err
	}
	var st map[string]tableStats
	err = s.db.View(func(tx *bolt.Tx) error {
		var err error
		st, err = stats(tx, def)
		return err
	})
	if err != nil {
		return nil, err
	}
	return struct {
		Table *tableDescription `json:"Table"`
	}{def.describe(region, "ACTIVE", st)}, nil
}

func opListTables(s *store, _ context.Context, body []byte) (any, error) {
	var in struct {
		ExclusiveStartTableName string `json:"ExclusiveStartTableName"`
		Limit                   *int   `json:"Limit"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	limit := 100
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > 100 {
			return nil, validation("1 validation error detected: Value '%d' at 'limit' failed to satisfy constraint: Member must have value less than or equal to 100", *in.Limit)
		}
		limit = *in.Limit
	}
	s.mu.RLock()
	names := make([]string, 0, len(s.tables))
	for n := range s.tables {
		if n > in.ExclusiveStartTableName {
			names = append(names, n)
		}
	}
	s.mu.RUnlock()
	slices.Sort(names)
	out := struct {
		TableNames             []string `json:"TableNames"`
		LastEvaluatedTableName string   `json:"LastEvaluatedTableName,omitempty"`
	}{TableNames: names}
	if len(names) > limit {
		out.TableNames = names[:limit]
		out.LastEvaluatedTableName = names[limit-1]
	}
	return out, nil
}

func opDeleteTable(s *store, _ context.Context, body []byte) (any, error) {
	var in tableNameInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	def, err := s.tableOf(in.TableName)
	if err != nil {
		return nil, err
	}
	if def.Protected {
		return nil, validation("Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.")
	}
	err = s.commits.do(func(w *writer) error {
		if w.tx.Bucket(bucketTables).Get([]byte(def.Name)) == nil {
			return errResourceNotFound()
		}
		w.ops = append(w.ops, func(tx *bolt.Tx) error { return deleteTableBuckets(tx, def.Name) })
		w.after = append(w.after, func() { s.setTable(def.Name, nil) })
		return nil
	})
	if err != nil {
		return nil, err
	}
	return struct {
		TableDescription *tableDescription `json:"TableDescription"`
	}{def.describe(region, "DELETING", nil)}, nil
}

type ttlSpec struct {
	AttributeName string `json:"AttributeName"`
	Enabled       bool   `json:"Enabled"`
}

func opUpdateTimeToLive(s *store, _ context.Context, body []byte) (any, error) {
	var in struct {
		TableName               string   `json:"TableName"`
		TimeToLiveSpecification *ttlSpec `json:"TimeToLiveSpecification"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if in.TimeToLiveSpecification == nil {
		return nil, validation("1 validation error detected: Value null at 'timeToLiveSpecification' failed to satisfy constraint: Member must not be null")
	}
	spec := *in.TimeToLiveSpecification
	if spec.AttributeName == "" {
		return nil, validation("1 validation error detected: Value null at 'timeToLiveSpecification.attributeName' failed to satisfy constraint: Member must not be null")
	}
	if _, err := s.tableOf(in.TableName); err != nil {
		return nil, err
	}
	err := s.commits.do(func(w *writer) error {
		cur, err := readDef(w.tx, in.TableName)
		if err != nil {
			return err
		}
		if cur == nil {
			return errResourceNotFound()
		}
		switch {
		case spec.Enabled && cur.TTL == spec.AttributeName:
			return validation("TimeToLive is already enabled")
		case spec.Enabled && cur.TTL != "":
			return validation("TimeToLive is active on a different AttributeName")
		case !spec.Enabled && cur.TTL == "":
			return validation("TimeToLive is already disabled")
		case !spec.Enabled && cur.TTL != spec.AttributeName:
			return validation("TimeToLive is active on a different AttributeName")
		}
		next := *cur
		next.TTL = ""
		if spec.Enabled {
			next.TTL = spec.AttributeName
		}
		w.ops = append(w.ops, func(tx *bolt.Tx) error { return setTTL(tx, &next) })
		w.after = append(w.after, func() { s.setTable(next.Name, &next) })
		return nil
	})
	if err != nil {
		return nil, err
	}
	return struct {
		TimeToLiveSpecification ttlSpec `json:"TimeToLiveSpecification"`
	}{spec}, nil
}

func opDescribeTimeToLive(s *store, _ context.Context, body []byte) (any, error) {
	var in tableNameInput
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	def, err := s.tableOf(in.TableName)
	if err != nil {
		return nil, err
	}
	type description struct {
		TimeToLiveStatus string `json:"TimeToLiveStatus"`
		AttributeName    string `json:"AttributeName,omitempty"`
	}
	d := description{TimeToLiveStatus: "DISABLED"}
	if def.TTL != "" {
		d = description{TimeToLiveStatus: "ENABLED", AttributeName: def.TTL}
	}
	return struct {
		TimeToLiveDescription description `json:"TimeToLiveDescription"`
	}{d}, nil
}
