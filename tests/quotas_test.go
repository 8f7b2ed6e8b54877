package tests

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/Khan/genqlient/graphql"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/webhooks"
)

// A publication's quotas of posts and webhooks: defaults from the
// configuration, a publication's own set by a platform admin; a create
// past one is QUOTA_EXCEEDED naming the limit and writes nothing, a
// delete gives the unit back.

const (
	usageQuery        = `query($s: String!) { publication(slug: $s) { usage { posts webhooks postsLimit webhooksLimit } } }`
	setLimitsMutation = `mutation($in: SetPublicationLimitsInput!) { setPublicationLimits(input: $in) { publication { id usage { posts postsLimit webhooks webhooksLimit } } } }`
)

// usageAnswer is Publication.usage.
type usageAnswer struct {
	Posts, Webhooks           int
	PostsLimit, WebhooksLimit *int
}

func (u usageAnswer) String() string {
	lim := func(p *int) string {
		if p == nil {
			return "none"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("%d posts of %s, %d webhooks of %s", u.Posts, lim(u.PostsLimit), u.Webhooks, lim(u.WebhooksLimit))
}

// quotaServer is a server whose publications have quota by default,
// its DynamoDB client and handler changed by configure.
func quotaServer(t *testing.T, quota storage.PublicationQuota, configure ...func(*storage.ClientConfig, *graph.HandlerOptions)) *server {
	return newServerOn(t, []storage.Option{storage.WithPublicationQuota(quota)}, nil, configure...)
}

// createPosts creates n drafts as c with slugs prefix-0…, and returns
// their ids.
func createPosts(t *testing.T, c graphql.Client, prefix string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = ok[*CreatePostResponse](t)(CreatePost(context.Background(), c, CreatePostInput{Title: "P", Slug: fmt.Sprintf("%s-%d", prefix, i)})).CreatePost.Post.Id
	}
	return ids
}

func TestPostQuota(t *testing.T) {
	s := quotaServer(t, storage.PublicationQuota{Posts: 3})
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("admin"), Name: "Admin"}))
	ids := createPosts(t, s.admin, "p", 2)
	// A published post counts as a draft does.
	ok[*PublishPostResponse](t)(PublishPost(ctx, s.admin, PublishPostInput{Id: ids[0]}))
	createPosts(t, s.admin, "q", 1)
	// The counter costs no request: one read and one TransactWriteItems,
	// as before it.
	created := s.requests()
	equal(t, "createPost's TransactWriteItems", created["TransactWriteItems"], 1)
	equal(t, "createPost's requests", total(created), 2)

	t.Run("a create past the quota is QUOTA_EXCEEDED and writes nothing", func(t *testing.T) {
		before := s.snapshot()
		_, err := CreatePost(ctx, s.admin, CreatePostInput{Title: "One too many", Slug: "one-too-many"})
		quotaError(t, "createPost", err, "POSTS", 3, 3)
		// The refused transaction and one GetItem of the counter, to say
		// which limit.
		refused := s.requests()
		equal(t, "refused createPost's requests", total(refused), 3)
		if !strings.Contains(fmt.Sprint(err), "quota is 3") {
			t.Errorf("message %q does not say the quota", err)
		}
		if after := s.snapshot(); !slices.Equal(before, after) {
			t.Error("the refused create changed the table")
		}
	})

	t.Run("deleting a post gives its unit back", func(t *testing.T) {
		ok[*DeletePostResponse](t)(DeletePost(ctx, s.admin, DeletePostInput{Id: ids[0]}))
		createPosts(t, s.admin, "r", 1)
		_, err := CreatePost(ctx, s.admin, CreatePostInput{Title: "Again too many", Slug: "again"})
		quotaError(t, "createPost after one deleted and one created", err, "POSTS", 3, 3)
	})
	s.consistent()
}

