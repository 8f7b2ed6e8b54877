package keys

import (
	"errors"
	"testing"
	"time"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// TestKeys pins every key to the table in package storage's doc.go: a
// change here is a change of the table's layout.
func TestKeys(t *testing.T) {
	at := time.Date(2024, 5, 6, 7, 8, 9, 10_000_000, time.FixedZone("CEST", 2*3600))
	top := CommentID{Created: at, Random: "ab12"}
	reply := CommentID{Created: at.Add(time.Second), Random: "cd", Parent: &top}
	for _, c := range []struct {
		name string
		got  dynamo.Key
		want dynamo.Key
	}{
		{"author", Author("a1"), dynamo.Key{PK: "AUTHOR#a1", SK: "AUTHOR#a1"}},
		{"post", Post("p1"), dynamo.Key{PK: "POST#p1", SK: "POST#p1"}},
		{"post body", PostBody("p1"), dynamo.Key{PK: "POST#p1", SK: "POST#p1#TEXT"}},
		{"post count", PostCount("p1"), dynamo.Key{PK: "POST#p1", SK: "POST#p1#COUNT"}},
		{"author copy", AuthorCopy("a1", at, "p1"), dynamo.Key{PK: "AUTHOR#a1", SK: "POST#2024-05-06T05:08:09.010Z#p1"}},
		{"category copy", CategoryCopy("p1", "go"), dynamo.Key{PK: "POST#p1", SK: "CAT#go"}},
		{"tag copy", TagCopy("p1", "db"), dynamo.Key{PK: "POST#p1", SK: "TAG#db"}},
		{"featured copy", FeaturedCopy("p1"), dynamo.Key{PK: "POST#p1", SK: "FEATURED"}},
		{"revision", Revision("p1", 12), dynamo.Key{PK: "POST#p1", SK: "REV#0000000012"}},
		{"category", Category("go"), dynamo.Key{PK: "CAT#go", SK: "CAT#go"}},
		{"tag", Tag("db"), dynamo.Key{PK: "TAG#db", SK: "TAG#db"}},
		{"series", Series("s"), dynamo.Key{PK: "SERIES#s", SK: "SERIES#s"}},
		{"slug", Slug("hello"), dynamo.Key{PK: "SLUG#hello", SK: "SLUG#hello"}},
		{"author slug", AuthorSlug("ada"), dynamo.Key{PK: "AUTHORSLUG#ada", SK: "AUTHORSLUG#ada"}},
		{"page", Page("g1"), dynamo.Key{PK: "PAGE#g1", SK: "PAGE#g1"}},
		{"site", Site(), dynamo.Key{PK: "SITE", SK: "SITE"}},
		{"stats", Stats(), dynamo.Key{PK: "STATS", SK: "STATS"}},
		{"renderer", Renderer(), dynamo.Key{PK: "RENDERER", SK: "RENDERER"}},
		{"secret", Secret("s"), dynamo.Key{PK: "SECRET#s", SK: "SECRET#s"}},
		{"reader", Reader("r"), dynamo.Key{PK: "READER#r", SK: "READER#r"}},
		{"rate", Rate("r"), dynamo.Key{PK: "RATE#READER#r", SK: "RATE#READER#r"}},
		{"persisted", Persisted("h"), dynamo.Key{PK: "PERSISTED#h", SK: "PERSISTED#h"}},
		{"idempotency", Idempotency("op", "k"), dynamo.Key{PK: "IDEMPOTENCY#op#k", SK: "IDEMPOTENCY#op#k"}},
		{"comment", Comment("p1", top), dynamo.Key{PK: "POST#p1", SK: "COMMENT#2024-05-06T05:08:09.010Z#1714972089010-ab12"}},
		{"reply", Comment("p1", reply), dynamo.Key{PK: "POST#p1", SK: "THREAD#2024-05-06T05:08:09.010Z#1714972089010-ab12#2024-05-06T05:08:10.010Z#1714972090010-cd"}},
		{"held", Held("p1", reply), dynamo.Key{PK: "POST#p1", SK: "HELD#2024-05-06T05:08:10.010Z#1714972089010-ab12.1714972090010-cd"}},
		{"queue entry", QueueEntry("p1", top), dynamo.Key{PK: "MODQ", SK: "2024-05-06T05:08:09.010Z#p1#1714972089010-ab12"}},
	} {
		if c.got != c.want {
			t.Errorf("%s: key %+v, want %+v", c.name, c.got, c.want)
		}
	}
	for _, c := range []struct{ name, got, want string }{
		{"post sort", PostSort(at, "p1"), "POST#2024-05-06T05:08:09.010Z#p1"},
		{"draft partition", DraftPartition("a1"), "DRAFT#a1"},
		{"draft sort", DraftSort(at, "p1"), "DRAFT#2024-05-06T05:08:09.010Z#p1"},
		{"author list sort", AuthorListSort(at, "a1"), "AUTHOR#2024-05-06T05:08:09.010Z#a1"},
		{"category partition", CategoryPartition("go"), "CAT#go"},
		{"tag partition", TagPartition("db"), "TAG#db"},
		{"page sort", PageSort(7, "g1"), "PAGE#00007#g1"},
		{"author queue", AuthorQueue("a1"), "MODQ#a1"},
		{"thread prefix", ThreadPrefix(top), "THREAD#2024-05-06T05:08:09.010Z#1714972089010-ab12#"},
		{"month attribute", MonthAttr("2024-05-06T05:08:09.010Z"), "month#2024-05"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
}

// TestCommentID parses what a comment id prints, and refuses what is not
// one.
func TestCommentID(t *testing.T) {
	for _, s := range []string{"1714972089010-ab12", "1714972089010-ab12.1714972090010-cd"} {
		c, err := ParseCommentID(s)
		if err != nil || c.String() != s {
			t.Errorf("ParseCommentID(%q) = %v, %v; want it back", s, c, err)
		}
	}
	for _, s := range []string{"", "1714972089010", "171497208901-ab", "1714972089010-AB", "1714972089010-ab.x", "x.1714972089010-ab"} {
		if _, err := ParseCommentID(s); !errors.Is(err, ErrNotCommentID) {
			t.Errorf("ParseCommentID(%q) = %v, want ErrNotCommentID", s, err)
		}
	}
	k, ok := QueueEntryOfHeld("p1", "HELD#2024-05-06T05:08:09.010Z#1714972089010-ab12")
	if want := (dynamo.Key{PK: "MODQ", SK: "2024-05-06T05:08:09.010Z#p1#1714972089010-ab12"}); !ok || k != want {
		t.Errorf("QueueEntryOfHeld = %+v, %v; want %+v", k, ok, want)
	}
	if _, ok := QueueEntryOfHeld("p1", "COMMENT#x#y"); ok {
		t.Error("QueueEntryOfHeld took a published comment's key for a held one")
	}
}
