package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Staff: the accounts that write or run a publication, each with one role
// in it. A membership is one item in the publication's space
// (STAFF#<account>), listed in GSI1 partition STAFF by account id; the
// publication's owners are counted in one more item (STAFFCOUNT), which
// every transaction that makes, unmakes or removes an owner updates, on
// the condition that at least one owner is left: two owners removing each
// other at once are two transactions on that item, and the second is
// refused (ErrLastOwner). A change or removal holds on the condition that
// the membership is still the version read, so what the caller was
// allowed to change (AddStaff's and ChangeStaffRole's guard) is what
// changes. Request budgets:
//
//	AddStaff          1 TransactWriteItems
//	ChangeStaffRole   1 GetItem (consistent) + 1 TransactWriteItems
//	RemoveStaff       1 GetItem (consistent) + 1 TransactWriteItems
//	StaffMembers      1 Query of GSI1 a page
//	StaffRoleOf       1 GetItem, none while held (staffHold)
//	AccountIDByEmail  1 GetItem

// StaffRole is a role in a publication.
type StaffRole string

// The roles, from the most to the least trusted.
const (
	RoleOwner       StaffRole = "OWNER"
	RoleAdmin       StaffRole = "ADMIN"
	RoleEditor      StaffRole = "EDITOR"
	RoleAuthor      StaffRole = "AUTHOR"
	RoleContributor StaffRole = "CONTRIBUTOR"
)

// Valid reports whether r is one of the roles.
func (r StaffRole) Valid() bool {
	switch r {
	case RoleOwner, RoleAdmin, RoleEditor, RoleAuthor, RoleContributor:
		return true
	}
	return false
}

// ErrLastOwner means a change would leave the publication without an
// owner.
var ErrLastOwner = errors.New("a publication keeps at least one owner: make another owner first")

const (
	typeStaff      = "staff"
	typeStaffCount = "staffCount"
)

// staffHold is how long a server holds an account's role in a
// publication: a role removed or changed on another server takes effect
// when the change feed brings its event (ForgetStaff), and within
// staffHold should the feed stall (at once on the server that changed
// it).
const staffHold = 5 * time.Second

// maxStaffHeld bounds the roles a Store's publication holds.
const maxStaffHeld = 10_000

// StaffMember is an account's membership of the publication's staff.
type StaffMember struct {
	AccountID string
	Email     string
	Role      StaffRole
	CreatedAt time.Time
	UpdatedAt time.Time
	Version   int64
}

type staffItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	GSI1PK    string `dynamodbav:"GSI1PK"`
	GSI1SK    string `dynamodbav:"GSI1SK"`
	Type      string `dynamodbav:"type"`
	AccountID string `dynamodbav:"accountId"`
	Email     string `dynamodbav:"email,omitempty"`
	Role      string `dynamodbav:"role"`
	CreatedAt string `dynamodbav:"createdAt"`
	UpdatedAt string `dynamodbav:"updatedAt"`
	Version   int64  `dynamodbav:"version"`
}

func (it *staffItem) member() *StaffMember {
	return &StaffMember{AccountID: it.AccountID, Email: it.Email, Role: StaffRole(it.Role),
		CreatedAt: keys.ParseTime(it.CreatedAt), UpdatedAt: keys.ParseTime(it.UpdatedAt), Version: it.Version}
}

// NewStaff is the input of AddStaff.
type NewStaff struct {
	AccountID string
	Email     string
	Role      StaffRole
}

// validateStaff checks an account id (an account's id, or the subject of
// staff tokens: at most MaxIDLength bytes, which keeps a page's cursor
// small) and a role.
func validateStaff(accountID string, role StaffRole) error {
	if validateReaderID(accountID) != nil || len(accountID) > MaxIDLength {
		return invalid("account", "must be 1 to %d bytes of UTF-8 without control characters", MaxIDLength)
	}
	if !role.Valid() {
		return invalid("role", "must be OWNER, ADMIN, EDITOR, AUTHOR or CONTRIBUTOR")
	}
	return nil
}

// ownerCount adds to t the update of the owners' count by delta; a
// decrease holds only while another owner is left (else ErrLastOwner).
func (s *Store) ownerCount(t *dynamo.Txn, delta int) error {
	upd := expression.Add(expression.Name("owners"), expression.Value(delta)).
		Set(expression.Name("type"), expression.Value(typeStaffCount))
	var cond *expression.ConditionBuilder
	if delta < 0 {
		cond = ptr(expression.Name("owners").GreaterThan(expression.Value(-delta)))
	}
	return t.Update(s.ks.StaffCount(), upd, cond, ErrLastOwner)
}