// TestPostQuotaUnderConcurrentCreates sends 10 creates at once with 3
// posts left: 3 are created, never more; the others are QUOTA_EXCEEDED
// (or UNAVAILABLE when conflicts outlast the retries: then fewer are
// created, and as many can be created after).
func TestPostQuotaUnderConcurrentCreates(t *testing.T) {
	s := quotaServer(t, storage.PublicationQuota{Posts: 5})
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, s.admin, CreateAuthorInput{Subject: ptr("admin"), Name: "Admin"}))
	createPosts(t, s.admin, "before", 2)

	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created int
		codes   = map[string]int{}
	)
	for i := range 10 {
		wg.Go(func() {
			_, err := CreatePost(ctx, s.admin, CreatePostInput{Title: "Racing", Slug: fmt.Sprintf("racing-%d", i)})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				created++
				return
			}
			codes[code(err)]++
		})
	}
	wg.Wait()
	if created > 3 {
		t.Fatalf("%d concurrent creates passed the quota with 3 left", created)
	}
	for c, n := range codes {
		if c != "QUOTA_EXCEEDED" && c != "UNAVAILABLE" {
			t.Errorf("%d creates failed with %q, want QUOTA_EXCEEDED (or UNAVAILABLE)", n, c)
		}
	}
	for i := 0; ; i++ {
		_, err := CreatePost(ctx, s.admin, CreatePostInput{Title: "Filling", Slug: fmt.Sprintf("filling-%d", i)})
		if code(err) == "QUOTA_EXCEEDED" {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		created++
	}
	equal(t, "posts created with 3 left", created, 3)
	s.consistent()
}

