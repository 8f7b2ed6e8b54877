package embedded

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Table definitions: what CreateTable accepts, what DescribeTable returns,
// and the keys of a table and its indexes.
//
// Invariants of a table once created (and of its stored definition):
//   - its key schema has a hash key and at most a range key, each with an
//     attribute definition of type S, N or B;
//   - every index's key attributes are defined, and the definitions hold
//     no attribute that no key uses;
//   - index names are unique within the table;
//   - a definition never changes but for its TTL and stream settings.

// tableDef is a table as stored: the parts of CreateTable's input that
// shape it, and its TTL setting.
type tableDef struct {
	Name        string          `json:"name"`
	ID          string          `json:"id"`
	Created     time.Time       `json:"created"`
	Attributes  []attributeDef  `json:"attributes"`
	Hash        keyAttr         `json:"hash"`
	Range       *keyAttr        `json:"range,omitempty"`
	Indexes     []indexDef      `json:"indexes,omitempty"`
	Billing     string          `json:"billing"`
	Provisioned *throughputSpec `json:"provisioned,omitempty"`
	TTL         string          `json:"ttl,omitempty"` // the TTL attribute, when TTL is on
	Protected   bool            `json:"protected,omitempty"`
	Stream      *streamDef      `json:"stream,omitempty"`   // its latest stream, if any
	Previous    []streamDef     `json:"previous,omitempty"` // its disabled streams before it, oldest first
}

// keyAttr is one key attribute: its name and type.
type keyAttr struct {
	Name string `json:"name"`
	Kind kind   `json:"kind"`
}

// indexDef is a secondary index.
type indexDef struct {
	Name        string          `json:"name"`
	Local       bool            `json:"local,omitempty"`
	Hash        keyAttr         `json:"hash"`
	Range       *keyAttr        `json:"range,omitempty"`
	Projection  string          `json:"projection"` // ALL, KEYS_ONLY or INCLUDE
	NonKey      []string        `json:"nonKey,omitempty"`
	Provisioned *throughputSpec `json:"provisioned,omitempty"`
}

// Wire shapes of table definitions, shared by requests and answers.

type attributeDef struct {
	AttributeName string `json:"AttributeName"`
	AttributeType string `json:"AttributeType"`
}

type keySchemaElement struct {
	AttributeName string `json:"AttributeName"`
	KeyType       string `json:"KeyType"`
}

type projectionSpec struct {
	ProjectionType   string   `json:"ProjectionType,omitempty"`
	NonKeyAttributes []string `json:"NonKeyAttributes,omitempty"`
}

type throughputSpec struct {
	ReadCapacityUnits  int64 `json:"ReadCapacityUnits"`
	WriteCapacityUnits int64 `json:"WriteCapacityUnits"`
}

type indexSpec struct {
	IndexName             string             `json:"IndexName"`
	KeySchema             []keySchemaElement `json:"KeySchema"`
	Projection            *projectionSpec    `json:"Projection"`
	ProvisionedThroughput *throughputSpec    `json:"ProvisionedThroughput"`
}

type createTableInput struct {
	TableName                 string             `json:"TableName"`
	AttributeDefinitions      []attributeDef     `json:"AttributeDefinitions"`
	KeySchema                 []keySchemaElement `json:"KeySchema"`
	GlobalSecondaryIndexes    []indexSpec        `json:"GlobalSecondaryIndexes"`
	LocalSecondaryIndexes     []indexSpec        `json:"LocalSecondaryIndexes"`
	BillingMode               string             `json:"BillingMode"`
	ProvisionedThroughput     *throughputSpec    `json:"ProvisionedThroughput"`
	DeletionProtectionEnabled bool               `json:"DeletionProtectionEnabled"`
	StreamSpecification       *streamSpec        `json:"StreamSpecification"`
}

type streamSpec struct {
	StreamEnabled  bool   `json:"StreamEnabled"`
	StreamViewType string `json:"StreamViewType,omitempty"`
}

// checkStreamSpec returns the error DynamoDB gives for a stream
// specification it refuses.
func checkStreamSpec(spec *streamSpec) error {
	switch {
	case spec.StreamEnabled && spec.StreamViewType == "":
		return validation("Invalid StreamViewType: Stream ViewType must not be null or empty when enabling streams.")
	case !spec.StreamEnabled && spec.StreamViewType != "":
		return validation("Invalid StreamViewType: Stream StreamEnabled was false but a StreamViewType was present.")
	}
	switch spec.StreamViewType {
	case "", viewKeys, viewNew, viewOld, viewNewOld:
		return nil
	}
	return validation("1 validation error detected: Value '%s' at 'streamSpecification.streamViewType' failed to satisfy constraint: Member must satisfy enum value set: [NEW_IMAGE, OLD_IMAGE, KEYS_ONLY, NEW_AND_OLD_IMAGES]", spec.StreamViewType)
}

var tableNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)

const msgBadName = "Invalid table/index name.  Table/index names must be between 3 and 255 characters long, and may contain only the characters a-z, A-Z, 0-9, '_', '-', and '.'"

// checkTableName returns the error DynamoDB gives for a table name it
// refuses.
func checkTableName(name string) error {
	if name == "" {
		return validation("1 validation error detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null")
	}
	if !tableNamePattern.MatchString(name) {
		return validation(msgBadName)
	}
	return nil
}

// newTableDef checks a CreateTable request and returns the table it makes.
func newTableDef(in *createTableInput, now time.Time) (*tableDef, error) {
	if err := checkTableName(in.TableName); err != nil {
		return nil, err
	}
	def := &tableDef{Name: in.TableName, Created: now.UTC().Truncate(time.Millisecond), Protected: in.DeletionProtectionEnabled}
	if spec := in.StreamSpecification; spec != nil {
		if err := checkStreamSpec(spec); err != nil {
			return nil, err
		}
		if spec.StreamEnabled {
			def.Stream = &streamDef{Label: streamLabel(def.Created), ViewType: spec.StreamViewType, Created: def.Created, Enabled: true}
		}
	}
	var id [16]byte
	_, _ = rand.Read(id[:])
	def.ID = fmt.Sprintf("%s-%s-%s-%s-%s", hex.EncodeToString(id[0:4]), hex.EncodeToString(id[4:6]), hex.EncodeToString(id[6:8]), hex.EncodeToString(id[8:10]), hex.EncodeToString(id[10:]))

	switch in.BillingMode {
	case "", "PROVISIONED":
		def.Billing = "PROVISIONED"
		if in.ProvisionedThroughput == nil {
			return nil, validation("One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED")
		}
		def.Provisioned = in.ProvisionedThroughput
	case "PAY_PER_REQUEST":
		def.Billing = "PAY_PER_REQUEST"
		if in.ProvisionedThroughput != nil {
			return nil, validation("One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST")
		}
	default:
		return nil, validation("1 validation error detected: Value '%s' at 'billingMode' failed to satisfy constraint: Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]", in.BillingMode)
	}

	types := map[string]kind{}
	for _, a := range in.AttributeDefinitions {
		k := kindByName(a.AttributeType)
		if k != kindS && k != kindN && k != kindB {
			return nil, validation("1 validation error detected: Value '%s' at 'attributeDefinitions.1.member.attributeType' failed to satisfy constraint: Member must satisfy enum value set: [B, N, S]", a.AttributeType)
		}
		if _, dup := types[a.AttributeName]; dup {
			return nil, validation("Cannot have two attributes with the same name")
		}
		types[a.AttributeName] = k
		def.Attributes = append(def.Attributes, a)
	}
	used := map[string]bool{}
	hash, rng, err := keySchema(in.KeySchema, types, used)
	if err != nil {
		return nil, err
	}
	def.Hash, def.Range = hash, rng

	names := map[string]bool{}
	for i, specs := range [][]indexSpec{in.GlobalSecondaryIndexes, in.LocalSecondaryIndexes} {
		local := i == 1
		for _, s := range specs {
			if err := checkTableName(s.IndexName); err != nil {
				return nil, err
			}
			if names[s.IndexName] {
				return nil, validation("One or more parameter values were invalid: Duplicate index name: %s", s.IndexName)
			}
			names[s.IndexName] = true
			ix := indexDef{Name: s.IndexName, Local: local}
			if ix.Hash, ix.Range, err = keySchema(s.KeySchema, types, used); err != nil {
				return nil, err
			}
			if local && (ix.Hash != def.Hash || ix.Range == nil) {
				return nil, validation("One or more parameter values were invalid: Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex")
			}
			if s.Projection == nil || s.Projection.ProjectionType == "" {
				return nil, validation("One or more parameter values were invalid: Unknown ProjectionType: null")
			}
			switch ix.Projection = s.Projection.ProjectionType; ix.Projection {
			case "ALL", "KEYS_ONLY":
				if len(s.Projection.NonKeyAttributes) > 0 {
					return nil, validation("One or more parameter values were invalid: ProjectionType is %s, but NonKeyAttributes is specified", ix.Projection)
				}
			case "INCLUDE":
				ix.NonKey = s.Projection.NonKeyAttributes
			default:
				return nil, validation("One or more parameter values were invalid: Unknown ProjectionType: %s", ix.Projection)
			}
			if !local {
				switch {
				case def.Billing == "PROVISIONED" && s.ProvisionedThroughput == nil:
					return nil, validation("One or more parameter values were invalid: ProvisionedThroughput must be specified for index: %s", s.IndexName)
				case def.Billing == "PAY_PER_REQUEST" && s.ProvisionedThroughput != nil:
					return nil, validation("One or more parameter values were invalid: ProvisionedThroughput should not be specified for index: %s when BillingMode is PAY_PER_REQUEST", s.IndexName)
				}
				ix.Provisioned = s.ProvisionedThroughput
			}
			def.Indexes = append(def.Indexes, ix)
		}
	}
	if len(used) != len(types) {
		return nil, validation("One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions")
	}
	return def, nil
}

