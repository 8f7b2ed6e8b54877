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
	ks := MustIn("p9")
	at := time.Date(2024, 5, 6, 7, 8, 9, 10_000_000, time.FixedZone("CEST", 2*3600))
	top := CommentID{Created: at, Random: "ab12"}
	reply := CommentID{Created: at.Add(time.Second), Random: "cd", Parent: &top}
	for _, c := range []struct {
		name string
		got  dynamo.Key
		want dynamo.Key
	}{
		{"author", ks.Author("a1"), dynamo.Key{PK: "PUB#p9#AUTHOR#a1", SK: "AUTHOR#a1"}},
		{"post", ks.Post("p1"), dynamo.Key{PK: "PUB#p9#POST#p1", SK: "POST#p1"}},
		{"post body", ks.PostBody("p1"), dynamo.Key{PK: "PUB#p9#POST#p1", SK: "POST#p1#TEXT"}},
		{"post count", ks.PostCount("p1"), dynamo.Key{PK: "PUB#p9#POST#p1", SK: "POST#p1#COUNT"}},
		{"author copy", ks.AuthorCopy("a1", at, "p1"), dynamo.Key{PK: "PUB#p9#AUTHOR#a1", SK: "POST#2024-05-06T05:08:09.010Z#p1"}},
		{"category copy", ks.CategoryCopy("p1", "go"), dynamo.Key{PK: "PUB#p9#POST#p1", SK: "CAT#go"}},
		{"tag copy", ks.TagCopy("p1", "db"), dynamo.Key{PK: "PUB#p9#POST#p1", SK: "TAG#db"}},
		{"featured copy", ks.FeaturedCopy("p1"), dynamo.Key{PK: "PUB#p9#POST#p1", SK: "FEATURED"}},
		{"revision", ks.Revision("p1", 12), dynamo.Key{PK: "PUB#p9#POST#p1", SK: "REV#0000000012"}},
		{"category", ks.Category("go"), dynamo.Key{PK: "PUB#p9#CAT#go", SK: "CAT#go"}},
		{"tag", ks.Tag("db"), dynamo.Key{PK: "PUB#p9#TAG#db", SK: "TAG#db"}},
		{"series", ks.Series("s"), dynamo.Key{PK: "PUB#p9#SERIES#s", SK: "SERIES#s"}},
		{"slug", ks.Slug("hello"), dynamo.Key{PK: "PUB#p9#SLUG#hello", SK: "SLUG#hello"}},
		{"author slug", ks.AuthorSlug("ada"), dynamo.Key{PK: "PUB#p9#AUTHORSLUG#ada", SK: "AUTHORSLUG#ada"}},
		{"page", ks.Page("g1"), dynamo.Key{PK: "PUB#p9#PAGE#g1", SK: "PAGE#g1"}},
		{"site", ks.Site(), dynamo.Key{PK: "PUB#p9#SITE", SK: "SITE"}},
		{"stats", ks.Stats(), dynamo.Key{PK: "PUB#p9#STATS", SK: "STATS"}},
		{"renderer", ks.Renderer(), dynamo.Key{PK: "PUB#p9#RENDERER", SK: "RENDERER"}},
		{"secret", Secret("s"), dynamo.Key{PK: "SECRET#s", SK: "SECRET#s"}},
		{"reader", Reader("r"), dynamo.Key{PK: "READER#r", SK: "READER#r"}},
		{"rate", ks.Rate("r"), dynamo.Key{PK: "PUB#p9#RATE#READER#r", SK: "RATE#READER#r"}},
		{"persisted", Persisted("h"), dynamo.Key{PK: "PERSISTED#h", SK: "PERSISTED#h"}},
		{"idempotency", ks.Idempotency("op", "k"), dynamo.Key{PK: "PUB#p9#IDEMPOTENCY#op#k", SK: "IDEMPOTENCY#op#k"}},
		{"comment", ks.Comment("p1", top), dynamo.Key{PK: "PUB#p9#POST#p1", SK: "COMMENT#2024-05-06T05:08:09.010Z#1714972089010-ab12"}},
		{"reply", ks.Comment("p1", reply), dynamo.Key{PK: "PUB#p9#POST#p1", SK: "THREAD#2024-05-06T05:08:09.010Z#1714972089010-ab12#2024-05-06T05:08:10.010Z#1714972090010-cd"}},
		{"held", ks.Held("p1", reply), dynamo.Key{PK: "PUB#p9#POST#p1", SK: "HELD#2024-05-06T05:08:10.010Z#1714972089010-ab12.1714972090010-cd"}},
		{"queue entry", ks.QueueEntry("p1", top), dynamo.Key{PK: "PUB#p9#MODQ", SK: "2024-05-06T05:08:09.010Z#p1#1714972089010-ab12"}},
	} {
		if c.got != c.want {
			t.Errorf("%s: key %+v, want %+v", c.name, c.got, c.want)
		}
	}
	for _, c := range []struct{ name, got, want string }{
		{"post sort", PostSort(at, "p1"), "POST#2024-05-06T05:08:09.010Z#p1"},
		{"draft partition", ks.DraftPartition("a1"), "PUB#p9#DRAFT#a1"},
		{"draft sort", DraftSort(at, "p1"), "DRAFT#2024-05-06T05:08:09.010Z#p1"},
		{"author list sort", AuthorListSort(at, "a1"), "AUTHOR#2024-05-06T05:08:09.010Z#a1"},
		{"category partition", ks.CategoryPartition("go"), "PUB#p9#CAT#go"},
		{"tag partition", ks.TagPartition("db"), "PUB#p9#TAG#db"},
		{"page sort", PageSort(7, "g1"), "PAGE#00007#g1"},
		{"author queue", ks.AuthorQueue("a1"), "PUB#p9#MODQ#a1"},
		{"feed partition", ks.FeedPartitions()[0], "PUB#p9#FEED"},
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
	ks := MustIn("p9")
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
	k, ok := ks.QueueEntryOfHeld("p1", "HELD#2024-05-06T05:08:09.010Z#1714972089010-ab12")
	if want := (dynamo.Key{PK: "PUB#p9#MODQ", SK: "2024-05-06T05:08:09.010Z#p1#1714972089010-ab12"}); !ok || k != want {
		t.Errorf("QueueEntryOfHeld = %+v, %v; want %+v", k, ok, want)
	}
	if _, ok := ks.QueueEntryOfHeld("p1", "COMMENT#x#y"); ok {
		t.Error("QueueEntryOfHeld took a published comment's key for a held one")
	}
}

