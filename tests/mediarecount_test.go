package tests

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/media"
	"github.com/blogql/blog/storage"
)

// Recounting the media library of a table whose media predate the
// quota's counter and usage tracking (blog media recount).

// oldShape turns the library of s into what it was before the counter
// and usedBy existed: no counter item, and no usage entries on ids.
func (s *mediaServer) oldShape(t *testing.T, ids ...string) {
	t.Helper()
	ctx := context.Background()
	pk := func(v string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "PUB#" + storage.DefaultPublication + "#" + v},
			"SK": &types.AttributeValueMemberS{Value: v}}
	}
	if _, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: pk("MEDIAUSAGE")}); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: pk("MEDIA#" + id),
			UpdateExpression: aws.String("REMOVE usedBy")}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMediaRecount(t *testing.T) {
	file := testJPEG(t, 400, 300)
	size := len(file)
	s := newMediaServer(t, func(o *media.Options) { o.Quota = storage.MediaQuota{Bytes: int64(3*size + size/2)} })
	ctx := context.Background()
	a := ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("alice"), Name: "Alice"})).CreateAuthor.Author
	alice := s.as("alice", auth.RoleAuthor)
	item := func(f []byte) string {
		id, _ := s.upload(t, alice, "x.jpg", "image/jpeg", len(f), f)
		return ok[*CompleteUploadResponse](t)(CompleteUpload(ctx, alice, CompleteUploadInput{Id: id})).CompleteUpload.Media.Id
	}
	cover, inBody, avatar := item(file), item(file), item(file)
	body := fmt.Sprintf("![A](media:%s)\n", inBody)
	p := ok[*CreatePostResponse](t)(CreatePost(ctx, alice, CreatePostInput{Title: "Old", Slug: "old", CoverMediaId: &cover, Body: &body})).CreatePost.Post
	ok[*SetAvatarResponse](t)(SetAvatar(ctx, alice, UpdateAuthorInput{Id: a.Id, AvatarMediaId: &avatar}))
	s.oldShape(t, cover, inBody, avatar)
	u := s.usage(t)
	equal(t, "usage of the old shape", fmt.Sprint(u.Bytes, " ", u.Files), "0 0")

	for i, want := range []string{"0 → 3, 3 uses added", "3 → 3, 0 uses added"} {
		r, err := s.store.RecountMedia(ctx)
		if err != nil {
			t.Fatal(err)
		}
		equal(t, fmt.Sprintf("recount %d: files", i+1), fmt.Sprintf("%d → %d, %d uses added", r.Before.Files, r.After.Files, r.UsesAdded), want)
		u := s.usage(t)
		equal(t, fmt.Sprintf("usage after recount %d", i+1), fmt.Sprint(u.Bytes, " ", u.Files), fmt.Sprint(3*size, " ", 3))
	}

	t.Run("the quota then refuses what passes it", func(t *testing.T) {
		_, err := CreateUpload(ctx, alice, CreateUploadInput{Filename: "y.jpg", ContentType: "image/jpeg", ByteSize: size})
		quotaError(t, "createUpload", err, "BYTES", 3*size, 3*size+size/2)
		small := testJPEG(t, 20, 20)
		item(small)
		equal(t, "usage", s.usage(t).Bytes, 3*size+len(small))
	})

	t.Run("items in use before tracking are refused deletion", func(t *testing.T) {
		refusedInUse(t, s, cover, []any{map[string]any{"as": "COVER", "post": p.Id}})
		refusedInUse(t, s, inBody, []any{map[string]any{"as": "BODY", "post": p.Id}})
		refusedInUse(t, s, avatar, []any{map[string]any{"as": "AVATAR", "author": a.Id}})
	})
	s.consistent()
}

// TestMediaRecountConcurrentCompletions recounts a library of the old
// shape while uploads complete and items are deleted: whichever order
// they take, the counter ends equal to the library.
func TestMediaRecountConcurrentCompletions(t *testing.T) {
	const n = 6
	file := testJPEG(t, 200, 150)
	size := len(file)
	s := newMediaServer(t)
	ctx := context.Background()
	alice := s.as("alice", auth.RoleAuthor)
	var old []string
	for range n {
		id, _ := s.upload(t, alice, "o.jpg", "image/jpeg", size, file)
		old = append(old, ok[*CompleteUploadResponse](t)(CompleteUpload(ctx, alice, CompleteUploadInput{Id: id})).CompleteUpload.Media.Id)
	}
	s.oldShape(t)
	fresh := make([]string, n)
	for i := range fresh {
		fresh[i], _ = s.upload(t, alice, "n.jpg", "image/jpeg", size, file)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := s.store.RecountMedia(ctx); err != nil {
			t.Errorf("recount: %v", err)
		}
	})
	for i := range n {
		wg.Go(func() {
			if _, err := CompleteUpload(ctx, alice, CompleteUploadInput{Id: fresh[i]}); err != nil {
				t.Errorf("completeUpload: %v", err)
			}
		})
	}
	for _, id := range old[:n/2] {
		wg.Go(func() {
			if _, err := DeleteMedia(ctx, alice, DeleteMediaInput{Id: id}); err != nil {
				t.Errorf("deleteMedia: %v", err)
			}
		})
	}
	wg.Wait()
	lib := ok[*MediaLibraryResponse](t)(MediaLibrary(ctx, alice, ptr(100), nil, nil)).Media.Edges
	equal(t, "library items", len(lib), n+n-n/2)
	u := s.usage(t)
	equal(t, "usage", fmt.Sprint(u.Bytes, " ", u.Files), fmt.Sprint(len(lib)*size, " ", len(lib)))
}
