package storage_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestCheckFindsBrokenCoAuthorAndTagCopies breaks, one at a time, what
// co-authors and tags add to the table (a co-author's copy, a tag copy, a
// co-author's count, a tag's count, a tag name a copy carries) and expects
// the invariant checker to name each.
func TestCheckFindsBrokenCoAuthorAndTagCopies(t *testing.T) {
	ctx := context.Background()
	key := func(pk, sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}}
	}
	for _, c := range []struct {
		name    string
		corrupt func(e *env, postID, sortKey string) error
		want    string
	}{
		{"a co-author's copy missing", func(e *env, id, sk string) error {
			_, err := e.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(e.table), Key: key(pubPrefix+"AUTHOR#bob", sk)})
			return err
		}, "lacks its copy PUB#default#AUTHOR#bob"},
		{"a tag copy missing", func(e *env, id, _ string) error {
			_, err := e.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(e.table), Key: key(pubPrefix+"POST#"+id, "TAG#go")})
			return err
		}, "lacks its copy PUB#default#POST#"},
		{"a co-author's count off", func(e *env, _, _ string) error {
			_, err := e.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(e.table), Key: key(pubPrefix+"AUTHOR#bob", "AUTHOR#bob"),
				UpdateExpression: aws.String("SET postCount = :z"), ExpressionAttributeValues: map[string]types.AttributeValue{":z": &types.AttributeValueMemberN{Value: "0"}}})
			return err
		}, "author bob counts 0 posts, has 1"},
		{"a tag's count off", func(e *env, _, _ string) error {
			_, err := e.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(e.table), Key: key(pubPrefix+"TAG#go", "TAG#go"),
				UpdateExpression: aws.String("SET postCount = :n"), ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: "2"}}})
			return err
		}, "tag go counts 2 posts, has 1"},
		{"a stale co-author name", func(e *env, id, _ string) error {
			_, err := e.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(e.table), Key: key(pubPrefix+"AUTHOR#bob", "AUTHOR#bob"),
				UpdateExpression: aws.String("SET #n = :n"), ExpressionAttributeNames: map[string]string{"#n": "name"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberS{Value: "Robert"}}})
			return err
		}, `carries co-author "Bob"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.author("ada", "Ada")
			e.author("bob", "Bob")
			p := e.publish(e.coPost("ada", "p", []string{"bob"}, nil, []string{"Go"}), start.Add(-time.Hour))
			e.consistent()
			sk := "POST#" + p.PublishedAt.UTC().Format("2006-01-02T15:04:05.000Z") + "#" + p.ID
			if err := c.corrupt(e, p.ID, sk); err != nil {
				t.Fatal(err)
			}
			bad, err := e.store.Check(ctx)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, b := range bad {
				found = found || strings.Contains(b, c.want)
			}
			if !found {
				t.Errorf("check found %q, want a finding with %q", bad, c.want)
			}
		})
	}
}