// TestSpace keeps a publication's keys apart from another's and from the
// global ones, and reads a key's publication back.
func TestSpace(t *testing.T) {
	for _, bad := range []string{"", "a#b"} {
		if _, err := In(bad); !errors.Is(err, ErrBadPublicationID) {
			t.Errorf("In(%q) = %v, want ErrBadPublicationID", bad, err)
		}
	}
	a, b := MustIn("a"), MustIn("ab")
	if local, ok := a.Local(b.Post("p1").PK); ok {
		t.Errorf("space a took %q of space ab as its own (%q)", b.Post("p1").PK, local)
	}
	if local, ok := a.Local(a.Post("p1").PK); !ok || local != "POST#p1" {
		t.Errorf("a.Local(a.Post) = %q, %v; want POST#p1, true", local, ok)
	}
	if id, ok := Of(b.Stats().PK); !ok || id != "ab" {
		t.Errorf("Of(%q) = %q, %v; want ab, true", b.Stats().PK, id, ok)
	}
	for _, pk := range []string{Secret("s").PK, Reader("r").PK, Persisted("h").PK, Directory("a").PK, "LAYOUT", "PUB#"} {
		if id, ok := Of(pk); ok {
			t.Errorf("Of(%q) = %q: a global key read as a publication's", pk, id)
		}
	}
}