// keySchema reads a key schema: a HASH element and at most a RANGE one,
// each of a defined attribute, which it marks used.
func keySchema(elems []keySchemaElement, types map[string]kind, used map[string]bool) (keyAttr, *keyAttr, error) {
	if len(elems) == 0 || len(elems) > 2 {
		return keyAttr{}, nil, validation("1 validation error detected: Value '%v' at 'keySchema' failed to satisfy constraint: Member must have length less than or equal to 2", elems)
	}
	attr := func(e keySchemaElement) (keyAttr, error) {
		k, ok := types[e.AttributeName]
		if !ok {
			return keyAttr{}, validation("One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [%s], AttributeDefinitions: [%s]", keyNames(elems), definedNames(types))
		}
		used[e.AttributeName] = true
		return keyAttr{Name: e.AttributeName, Kind: k}, nil
	}
	if elems[0].KeyType != "HASH" {
		return keyAttr{}, nil, validation("Invalid KeySchema: The first KeySchemaElement is not a HASH key type")
	}
	hash, err := attr(elems[0])
	if err != nil {
		return keyAttr{}, nil, err
	}
	if len(elems) == 1 {
		return hash, nil, nil
	}
	if elems[1].KeyType != "RANGE" {
		return keyAttr{}, nil, validation("Invalid KeySchema: The second KeySchemaElement is not a RANGE key type")
	}
	if elems[1].AttributeName == elems[0].AttributeName {
		return keyAttr{}, nil, validation("Both the Hash Key and the Range Key element in the KeySchema have the same name")
	}
	rng, err := attr(elems[1])
	if err != nil {
		return keyAttr{}, nil, err
	}
	return hash, &rng, nil
}

func keyNames(elems []keySchemaElement) string {
	var s []string
	for _, e := range elems {
		s = append(s, e.AttributeName)
	}
	return strings.Join(s, ", ")
}

func definedNames(types map[string]kind) string {
	var s []string
	for n := range types {
		s = append(s, n)
	}
	slices.Sort(s)
	return strings.Join(s, ", ")
}

// index returns the index named name, or nil.
func (d *tableDef) index(name string) *indexDef {
	for i := range d.Indexes {
		if d.Indexes[i].Name == name {
			return &d.Indexes[i]
		}
	}
	return nil
}

// keyAttrs returns the table's key attributes.
func (d *tableDef) keyAttrs() []keyAttr {
	if d.Range == nil {
		return []keyAttr{d.Hash}
	}
	return []keyAttr{d.Hash, *d.Range}
}

// keyAttrs returns the index's key attributes.
func (ix *indexDef) keyAttrs() []keyAttr {
	if ix.Range == nil {
		return []keyAttr{ix.Hash}
	}
	return []keyAttr{ix.Hash, *ix.Range}
}

// isKey reports whether name is a key attribute of the table.
func (d *tableDef) isKey(name string) bool {
	return name == d.Hash.Name || d.Range != nil && name == d.Range.Name
}

// Answers describing tables.

type tableDescription struct {
	AttributeDefinitions      []attributeDef      `json:"AttributeDefinitions"`
	TableName                 string              `json:"TableName"`
	KeySchema                 []keySchemaElement  `json:"KeySchema"`
	TableStatus               string              `json:"TableStatus"`
	CreationDateTime          epochTime           `json:"CreationDateTime"`
	ProvisionedThroughput     throughputDesc      `json:"ProvisionedThroughput"`
	TableSizeBytes            int64               `json:"TableSizeBytes"`
	ItemCount                 int64               `json:"ItemCount"`
	TableArn                  string              `json:"TableArn"`
	TableID                   string              `json:"TableId"`
	BillingModeSummary        *billingModeSummary `json:"BillingModeSummary,omitempty"`
	GlobalSecondaryIndexes    []indexDescription  `json:"GlobalSecondaryIndexes,omitempty"`
	LocalSecondaryIndexes     []indexDescription  `json:"LocalSecondaryIndexes,omitempty"`
	DeletionProtectionEnabled bool                `json:"DeletionProtectionEnabled"`
	StreamSpecification       *streamSpec         `json:"StreamSpecification,omitempty"`
	LatestStreamLabel         string              `json:"LatestStreamLabel,omitempty"`
	LatestStreamArn           string              `json:"LatestStreamArn,omitempty"`
}