func TestWebhookQuota(t *testing.T) {
	s := quotaServer(t, storage.PublicationQuota{Webhooks: 2})
	s.withWebhooks(webhooks.Options{AllowPrivate: true, AllowHTTP: true})
	events := []string{"post.published"}
	first, _, err := createWebhook(s.admin, "https://hooks.example.com/1", events, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := createWebhook(s.admin, "https://hooks.example.com/2", events, nil); err != nil {
		t.Fatal(err)
	}
	before := s.snapshot()
	_, _, err = createWebhook(s.admin, "https://hooks.example.com/3", events, nil)
	quotaError(t, "createWebhook", err, "WEBHOOKS", 2, 2)
	if after := s.snapshot(); !slices.Equal(before, after) {
		t.Error("the refused create changed the table")
	}
	ok[*DeleteWebhookResponse](t)(DeleteWebhook(context.Background(), s.admin, DeleteWebhookInput{Id: first.Id}))
	if _, _, err := createWebhook(s.admin, "https://hooks.example.com/3", events, nil); err != nil {
		t.Fatalf("create after a deletion: %v", err)
	}
	equal(t, "webhooks", len(webhooksOf(t, s.admin)), 2)
	s.consistent()
}

// quotaRig is a publication alpha beside the default one, both with a
// default quota of 2 posts, served at their hosts (on a server changed by
// configure).
type quotaRig struct {
	s        *server
	h        *hosted
	alpha    string
	platform graphql.Client
	owner    graphql.Client
	author   graphql.Client
}

func newQuotaRig(t *testing.T, configure ...func(*storage.ClientConfig, *graph.HandlerOptions)) *quotaRig {
	return newQuotaRigOf(t, storage.PublicationQuota{Posts: 2}, configure...)
}

// newQuotaRigOf is newQuotaRig with the default quota q.
func newQuotaRigOf(t *testing.T, q storage.PublicationQuota, configure ...func(*storage.ClientConfig, *graph.HandlerOptions)) *quotaRig {
	s := quotaServer(t, q, configure...)
	h := s.route(t)
	platform := h.client("", "ops", auth.RolePlatform)
	var created struct {
		CreatePublication struct{ Publication publicationAnswer } `json:"createPublication"`
	}
	in := map[string]any{"slug": "alpha", "title": "Alpha", "hosts": []string{"alpha.localhost"}}
	if err := gql(platform, createPublicationMutation, map[string]any{"in": in}, &created); err != nil {
		t.Fatal(err)
	}
	alpha := created.CreatePublication.Publication.ID
	publishOn(t, h, alpha, "alpha.localhost", "ann", "First", "first")
	return &quotaRig{s: s, h: h, alpha: alpha, platform: platform,
		owner:  h.scoped("alpha.localhost", alpha, "admin", auth.PubOwner),
		author: h.scoped("alpha.localhost", alpha, "ann", auth.PubAuthor)}
}

// usage returns alpha's usage as c reads it.
func (r *quotaRig) usage(t *testing.T, c graphql.Client) (usageAnswer, error) {
	t.Helper()
	var out struct {
		Publication struct{ Usage usageAnswer } `json:"publication"`
	}
	err := gql(c, usageQuery, map[string]any{"s": "alpha"}, &out)
	return out.Publication.Usage, err
}

// setLimits sets alpha's limits as c.
func (r *quotaRig) setLimits(c graphql.Client, in map[string]any) error {
	in["id"] = r.alpha
	return gql(c, setLimitsMutation, map[string]any{"in": in}, &struct{}{})
}

func TestPublicationLimits(t *testing.T) {
	r := newQuotaRig(t)
	ctx := context.Background()
	u, err := r.usage(t, r.owner)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "alpha's usage as its owner reads it", u.String(), "1 posts of 2, 0 webhooks of none")

	t.Run("only its admins and platform admins read the usage", func(t *testing.T) {
		_, err := r.usage(t, r.author)
		equal(t, "an author reads the usage", code(err), "FORBIDDEN")
		_, err = r.usage(t, r.h.client("alpha.localhost", ""))
		equal(t, "anonymous reads the usage", code(err), "UNAUTHENTICATED")
		u, err := r.usage(t, r.platform)
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "alpha's usage as a platform admin reads it", u.String(), "1 posts of 2, 0 webhooks of none")
	})

	t.Run("only a platform admin sets limits", func(t *testing.T) {
		for name, c := range map[string]graphql.Client{"its owner": r.owner, "an author": r.author} {
			err := r.setLimits(c, map[string]any{"posts": 100})
			equal(t, name+" raises the posts limit", code(err), "FORBIDDEN")
		}
		equal(t, "a negative limit", code(r.setLimits(r.platform, map[string]any{"posts": -1})), "BAD_USER_INPUT")
		u, _ := r.usage(t, r.owner)
		equal(t, "usage after refused changes", u.String(), "1 posts of 2, 0 webhooks of none")
	})

	t.Run("a publication's own limit binds it alone", func(t *testing.T) {
		if err := r.setLimits(r.platform, map[string]any{"posts": 1, "webhooks": 5}); err != nil {
			t.Fatal(err)
		}
		u, _ := r.usage(t, r.owner)
		equal(t, "usage after the limits are set", u.String(), "1 posts of 1, 0 webhooks of 5")
		_, err := CreatePost(ctx, r.author, CreatePostInput{Title: "Second", Slug: "second"})
		quotaError(t, "alpha's create past its own limit", err, "POSTS", 1, 1)
		// The default publication keeps the default: 2.
		def := r.h.client("blog.test", "admin", auth.RoleAdmin)
		ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, def, CreateAuthorInput{Subject: ptr("admin"), Name: "Admin"}))
		createPosts(t, def, "default", 2)
		_, err = CreatePost(ctx, def, CreatePostInput{Title: "Third", Slug: "third"})
		quotaError(t, "the default publication's third post", err, "POSTS", 2, 2)
	})

	t.Run("no bound, then the default again", func(t *testing.T) {
		if err := r.setLimits(r.platform, map[string]any{"posts": 0}); err != nil {
			t.Fatal(err)
		}
		createPosts(t, r.author, "unbounded", 2)
		u, _ := r.usage(t, r.owner)
		equal(t, "usage without a bound", u.String(), "3 posts of none, 0 webhooks of 5")
		equal(t, "a limit and the default", code(r.setLimits(r.platform, map[string]any{"posts": 4, "useDefault": []string{"POSTS"}})), "BAD_USER_INPUT")
		if err := r.setLimits(r.platform, map[string]any{"useDefault": []string{"POSTS", "WEBHOOKS"}}); err != nil {
			t.Fatal(err)
		}
		u, _ = r.usage(t, r.owner)
		equal(t, "usage back on the defaults", u.String(), "3 posts of 2, 0 webhooks of none")
		_, err := CreatePost(ctx, r.author, CreatePostInput{Title: "Over", Slug: "over"})
		quotaError(t, "a create over a lowered limit", err, "POSTS", 3, 2)
	})
	equal(t, "an unknown publication", code(gql(r.platform, setLimitsMutation, map[string]any{"in": map[string]any{"id": "nosuch", "posts": 1}}, &struct{}{})), "NOT_FOUND")
}

