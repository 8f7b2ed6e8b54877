package legacytest

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ToLayout4 turns a table in layout 5 into one of layout 4, the layout of
// the version before publications: every item of a publication leaves
// its prefix ("PUB#<id>#POST#p1" becomes "POST#p1", its GSI1 partition
// too), the publications' directory items go, and the layout item says 4.
// It returns how many items it moved. The tests of the migration to
// layout 5 start from a blog written by the current version and turned
// back by it.
func ToLayout4(ctx context.Context, db *dynamodb.Client, table string) (int, error) {
	var items []map[string]types.AttributeValue
	err := scan(ctx, db, table, func(it map[string]types.AttributeValue) error {
		items = append(items, it)
		return nil
	})
	if err != nil {
		return 0, err
	}
	moved := 0
	for _, it := range items {
		pk, sk := str(it["PK"]), str(it["SK"])
		if strings.HasPrefix(pk, "PUBLICATION#") {
			if err := deleteItem(ctx, db, table, it); err != nil {
				return moved, fmt.Errorf("delete %s/%s: %w", pk, sk, err)
			}
			continue
		}
		local, ok := unprefixed(pk)
		if !ok {
			continue
		}
		old := maps.Clone(it)
		old["PK"] = &types.AttributeValueMemberS{Value: local}
		if g, ok := unprefixed(str(it["GSI1PK"])); ok {
			old["GSI1PK"] = &types.AttributeValueMemberS{Value: g}
		}
		if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String(table), Item: old}},
			{Delete: &types.Delete{TableName: aws.String(table), Key: keyOf(it)}},
		}}); err != nil {
			return moved, fmt.Errorf("move %s/%s: %w", pk, sk, err)
		}
		moved++
	}
	_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "LAYOUT"}, "SK": &types.AttributeValueMemberS{Value: "LAYOUT"}},
		UpdateExpression:          aws.String("SET version = :v"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: "4"}},
	})
	return moved, err
}

// unprefixed returns pk without its publication's prefix, and whether it
// had one.
func unprefixed(pk string) (string, bool) {
	rest, ok := strings.CutPrefix(pk, "PUB#")
	if !ok {
		return pk, false
	}
	_, local, ok := strings.Cut(rest, "#")
	return local, ok
}
