package keys

import (
	"errors"
	"strings"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// PrefixPublication starts the partition key of every item of a
// publication ("PUB#<pubId>#POST#<postId>"), and the key of a
// publication's directory item (Directory).
const PrefixPublication = "PUB#"

// PrefixDirectory is the namespace of the publications' directory items,
// which are global.
const PrefixDirectory = "PUBLICATION#"

// A Space is the key space of one publication: every builder of a
// publication's items is a method of it, and puts the publication's prefix
// before the partition key and the GSI1 partition it returns, so one
// publication's items never share a partition with another's. Sort keys
// are the same in every space. The zero Space is none: use In.
type Space struct {
	id     string
	prefix string
}

// ErrBadPublicationID means a publication id is empty or holds a "#",
// which would make its prefix ambiguous.
var ErrBadPublicationID = errors.New("a publication id is not empty and holds no #")

// In returns the key space of the publication pubID, or ErrBadPublicationID.
func In(pubID string) (Space, error) {
	if pubID == "" || strings.Contains(pubID, "#") {
		return Space{}, ErrBadPublicationID
	}
	return Space{id: pubID, prefix: PrefixPublication + pubID + "#"}, nil
}

// MustIn is In for a publication id known to be good; it panics on a bad
// one.
func MustIn(pubID string) Space {
	s, err := In(pubID)
	if err != nil {
		panic(err)
	}
	return s
}

// ID returns the id of the space's publication.
func (s Space) ID() string { return s.id }

// Prefix returns what every partition key of the space starts with:
// "PUB#<pubId>#".
func (s Space) Prefix() string { return s.prefix }

// Partition returns the partition (of the table or of GSI1) name in the
// space: a fixed partition (FeedPartition, AuthorsPartition…) or the
// prefix of a family of them (PrefixPost…), to compare a read key with.
func (s Space) Partition(name string) string { return s.prefix + name }

// Local returns pk without the space's prefix, and whether pk is in the
// space; a key of another space or a global one is not.
func (s Space) Local(pk string) (string, bool) {
	if s.prefix == "" || !strings.HasPrefix(pk, s.prefix) {
		return pk, false
	}
	return pk[len(s.prefix):], true
}

// Of returns the publication id of the key pk, or false when pk is
// global (of no publication).
func Of(pk string) (string, bool) {
	rest, ok := strings.CutPrefix(pk, PrefixPublication)
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, "#")
	return id, ok && id != ""
}

// Directory is the directory item of the publication pubID: global, so a
// server finds the publications of the table.
func Directory(pubID string) dynamo.Key {
	return dynamo.Key{PK: PrefixDirectory + pubID, SK: PrefixDirectory + pubID}
}

// Global lists the key families that belong to no publication: the
// partition keys, or their prefixes, that the tenant guard of the table
// primitives lets a publication's requests touch. Every other partition
// key of the table starts with a publication's prefix.
var Global = []string{
	// LayoutPartition is the table's layout item, and the layout
	// migration's checkpoint beside it.
	"LAYOUT",
	// The publications' directory (publications.go): directory items,
	// their GSI1 partition, and the claims of slugs and hosts.
	PrefixDirectory,
	PublicationsPartition,
	PrefixPublicationSlug,
	PrefixHost,
	PrefixSecret,
	PrefixPersisted,
	PrefixReader,
	// The go-live index (GSI1 only): every publication's schedule items,
	// by time, for the "schedule" worker (storage/schedule_index.go).
	GoLivePartition,
	// The change feed's leases, heartbeats and event log
	// (storage/feedstore): one stream per table.
	"LEASES",
	"EVENTLOG",
	// Readers' platform accounts, their sessions and sign-in requests
	// (signin.go): a reader signs in once for every publication.
	PrefixAccount,
	PrefixAccountEmail,
	PrefixSignIn,
	PrefixSignInCode,
	PrefixSignInRate,
	// The mail outbox and its queue: sign-in emails are the platform's.
	MailPartition,
	MailQueuePartition,
	MailUrgentPartition,
	PrefixMailTo,
}
