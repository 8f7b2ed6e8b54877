package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// The trail entries of staff roles granted before roles had them
// (staffroles.go). Without its entry, a role would outlive the deletion
// of its account, and Check reports it. MigrateStaffTrails writes the
// missing entries of a publication beside live servers: it reads the
// publication's staff (GSI1 partition STAFF, 100 a page; a publication's
// staff is small, so there is no checkpoint between pages), then their
// entries (one consistent BatchGetItem a hundred), and writes each that
// is missing in one TransactWriteItems with a check that the membership
// is still there and that its account is not closed, as AddStaff's
// does; then it marks the publication done (one PutItem), and from then
// on a run costs one GetItem. Running it again, or on several servers at
// once, writes nothing twice.

// StaffTrails is what MigrateStaffTrails did.
type StaffTrails struct {
	// Entries is how many trail entries were written.
	Entries int
}

// MigrateStaffTrails writes the trail entries that the staff roles of
// the Store's publication granted before them lack (see above). It
// returns what it did, or the first error; a run stopped by an error
// starts again from the first page.
func (s *Store) MigrateStaffTrails(ctx context.Context) (StaffTrails, error) {
	var out StaffTrails
	mk := s.ks.StaffTrailsMark()
	var at trailsMark
	switch err := s.db.Get(ctx, mk, true, &at); {
	case err == nil && at.Done:
		return out, nil
	case err != nil && !errors.Is(err, ErrNotFound):
		return out, fmt.Errorf("staff trails: read the mark: %w", err)
	}
	in, err := s.db.KeyQuery(expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.StaffPartition())))
	if err != nil {
		return out, err
	}
	in.IndexName, in.Limit, in.ConsistentRead = aws.String(keys.IndexGSI1), aws.Int32(trailPage), nil
	in.ProjectionExpression = aws.String("PK, SK, accountId")
	var staff []string
	err = s.db.QueryAll(ctx, in, func(it item) error {
		var m struct {
			AccountID string `dynamodbav:"accountId"`
		}
		err := attributevalue.UnmarshalMap(it, &m)
		staff = append(staff, m.AccountID)
		return err
	})
	if err != nil {
		return out, fmt.Errorf("staff trails: read the staff: %w", err)
	}
	for len(staff) > 0 {
		page := staff[:min(len(staff), trailPage)]
		staff = staff[len(page):]
		entries := make([]key, len(page))
		for i, id := range page {
			entries[i] = s.ks.Role(id)
		}
		found, err := s.db.BatchGet(ctx, entries, true)
		if err != nil {
			return out, fmt.Errorf("staff trails: read entries: %w", err)
		}
		for i, id := range page {
			if _, ok := found[entries[i]]; ok {
				continue
			}
			t := s.db.NewTxn()
			errs := []error{
				t.Put(newTrail(entries[i], s.Now()), nil, nil),
				t.Check(keys.Account(id), expression.AttributeNotExists(expression.Name(attrClosedAt)), ErrAccountClosed),
				t.Check(s.ks.Staff(id), dynamo.CondExists(), errTrailGone),
			}
			if err := firstErr(errs...); err != nil {
				return out, err
			}
			switch err := s.db.Exec(ctx, t); {
			case errors.Is(err, errTrailGone), errors.Is(err, ErrAccountClosed):
			case err != nil:
				return out, fmt.Errorf("staff trails: entry of account %q: %w", id, err)
			default:
				out.Entries++
			}
		}
	}
	av, err := attributevalue.MarshalMap(trailsMark{PK: mk.PK, SK: mk.SK, Type: typeTrailsMark, Done: true})
	if err != nil {
		return out, fmt.Errorf("staff trails: mark: %w", err)
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: av}); err != nil {
		return out, fmt.Errorf("staff trails: mark: %w", err)
	}
	return out, nil
}

// MigrateAllStaffTrails runs MigrateStaffTrails in every publication of
// the table's directory (a Query of 100 a page) and in the Store's own,
// and returns what they did together, or the first error. A table where
// every run is done costs a Query and one GetItem a publication.
func (s *Store) MigrateAllStaffTrails(ctx context.Context) (StaffTrails, error) {
	var out StaffTrails
	ids, err := s.publicationIDs(ctx)
	if err != nil {
		return out, fmt.Errorf("staff trails: %w", err)
	}
	for _, id := range ids {
		st, err := s.In(id)
		if err != nil {
			return out, err
		}
		did, err := st.MigrateStaffTrails(ctx)
		out.Entries += did.Entries
		if err != nil {
			return out, fmt.Errorf("publication %s: %w", id, err)
		}
	}
	return out, nil
}
