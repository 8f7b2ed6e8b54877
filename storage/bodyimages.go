package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/blogql/blog/markdown"
)

// Library images in bodies: `![alt](media:<id>)` in a post's or a page's
// Markdown shows the media item <id> of the Store's publication
// (markdown/library.go). Before a body is rendered, the media items it
// names are read in one BatchGetItem (none when it names none), so the
// rendering is a function of the body and of those items: rendered again
// (the background re-render, Check, an idempotent resend) it gives the
// same HTML while they stand. A body written with an image that is not in
// the library (never was, another publication's, deleted) is refused;
// rendered again after its item was deleted, the image shows as its alt
// text, and Check reports the post or page whose HTML no longer matches.

// LibraryImageFunc returns how a body shows the media item m.
type LibraryImageFunc func(m *Media) markdown.LibraryImage

// libraryImages is how the Store shows the media library's images in
// bodies (WithLibraryImages).
type libraryImages struct {
	image LibraryImageFunc
}

// WithLibraryImages makes the Store render library images in bodies as
// image gives them; version names how image makes them (their URLs): it
// is part of the renderer's version, so another renders bodies again.
// Without it a library image shows as its alt text and is not checked.
func WithLibraryImages(image LibraryImageFunc, version string) Option {
	return func(s *Store) {
		s.images = &libraryImages{image: image}
		s.render.ImagesVersion = version
	}
}

// renderOptions returns the options to render body with: the Store's,
// with the media items the body names. With require, a library image that
// is not in the library fails the rendering (a *ValidationError from
// derive), and so does naming more than markdown.MaxLibraryImages ids.
func (s *Store) renderOptions(ctx context.Context, body string, require bool) (markdown.Options, error) {
	opts := s.render
	if s.images == nil {
		return opts, nil
	}
	ids, ok := markdown.LibraryIDs(body)
	if !ok && require {
		return opts, invalid("body", "names more than %d media ids", markdown.MaxLibraryImages)
	}
	opts.RequireImages = require
	if len(ids) == 0 {
		return opts, nil
	}
	ks := make([]key, len(ids))
	for i, id := range ids {
		ks[i] = s.ks.Media(id)
	}
	found, err := s.db.BatchGet(ctx, ks, false)
	if err != nil {
		return opts, fmt.Errorf("read the media of a body: %w", err)
	}
	opts.Images = make(map[string]markdown.LibraryImage, len(found))
	for _, av := range found {
		var it mediaItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return opts, fmt.Errorf("decode media item: %w", err)
		}
		if it.Type == typeMedia {
			opts.Images[it.ID] = s.images.image(it.media())
		}
	}
	return opts, nil
}

// deriveBody renders it's body with the media items it names, as
// renderOptions reads them, and sets what derive derives.
func (s *Store) deriveBody(ctx context.Context, it *postItem, require bool) error {
	opts, err := s.renderOptions(ctx, it.Body, require)
	if err != nil {
		return err
	}
	return it.derive(ctx, opts)
}

// setPageBody is deriveBody for a page.
func (s *Store) setPageBody(ctx context.Context, it *pageItem, body string, require bool) error {
	opts, err := s.renderOptions(ctx, body, require)
	if err != nil {
		return err
	}
	return it.setBody(ctx, opts, body)
}

// isUnknownImage reports whether err is a library image not found.
func isUnknownImage(err error) bool {
	var u *markdown.UnknownImageError
	return errors.As(err, &u)
}
