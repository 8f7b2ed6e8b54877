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
	err := scan(ctx, db, table, func(it map[string]types.AttributeValue) error {
		sk := str(it["SK"])
		switch {
		case strings.HasPrefix(sk, "LOCALECAT#") || strings.HasPrefix(sk, "LOCALETAG#"):
			if err := deleteItem(ctx, db, table, it); err != nil {
				return err
			}
		case str(it["type"]) == "authorPost" && str(it["GSI1PK"]) != "":
			if _, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: keyOf(it),
				UpdateExpression: aws.String("REMOVE GSI1PK, GSI1SK")}); err != nil {
				return err
			}
		default:
			return nil
		}
		n++
		return nil
	})
	return n, err
}

// WithoutLocalePageCopies turns the pages with a locale of a table back
// into what was written before the lists of a locale's pages existed:
// their copies in those lists (sort key LOCALEPAGE) are deleted. It
// returns how many it deleted.
func WithoutLocalePageCopies(ctx context.Context, db *dynamodb.Client, table string) (int, error) {
	return deleteWhere(ctx, db, table, func(it map[string]types.AttributeValue) bool {
		return str(it["SK"]) == "LOCALEPAGE"
	})
}