// AddStaff makes the account in.AccountID a member of the publication's
// staff with the role in.Role: one transaction, under
// attribute_not_exists, with the owners' count when the role is owner.
// An account already on the staff is ErrAlreadyExists; a bad account id
// or role a *ValidationError; nothing is written then.
func (s *Store) AddStaff(ctx context.Context, in NewStaff) (*StaffMember, error) {
	t := s.db.NewTxn()
	it, err := s.putStaff(t, in, s.Now())
	if err != nil {
		return nil, err
	}
	if err := s.db.Exec(ctx, t); err != nil {
		return nil, fmt.Errorf("add %q to the staff: %w", in.AccountID, err)
	}
	s.staff.forget(in.AccountID)
	return it.member(), nil
}

// putStaff adds to t the membership in, under attribute_not_exists
// (ErrAlreadyExists), with the entry of the role in the account's trail
// (refused with ErrAccountClosed for an account being deleted) and the
// owners' count when its role is owner. A bad account id or role is a
// *ValidationError.
func (s *Store) putStaff(t *dynamo.Txn, in NewStaff, at time.Time) (staffItem, error) {
	if err := validateStaff(in.AccountID, in.Role); err != nil {
		return staffItem{}, err
	}
	now := keys.Time(at)
	k := s.ks.Staff(in.AccountID)
	it := staffItem{PK: k.PK, SK: k.SK, GSI1PK: s.ks.StaffPartition(), GSI1SK: in.AccountID, Type: typeStaff,
		AccountID: in.AccountID, Email: in.Email, Role: string(in.Role), CreatedAt: now, UpdatedAt: now, Version: 1}
	errs := []error{t.Put(it, ptr(dynamo.CondNotExists()), ErrAlreadyExists), s.leaveRole(t, in.AccountID, at)}
	if in.Role == RoleOwner {
		errs = append(errs, s.ownerCount(t, 1))
	}
	return it, firstErr(errs...)
}

// AccountIDByEmail returns the id of the platform account of the address
// email (one GetItem), ErrNotFound when it has none, or a
// *ValidationError for a malformed address.
func (s *Store) AccountIDByEmail(ctx context.Context, email string) (string, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return "", err
	}
	var it accountEmailItem
	if err := s.db.Get(ctx, keys.AccountEmail(email), false, &it); err != nil {
		return "", fmt.Errorf("account of an address: %w", err)
	}
	return it.AccountID, nil
}

// StaffMemberOf returns the staff membership of the account accountID
// (one GetItem, consistent when asked), or ErrNotFound.
func (s *Store) StaffMemberOf(ctx context.Context, accountID string, consistent bool) (*StaffMember, error) {
	if validateReaderID(accountID) != nil || len(accountID) > MaxIDLength {
		return nil, fmt.Errorf("staff member: %w", ErrNotFound)
	}
	var it staffItem
	if err := s.db.Get(ctx, s.ks.Staff(accountID), consistent, &it); err != nil {
		return nil, fmt.Errorf("staff member %q: %w", accountID, err)
	}
	return it.member(), nil
}

// StaffGuard decides whether a change of the member m may go on: it
// returns nil, or the error the change fails with.
type StaffGuard func(m *StaffMember) error

// ChangeStaffRole gives the member accountID the role role when guard
// allows it of the membership read: one consistent GetItem and one
// transaction on the condition that the membership is the version read
// (read again if not), with the owners' count when an owner is made or
// unmade. It returns ErrNotFound for an account not on the staff and
// ErrLastOwner when it would leave no owner.
func (s *Store) ChangeStaffRole(ctx context.Context, accountID string, role StaffRole, guard StaffGuard) (*StaffMember, error) {
	if err := validateStaff(accountID, role); err != nil {
		return nil, err
	}
	return dynamo.RetryWrite(ctx, func() (*StaffMember, error) {
		m, err := s.StaffMemberOf(ctx, accountID, true)
		if err != nil {
			return nil, err
		}
		if err := guard(m); err != nil {
			return nil, err
		}
		if m.Role == role {
			return m, nil
		}
		now := s.Now()
		t := s.db.NewTxn()
		upd := expression.Set(expression.Name("role"), expression.Value(string(role))).
			Set(expression.Name("updatedAt"), expression.Value(keys.Time(now))).
			Set(expression.Name("version"), expression.Value(m.Version+1))
		errs := []error{t.Update(s.ks.Staff(accountID), upd, ptr(expression.Name("version").Equal(expression.Value(m.Version))), dynamo.ErrRetry)}
		switch {
		case m.Role == RoleOwner:
			errs = append(errs, s.ownerCount(t, -1))
		case role == RoleOwner:
			errs = append(errs, s.ownerCount(t, 1))
		}
		if err := firstErr(errs...); err != nil {
			return nil, err
		}
		if err := s.db.Exec(ctx, t); err != nil {
			return nil, fmt.Errorf("change the role of %q: %w", accountID, err)
		}
		s.staff.forget(accountID)
		m.Role, m.UpdatedAt, m.Version = role, now, m.Version+1
		return m, nil
	})
}

