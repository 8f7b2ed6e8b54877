package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// The staff roles of an account, as its deletion finds them. Each role
// leaves, in the transaction that grants it, an entry in the account's
// trail (READER#<id>, ROLE#<publication>), and the transaction that
// takes it away deletes the entry: a consistent Query of the account's
// ROLE# entries sees every role it holds, in every publication, without
// listing the publications. The entries are kept apart from the TRAIL#
// ones because the deletion must read them before it changes anything:
// an account that is the last owner of a publication is not deleted
// (LastOwnerError), since that would leave the publication with nobody
// to run it.
//
// Closing an account that holds roles is then one transaction: the mark
// that closes it, and for each role the deletion of the membership (on
// the condition that it is the version read), of its trail entry, and of
// one owner from the owners' count (on the condition that another is
// left), so a refusal changes nothing. Request budget, for G roles of
// which O are owners': 1 Query of the roles, G GetItem of the
// memberships, O GetItem of the owners' counts, 1 TransactWriteItems
// (up to rolesPerTxn roles; one more a further rolesPerTxn, written
// before the one that closes the account); refused, a GetItem of each
// publication it would leave ownerless, to name it.

// rolesPerTxn is how many roles one transaction of an account's deletion
// takes away: three actions each, beside the account's mark.
const rolesPerTxn = 30

// LastOwnerError is the error of deleting an account that is the last
// owner of publications: nothing is changed. It matches ErrLastOwner.
type LastOwnerError struct {
	// Publications are the slugs (or ids, for a publication without a
	// directory item) of the publications the account is the last owner
	// of.
	Publications []string
}

func (e *LastOwnerError) Error() string {
	return fmt.Sprintf("the account is the last owner of %s: make another owner first, or remove the publication",
		strings.Join(e.Publications, ", "))
}

// Is reports whether target is ErrLastOwner.
func (e *LastOwnerError) Is(target error) bool { return target == ErrLastOwner }

// leaveRole adds to t the trail entry of the staff role of the account
// accountID in the Store's publication, and the check that the account
// is not closed (ErrAccountClosed).
func (s *Store) leaveRole(t *dynamo.Txn, accountID string, now time.Time) error {
	if err := t.Put(newTrail(s.ks.Role(accountID), now), nil, nil); err != nil {
		return err
	}
	return t.Check(keys.Account(accountID), expression.AttributeNotExists(expression.Name(attrClosedAt)), ErrAccountClosed)
}

// accountRole is a staff role of an account, as its deletion read it.
type accountRole struct {
	st    *Store // the Store of the role's publication
	entry key
	m     *StaffMember // nil: the entry names no membership
}

// rolesOf returns the staff roles of the account id, each with its
// membership read consistently. It returns a *LastOwnerError when the
// account is the last owner of a publication.
func (s *Store) rolesOf(ctx context.Context, id string) ([]accountRole, error) {
	in, err := s.roleEntries(id)
	if err != nil {
		return nil, err
	}
	var entries []key
	err = s.db.QueryAll(ctx, in, func(it item) error {
		var k key
		err := attributevalue.UnmarshalMap(it, &k)
		entries = append(entries, k)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("roles of account %q: %w", id, err)
	}
	var roles []accountRole
	var last []string
	for _, e := range entries {
		st, err := s.In(strings.TrimPrefix(e.SK, keys.PrefixRole))
		if err != nil {
			return nil, err
		}
		r := accountRole{st: st, entry: e}
		switch r.m, err = st.StaffMemberOf(ctx, id, true); {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return nil, err
		case r.m.Role == RoleOwner:
			owners, err := st.owners(ctx)
			if err != nil {
				return nil, err
			}
			if owners <= 1 {
				last = append(last, st.publicationName(ctx))
			}
		}
		roles = append(roles, r)
	}
	if len(last) > 0 {
		return nil, &LastOwnerError{Publications: last}
	}
	return roles, nil
}

// roleEntries returns the consistent Query of the account id's ROLE#
// trail entries, their keys only.
func (s *Store) roleEntries(id string) (*dynamodb.QueryInput, error) {
	kc := expression.Key(keys.AttrPK).Equal(expression.Value(keys.PrefixReader + id)).
		And(expression.Key(keys.AttrSK).BeginsWith(keys.PrefixRole))
	in, err := s.db.KeyQuery(kc)
	if err != nil {
		return nil, err
	}
	in.ConsistentRead, in.ProjectionExpression = aws.Bool(true), aws.String("PK, SK")
	return in, nil
}

// owners returns the count of the publication's owners: one consistent
// GetItem.
func (s *Store) owners(ctx context.Context) (int, error) {
	var it struct {
		Owners int `dynamodbav:"owners"`
	}
	if err := s.db.Get(ctx, s.ks.StaffCount(), true, &it); err != nil && !errors.Is(err, ErrNotFound) {
		return 0, fmt.Errorf("owners: %w", err)
	}
	return it.Owners, nil
}

// publicationName returns the slug of the Store's publication, or its id
// when its directory item cannot be read.
func (s *Store) publicationName(ctx context.Context) string {
	if p, err := s.GetPublication(ctx, s.ks.ID()); err == nil {
		return p.Slug
	}
	return s.ks.ID()
}

// closeWithRoles takes away the account's roles and marks it closed with
// upd: one UpdateItem when it holds none, one transaction when it holds
// at most rolesPerTxn (see above). It returns a *LastOwnerError, having changed nothing, when the
// account is the last owner of a publication.
func (s *Store) closeWithRoles(ctx context.Context, id string, upd expression.UpdateBuilder) error {
	_, err := dynamo.RetryWrite(ctx, func() (struct{}, error) {
		roles, err := s.rolesOf(ctx, id)
		if err != nil {
			return struct{}{}, err
		}
		if len(roles) == 0 {
			if _, err := s.db.UpdateIf(ctx, keys.Account(id), upd, dynamo.CondExists()); err != nil {
				return struct{}{}, fmt.Errorf("close account %q: %w", id, err)
			}
			return struct{}{}, nil
		}
		for {
			n := min(len(roles), rolesPerTxn)
			t := s.db.NewTxn()
			errs := []error{}
			for _, r := range roles[:n] {
				errs = append(errs, t.Delete(r.entry, nil, nil))
				if r.m == nil {
					continue
				}
				errs = append(errs, t.Delete(r.st.ks.Staff(id), ptr(expression.Name("version").Equal(expression.Value(r.m.Version))), dynamo.ErrRetry))
				if r.m.Role == RoleOwner {
					errs = append(errs, r.st.ownerCount(t, -1))
				}
			}
			if n == len(roles) {
				errs = append(errs, t.Update(keys.Account(id), upd, ptr(dynamo.CondExists()), ErrNotFound))
			}
			if err := firstErr(errs...); err != nil {
				return struct{}{}, err
			}
			// The roles are in other publications' spaces than the
			// Store's: the transaction names each key it touches.
			switch err := s.db.Unconfined().Exec(ctx, t); {
			case errors.Is(err, ErrLastOwner):
				// An owner left since the count was read: read again,
				// to name the publication.
				return struct{}{}, dynamo.ErrRetry
			case err != nil:
				return struct{}{}, fmt.Errorf("take the roles of account %q: %w", id, err)
			}
			for _, r := range roles[:n] {
				r.st.staff.forget(id)
			}
			if roles = roles[n:]; len(roles) == 0 {
				return struct{}{}, nil
			}
		}
	})
	return err
}
