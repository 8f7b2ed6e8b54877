package embedded

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestSmoke(t *testing.T) {
	e, err := OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String("http://embedded.invalid"),
		Credentials: credentials.NewStaticCredentialsProvider("a", "b", ""),
		HTTPClient:  &http.Client{Transport: e},
	})
	ctx := context.Background()
	_, err = db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String("tab1"),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("PK"), AttributeType: "S"},
			{AttributeName: aws.String("SK"), AttributeType: "S"},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("PK"), KeyType: "HASH"},
			{AttributeName: aws.String("SK"), KeyType: "RANGE"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("tab1"), Item: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "a"}, "SK": &types.AttributeValueMemberS{Value: "b"},
		"n": &types.AttributeValueMemberN{Value: "1.50"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("tab1"), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "a"}, "SK": &types.AttributeValueMemberS{Value: "b"},
	}, ReturnConsumedCapacity: "TOTAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%#v %v", out.Item["n"], *out.ConsumedCapacity.CapacityUnits)
	q, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("tab1"), KeyConditionExpression: aws.String("PK = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "a"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d items", len(q.Items))
}
