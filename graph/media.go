package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/media"
	"github.com/blogql/blog/storage"
)

// The media library (package media does the work; storage keeps the
// items). A post's cover may be an item (libraryCover); library images
// in Markdown are rendered by the store (storage.WithLibraryImages).
// Usage (which posts show an item) comes later.

// errNoMedia answers the media library's fields on a server without one.
var errNoMedia = &gqlerror.Error{Message: "the media library is not configured on this server",
	Extensions: map[string]any{"code": CodeUnavailable}}

// library returns the media library, or errNoMedia.
func (r *Resolver) library() (*media.Service, error) {
	if r.media == nil {
		return nil, errNoMedia
	}
	return r.media, nil
}

func (r *Resolver) createUpload(ctx context.Context, in model.CreateUploadInput) (*model.CreateUploadPayload, error) {
	a, err := author(ctx)
	if err != nil {
		return nil, err
	}
	lib, err := r.library()
	if err != nil {
		return nil, err
	}
	up, err := lib.CreateUpload(ctx, a.ID, in.Filename, in.ContentType, int64(in.ByteSize))
	if err != nil {
		return nil, err
	}
	out := &model.Upload{ID: up.ID, URL: up.URL, ExpiresAt: up.ExpiresAt}
	names := make([]string, 0, len(up.Headers))
	for k := range up.Headers {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		out.Headers = append(out.Headers, &model.HTTPHeader{Name: k, Value: strings.Join(up.Headers[k], ",")})
	}
	return &model.CreateUploadPayload{Upload: out}, nil
}

func (r *Resolver) completeUpload(ctx context.Context, in model.CompleteUploadInput) (*model.CompleteUploadPayload, error) {
	a, err := author(ctx)
	if err != nil {
		return nil, err
	}
	lib, err := r.library()
	if err != nil {
		return nil, err
	}
	m, err := lib.CompleteUpload(ctx, a.ID, in.ID, deref(in.Alt))
	if err != nil {
		return nil, err
	}
	return &model.CompleteUploadPayload{Media: m}, nil
}

// mediaOwnedBy returns the media item id when the actor of ctx may change
// it: it uploaded it, or is an admin.
func (r *Resolver) mediaOwnedBy(ctx context.Context, id string) (*storage.Media, error) {
	if _, err := author(ctx); err != nil {
		return nil, err
	}
	m, err := r.store.MediaItem(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := actsFor(ctx, m.Owner, "its uploader"); err != nil {
		return nil, err
	}
	return m, nil
}

func (r *Resolver) updateMedia(ctx context.Context, in model.UpdateMediaInput) (*model.UpdateMediaPayload, error) {
	if _, err := r.mediaOwnedBy(ctx, in.ID); err != nil {
		return nil, err
	}
	m, err := r.store.UpdateMediaAlt(ctx, in.ID, in.Alt)
	if err != nil {
		return nil, err
	}
	return &model.UpdateMediaPayload{Media: m}, nil
}

func (r *Resolver) deleteMedia(ctx context.Context, in model.DeleteMediaInput) (*model.DeleteMediaPayload, error) {
	lib, err := r.library()
	if err != nil {
		return nil, err
	}
	m, err := r.mediaOwnedBy(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if err := lib.Delete(ctx, m, deref(in.Force)); err != nil {
		return nil, err
	}
	return &model.DeleteMediaPayload{DeletedID: in.ID}, nil
}

func (r *Resolver) mediaLibrary(ctx context.Context, first *int, after *string) (*model.MediaConnection, error) {
	if _, err := author(ctx); err != nil {
		return nil, err
	}
	p, err := pageOf(first, after, nil, nil)
	if err != nil {
		return nil, err
	}
	res, err := r.store.MediaLibrary(ctx, p)
	if err != nil {
		return nil, err
	}
	return &model.MediaConnection{
		Edges:    edges(res, func(c string, n *storage.Media) *model.MediaEdge { return &model.MediaEdge{Cursor: c, Node: n} }),
		PageInfo: pageInfo(res),
	}, nil
}

// mediaImage returns m as a picture: its widest rendition in its own
// format, with that rendition's size.
func (r *Resolver) mediaImage(m *storage.Media) (*storage.Image, error) {
	lib, err := r.library()
	if err != nil {
		return nil, err
	}
	ws := media.WidthsOf(m)
	w := ws[len(ws)-1]
	h := max(1, (m.Height*w+m.Width/2)/m.Width)
	return &storage.Image{URL: lib.URL(m, w, m.Format), Alt: m.Alt, Width: w, Height: h, Media: m}, nil
}

// imageSrcset answers Image.srcset: null for an external picture.
func (r *Resolver) imageSrcset(img *storage.Image, format *model.ImageFormat) (*string, error) {
	if img.Media == nil {
		return nil, nil
	}
	lib, err := r.library()
	if err != nil {
		return nil, err
	}
	f := img.Media.Format
	if format != nil {
		f = strings.ToLower(string(*format))
		if !slices.Contains(lib.FormatsOf(img.Media), f) {
			return nil, &storage.ValidationError{Field: "format", Reason: fmt.Sprintf("no renditions in %s: %s only", *format,
				strings.ToUpper(strings.Join(lib.FormatsOf(img.Media), ", ")))}
		}
	}
	s := lib.Srcset(img.Media, f)
	return &s, nil
}

// mediaField returns f of img's media item, or nil for an external
// picture or a field it does not keep (a cover's placeholder).
func mediaField(img *storage.Image, f func(*storage.Media) string) *string {
	if img.Media == nil {
		return nil
	}
	s := f(img.Media)
	if s == "" {
		return nil
	}
	return &s
}

// the format of m as the schema's enum.
func mediaFormat(m *storage.Media) model.ImageFormat {
	return model.ImageFormat(strings.ToUpper(m.Format))
}

// libraryCover returns the cover a post's input asks for: the media item
// id when given (cover must be nil then: setCover says whether the input
// set coverImage), else cover. An id not in the library is a
// *storage.ValidationError of coverMediaId.
func (r *Resolver) libraryCover(ctx context.Context, id *string, cover *storage.Image, setCover bool) (*storage.Image, error) {
	if id == nil {
		return cover, nil
	}
	if setCover {
		return nil, &storage.ValidationError{Field: "coverMediaId", Reason: "cannot go with coverImage"}
	}
	m, err := r.store.MediaItem(ctx, *id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, &storage.ValidationError{Field: "coverMediaId", Reason: fmt.Sprintf("%q is not in the media library", *id)}
	}
	if err != nil {
		return nil, err
	}
	return r.mediaImage(m)
}
