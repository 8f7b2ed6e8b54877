package gqlhttp

import (
	"fmt"
	"strings"
	"testing"
)

func TestAnswerCacheDropsWhatAnInvalidationNamesAndRefusesRacedAnswers(t *testing.T) {
	c := NewAnswerCache(1<<20, nil)
	begun := c.begin()
	if !c.add(&answer{key: "a", body: []byte("A"), tags: []string{"post:1", "feed"}}, begun) {
		t.Fatal("an answer begun after every invalidation was not stored")
	}
	c.add(&answer{key: "b", body: []byte("B"), tags: []string{"post:2"}}, begun)

	racing := c.begin()
	c.Invalidate("post:1")
	if _, ok := c.get("a"); ok {
		t.Error("an answer tagged post:1 outlived its invalidation")
	}
	if _, ok := c.get("b"); !ok {
		t.Error("an answer without the tag was dropped")
	}
	if c.add(&answer{key: "a", body: []byte("A"), tags: []string{"post:1"}}, racing) {
		t.Error("an answer begun before an invalidation of its tag was stored")
	}
	if !c.add(&answer{key: "c", body: []byte("C"), tags: []string{"post:3"}}, racing) {
		t.Error("an answer begun before an invalidation of another tag was refused")
	}
	c.InvalidateAll()
	if n, bytes := c.Size(); n != 0 || bytes != 0 {
		t.Errorf("after InvalidateAll: %d answers, %d bytes", n, bytes)
	}
	if c.add(&answer{key: "d", body: []byte("D"), tags: []string{"post:4"}}, racing) {
		t.Error("an answer begun before InvalidateAll was stored")
	}
}

type evictions struct{ n int }

func (e *evictions) AnswerLookup(bool)          {}
func (e *evictions) AnswerEvicted(n int)        { e.n += n }
func (e *evictions) AnswerCacheSize(int, int64) {}

func TestAnswerCacheEvictsTheLeastRecentlyUsedPastItsBound(t *testing.T) {
	body := []byte(strings.Repeat("x", 1000))
	one := int64(len(body) + 1 + answerEntryBytes + len("post:1") + 64)
	ev := &evictions{}
	c := NewAnswerCache(2*one, ev)
	for _, k := range []string{"1", "2"} {
		c.add(&answer{key: k, body: body, tags: []string{"post:" + k}}, c.begin())
	}
	c.get("1") // 2 is now the least recently used
	c.add(&answer{key: "3", body: body, tags: []string{"post:3"}}, c.begin())
	if _, ok := c.get("2"); ok {
		t.Error("the least recently used answer was kept past the bound")
	}
	if _, ok := c.get("1"); !ok {
		t.Error("a recently used answer was evicted")
	}
	if n, bytes := c.Size(); n != 2 || bytes > 2*one || ev.n != 1 {
		t.Errorf("%d answers in %d bytes (bound %d), %d evicted", n, bytes, 2*one, ev.n)
	}
	// The evicted answer's tags are gone with it.
	c.Invalidate("post:2")
	if n, _ := c.Size(); n != 2 {
		t.Errorf("invalidating an evicted answer's tag left %d answers", n)
	}
}

func TestFitTagsCollapsesTheMostNumerousKindsToTheirSections(t *testing.T) {
	section := func(tag string) string {
		kind, _, ok := strings.Cut(tag, ":")
		if !ok {
			return tag
		}
		return map[string]string{"post": "feed", "counts": "counts", "author": "authors", "category": "categories"}[kind]
	}
	tags := []string{"category:go", "author:ada", "author:bob", "feed"}
	for i := range 300 {
		id := fmt.Sprintf("%032d", i)
		tags = append(tags, "post:"+id, "counts:"+id)
	}
	got, ok := FitTags(tags, MaxTagHeaderBytes, section)
	if want := "author:ada author:bob category:go counts feed"; !ok || strings.Join(got, " ") != want {
		t.Errorf("FitTags = %q, %t, want %q", got, ok, want)
	}
	got, ok = FitTags(tags, 30, section)
	if want := "authors categories counts feed"; !ok || strings.Join(got, " ") != want {
		t.Errorf("FitTags in 30 bytes = %q, %t, want %q", got, ok, want)
	}
	if got, ok := FitTags(tags[:3], MaxTagHeaderBytes, section); !ok || strings.Join(got, " ") != "author:ada author:bob category:go" {
		t.Errorf("tags that fit: %q, %t", got, ok)
	}
	if _, ok := FitTags([]string{strings.Repeat("a", 100)}, 50, section); ok {
		t.Error("tags that do not fit were given")
	}
	if _, ok := FitTags(tags, MaxTagHeaderBytes, nil); ok {
		t.Error("tags that do not fit were given without sections")
	}
}
