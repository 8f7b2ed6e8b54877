package storage

import (
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// Pictures of the media library outside posts: an author's avatar and
// the site's logo and icon. The author or site item keeps the picture
// (its placeholder too: neither is copied anywhere), and the media item
// keeps the use in usedBy, "avatar:<authorId>", "logo:site" or
// "icon:site", added or deleted in the transaction of the profile's or
// the settings' write, as mediarefs.go does for posts: an entry is added
// only under the condition that the item is in the library, so an id
// gone since the resolver read it is a *ValidationError of its field and
// nothing is written.

// siteUser is the id of the site's uses of media items.
const siteUser = "site"

// libraryImageItem returns the stored form of img, an image of the media
// library or at an external URL, with the library item's placeholder.
func libraryImageItem(img *Image) *imageItem {
	if img == nil {
		return nil
	}
	it := &imageItem{URL: img.URL, Alt: img.Alt, Width: img.Width, Height: img.Height}
	if m := img.Media; m != nil {
		it.Media = &imageMediaItem{ID: m.ID, Format: m.Format, Width: m.Width, Height: m.Height, Frames: m.Frames,
			DominantColor: m.DominantColor, Placeholder: m.Placeholder}
	}
	return it
}

// libraryID returns the id of the library item img is, or "".
func (it *imageItem) libraryID() string {
	if it == nil || it.Media == nil {
		return ""
	}
	return it.Media.ID
}

// pictureUseActions adds to t the changes of the usedBy entries of user
// (an author's id, or siteUser) from was to is, each a map of the role
// ("avatar", "logo", "icon") to the media id it shows ("" for none).
// fields names each role's input field for the error of an id not in the
// library. One media item gets one action: a write that moves an item
// from one role to another of the same user (the logo becomes the icon
// as the icon becomes the logo) is a *ValidationError, as DynamoDB
// cannot add and delete a set's members in one update.
func (s *Store) pictureUseActions(t *dynamo.Txn, user string, was, is, fields map[string]string) error {
	type change struct{ add, del []string }
	byID := map[string]*change{}
	at := func(id string) *change {
		if byID[id] == nil {
			byID[id] = &change{}
		}
		return byID[id]
	}
	for _, role := range sortedKeys(fields) {
		if was[role] == is[role] {
			continue
		}
		if id := is[role]; id != "" {
			at(id).add = append(at(id).add, role)
		}
		if id := was[role]; id != "" {
			at(id).del = append(at(id).del, role)
		}
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	entries := func(roles []string) expression.ValueBuilder {
		v := make([]string, len(roles))
		for i, r := range roles {
			v[i] = r + ":" + user
		}
		return expression.Value(&types.AttributeValueMemberSS{Value: v})
	}
	for _, id := range ids {
		c := byID[id]
		switch {
		case len(c.add) > 0 && len(c.del) > 0:
			return invalid(fields[c.add[0]], "media:%s moves from one picture to another: change them in two updates", id)
		case len(c.add) > 0:
			inLibrary := expression.Name("type").Equal(expression.Value(typeMedia))
			gone := invalid(fields[c.add[0]], "%q is not in the media library", id)
			if err := t.Update(s.ks.Media(id), expression.Add(expression.Name("usedBy"), entries(c.add)), &inLibrary, gone); err != nil {
				return fmt.Errorf("use media %s: %w", id, err)
			}
		default:
			// Without a condition, as for posts: the item is in the
			// library or a tombstone that keeps its uses.
			if err := t.Update(s.ks.Media(id), expression.Delete(expression.Name("usedBy"), entries(c.del)), nil, nil); err != nil {
				return fmt.Errorf("stop using media %s: %w", id, err)
			}
		}
	}
	return nil
}

// pictureIDs returns the media ids of the site's logo and icon by role.
func (s *Site) pictureIDs() map[string]string {
	id := func(img *Image) string {
		if img == nil || img.Media == nil {
			return ""
		}
		return img.Media.ID
	}
	return map[string]string{"logo": id(s.Logo), "icon": id(s.Icon)}
}

// setPictures sets the logo and the icon in gives: a URL given drops the
// library's picture, a library picture sets the URL to its own.
func (s *Site) setPictures(in *SitePatch) {
	for _, p := range []struct {
		img   **Image
		url   *string
		media *Image
		given *string
	}{{&s.Logo, &s.LogoURL, in.LogoMedia, in.LogoURL}, {&s.Icon, &s.IconURL, in.IconMedia, in.IconURL}} {
		if p.given != nil {
			*p.img = nil
		}
		if p.media != nil {
			*p.img, *p.url = p.media, p.media.URL
		}
	}
}
