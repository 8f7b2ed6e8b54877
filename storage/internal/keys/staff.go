package keys

import (
	"strings"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// The staff of a publication: one membership item per account with its
// role, and one item that counts the owners (storage/staff.go), both in
// the publication's space.

const (
	prefixStaff = "STAFF#"
	// staffPartition is the GSI1 partition that lists a publication's
	// staff by account id.
	staffPartition = "STAFF"
	// staffCount is the item that counts a publication's owners.
	staffCount = "STAFFCOUNT"
)

// Staff returns the key of the staff membership of the account accountID.
func (s Space) Staff(accountID string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + prefixStaff + accountID, SK: prefixStaff + accountID}
}

// StaffPartition returns the GSI1 partition of the staff memberships,
// sorted by account id.
func (s Space) StaffPartition() string { return s.prefix + staffPartition }

// StaffCount returns the key of the item counting the publication's
// owners, which every change of an owner updates in its transaction.
func (s Space) StaffCount() dynamo.Key {
	return dynamo.Key{PK: s.prefix + staffCount, SK: staffCount}
}

// IsStaff reports whether the key pk, sk (pk without the publication's
// prefix) is a staff membership's.
func IsStaff(pk, sk string) bool {
	return strings.HasPrefix(pk, prefixStaff) && pk == sk
}
