package tests

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/Khan/genqlient/graphql"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/feedstore"
)

// The comment counts of a post's summaries follow its comments through
// the change feed's "counts" worker (storage/countsync.go), seen by a
// reader of every list that shows them, on a server as server.go runs it.

// countsQuery asks for the comment count of the post as every list of it
// shows it: the feed, both authors' pages, both categories', the tag's,
// the featured list, and the post's own page.
const countsQuery = `query($id: ID!) {
  post(id: $id) { commentCount }
  posts(first: 5) { edges { node { commentCount } } }
  ada: author(slug: "ada") { posts(first: 5) { edges { node { commentCount } } } }
  bob: author(slug: "bob") { posts(first: 5) { edges { node { commentCount } } } }
  go: category(slug: "go") { posts(first: 5) { edges { node { commentCount } } } }
  aws: category(slug: "aws") { posts(first: 5) { edges { node { commentCount } } } }
  tag(slug: "dynamodb") { posts(first: 5) { edges { node { commentCount } } } }
  featuredPosts(first: 5) { edges { node { commentCount } } }
}`

// shownCounts returns the comment counts countsQuery finds, in the order
// of the answer.
func shownCounts(t *testing.T, c graphql.Client, id string) []int {
	t.Helper()
	var data map[string]any
	err := c.MakeRequest(context.Background(), &graphql.Request{Query: countsQuery, Variables: map[string]any{"id": id}}, &graphql.Response{Data: &data})
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range sortedFields(v) {
				if k == "commentCount" {
					counts = append(counts, int(v[k].(float64)))
				} else {
					walk(v[k])
				}
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(data)
	if len(counts) != 8 {
		t.Fatalf("the lists show %d summaries of the post (%v), want 8", len(counts), data)
	}
	return counts
}

func sortedFields(m map[string]any) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// countedPost makes the authors ada and bob, the categories go and aws,
// and ada's published, featured post with bob, in both categories and
// with the tag dynamodb; it returns the post's id and global id.
func countedPost(t *testing.T, s *liveServer) (id, gid string) {
	t.Helper()
	ctx := context.Background()
	admin := s.as("admin", auth.RoleAdmin)
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada Lovelace", Slug: ptr("ada")}))
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, admin, CreateAuthorInput{Subject: ptr("bob"), Name: "Bob", Slug: ptr("bob")}))
	for _, c := range []string{"go", "aws"} {
		ok[*CreateCategoryResponse](t)(CreateCategory(ctx, admin, CreateCategoryInput{Slug: c, Name: c}))
	}
	p, err := s.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", CoAuthors: []string{"bob"}, Title: "Counted", Slug: "counted",
		Body: "Hi.", Categories: []string{"go", "aws"}, Tags: []string{"dynamodb"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.Publish(ctx, storage.PublishPost{ID: p.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.SetFeatured(ctx, storage.FeaturePost{ID: p.ID, Featured: true}); err != nil {
		t.Fatal(err)
	}
	var data struct{ Post struct{ ID string } }
	if err := s.anon.MakeRequest(ctx, &graphql.Request{Query: `{ post(slug: "counted") { id } }`}, &graphql.Response{Data: &data}); err != nil {
		t.Fatal(err)
	}
	return p.ID, data.Post.ID
}

// driftCopies sets the comment count of every copy of the post id to n,
// as a comment write that leaves the copies to the worker, or a bug,
// leaves them; it returns how many it set.
func driftCopies(t *testing.T, s *liveServer, id string, n int) int {
	t.Helper()
	ctx := context.Background()
	pages := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true)})
	set := 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			typ, _ := it["type"].(*types.AttributeValueMemberS)
			pid, _ := it["id"].(*types.AttributeValueMemberS)
			if typ == nil || pid == nil || pid.Value != id || !strings.HasSuffix(typ.Value, "Post") {
				continue
			}
			_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table),
				Key:                       map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]},
				UpdateExpression:          aws.String("SET commentCount = :n"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: strconv.Itoa(n)}},
			})
			if err != nil {
				t.Fatal(err)
			}
			set++
		}
	}
	return set
}

func TestCommentCountsReachEveryListThroughTheWorker(t *testing.T) {
	s := newLiveServer(t)
	id, gid := countedPost(t, s)
	reader := s.as("ada", auth.RoleAuthor)
	addLiveComment(t, reader, gid, "One.")
	addLiveComment(t, reader, gid, "Two.")
	if n := driftCopies(t, s, id, 0); n != 6 {
		t.Fatalf("drifted %d copies, want 6: two authors', two categories', a tag's, the featured one", n)
	}
	// The third comment counts 1 on the drifted copies; the worker
	// copies the post's 3 onto them.
	addLiveComment(t, reader, gid, "Three.")
	var shown []int
	within(t, waitLimit, "every list showing 3 comments", func() bool {
		shown = shownCounts(t, s.anon, gid)
		return !slices.ContainsFunc(shown, func(n int) bool { return n != 3 })
	}, func() string { return fmt.Sprintf("shown %v", shown) })
	s.waitLogged(t, storage.EventPostCountsUpdated)
	events, err := s.store.EventsAfter(context.Background(), 0, feedstore.MaxEventsPage)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Type == storage.EventPostCountsUpdated && (e.Data.PostID != id || !slices.Contains(e.Data.CacheTags, frontend.TagCounts(id))) {
			t.Errorf("post.counts.updated data %+v, want the post and the tag %s", e.Data, frontend.TagCounts(id))
		}
	}
	bad, err := s.store.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error("invariant: " + b)
	}
}
