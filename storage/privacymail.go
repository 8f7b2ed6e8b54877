package storage

import (
	"context"
	"fmt"
	"regexp"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// The emails already sent or failed to an account's address, which its
// deletion must not leave naming it. A sent or failed email is in its
// recipient's GSI1 partition (MAILTO#<address>, mail.go), so the
// deletion reads them in one Query (eventually consistent, a megabyte a
// page) and:
//
//   - deletes a sent one, with the rest of what it deletes (25 a
//     BatchWriteItem): once sent, nothing needs it, since its
//     recipient can no longer be written to again by what sent it (a
//     newsletter or a reply goes only to a member, and the membership
//     is gone with the account);
//   - scrubs a failed one (one UpdateItem each): its recipient becomes
//     DeletedRecipient, the address leaves the reason of its failure,
//     its bodies, unsubscribe link and index entry go; what stays (its
//     kind, subject, state, attempts, times and the reason) keeps the
//     outbox's record of failures meaningful to its admins until it
//     expires as any other.

// DeletedRecipient is the recipient of a failed email kept after its
// recipient's account was deleted.
const DeletedRecipient = "(deleted account)"

// finishedMailTo passes to f the keys of the emails sent to the address
// email, and scrubs the failed ones (see above).
func (s *Store) finishedMailTo(ctx context.Context, email string, f func(item) error) error {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().
		WithKeyCondition(expression.Key(keys.AttrGSI1PK).Equal(expression.Value(keys.MailToPartition(email)))).
		WithProjection(expression.NamesList(expression.Name(keys.AttrPK), expression.Name(keys.AttrSK),
			expression.Name("state"), expression.Name("lastError"))))
	if err != nil {
		return err
	}
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), IndexName: aws.String(keys.IndexGSI1),
		KeyConditionExpression: expr.KeyCondition(), ProjectionExpression: expr.Projection(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}
	address := regexp.MustCompile("(?i)" + regexp.QuoteMeta(email))
	err = s.db.QueryAll(ctx, in, func(av item) error {
		var it struct {
			PK, SK    string
			State     string `dynamodbav:"state"`
			LastError string `dynamodbav:"lastError"`
		}
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return err
		}
		k := key{PK: it.PK, SK: it.SK}
		if it.State != MailFailed {
			return f(dynamo.MustKey(k))
		}
		upd := expression.Set(expression.Name("to"), expression.Value(DeletedRecipient)).
			Remove(expression.Name(keys.AttrGSI1PK)).Remove(expression.Name(keys.AttrGSI1SK)).Remove(expression.Name("accountId")).
			Remove(expression.Name("text")).Remove(expression.Name("html")).Remove(expression.Name("listUnsubscribe"))
		if it.LastError != "" {
			upd = upd.Set(expression.Name("lastError"), expression.Value(address.ReplaceAllLiteralString(it.LastError, DeletedRecipient)))
		}
		if _, err := s.db.UpdateIf(ctx, k, upd, dynamo.CondExists()); err != nil {
			return fmt.Errorf("scrub email %s: %w", it.SK, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("emails sent: %w", err)
	}
	return nil
}
