package tests

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
)

// Avatars, the logo and the icon from the media library: updateAuthor's
// avatarMediaId and updateSite's logoMediaId and iconMediaId answer
// responsive images, and the uses keep the items from deletion.

// requestsOf returns the DynamoDB requests of the GraphQL request f
// sends, by operation.
func (s *mediaServer) requestsOf(f func()) map[string]int {
	f()
	return s.requests()
}

// refusedInUse checks that deleting the media item id is MEDIA_IN_USE
// with the uses want.
func refusedInUse(t *testing.T, s *mediaServer, id string, want []any) {
	t.Helper()
	_, err := DeleteMedia(context.Background(), s.admin, DeleteMediaInput{Id: id})
	equal(t, "code", code(err), "CONFLICT")
	equal(t, "reason", extension(err, "reason"), any("MEDIA_IN_USE"))
	equal(t, "usedBy", fmt.Sprint(extension(err, "usedBy")), fmt.Sprint(want))
}

func TestMediaAvatar(t *testing.T) {
	s := newMediaServer(t)
	ctx := context.Background()
	a := ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("alice"), Name: "Alice"})).CreateAuthor.Author
	alice := s.as("alice", auth.RoleAuthor)
	file := testJPEG(t, 800, 600)
	item := func() string {
		id, _ := s.upload(t, alice, "me.jpg", "image/jpeg", len(file), file)
		return ok[*CompleteUploadResponse](t)(CompleteUpload(ctx, alice, CompleteUploadInput{Id: id, Alt: ptr("Alice")})).CompleteUpload.Media.Id
	}
	id := item()

	bio := s.requestsOf(func() {
		ok[*UpdateAuthorResponse](t)(UpdateAuthor(ctx, alice, UpdateAuthorInput{Id: a.Id, Bio: ptr("Hi.")}))
	})
	var set *SetAvatarResponse
	withAvatar := s.requestsOf(func() {
		set = ok[*SetAvatarResponse](t)(SetAvatar(ctx, alice, UpdateAuthorInput{Id: a.Id, AvatarMediaId: &id}))
	})
	bio["GetItem"]++ // the media item's read
	equal(t, "requests of a write with avatarMediaId", fmt.Sprint(withAvatar), fmt.Sprint(bio))

	av := set.UpdateAuthor.Author.Avatar
	u := func(w int) string { return fmt.Sprintf("%s/media/%s/%d.jpeg", s.base, id, w) }
	equal(t, "url", av.Url, u(800))
	equal(t, "avatarUrl", *set.UpdateAuthor.Author.AvatarUrl, u(800))
	equal(t, "size", fmt.Sprint(*av.Width, "×", *av.Height), "800×600")
	equal(t, "srcset", *av.Srcset, strings.Join([]string{u(320) + " 320w", u(640) + " 640w", u(800) + " 800w"}, ", "))
	if av.Sizes == nil || av.DominantColor == nil || av.Placeholder == nil || !strings.HasPrefix(*av.Placeholder, "data:image/png;base64,") {
		t.Errorf("avatar %+v: want sizes, a dominant colour and a placeholder", av)
	}
	read := ok[*AuthorAvatarResponse](t)(AuthorAvatar(ctx, s.client, a.Id)).Author.Avatar
	equal(t, "avatar read back", fmt.Sprint(read.Url, *read.Srcset, *read.Placeholder), fmt.Sprint(av.Url, *av.Srcset, *av.Placeholder))

	refusedInUse(t, s, id, []any{map[string]any{"as": "AVATAR", "author": a.Id}})

	t.Run("refused, and nothing written", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			in   UpdateAuthorInput
		}{
			{"an id not in the library", UpdateAuthorInput{Id: a.Id, Bio: ptr("changed"), AvatarMediaId: ptr("0190c8e2-7d1a-7c4e-9b1a-2f0e5d6c7b8a")}},
			{"an id that cannot be one", UpdateAuthorInput{Id: a.Id, Bio: ptr("changed"), AvatarMediaId: ptr("../x")}},
			{"with avatarUrl too", UpdateAuthorInput{Id: a.Id, Bio: ptr("changed"), AvatarMediaId: &id, AvatarUrl: ptr("https://example.com/a.png")}},
		} {
			_, err := SetAvatar(ctx, alice, tc.in)
			equal(t, tc.name+": code", code(err), "BAD_USER_INPUT")
			equal(t, tc.name+": field", extension(err, "field"), any("avatarMediaId"))
		}
		got := ok[*AuthorAvatarResponse](t)(AuthorAvatar(ctx, s.client, a.Id)).Author
		equal(t, "avatar kept", got.Avatar.Url, u(800))
	})

	t.Run("an item gone between the read and the write", func(t *testing.T) {
		gone := &storage.Image{URL: "https://example.com/x.jpeg", Width: 10, Height: 10,
			Media: &storage.Media{ID: "0190c8e2-7d1a-7c4e-9b1a-2f0e5d6c7b8b", Format: "jpeg", Width: 10, Height: 10}}
		_, err := s.store.UpdateAuthor(ctx, storage.AuthorPatch{ID: "alice", Bio: ptr("changed"), AvatarMedia: gone})
		if ve, isVE := errors.AsType[*storage.ValidationError](err); !isVE || ve.Field != "avatarMediaId" {
			t.Fatalf("err %v: want a ValidationError of avatarMediaId", err)
		}
		got := ok[*AuthorAvatarResponse](t)(AuthorAvatar(ctx, s.client, a.Id)).Author
		equal(t, "avatar kept", got.Avatar.Url, u(800))
	})

	t.Run("another avatar frees the old item", func(t *testing.T) {
		other := item()
		ok[*SetAvatarResponse](t)(SetAvatar(ctx, alice, UpdateAuthorInput{Id: a.Id, AvatarMediaId: &other}))
		ok[*DeleteMediaResponse](t)(DeleteMedia(ctx, alice, DeleteMediaInput{Id: id}))
		refusedInUse(t, s, other, []any{map[string]any{"as": "AVATAR", "author": a.Id}})
		ext := "https://example.com/alice.png"
		got := ok[*SetAvatarResponse](t)(SetAvatar(ctx, alice, UpdateAuthorInput{Id: a.Id, AvatarUrl: &ext})).UpdateAuthor.Author
		equal(t, "external avatar", fmt.Sprint(got.Avatar.Url, got.Avatar.Srcset == nil, got.Avatar.Width == nil), fmt.Sprint(ext, true, true))
		ok[*DeleteMediaResponse](t)(DeleteMedia(ctx, alice, DeleteMediaInput{Id: other}))
	})
	s.consistent()
}

