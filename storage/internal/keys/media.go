package keys

import "github.com/blogql/blog/storage/internal/dynamo"

// The media library's keys. Each is a function, not a constant, so that
// the publication a key belongs to can be added in one place.

const (
	prefixMedia  = "MEDIA#"
	prefixUpload = "UPLOAD#"
	mediaLibrary = "MEDIA"
)

// Media returns the key of the media item id.
func Media(id string) dynamo.Key {
	return dynamo.Key{PK: prefixMedia + id, SK: prefixMedia + id}
}

// MediaLibraryPartition returns the GSI1 partition that lists the media
// library, newest first by MediaLibrarySort.
func MediaLibraryPartition() string { return mediaLibrary }

// MediaLibrarySort returns a media item's sort key in the library's
// partition: its creation time (TimeLayout), then its id.
func MediaLibrarySort(createdAt, id string) string { return createdAt + "#" + id }

// Upload returns the key of the pending upload id, which TTL removes when
// it is never completed.
func Upload(id string) dynamo.Key {
	return dynamo.Key{PK: prefixUpload + id, SK: prefixUpload + id}
}
