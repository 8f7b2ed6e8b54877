package storage

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/blogql/blog/storage/internal/keys"
)

// Benchmarks of the per-item work every list page does: one cursor and one
// item mapping per post. Run with go test -bench . -benchmem ./storage.

// benchPosition is where a category page's cursor points: the key
// attributes of a post-in-category copy.
func benchPosition() map[string]string {
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	id := "0197a6b2-5c3d-7e4f-8a9b-0c1d2e3f4a5b"
	k := testKS.CategoryCopy(id, "go")
	return map[string]string{
		keys.AttrPK: k.PK, keys.AttrSK: k.SK,
		keys.AttrGSI1PK: testKS.CategoryPartition("go"), keys.AttrGSI1SK: keys.PostSort(at, id),
	}
}

func BenchmarkCursorEncode(b *testing.B) {
	s := New(nil, "bench")
	pos := benchPosition()
	b.ReportAllocs()
	for b.Loop() {
		s.encodeCursor("category-posts:go", pos)
	}
}

func BenchmarkCursorDecode(b *testing.B) {
	s := New(nil, "bench")
	c := s.encodeCursor("category-posts:go", benchPosition())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.decodeCursor("category-posts:go", c); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPostItem is a published post with three categories and a 3 KB body.
func benchPostItem() postItem {
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	return postItem{
		ID: "0197a6b2-5c3d-7e4f-8a9b-0c1d2e3f4a5b", Slug: "a-post-about-go", Title: "A post about Go",
		Excerpt: "What this post is about, in two sentences. It is short.",
		Body:    strings.Repeat("Some Markdown with `code` and *emphasis*.\n", 75),
		Status:  string(StatusPublished), AuthorID: "author-01", AuthorName: "Ada Lovelace", AuthorVer: 1,
		Cats:      []catRef{{"go", "Go"}, {"dynamodb", "DynamoDB"}, {"testing", "Testing"}},
		CatVer:    map[string]int64{"go": 1, "dynamodb": 1, "testing": 1},
		CreatedAt: keys.Time(at.Add(-72 * time.Hour)), UpdatedAt: keys.Time(at), PublishedAt: keys.Time(at),
		Version: 3, CommentCount: 12, ThreadCount: 8,
	}.withPostKeys(testKS)
}

// BenchmarkItemToPost maps a post-in-category copy, as a category page
// reads twenty of them, from its DynamoDB attributes to a Post.
func BenchmarkItemToPost(b *testing.B) {
	av, err := attributevalue.MarshalMap(benchPostItem().categoryCopy(testKS, "go"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var it postItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			b.Fatal(err)
		}
		it.post()
	}
}

// BenchmarkPostToItem maps a full post, body included, to the attributes a
// write sends.
func BenchmarkPostToItem(b *testing.B) {
	it := benchPostItem()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := attributevalue.MarshalMap(it); err != nil {
			b.Fatal(err)
		}
	}
}
