package legacytest

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// scan calls fn with every item of the table, page by page of a
// consistent Scan, so fn may change the items of a page it has read. It
// returns the first error of a read or of fn.
func scan(ctx context.Context, db *dynamodb.Client, table string, fn func(it map[string]types.AttributeValue) error) error {
	pages := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			if err := fn(it); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyOf returns the primary key of the item it.
func keyOf(it map[string]types.AttributeValue) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}
}

// deleteItem deletes the item it of the table.
func deleteItem(ctx context.Context, db *dynamodb.Client, table string, it map[string]types.AttributeValue) error {
	_, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: keyOf(it)})
	return err
}

// deleteWhere deletes every item of the table for which match is true,
// as it scans, and returns how many it deleted.
func deleteWhere(ctx context.Context, db *dynamodb.Client, table string, match func(it map[string]types.AttributeValue) bool) (int, error) {
	n := 0
	err := scan(ctx, db, table, func(it map[string]types.AttributeValue) error {
		if !match(it) {
			return nil
		}
		if err := deleteItem(ctx, db, table, it); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, err
}
