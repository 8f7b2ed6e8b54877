package tests

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/Khan/genqlient/graphql"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage"
)

// seriesSlugs reads a series' posts as c, forward in pages of size, then
// backward, and returns both in the series' order.
func seriesSlugs(t *testing.T, c graphql.Client, slug string, size int) (forward, backward []string, count int) {
	t.Helper()
	ctx := context.Background()
	var after *string
	for {
		se := ok[*SeriesPageResponse](t)(SeriesPage(ctx, c, slug, &size, after, nil, nil)).Series
		if se == nil {
			t.Fatalf("series %s not found", slug)
		}
		count = se.Posts.TotalCount
		for _, e := range se.Posts.Edges {
			forward = append(forward, e.Node.Slug)
		}
		if !se.Posts.PageInfo.HasNextPage {
			break
		}
		after = se.Posts.PageInfo.EndCursor
	}
	var before *string
	for {
		se := ok[*SeriesPageResponse](t)(SeriesPage(ctx, c, slug, nil, nil, &size, before)).Series
		var slugs []string
		for _, e := range se.Posts.Edges {
			slugs = append(slugs, e.Node.Slug)
		}
		backward = append(slugs, backward...)
		if !se.Posts.PageInfo.HasPreviousPage {
			break
		}
		before = se.Posts.PageInfo.StartCursor
	}
	return forward, backward, count
}

