package tests

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/goccy/go-yaml"

	"github.com/blogql/blog/internal/dynamotest"
	"github.com/blogql/blog/storage"
)

// cfnTable is the part of the CloudFormation table resource that must
// match the table the store creates.
type cfnTable struct {
	AttributeDefinitions []struct {
		AttributeName string `yaml:"AttributeName"`
		AttributeType string `yaml:"AttributeType"`
	} `yaml:"AttributeDefinitions"`
	KeySchema              []cfnKey `yaml:"KeySchema"`
	GlobalSecondaryIndexes []struct {
		IndexName  string   `yaml:"IndexName"`
		KeySchema  []cfnKey `yaml:"KeySchema"`
		Projection struct {
			ProjectionType string `yaml:"ProjectionType"`
		} `yaml:"Projection"`
	} `yaml:"GlobalSecondaryIndexes"`
	StreamSpecification struct {
		StreamViewType string `yaml:"StreamViewType"`
	} `yaml:"StreamSpecification"`
}

type cfnKey struct {
	AttributeName string `yaml:"AttributeName"`
	KeyType       string `yaml:"KeyType"`
}

// TestDeployTemplateMatchesTheStore checks that deploy/table.yaml
// provisions the table the server's store creates for itself: the same key
// attributes, keys, index and stream, so a table made by either serves the
// other.
func TestDeployTemplateMatchesTheStore(t *testing.T) {
	b, err := os.ReadFile("../deploy/table.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tmpl struct {
		Resources struct {
			Table struct {
				Properties cfnTable `yaml:"Properties"`
			} `yaml:"Table"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(b, &tmpl); err != nil {
		t.Fatal(err)
	}
	want := tmpl.Resources.Table.Properties

	ctx := context.Background()
	db, err := storage.NewClient(ctx, dynamotest.ClientConfig(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	table := dynamotest.Table(t, db, "deploy")
	if err := storage.New(db, table, storage.WithStream()).CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	got := out.Table

	var wantAttrs, gotAttrs []string
	for _, a := range want.AttributeDefinitions {
		wantAttrs = append(wantAttrs, a.AttributeName+" "+a.AttributeType)
	}
	for _, a := range got.AttributeDefinitions {
		gotAttrs = append(gotAttrs, aws.ToString(a.AttributeName)+" "+string(a.AttributeType))
	}
	slices.Sort(wantAttrs)
	slices.Sort(gotAttrs)
	sameList(t, "attribute definitions", wantAttrs, gotAttrs)
	sameList(t, "key schema", keys(want.KeySchema), storeKeys(got.KeySchema))
	if len(want.GlobalSecondaryIndexes) != len(got.GlobalSecondaryIndexes) {
		t.Fatalf("%d indexes in the template, %d in the store's table", len(want.GlobalSecondaryIndexes), len(got.GlobalSecondaryIndexes))
	}
	for i, w := range want.GlobalSecondaryIndexes {
		g := got.GlobalSecondaryIndexes[i]
		equal(t, "index name", w.IndexName, aws.ToString(g.IndexName))
		sameList(t, w.IndexName+" key schema", keys(w.KeySchema), storeKeys(g.KeySchema))
		equal(t, w.IndexName+" projection", w.Projection.ProjectionType, string(g.Projection.ProjectionType))
	}
	if got.StreamSpecification == nil || !aws.ToBool(got.StreamSpecification.StreamEnabled) {
		t.Fatal("the store's table has no stream")
	}
	equal(t, "stream view", want.StreamSpecification.StreamViewType, string(got.StreamSpecification.StreamViewType))
}

func keys(ks []cfnKey) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.AttributeName+" "+k.KeyType)
	}
	return out
}

func storeKeys(ks []types.KeySchemaElement) []string {
	var out []string
	for _, k := range ks {
		out = append(out, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
	}
	return out
}

func sameList(t *testing.T, what string, want, got []string) {
	t.Helper()
	if !slices.Equal(want, got) {
		t.Errorf("%s: template %q, store %q", what, want, got)
	}
}

// TestCreateTableTurnsOnTheStream starts the store on a table an earlier
// version made, without a stream: CreateTable turns it on, with both
// images, so the change feed has what it reads.
func TestCreateTableTurnsOnTheStream(t *testing.T) {
	ctx := context.Background()
	db, err := storage.NewClient(ctx, dynamotest.ClientConfig(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	table := dynamotest.Table(t, db, "nostream")
	s := types.ScalarAttributeTypeS
	if _, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(table), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: s}, {AttributeName: aws.String("SK"), AttributeType: s}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange}},
	}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second start finds the stream on
		if err := storage.New(db, table, storage.WithStream()).CreateTable(ctx); err != nil {
			t.Fatal(err)
		}
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			t.Fatal(err)
		}
		spec := out.Table.StreamSpecification
		if spec == nil || !aws.ToBool(spec.StreamEnabled) || spec.StreamViewType != storage.StreamView {
			t.Fatalf("stream after CreateTable: %+v", spec)
		}
	}
}
