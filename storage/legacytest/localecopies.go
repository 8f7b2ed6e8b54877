package legacytest

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// WithoutLocaleCopies turns the posts with a locale of a table in the
// current layout back into what was written before the lists of a
// locale's posts by category, tag and author existed: their copies in
// those lists (LOCALECAT#, LOCALETAG#) are deleted and their author
// copies lose their GSI1 entry. It returns how many items it changed.
func WithoutLocaleCopies(ctx context.Context, db *dynamodb.Client, table string) (int, error) {
	n := 0
	pages := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return n, err
		}
		for _, it := range page.Items {
			k := map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}
			sk := str(it["SK"])
			switch {
			case strings.HasPrefix(sk, "LOCALECAT#") || strings.HasPrefix(sk, "LOCALETAG#"):
				if _, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: k}); err != nil {
					return n, err
				}
			case str(it["type"]) == "authorPost" && str(it["GSI1PK"]) != "":
				if _, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: k,
					UpdateExpression: aws.String("REMOVE GSI1PK, GSI1SK")}); err != nil {
					return n, err
				}
			default:
				continue
			}
			n++
		}
	}
	return n, nil
}
