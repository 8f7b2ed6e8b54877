package tests

import (
	"context"
	"slices"
	"testing"
	"time"
)

// featuredSlugs reads the whole featured list as an anonymous reader,
// forward in pages of size, then backward from its end in pages of the
// same size, and returns both in the list's order with the totalCount.
func featuredSlugs(t *testing.T, s *server, size int) (forward, backward []string, count int) {
	t.Helper()
	ctx := context.Background()
	var after *string
	for {
		page := ok[*FeaturedPostsResponse](t)(FeaturedPosts(ctx, s.client, &size, after, nil, nil)).FeaturedPosts
		// One Query for the page, one for totalCount.
		equal(t, "requests of a featured page with totalCount", total(s.requests()), 2)
		count = page.TotalCount
		for _, e := range page.Edges {
			forward = append(forward, e.Node.Slug)
			if !e.Node.Featured {
				t.Errorf("%s in the featured list is not featured", e.Node.Slug)
			}
		}
		if !page.PageInfo.HasNextPage {
			break
		}
		after = page.PageInfo.EndCursor
	}
	var before *string
	for {
		page := ok[*FeaturedPostsResponse](t)(FeaturedPosts(ctx, s.client, nil, nil, &size, before)).FeaturedPosts
		var slugs []string
		for _, e := range page.Edges {
			slugs = append(slugs, e.Node.Slug)
		}
		backward = append(slugs, backward...)
		if !page.PageInfo.HasPreviousPage {
			break
		}
		before = page.PageInfo.StartCursor
	}
	return forward, backward, count
}

// TestFeaturedPosts features posts as their authors and an admin, and
// reads the featured list both ways: newest first, public posts only, a
// scheduled one from its time on, the whole-blog feed unchanged; taking a
// post off, unpublishing or deleting it takes it out of the list.
func TestFeaturedPosts(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	feedBefore := ok[*FeedPageResponse](t)(FeedPage(ctx, s.client, ptr(100), nil, nil, nil, nil, nil)).Posts

	feature := func(i int, id string, on bool) {
		t.Helper()
		p := ok[*SetPostFeaturedResponse](t)(SetPostFeatured(ctx, b.writers[i%2], SetPostFeaturedInput{Id: id, Featured: on})).SetPostFeatured.Post
		equal(t, "featured", p.Featured, on)
	}
	for _, i := range []int{3, 8, 11, 17, 20} {
		feature(i, b.published[i], true)
	}
	// An admin features a post of another author; its author the draft
	// and the scheduled post.
	ok[*SetPostFeaturedResponse](t)(SetPostFeatured(ctx, s.admin, SetPostFeaturedInput{Id: b.published[23], Featured: true}))
	feature(0, b.draft, true)
	feature(0, b.scheduled, true)

	want := []string{"post-23", "post-20", "post-17", "post-11", "post-8", "post-3"}
	forward, backward, n := featuredSlugs(t, s, 4)
	if !slices.Equal(forward, want) || !slices.Equal(backward, want) {
		t.Fatalf("featured forward %v, backward %v, want %v", forward, backward, want)
	}
	equal(t, "totalCount", n, len(want))

	feedAfter := ok[*FeedPageResponse](t)(FeedPage(ctx, s.client, ptr(100), nil, nil, nil, nil, nil)).Posts
	equal(t, "feed's totalCount", feedAfter.TotalCount, feedBefore.TotalCount)
	equal(t, "feed's length", len(feedAfter.Edges), len(feedBefore.Edges))
	s.consistent()

	// The scheduled post shows from its time on, at the top.
	s.clock.Advance(3 * time.Hour)
	forward, _, n = featuredSlugs(t, s, 10)
	if len(forward) == 0 || forward[0] != "soon" || n != len(want)+1 {
		t.Errorf("after the scheduled time: %v (%d), want soon first", forward, n)
	}

	// Off the list: unfeatured, unpublished, deleted.
	feature(17, b.published[17], false)
	ok[*UnpublishPostResponse](t)(UnpublishPost(ctx, b.writers[20%2], UnpublishPostInput{Id: b.published[20]}))
	ok[*DeletePostResponse](t)(DeletePost(ctx, b.writers[3%2], DeletePostInput{Id: b.published[3]}))
	forward, backward, _ = featuredSlugs(t, s, 3)
	want = []string{"soon", "post-23", "post-11", "post-8"}
	if !slices.Equal(forward, want) || !slices.Equal(backward, want) {
		t.Errorf("featured forward %v, backward %v, want %v", forward, backward, want)
	}
	// A comment counts on the featured copy too, written from what the
	// server remembers of the post.
	ok[*AddCommentResponse](t)(AddComment(ctx, b.writers[0], AddCommentInput{PostId: b.published[11], Body: "Featured, and rightly so."}))
	s.consistent()
	// An author's rename reaches the featured copies.
	ok[*UpdateAuthorResponse](t)(UpdateAuthor(ctx, s.admin, UpdateAuthorInput{Id: b.authors[0], Name: ptr("Ada King")}))
	s.consistent()

	// Bad input writes nothing.
	before := s.snapshot()
	_, err := SetPostFeatured(ctx, s.admin, SetPostFeaturedInput{Id: "no/pe", Featured: true})
	equal(t, "code of a bad id", code(err), "BAD_USER_INPUT")
	_, err = SetPostFeatured(ctx, s.admin, SetPostFeaturedInput{Id: b.published[11], Featured: false, ExpectedVersion: ptr(1)})
	equal(t, "code of a stale version", code(err), "CONFLICT")
	_, err = FeaturedPosts(ctx, s.client, ptr(101), nil, nil, nil)
	equal(t, "code of first: 101", code(err), "BAD_USER_INPUT")
	_, err = FeaturedPosts(ctx, s.client, nil, ptr("forged"), nil, nil)
	equal(t, "code of a forged cursor", code(err), "BAD_USER_INPUT")
	s.unchanged(before)
}
