package search

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/blogql/blog/storage"
)

func testService(t *testing.T, posts ...*storage.Post) *Service {
	t.Helper()
	s, err := New(storage.New(nil, "t"), Options{Table: "t"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Index(posts); err != nil {
		t.Fatal(err)
	}
	return s
}

func post(id, title, body string, cats ...string) *storage.Post {
	p := &storage.Post{ID: id, Title: title, Body: body, AuthorID: "a1", AuthorName: "Ada Lovelace"}
	for _, c := range cats {
		p.Categories = append(p.Categories, storage.CategoryRef{Slug: c, Name: strings.ToUpper(c)})
	}
	return p
}

func TestQueryParts(t *testing.T) {
	for _, c := range []struct {
		q    string
		want error
	}{
		{"", storage.ErrInvalidInput},
		{strings.Repeat("a", MaxQueryLength+1), storage.ErrInvalidInput},
		{strings.Repeat("a ", MaxTerms+1), storage.ErrInvalidInput},
		{"da*", ErrSlowQuery},
		{"*base", ErrSlowQuery},
		{"d?ta", ErrSlowQuery},
		{"dat*", nil},
		{`"an unclosed phrase`, nil},
	} {
		_, err := checkQuery(c.q)
		if !errors.Is(err, c.want) && !(c.want == nil && err == nil) {
			t.Errorf("%q: %v, want %v", c.q, err, c.want)
		}
	}
}

func TestSearchFindsTyposPhrasesAndStems(t *testing.T) {
	s := &Service{}
	_ = s
	svc := testService(t,
		post("p1", "Designing databases", "Indexes make <b>queries</b> fast & cheap.", "db"),
		post("p2", "Gardening", "Tomatoes want sun. A database of seeds.", "garden"),
		post("p3", "Quick brown fox", "the quick brown fox jumps over the lazy dog", "garden"),
		byHopper(post("p4", "Carts", "A cart rolled by.", "garden")),
		byHopper(post("p5", "Cats", "The cat sat.", "garden")),
	)
	ctx := context.Background()
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"database", []string{"p1", "p2"}},
		{"databse", []string{"p1", "p2"}},
		// A word the index holds as typed is taken as meant; the typo
		// elsewhere finds the word it stands for.
		{"databse designing", []string{"p1"}},
		{"cart", []string{"p4"}},
		{"cartt", []string{"p4"}},
		{"designing", []string{"p1"}},
		{"design", []string{"p1"}},
		{`"brown fox"`, []string{"p3"}},
		{`"fox brown"`, nil},
		{"lovelace", []string{"p1", "p2", "p3"}},
		{"datab*", []string{"p1", "p2"}},
		{"the", nil},
	} {
		res, err := svc.Search(ctx, Request{Query: c.q, First: 10})
		if err != nil {
			t.Fatalf("%q: %v", c.q, err)
		}
		var got []string
		for _, h := range res.Hits {
			got = append(got, h.PostID)
		}
		if fmt.Sprint(sorted(got)) != fmt.Sprint(c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("%q: %v, want %v", c.q, got, c.want)
		}
	}
	res, err := svc.Search(ctx, Request{Query: "queries", First: 10, Facets: true})
	if err != nil || len(res.Hits) != 1 {
		t.Fatal(res, err)
	}
	t.Logf("title %q snippet %q facets %v", res.Hits[0].Title, res.Hits[0].Snippet, res.Facets)
}

func byHopper(p *storage.Post) *storage.Post {
	p.AuthorID, p.AuthorName = "a2", "Grace Hopper"
	return p
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestCursorsWithoutTheirSnapshotGoOnFromScoreAndID(t *testing.T) {
	var posts []*storage.Post
	for i := range 30 {
		posts = append(posts, post(fmt.Sprintf("p%02d", i), "Apples", strings.Repeat("apple ", i%7+1)+"pie"))
	}
	svc := testService(t, posts...)
	ctx := context.Background()
	seen := map[string]bool{}
	after := ""
	for page := 0; ; page++ {
		res, err := svc.Search(ctx, Request{Query: "apple", First: 7, After: after})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			if seen[h.PostID] {
				t.Fatalf("page %d repeats %s", page, h.PostID)
			}
			seen[h.PostID] = true
		}
		// As on another server of the fleet: no snapshot.
		svc.snaps.clear()
		if !res.HasNext {
			break
		}
		after = res.Hits[len(res.Hits)-1].Cursor
	}
	if len(seen) != 30 {
		t.Errorf("paging found %d posts, want 30", len(seen))
	}
}