// TestPostCounterOfAnExistingPublication: a publication whose posts were
// written before the counter existed is counted at its first post write
// or usage read, and a counter that drifted is reported by the checker.
func TestPostCounterOfAnExistingPublication(t *testing.T) {
	r := newQuotaRig(t)
	ctx := context.Background()
	createPosts(t, r.author, "draft", 1)
	counter := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "PUB#" + r.alpha + "#POSTUSAGE"},
		"SK": &types.AttributeValueMemberS{Value: "POSTUSAGE"},
	}
	drop := func() {
		if _, err := r.s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(r.s.table), Key: counter}); err != nil {
			t.Fatal(err)
		}
	}

	drop()
	u, err := r.usage(t, r.owner)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "usage counted at its first read", u.String(), "2 posts of 2, 0 webhooks of none")

	drop()
	_, err = CreatePost(ctx, r.author, CreatePostInput{Title: "Third", Slug: "third"})
	quotaError(t, "a create that counts first", err, "POSTS", 2, 2)

	alpha, err := r.s.store.In(r.alpha)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(r.s.table), Key: counter, UpdateExpression: aws.String("SET posts = :n"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: "7"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := alpha.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(bad, func(b string) bool { return strings.Contains(b, "posts' counter has 7 posts, the publication 2") }) {
		t.Errorf("the checker found %q, want the drifted posts' counter", bad)
	}
}

// TestWebhookQuotaPerPublication: each publication's webhooks count
// against its own quota: the default publication full leaves alpha its
// own room and the reverse, a deletion gives the unit back to its own
// publication alone, and alpha's own limit moves alpha's bound alone.
func TestWebhookQuotaPerPublication(t *testing.T) {
	r := newQuotaRigOf(t, storage.PublicationQuota{Webhooks: 2})
	h, alpha := r.h, r.owner
	def := h.client("blog.test", "admin", auth.RoleAdmin)
	events := []string{"post.published"}
	hook := func(c graphql.Client, name string) (WebhookParts, error) {
		w, _, err := createWebhook(c, "https://hooks.example.com/"+name, events, nil)
		return w, err
	}
	must := func(c graphql.Client, name string) WebhookParts {
		t.Helper()
		w, err := hook(c, name)
		if err != nil {
			t.Fatalf("create webhook %s: %v", name, err)
		}
		return w
	}

	defFirst := must(def, "default-1")
	must(def, "default-2")
	_, err := hook(def, "default-3")
	quotaError(t, "the default publication's third webhook", err, "WEBHOOKS", 2, 2)

	alphaFirst := must(alpha, "alpha-1")
	must(alpha, "alpha-2")
	_, err = hook(alpha, "alpha-3")
	quotaError(t, "alpha's third webhook", err, "WEBHOOKS", 2, 2)

	ok[*DeleteWebhookResponse](t)(DeleteWebhook(context.Background(), def, DeleteWebhookInput{Id: defFirst.Id}))
	_, err = hook(alpha, "alpha-3")
	quotaError(t, "alpha's third webhook after a deletion in the default publication", err, "WEBHOOKS", 2, 2)
	must(def, "default-3")

	ok[*DeleteWebhookResponse](t)(DeleteWebhook(context.Background(), alpha, DeleteWebhookInput{Id: alphaFirst.Id}))
	_, err = hook(def, "default-4")
	quotaError(t, "the default publication's webhook after a deletion in alpha", err, "WEBHOOKS", 2, 2)
	must(alpha, "alpha-3")

	if err := r.setLimits(r.platform, map[string]any{"webhooks": 3}); err != nil {
		t.Fatal(err)
	}
	must(alpha, "alpha-4")
	_, err = hook(alpha, "alpha-5")
	quotaError(t, "alpha's webhook past its own limit", err, "WEBHOOKS", 3, 3)
	_, err = hook(def, "default-4")
	quotaError(t, "the default publication's webhook beside alpha's own limit", err, "WEBHOOKS", 2, 2)

	u, err := r.usage(t, alpha)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "alpha's usage", u.String(), "1 posts of none, 3 webhooks of 3")
	equal(t, "alpha's webhooks", len(webhooksOf(t, alpha)), 3)
	equal(t, "the default publication's webhooks", len(webhooksOf(t, def)), 2)
	r.s.consistent()
	alphaStore, err := r.s.store.In(r.alpha)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := alphaStore.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error("alpha's invariant: " + b)
	}
}