func TestMediaSiteLogoAndIcon(t *testing.T) {
	s := newMediaServer(t)
	ctx := context.Background()
	file := testJPEG(t, 400, 200)
	item := func() string {
		id, _ := s.upload(t, s.admin, "logo.jpg", "image/jpeg", len(file), file)
		return ok[*CompleteUploadResponse](t)(CompleteUpload(ctx, s.admin, CompleteUploadInput{Id: id})).CompleteUpload.Media.Id
	}
	id := item()
	version := ok[*SitePicturesResponse](t)(SitePictures(ctx, s.client)).Site.Version

	title := s.requestsOf(func() {
		version = ok[*UpdateSiteResponse](t)(UpdateSite(ctx, s.admin, UpdateSiteInput{ExpectedVersion: version, Title: ptr("Notes")})).UpdateSite.Site.Version
	})
	var set *SetSitePicturesResponse
	pictures := s.requestsOf(func() {
		set = ok[*SetSitePicturesResponse](t)(SetSitePictures(ctx, s.admin, UpdateSiteInput{ExpectedVersion: version, LogoMediaId: &id, IconMediaId: &id}))
	})
	title["GetItem"] += 2 // the media item's reads, one a field
	equal(t, "requests of a write with logoMediaId and iconMediaId", fmt.Sprint(pictures), fmt.Sprint(title))
	site := set.UpdateSite.Site
	version = site.Version
	u := func(w int) string { return fmt.Sprintf("%s/media/%s/%d.jpeg", s.base, id, w) }
	equal(t, "logoUrl", *site.LogoUrl, u(400))
	equal(t, "logo srcset", *site.Logo.Srcset, u(320)+" 320w, "+u(400)+" 400w")
	if site.Logo.Placeholder == nil || site.Logo.DominantColor == nil || site.Icon.Srcset == nil {
		t.Errorf("logo %+v, icon %+v: want a placeholder, a colour and srcsets", site.Logo, site.Icon)
	}
	read := ok[*SitePicturesResponse](t)(SitePictures(ctx, s.client)).Site
	equal(t, "read back", fmt.Sprint(read.Logo.Url, *read.Icon.Srcset), fmt.Sprint(u(400), *site.Icon.Srcset))
	refusedInUse(t, s, id, []any{map[string]any{"as": "ICON"}, map[string]any{"as": "LOGO"}})

	t.Run("refused, and nothing written", func(t *testing.T) {
		for _, tc := range []struct {
			name, field string
			in          UpdateSiteInput
		}{
			{"a logo not in the library", "logoMediaId", UpdateSiteInput{ExpectedVersion: version, Title: ptr("X"), LogoMediaId: ptr("0190c8e2-7d1a-7c4e-9b1a-2f0e5d6c7b8a")}},
			{"an icon with iconUrl too", "iconMediaId", UpdateSiteInput{ExpectedVersion: version, Title: ptr("X"), IconMediaId: &id, IconUrl: ptr("https://example.com/i.png")}},
		} {
			_, err := SetSitePictures(ctx, s.admin, tc.in)
			equal(t, tc.name+": code", code(err), "BAD_USER_INPUT")
			equal(t, tc.name+": field", extension(err, "field"), any(tc.field))
		}
		equal(t, "version", ok[*SitePicturesResponse](t)(SitePictures(ctx, s.client)).Site.Version, version)
	})

	t.Run("URLs instead free the item", func(t *testing.T) {
		other := item()
		version = ok[*SetSitePicturesResponse](t)(SetSitePictures(ctx, s.admin, UpdateSiteInput{ExpectedVersion: version, LogoMediaId: &other, IconUrl: ptr("")})).UpdateSite.Site.Version
		ok[*DeleteMediaResponse](t)(DeleteMedia(ctx, s.admin, DeleteMediaInput{Id: id}))
		refusedInUse(t, s, other, []any{map[string]any{"as": "LOGO"}})
		got := ok[*SetSitePicturesResponse](t)(SetSitePictures(ctx, s.admin, UpdateSiteInput{ExpectedVersion: version, LogoUrl: ptr("https://example.com/logo.png")})).UpdateSite.Site
		equal(t, "external logo", fmt.Sprint(got.Logo.Url, got.Logo.Srcset == nil, got.Icon == nil), fmt.Sprint("https://example.com/logo.png", true, true))
		ok[*DeleteMediaResponse](t)(DeleteMedia(ctx, s.admin, DeleteMediaInput{Id: other}))
	})
	s.consistent()
}
