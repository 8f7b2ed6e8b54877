package keys

import "github.com/blogql/blog/storage/internal/dynamo"

// The media library's keys: a publication's, in its space.

const (
	prefixMedia  = "MEDIA#"
	prefixUpload = "UPLOAD#"
	mediaLibrary = "MEDIA"
)

// Media returns the key of the media item id.
func (s Space) Media(id string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + prefixMedia + id, SK: prefixMedia + id}
}

// MediaLibraryPartition returns the GSI1 partition that lists the media
// library, newest first by MediaLibrarySort.
func (s Space) MediaLibraryPartition() string { return s.prefix + mediaLibrary }

// MediaLibrarySort returns a media item's sort key in the library's
// partition: its creation time (TimeLayout), then its id.
func MediaLibrarySort(createdAt, id string) string { return createdAt + "#" + id }

// Upload returns the key of the pending upload id, which TTL removes when
// it is never completed.
func (s Space) Upload(id string) dynamo.Key {
	return dynamo.Key{PK: s.prefix + prefixUpload + id, SK: prefixUpload + id}
}

// mediaUsage names the counter of a publication's media library.
const mediaUsage = "MEDIAUSAGE"

// MediaUsage returns the key of the counter of the bytes and files of the
// publication's media library, which its quota bounds.
func (s Space) MediaUsage() dynamo.Key {
	return dynamo.Key{PK: s.prefix + mediaUsage, SK: mediaUsage}
}