// TestSeries makes a series of posts, reads it in order both ways as a
// reader (drafts and scheduled posts hidden) and as its owner, reads a
// post's place with its previous and next posts, moves, removes and
// deletes, and refuses bad input writing nothing.
func TestSeries(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	ada := b.writers[0] // ada wrote the even posts, the draft and the scheduled one

	se := ok[*CreateSeriesResponse](t)(CreateSeries(ctx, ada, CreateSeriesInput{
		Slug: "learn-go", Title: "Learn Go", Description: ptr("From zero."),
	})).CreateSeries.Series
	equal(t, "owner", se.Owner.Id, b.authors[0])
	add := func(id string, pos *int) {
		t.Helper()
		ok[*AddPostToSeriesResponse](t)(AddPostToSeries(ctx, ada, AddPostToSeriesInput{SeriesSlug: "learn-go", PostId: id, Position: pos}))
	}
	for _, i := range []int{2, 4, 6, 8, 10} {
		add(b.published[i], nil)
	}
	add(b.published[0], ptr(1))
	add(b.draft, ptr(3))
	add(b.scheduled, nil)
	s.consistent()

	all := []string{"post-0", "post-2", "a-draft", "post-4", "post-6", "post-8", "post-10", "soon"}
	public := slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == "a-draft" || s == "soon" })
	forward, backward, n := seriesSlugs(t, s.client, "learn-go", 2)
	if !slices.Equal(forward, public) || !slices.Equal(backward, public) {
		t.Errorf("a reader's series forward %v, backward %v, want %v", forward, backward, public)
	}
	equal(t, "a reader's totalCount", n, len(public))
	forward, backward, n = seriesSlugs(t, ada, "learn-go", 3)
	if !slices.Equal(forward, all) || !slices.Equal(backward, all) {
		t.Errorf("the owner's series forward %v, backward %v, want %v", forward, backward, all)
	}
	equal(t, "the owner's totalCount", n, len(all))

	// A series page: the series and a page of posts, two requests.
	ok[*SeriesPageResponse](t)(SeriesPage(ctx, s.client, "learn-go", ptr(3), nil, nil, nil))
	// totalCount reads the series' posts: one more BatchGetItem.
	equal(t, "requests of a series page with totalCount", total(s.requests()), 3)

	// A post's place: position in the order (drafts count), previous and
	// next among what the reader sees.
	place := ok[*PostInSeriesResponse](t)(PostInSeries(ctx, s.client, "post-4")).Post.Series
	if place == nil || place.Position != 4 || place.Series.Slug != "learn-go" ||
		place.Previous == nil || place.Previous.Slug != "post-2" || place.Next == nil || place.Next.Slug != "post-6" {
		t.Errorf("post-4's place: %+v", place)
	}
	last := ok[*PostInSeriesResponse](t)(PostInSeries(ctx, s.client, "post-10")).Post.Series
	if last == nil || last.Next != nil || last.Previous == nil || last.Previous.Slug != "post-8" {
		t.Errorf("post-10's place: %+v", last)
	}
	if p := ok[*PostInSeriesResponse](t)(PostInSeries(ctx, s.client, "post-1")).Post; p.Series != nil {
		t.Errorf("post-1 in no series has %+v", p.Series)
	}

	// Move post-10 to the front, take post-6 out.
	ok[*MoveSeriesPostResponse](t)(MoveSeriesPost(ctx, ada, MoveSeriesPostInput{SeriesSlug: "learn-go", PostId: b.published[10], Position: 1}))
	ok[*RemovePostFromSeriesResponse](t)(RemovePostFromSeries(ctx, ada, RemovePostFromSeriesInput{SeriesSlug: "learn-go", PostId: b.published[6]}))
	forward, _, _ = seriesSlugs(t, s.client, "learn-go", 10)
	if want := []string{"post-10", "post-0", "post-2", "post-4", "post-8"}; !slices.Equal(forward, want) {
		t.Errorf("after a move and a removal: %v, want %v", forward, want)
	}
	// Deleting a post takes it out of its series in the same transaction.
	ok[*DeletePostResponse](t)(DeletePost(ctx, ada, DeletePostInput{Id: b.published[2]}))
	s.consistent()

	// Bad input: each refused with its code, nothing written.
	other := ok[*CreateSeriesResponse](t)(CreateSeries(ctx, b.writers[1], CreateSeriesInput{Slug: "other", Title: "Other"})).CreateSeries.Series
	before := s.snapshot()
	for _, c := range []struct {
		name, want string
		call       func() error
	}{
		{"a post in another series", "BAD_USER_INPUT", func() error {
			_, err := AddPostToSeries(ctx, s.admin, AddPostToSeriesInput{SeriesSlug: other.Slug, PostId: b.published[4]})
			return err
		}},
		{"a post in the series already", "BAD_USER_INPUT", func() error {
			_, err := AddPostToSeries(ctx, ada, AddPostToSeriesInput{SeriesSlug: "learn-go", PostId: b.published[4]})
			return err
		}},
		{"a negative position", "BAD_USER_INPUT", func() error {
			_, err := AddPostToSeries(ctx, ada, AddPostToSeriesInput{SeriesSlug: "learn-go", PostId: b.published[12], Position: ptr(-1)})
			return err
		}},
		{"a missing series", "NOT_FOUND", func() error {
			_, err := AddPostToSeries(ctx, s.admin, AddPostToSeriesInput{SeriesSlug: "nope", PostId: b.published[12]})
			return err
		}},
		{"a missing post", "NOT_FOUND", func() error {
			_, err := AddPostToSeries(ctx, s.admin, AddPostToSeriesInput{SeriesSlug: "learn-go", PostId: b.published[2]})
			return err
		}},
		{"moving a post not in it", "BAD_USER_INPUT", func() error {
			_, err := MoveSeriesPost(ctx, ada, MoveSeriesPostInput{SeriesSlug: "learn-go", PostId: b.published[12], Position: 1})
			return err
		}},
		{"removing a post not in it", "BAD_USER_INPUT", func() error {
			_, err := RemovePostFromSeries(ctx, s.admin, RemovePostFromSeriesInput{SeriesSlug: other.Slug, PostId: b.published[4]})
			return err
		}},
		{"a stale version", "CONFLICT", func() error {
			_, err := MoveSeriesPost(ctx, ada, MoveSeriesPostInput{SeriesSlug: "learn-go", PostId: b.published[4], Position: 1, ExpectedVersion: ptr(1)})
			return err
		}},
		{"a taken slug", "CONFLICT", func() error {
			_, err := CreateSeries(ctx, ada, CreateSeriesInput{Slug: "learn-go", Title: "Again"})
			return err
		}},
		{"a bad slug", "BAD_USER_INPUT", func() error {
			_, err := CreateSeries(ctx, ada, CreateSeriesInput{Slug: "Not A Slug", Title: "Bad"})
			return err
		}},
		{"an empty title", "BAD_USER_INPUT", func() error {
			_, err := UpdateSeries(ctx, ada, UpdateSeriesInput{Slug: "learn-go", Title: ptr("")})
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) { equal(t, "code", code(c.call()), c.want) })
	}
	s.unchanged(before)

	// Deleting the series takes its posts out of it.
	ok[*DeleteSeriesResponse](t)(DeleteSeries(ctx, ada, DeleteSeriesInput{Slug: "learn-go"}))
	if _, err := SeriesPage(ctx, s.client, "learn-go", nil, nil, nil, nil); code(err) != "NOT_FOUND" {
		t.Errorf("deleted series: %v, want NOT_FOUND", err)
	}
	if p := ok[*PostInSeriesResponse](t)(PostInSeries(ctx, s.client, "post-4")).Post; p.Series != nil {
		t.Errorf("post-4 still in %+v", p.Series)
	}
	s.consistent()
}