// RemoveStaff takes the member accountID off the staff when guard allows
// it of the membership read: one consistent GetItem and one transaction
// on the condition that the membership is the version read, with the
// owners' count for an owner. It returns the membership removed,
// ErrNotFound, or ErrLastOwner for the last owner.
func (s *Store) RemoveStaff(ctx context.Context, accountID string, guard StaffGuard) (*StaffMember, error) {
	return dynamo.RetryWrite(ctx, func() (*StaffMember, error) {
		m, err := s.StaffMemberOf(ctx, accountID, true)
		if err != nil {
			return nil, err
		}
		if err := guard(m); err != nil {
			return nil, err
		}
		t := s.db.NewTxn()
		errs := []error{t.Delete(s.ks.Staff(accountID), ptr(expression.Name("version").Equal(expression.Value(m.Version))), dynamo.ErrRetry),
			t.Delete(s.ks.Role(accountID), nil, nil)}
		if m.Role == RoleOwner {
			errs = append(errs, s.ownerCount(t, -1))
		}
		if err := firstErr(errs...); err != nil {
			return nil, err
		}
		if err := s.db.Exec(ctx, t); err != nil {
			return nil, fmt.Errorf("remove %q from the staff: %w", accountID, err)
		}
		s.staff.forget(accountID)
		return m, nil
	})
}

// StaffMembers returns a page of the publication's staff by account id:
// one Query of GSI1.
func (s *Store) StaffMembers(ctx context.Context, p PageArgs) (*Result[*StaffMember], error) {
	cond := expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.StaffPartition()))
	return queryPage(ctx, s, listQuery{list: "staff", index: true, forward: true, cond: cond}, p, (*staffItem).member)
}

// StaffRoleOf returns the role of the account accountID in the
// publication, or "" when it is not on the staff: one GetItem, none while
// the server holds the answer (staffHold), which a change made through
// this server drops at once and one made on another server when this
// server's change feed brings its event (ForgetStaff).
func (s *Store) StaffRoleOf(ctx context.Context, accountID string) (StaffRole, error) {
	now := s.Now()
	role, ok, epoch := s.staff.get(accountID, now)
	if ok {
		return role, nil
	}
	m, err := s.StaffMemberOf(ctx, accountID, false)
	switch {
	case errors.Is(err, ErrNotFound):
		role = ""
	case err != nil:
		return "", err
	default:
		role = m.Role
	}
	s.staff.put(accountID, role, now, epoch)
	return role, nil
}

// staffCache holds the roles of a publication's accounts for staffHold.
// Its epoch counts what was forgotten, so that a role read before a
// change is forgotten is not kept after.
type staffCache struct {
	mu    sync.Mutex
	held  map[string]heldRole
	epoch uint64
}

type heldRole struct {
	role StaffRole
	at   time.Time
}

// get returns the role held of accountID, whether one is held, and the
// epoch to put a role read now with.
func (c *staffCache) get(accountID string, now time.Time) (StaffRole, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.held[accountID]
	if !ok || now.Sub(h.at) >= staffHold || now.Before(h.at) {
		return "", false, c.epoch
	}
	return h.role, true, c.epoch
}

// put holds role for accountID, unless something was forgotten since
// epoch.
func (c *staffCache) put(accountID string, role StaffRole, now time.Time, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != epoch {
		return
	}
	if c.held == nil {
		c.held = map[string]heldRole{}
	}
	for old := range c.held {
		if len(c.held) < maxStaffHeld {
			break
		}
		delete(c.held, old)
	}
	c.held[accountID] = heldRole{role: role, at: now}
}

func (c *staffCache) forget(accountID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.held, accountID)
	c.epoch++
}