type throughputDesc struct {
	LastIncreaseDateTime   epochTime `json:"LastIncreaseDateTime"`
	LastDecreaseDateTime   epochTime `json:"LastDecreaseDateTime"`
	NumberOfDecreasesToday int64     `json:"NumberOfDecreasesToday"`
	ReadCapacityUnits      int64     `json:"ReadCapacityUnits"`
	WriteCapacityUnits     int64     `json:"WriteCapacityUnits"`
}

type billingModeSummary struct {
	BillingMode                       string    `json:"BillingMode"`
	LastUpdateToPayPerRequestDateTime epochTime `json:"LastUpdateToPayPerRequestDateTime"`
}

type indexDescription struct {
	IndexName             string             `json:"IndexName"`
	KeySchema             []keySchemaElement `json:"KeySchema"`
	Projection            projectionSpec     `json:"Projection"`
	IndexStatus           string             `json:"IndexStatus,omitempty"`
	ProvisionedThroughput *throughputDesc    `json:"ProvisionedThroughput,omitempty"`
	IndexSizeBytes        int64              `json:"IndexSizeBytes"`
	ItemCount             int64              `json:"ItemCount"`
	IndexArn              string             `json:"IndexArn"`
}

// epochTime is a time as DynamoDB's JSON writes it: seconds since the
// epoch, with milliseconds.
type epochTime time.Time

func (t epochTime) MarshalJSON() ([]byte, error) {
	tt := time.Time(t)
	if tt.IsZero() {
		return []byte("0.0"), nil
	}
	ms := tt.UnixMilli()
	return []byte(fmt.Sprintf("%d.%03d", ms/1000, ms%1000)), nil
}

// tableStats are a table's or an index's item count and size.
type tableStats struct {
	items int64
	bytes int64
}

// describe returns the table's description, for a region, with the
// counts of the table and its indexes.
func (d *tableDef) describe(region, status string, stats map[string]tableStats) *tableDescription {
	arn := "arn:aws:dynamodb:" + region + ":000000000000:table/" + d.Name
	out := &tableDescription{
		AttributeDefinitions:      d.Attributes,
		TableName:                 d.Name,
		KeySchema:                 schemaOf(d.Hash, d.Range),
		TableStatus:               status,
		CreationDateTime:          epochTime(d.Created),
		TableSizeBytes:            stats[""].bytes,
		ItemCount:                 stats[""].items,
		TableArn:                  arn,
		TableID:                   d.ID,
		DeletionProtectionEnabled: d.Protected,
	}
	if sd := d.Stream; sd != nil {
		out.LatestStreamLabel, out.LatestStreamArn = sd.Label, sd.arn(d.Name)
		if sd.Enabled {
			out.StreamSpecification = &streamSpec{StreamEnabled: true, StreamViewType: sd.ViewType}
		}
	}
	if d.Provisioned != nil {
		out.ProvisionedThroughput.ReadCapacityUnits = d.Provisioned.ReadCapacityUnits
		out.ProvisionedThroughput.WriteCapacityUnits = d.Provisioned.WriteCapacityUnits
	}
	if d.Billing == "PAY_PER_REQUEST" {
		out.BillingModeSummary = &billingModeSummary{BillingMode: d.Billing, LastUpdateToPayPerRequestDateTime: epochTime(d.Created)}
	}
	for _, ix := range d.Indexes {
		desc := indexDescription{
			IndexName:      ix.Name,
			KeySchema:      schemaOf(ix.Hash, ix.Range),
			Projection:     projectionSpec{ProjectionType: ix.Projection, NonKeyAttributes: ix.NonKey},
			IndexSizeBytes: stats[ix.Name].bytes,
			ItemCount:      stats[ix.Name].items,
			IndexArn:       arn + "/index/" + ix.Name,
		}
		if ix.Local {
			out.LocalSecondaryIndexes = append(out.LocalSecondaryIndexes, desc)
			continue
		}
		desc.IndexStatus = status
		desc.ProvisionedThroughput = &throughputDesc{}
		if ix.Provisioned != nil {
			desc.ProvisionedThroughput.ReadCapacityUnits = ix.Provisioned.ReadCapacityUnits
			desc.ProvisionedThroughput.WriteCapacityUnits = ix.Provisioned.WriteCapacityUnits
		}
		out.GlobalSecondaryIndexes = append(out.GlobalSecondaryIndexes, desc)
	}
	return out
}

func schemaOf(hash keyAttr, rng *keyAttr) []keySchemaElement {
	out := []keySchemaElement{{AttributeName: hash.Name, KeyType: "HASH"}}
	if rng != nil {
		out = append(out, keySchemaElement{AttributeName: rng.Name, KeyType: "RANGE"})
	}
	return out
}
