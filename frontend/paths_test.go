package frontend

import (
	"slices"
	"testing"
	"time"
)

// TestEverySectionHoldsTheSectionOfEveryTag checks that EverySection holds
// the section of every kind of tag and every tag of no kind, so that an
// answer tagged with it is purged by every event that names a tag.
func TestEverySectionHoldsTheSectionOfEveryTag(t *testing.T) {
	tags := []string{
		TagFeed, TagSite, TagFeatured, TagSearch, TagPost("p"), TagAuthor("a"), TagCategory("c"),
		TagTag("t"), TagPage("p"), TagSeries("s"), TagComments("p"), TagCounts("p"), TagArchive(time.Time{}),
	}
	for _, s := range sections {
		tags = append(tags, s)
	}
	for _, tag := range tags {
		if s := SectionTag(tag); !slices.Contains(EverySection, s) {
			t.Errorf("the section %q of %q is not in EverySection", s, tag)
		}
	}
	for _, s := range EverySection {
		if SectionTag(s) != s {
			t.Errorf("%q in EverySection is not a section", s)
		}
	}
}

// TestPostTagsAreEachPostsTagAndCounts checks that PostTags cuts from its
// one string what TagPost and TagCounts make of each id, in turn.
func TestPostTagsAreEachPostsTagAndCounts(t *testing.T) {
	ids := []string{"01HZX", "", "a:b", "01HZY"}
	var want []string
	for _, id := range ids {
		want = append(want, TagPost(id), TagCounts(id))
	}
	if got := PostTags(ids); !slices.Equal(got, want) {
		t.Errorf("PostTags(%q) = %q, want %q", ids, got, want)
	}
	if got := PostTags(nil); len(got) != 0 {
		t.Errorf("PostTags(nil) = %q, want none", got)
	}
}