func TestAPrefixOfTooManyWordsIsSlow(t *testing.T) {
	var words []string
	for i := range MaxPrefixWords + 1 {
		words = append(words, fmt.Sprintf("abc%dx", i))
	}
	svc := testService(t, post("p1", "Words", strings.Join(words, " ")))
	_, err := svc.Search(context.Background(), Request{Query: "abc*", First: 10})
	if !errors.Is(err, ErrSlowQuery) {
		t.Errorf("abc* over %d words: %v, want ErrSlowQuery", MaxPrefixWords+1, err)
	}
	if _, err := svc.Search(context.Background(), Request{Query: "abc1*", First: 10}); err != nil {
		t.Errorf("abc1*: %v", err)
	}
	// Together: abc1* to abc4* match 111 words each, abc5* 12, abc6*
	// to abc9* 11 each, abc0* one.
	nine := "abc1* abc2* abc3* abc4* abc5* abc6* abc7* abc8* abc9*"
	if _, err := svc.Search(context.Background(), Request{Query: nine, First: 10}); err != nil {
		t.Errorf("prefixes of %d words: %v", MaxPrefixWords, err)
	}
	if _, err := svc.Search(context.Background(), Request{Query: nine + " abc0*", First: 10}); !errors.Is(err, ErrSlowQuery) {
		t.Errorf("prefixes of %d words: %v, want ErrSlowQuery", MaxPrefixWords+1, err)
	}
}

func TestFacetsAreCountedWhenAskedFor(t *testing.T) {
	svc := testService(t,
		post("p1", "Apples", "apple pie", "fruit"),
		post("p2", "Apples", "apple tart", "fruit", "baking"),
		post("p3", "Apples", "apple cake", "baking"),
	)
	ctx := context.Background()
	first, err := svc.Search(ctx, Request{Query: "apple", First: 1})
	if err != nil || first.Facets != nil || first.Total != 3 {
		t.Fatalf("a page without facets: %+v, %v", first, err)
	}
	next, err := svc.Search(ctx, Request{Query: "apple", First: 1, After: first.Hits[0].Cursor, Facets: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(next.Facets); got != "[{baking 2} {fruit 2}]" {
		t.Errorf("facets of a later page: %s", got)
	}
}

func TestSnippetStartsAtTheFirstMatchAnywhereInTheBody(t *testing.T) {
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 500) // 13.5 KB
	svc := testService(t,
		post("p1", "Far", filler+"the zeppelin landed. "+filler),
		post("p2", "Near", "A zeppelin at once. "+filler),
		post("p3", "Typo", filler+"a dirigible flew by. "+filler),
		post("p4", "Title only", filler),
	)
	for _, c := range []struct {
		name, q, id, want string
	}{
		{"a word past the first 8 KB", "zeppelin landed", "p1", "…amet lorem ipsum dolor sit amet lorem ipsum dolor sit amet the <mark>zeppelin</mark> <mark>landed</mark>."},
		{"a word at the start", "zeppelin", "p2", "A <mark>zeppelin</mark> at once. lorem"},
		{"a word within its typo tolerance", "dirigble", "p3", "…sit amet lorem ipsum dolor sit amet lorem ipsum dolor sit amet a <mark>dirigible</mark> flew by."},
		{"no word in the body", "title", "p4", "lorem ipsum dolor sit amet lorem"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := svc.Search(context.Background(), Request{Query: c.q, First: 10})
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(res.Hits, func(h Hit) bool { return h.PostID == c.id })
			if i < 0 {
				t.Fatalf("%q does not find %s: %v", c.q, c.id, res.Hits)
			}
			if s := res.Hits[i].Snippet; !strings.HasPrefix(s, c.want) || len(s) > MaxSnippetBytes {
				t.Errorf("snippet %q: want it to begin %q", s, c.want)
			}
		})
	}
}

func TestRepeatedSearchReusesItsRankingUntilTheIndexChanges(t *testing.T) {
	svc := testService(t,
		post("p1", "Zeppelins", "A zeppelin.", "air"),
		post("p2", "More zeppelins", "Two zeppelins.", "air", "sea"),
	)
	ctx := context.Background()
	ids := func(r *Results) []string {
		var out []string
		for _, h := range r.Hits {
			out = append(out, h.PostID)
		}
		return sorted(out)
	}
	first, err := svc.Search(ctx, Request{Query: "zeppelin", First: 1})
	if err != nil || first.Total != 2 || first.Facets != nil {
		t.Fatal(first, err)
	}
	t.Run("the same first page, and facets when asked", func(t *testing.T) {
		again, err := svc.Search(ctx, Request{Query: "zeppelin", First: 1, Facets: true})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ids(again)) != fmt.Sprint(ids(first)) || fmt.Sprint(again.Facets) != "[{air 2} {sea 1}]" {
			t.Errorf("again: %v %v, want %v with facets", ids(again), again.Facets, ids(first))
		}
		next, err := svc.Search(ctx, Request{Query: "zeppelin", First: 1, After: again.Hits[0].Cursor})
		if err != nil || len(next.Hits) != 1 || next.Hits[0].PostID == again.Hits[0].PostID || next.HasNext {
			t.Errorf("the page after: %v %v", next, err)
		}
	})
	t.Run("a change to the index ranks again", func(t *testing.T) {
		if err := svc.Index([]*storage.Post{post("p3", "Zeppelin", "Zeppelin zeppelin zeppelin.", "air")}); err != nil {
			t.Fatal(err)
		}
		res, err := svc.Search(ctx, Request{Query: "zeppelin", First: 10, Facets: true})
		if err != nil || fmt.Sprint(ids(res)) != "[p1 p2 p3]" || res.Total != 3 || fmt.Sprint(res.Facets) != "[{air 3} {sea 1}]" {
			t.Errorf("after indexing p3: %v %v", res, err)
		}
	})
}
