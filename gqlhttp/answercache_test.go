package gqlhttp

import (
	"fmt"
	"strings"
	"sync"
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

// evictions counts the evictions an AnswerCache reports, which come from
// another goroutine once made.
type evictions struct {
	mu      sync.Mutex
	evicted *sync.Cond
	n       int
}

func newEvictions() *evictions {
	e := &evictions{}
	e.evicted = sync.NewCond(&e.mu)
	return e
}

func (e *evictions) AnswerLookup(bool)          {}
func (e *evictions) AnswerCacheSize(int, int64) {}
func (e *evictions) AnswerEvicted(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n += n
	e.evicted.Broadcast()
}

// wait waits for n evictions to be reported.
func (e *evictions) wait(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for e.n < n {
		e.evicted.Wait()
	}
}

func TestAnswerCacheEvictsPastItsBoundWithTheirTags(t *testing.T) {
	body := []byte(strings.Repeat("x", 1000))
	one := int64(len(body) + 1 + answerEntryBytes + len("post:1") + 64)
	ev := newEvictions()
	c := NewAnswerCache(2*one, ev)
	keys := []string{"1", "2", "3"}
	for _, k := range keys[:2] {
		c.add(&answer{key: k, body: body, tags: []string{"post:" + k}}, c.begin())
	}
	c.get("1")
	c.add(&answer{key: "3", body: body, tags: []string{"post:3"}}, c.begin())
	n, bytes := c.Size() // once the evictions due are made
	var evicted []string
	for _, k := range keys {
		if _, ok := c.get(k); !ok {
			evicted = append(evicted, k)
		}
	}
	if n != 2 || bytes > 2*one || len(evicted) != 1 {
		t.Fatalf("%d answers in %d bytes (bound %d), %q evicted", n, bytes, 2*one, evicted)
	}
	ev.wait(1)
	// The evicted answer's tags are gone with it.
	c.mu.Lock()
	_, indexed := c.byTag["post:"+evicted[0]]
	tags := len(c.byTag)
	c.mu.Unlock()
	if indexed || tags != 2 {
		t.Errorf("the index holds %d tags, the evicted answer's: %t", tags, indexed)
	}
	c.Invalidate("post:" + evicted[0])
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

// TestAnswerCacheRefusesAnswersRacingAnInvalidation stores answers while
// their tag is invalidated: an answer begun before the invalidation is
// never left in the cache, whichever ran first.
func TestAnswerCacheRefusesAnswersRacingAnInvalidation(t *testing.T) {
	c := NewAnswerCache(1<<20, nil)
	var wg sync.WaitGroup
	for i := range 2000 {
		key, tag := fmt.Sprint(i), fmt.Sprint("post:", i)
		begun := c.begin()
		wg.Add(2)
		go func() {
			defer wg.Done()
			c.add(&answer{key: key, body: []byte("A"), tags: []string{tag}}, begun)
		}()
		go func() {
			defer wg.Done()
			c.Invalidate(tag)
		}()
	}
	wg.Wait()
	if n, _ := c.Size(); n != 0 {
		t.Errorf("%d answers begun before an invalidation of their tag were kept", n)
	}
}
