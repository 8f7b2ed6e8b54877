package tests

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/media"
	"github.com/blogql/blog/storage"
)

// The media library's quota: bytes and files per publication, checked
// when an upload starts (its declared size) and when it completes (its
// actual size, in the transaction that counts it), given back by
// deleteMedia.

// quotaError checks that err is QUOTA_EXCEEDED of limit, with usage and
// max in its extensions.
func quotaError(t *testing.T, what string, err error, limit string, usage, max int) {
	t.Helper()
	equal(t, what+": code", code(err), "QUOTA_EXCEEDED")
	equal(t, what+": limit", extension(err, "limit"), any(limit))
	equal(t, what+": usage", extension(err, "usage"), any(float64(usage)))
	equal(t, what+": max", extension(err, "max"), any(float64(max)))
}

// usage returns the library's usage as an admin reads it.
func (s *mediaServer) usage(t *testing.T) MediaUsageMediaUsage {
	t.Helper()
	return ok[*MediaUsageResponse](t)(MediaUsage(context.Background(), s.admin)).MediaUsage
}

func TestMediaQuota(t *testing.T) {
	file := testJPEG(t, 400, 300)
	size := len(file)
	s := newMediaServer(t, func(o *media.Options) {
		o.Quota = storage.MediaQuota{Bytes: int64(2*size + size/2), Files: 3}
	})
	ctx := context.Background()
	alice := s.as("alice", auth.RoleAuthor)
	u := s.usage(t)
	equal(t, "usage at first", fmt.Sprint(u.Bytes, u.Files, *u.BytesLimit, *u.FilesLimit), fmt.Sprint(0, 0, 2*size+size/2, 3))

	// Two uploads started while the library is empty: both fit then.
	first, status := s.upload(t, alice, "a.jpg", "image/jpeg", size, file)
	equal(t, "PUT status", status, http.StatusOK)
	second, _ := s.upload(t, alice, "b.jpg", "image/jpeg", size, file)
	third, _ := s.upload(t, alice, "c.jpg", "image/jpeg", size, file)
	a := ok[*CompleteUploadResponse](t)(CompleteUpload(ctx, alice, CompleteUploadInput{Id: first})).CompleteUpload.Media
	ok[*CompleteUploadResponse](t)(CompleteUpload(ctx, alice, CompleteUploadInput{Id: second}))
	u = s.usage(t)
	equal(t, "usage after two", fmt.Sprint(u.Bytes, " ", u.Files), fmt.Sprint(2*size, " ", 2))

	t.Run("completing past the quota is refused and nothing kept", func(t *testing.T) {
		_, err := CompleteUpload(ctx, alice, CompleteUploadInput{Id: third})
		quotaError(t, "completeUpload", err, "BYTES", 2*size, 2*size+size/2)
		equal(t, "usage", s.usage(t).Bytes, 2*size)
		lib := ok[*MediaLibraryResponse](t)(MediaLibrary(ctx, alice, nil, nil, nil)).Media.Edges
		equal(t, "library items", len(lib), 2)
		_, err = CompleteUpload(ctx, alice, CompleteUploadInput{Id: third})
		equal(t, "completing it again", code(err), "NOT_FOUND")
	})

	t.Run("starting an upload past the quota is refused", func(t *testing.T) {
		_, err := CreateUpload(ctx, alice, CreateUploadInput{Filename: "d.jpg", ContentType: "image/jpeg", ByteSize: size})
		quotaError(t, "createUpload", err, "BYTES", 2*size, 2*size+size/2)
		ok[*CreateUploadResponse](t)(CreateUpload(ctx, alice, CreateUploadInput{Filename: "d.jpg", ContentType: "image/jpeg", ByteSize: size / 2}))
	})

	t.Run("deleteMedia gives the bytes back", func(t *testing.T) {
		ok[*DeleteMediaResponse](t)(DeleteMedia(ctx, alice, DeleteMediaInput{Id: a.Id}))
		u := s.usage(t)
		equal(t, "usage after the deletion", fmt.Sprint(u.Bytes, " ", u.Files), fmt.Sprint(size, " ", 1))
		again, _ := s.upload(t, alice, "e.jpg", "image/jpeg", size, file)
		ok[*CompleteUploadResponse](t)(CompleteUpload(ctx, alice, CompleteUploadInput{Id: again}))
	})

	t.Run("the files limit", func(t *testing.T) {
		small := testJPEG(t, 20, 20)
		id, _ := s.upload(t, alice, "f.jpg", "image/jpeg", len(small), small)
		ok[*CompleteUploadResponse](t)(CompleteUpload(ctx, alice, CompleteUploadInput{Id: id}))
		_, err := CreateUpload(ctx, alice, CreateUploadInput{Filename: "g.jpg", ContentType: "image/jpeg", ByteSize: len(small)})
		quotaError(t, "createUpload", err, "FILES", 3, 3)
	})

	t.Run("a completion is one read and one transaction", func(t *testing.T) {
		ada := s.as("ada", auth.RoleAuthor, auth.RoleAdmin)
		ok[*DeleteMediaResponse](t)(DeleteMedia(ctx, ada, DeleteMediaInput{Id: second}))
		id, _ := s.upload(t, ada, "h.jpg", "image/jpeg", size, file)
		_, cost := s.costOf(t, `mutation($id: ID!) { completeUpload(input: {id: $id}) { media { id } } }`, map[string]any{"id": id})
		equal(t, "requests", fmt.Sprint(s.requests()), fmt.Sprint(map[string]int{"GetItem": 1, "TransactWriteItems": 1}))
		t.Logf("completeUpload with the quota's counter: %d requests, %.1f read units, %.1f write units", cost.DynamoDBRequests, cost.ReadCapacityUnits, cost.WriteCapacityUnits)
	})

	t.Run("only admins read the usage", func(t *testing.T) {
		_, err := MediaUsage(ctx, alice)
		equal(t, "code", code(err), "FORBIDDEN")
	})
}

// TestMediaQuotaConcurrentCompletions races n completions against a
// quota that fits n-1 of them: the counter's condition lets exactly n-1
// through, and the usage is their sum.
func TestMediaQuotaConcurrentCompletions(t *testing.T) {
	const n = 6
	file := testJPEG(t, 200, 150)
	size := len(file)
	s := newMediaServer(t, func(o *media.Options) { o.Quota = storage.MediaQuota{Bytes: int64((n-1)*size + size/2)} })
	ctx := context.Background()
	alice := s.as("alice", auth.RoleAuthor)
	ids := make([]string, n)
	for i := range ids {
		id, status := s.upload(t, alice, fmt.Sprintf("p%d.jpg", i), "image/jpeg", size, file)
		equal(t, "PUT status", status, http.StatusOK)
		ids[i] = id
	}
	codes := make([]string, n)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			_, err := CompleteUpload(ctx, alice, CompleteUploadInput{Id: id})
			codes[i] = code(err)
			if err != nil && codes[i] != "QUOTA_EXCEEDED" {
				t.Errorf("completeUpload %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	done := 0
	for _, c := range codes {
		if c == "" {
			done++
		}
	}
	equal(t, "completed", done, n-1)
	u := s.usage(t)
	equal(t, "usage", fmt.Sprint(u.Bytes, " ", u.Files), fmt.Sprint((n-1)*size, " ", n-1))
	lib := ok[*MediaLibraryResponse](t)(MediaLibrary(ctx, alice, nil, nil, nil)).Media.Edges
	equal(t, "library items", len(lib), n-1)
}
