package graph

import (
	"context"
	"errors"
	"fmt"

	"github.com/blogql/blog/storage"
)

// Avatars, the site's logo and its icon from the media library: the
// resolver reads the item (one GetItem) and hands the store its picture;
// the store records the use in the write's transaction
// (storage/mediaowners.go).

// libraryPicture returns the picture of the media item id for the input
// field, or nil when id is nil. With url also given it is a
// *storage.ValidationError (urlField names it), as is an id not in the
// publication's library.
func (r *Resolver) libraryPicture(ctx context.Context, field string, id *string, urlField string, url *string) (*storage.Image, error) {
	if id == nil {
		return nil, nil
	}
	if url != nil {
		return nil, &storage.ValidationError{Field: field, Reason: "cannot go with " + urlField}
	}
	if _, err := r.library(); err != nil {
		return nil, err
	}
	notIn := &storage.ValidationError{Field: field, Reason: fmt.Sprintf("%q is not in the media library", *id)}
	if !storage.ValidID(*id) {
		return nil, notIn
	}
	m, err := r.store.MediaItem(ctx, *id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, notIn
	}
	if err != nil {
		return nil, err
	}
	return r.mediaImage(m)
}

// pictureOf answers Author.avatar, Site.logo and Site.icon: the library's
// picture, else one at the URL, else nil.
func pictureOf(img *storage.Image, url string) *storage.Image {
	switch {
	case img != nil:
		return img
	case url != "":
		return &storage.Image{URL: url}
	}
	return nil
}
