package legacytest

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// WithoutTrails turns a table in the current layout back into what was
// written before readers' trails existed: every trail entry (type
// "trail", in a reader's partition) is deleted, and the comments,
// reactions and memberships they named stay. It returns how many
// entries it deleted.
func WithoutTrails(ctx context.Context, db *dynamodb.Client, table string) (int, error) {
	return deleteWhere(ctx, db, table, func(it map[string]types.AttributeValue) bool {
		return str(it["type"]) == "trail"
	})
}