// TestSeriesBound adds a post to a series of storage.MaxSeriesPosts
// posts: BAD_USER_INPUT, and nothing is written. The full series is put
// in the table as the store keeps it (its ids name no posts: the
// invariant checker is not asked).
func TestSeriesBound(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("admin"), Name: "Admin"}))
	ok[*CreateSeriesResponse](t)(CreateSeries(ctx, s.admin, CreateSeriesInput{Slug: "big", Title: "Big"}))
	posts := make([]string, storage.MaxSeriesPosts)
	for i := range posts {
		posts[i] = fmt.Sprintf("0190a0b0-0000-7000-8000-%012d", i)
	}
	av, err := attributevalue.Marshal(posts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "PUB#" + storage.DefaultPublication + "#SERIES#big"}, "SK": &types.AttributeValueMemberS{Value: "SERIES#big"}},
		UpdateExpression:          aws.String("SET posts = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": av},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := ok[*CreatePostResponse](t)(CreatePost(ctx, s.admin, CreatePostInput{Title: "One more", Slug: "one-more"})).CreatePost.Post.Id
	before := s.snapshot()
	_, err = AddPostToSeries(ctx, s.admin, AddPostToSeriesInput{SeriesSlug: "big", PostId: id})
	equal(t, "code of the 1,001st post", code(err), "BAD_USER_INPUT")
	if after := s.snapshot(); !slices.Equal(before, after) {
		t.Error("the refused 1,001st post changed the table")
	}
}

// TestSeriesConcurrentWriters moves and removes posts of one series from
// many writers at once: every write that succeeds is kept, positions stay
// exact (each post once, in the series that its item names), and the
// invariant checker agrees.
func TestSeriesConcurrentWriters(t *testing.T) {
	s := newServer(t)
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("admin"), Name: "Admin"}))
	ok[*CreateSeriesResponse](t)(CreateSeries(ctx, s.admin, CreateSeriesInput{Slug: "busy", Title: "Busy"}))
	const n = 24
	ids := make([]string, n)
	for i := range ids {
		ids[i] = ok[*CreatePostResponse](t)(CreatePost(ctx, s.admin, CreatePostInput{Title: "P", Slug: fmt.Sprintf("p-%d", i)})).CreatePost.Post.Id
		ok[*PublishPostResponse](t)(PublishPost(ctx, s.admin, PublishPostInput{Id: ids[i]}))
		ok[*AddPostToSeriesResponse](t)(AddPostToSeries(ctx, s.admin, AddPostToSeriesInput{SeriesSlug: "busy", PostId: ids[i]}))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	removed := map[string]bool{}
	for w := range 6 {
		wg.Go(func() {
			for i := range 8 {
				id := ids[(w*5+i*7)%n]
				var err error
				if i%3 == 2 {
					_, err = RemovePostFromSeries(ctx, s.admin, RemovePostFromSeriesInput{SeriesSlug: "busy", PostId: id})
					if err == nil {
						mu.Lock()
						removed[id] = true
						mu.Unlock()
					}
				} else {
					_, err = MoveSeriesPost(ctx, s.admin, MoveSeriesPostInput{SeriesSlug: "busy", PostId: id, Position: 1 + (w+i)%n})
				}
				// A post another writer took out is not in the series
				// any more; a writer that kept losing races is busy.
				if err != nil && code(err) != "BAD_USER_INPUT" && code(err) != "UNAVAILABLE" {
					t.Errorf("writer %d: %v", w, err)
				}
			}
		})
	}
	wg.Wait()
	s.consistent()
	forward, _, _ := seriesSlugs(t, s.client, "busy", 100)
	equal(t, "posts left in the series", len(forward), n-len(removed))
	seen := map[string]bool{}
	for _, slug := range forward {
		if seen[slug] {
			t.Errorf("%s twice in the series", slug)
		}
		seen[slug] = true
	}
}

// TestSeriesHidesOthersDrafts puts another author's draft in a series
// through an admin: the series' owner does not see it (it is not theirs),
// nor does a reader; its author and admins do.
func TestSeriesHidesOthersDrafts(t *testing.T) {
	s := newServer(t)
	b := s.seedBlog(t)
	ctx := context.Background()
	ok[*CreateSeriesResponse](t)(CreateSeries(ctx, b.writers[1], CreateSeriesInput{Slug: "graces", Title: "Grace's"}))
	ok[*AddPostToSeriesResponse](t)(AddPostToSeries(ctx, s.admin, AddPostToSeriesInput{SeriesSlug: "graces", PostId: b.published[1]}))
	ok[*AddPostToSeriesResponse](t)(AddPostToSeries(ctx, s.admin, AddPostToSeriesInput{SeriesSlug: "graces", PostId: b.draft})) // ada's draft
	for _, c := range []struct {
		who  string
		as   graphql.Client
		want []string
	}{
		{"the series' owner", b.writers[1], []string{"post-1"}},
		{"a reader", s.client, []string{"post-1"}},
		{"the draft's author", b.writers[0], []string{"post-1", "a-draft"}},
		{"an admin", s.admin, []string{"post-1", "a-draft"}},
	} {
		t.Run(c.who, func(t *testing.T) {
			got, _, _ := seriesSlugs(t, c.as, "graces", 10)
			if !slices.Equal(got, c.want) {
				t.Errorf("%s sees %v, want %v", c.who, got, c.want)
			}
		})
	}
}
