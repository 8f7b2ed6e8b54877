package keys

import "github.com/blogql/blog/storage/internal/dynamo"

// The publications' directory is global: a publication's directory item
// (Directory), the claim of its slug and one claim of each of its hosts.
// A claim's key is its name, so a transaction that puts it under
// attribute_not_exists gives each slug and host to one publication.
const (
	// PrefixPublicationSlug starts the key of a publication slug's claim.
	PrefixPublicationSlug = "PUBLICATIONSLUG#"
	// PrefixHost starts the key of a host's claim.
	PrefixHost = "HOST#"
	// PublicationsPartition is the GSI1 partition of every directory
	// item, by slug: the platform's list of publications.
	PublicationsPartition = "PUBLICATIONS"
)

// PublicationSlug is the claim of a publication's slug.
func PublicationSlug(slug string) dynamo.Key {
	return dynamo.Key{PK: PrefixPublicationSlug + slug, SK: PrefixPublicationSlug + slug}
}

// Host is the claim of a host (a domain name) by a publication.
func Host(host string) dynamo.Key {
	return dynamo.Key{PK: PrefixHost + host, SK: PrefixHost + host}
}

// GoLivePartition is the GSI1 partition of every publication's schedule
// items (the go-live index): global, so one Query finds the posts due in
// every publication. An item's GSI1SK is GoLiveSort.
const GoLivePartition = "GOLIVE"

// GoLiveSort is the GSI1 sort key of the schedule item of the post postID
// of the publication pubID, scheduled at the key time at: by time first,
// so the posts due are a range.
func GoLiveSort(at, pubID, postID string) string { return at + "#" + pubID + "#" + postID }
