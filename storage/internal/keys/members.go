package keys

import "github.com/blogql/blog/storage/internal/dynamo"

// The members of a publication: the readers who signed in on it, in its
// space (storage/members.go).

const (
	prefixMember = "MEMBER#"
	// membersPartition is the GSI1 partition that lists a publication's
	// members by email address.
	membersPartition = "MEMBERS"
)

// Member returns the key of the membership of the account accountID.
func (s Space) Member(accountID string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + prefixMember + accountID, SK: prefixMember + accountID}
}

// MembersPartition returns the GSI1 partition of the members, sorted by
// MemberSort, so the members whose address starts with a prefix are one
// begins_with Query.
func (s Space) MembersPartition() string { return s.prefix + membersPartition }

// MemberSort returns a member's sort key in MembersPartition: the address
// (lower case), then the account id, so two accounts never collide.
func MemberSort(email, accountID string) string { return email + "#" + accountID }
