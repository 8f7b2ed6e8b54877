package storage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/internal/migrations"
	"github.com/blogql/blog/storage/legacytest"
)

// reader is a reader signed in by email at the store, with a comment and
// a reaction on post.
func (e *env) reader(email, post string) (string, *storage.Comment) {
	e.t.Helper()
	ctx := context.Background()
	var token string
	if err := e.store.RequestSignIn(ctx, storage.SignInRequest{Email: email, Client: "203.0.113.7", RedirectTo: "https://blog.test/",
		Compose: func(tok, _ string) (storage.Email, error) {
			token = tok
			return storage.Email{Subject: "Sign in", Text: "link", Kind: "sign-in"}, nil
		}}); err != nil {
		e.t.Fatal(err)
	}
	in := must[storage.SignedIn](e.t)(e.store.CompleteSignIn(ctx, storage.SignInCredentials{Token: token}))
	id := in.Account.ID
	c := must[*storage.Comment](e.t)(e.store.AddComment(ctx, storage.NewComment{PostID: post, Body: "Words of " + email,
		Reader: &storage.ReaderProfile{ID: id, Name: "Reader"}}))
	for _, s := range []storage.Subject{{PostID: post}, {PostID: post, CommentID: c.ID}} {
		if err := e.store.React(ctx, s, storage.Reactor{ID: id, NeedsMember: true}, "LIKE"); err != nil {
			e.t.Fatal(err)
		}
	}
	return id, c
}

// rawItems returns the table's items that keep matches, read by a Scan.
func (e *env) rawItems(keep func(map[string]types.AttributeValue) bool) []map[string]types.AttributeValue {
	e.t.Helper()
	var out []map[string]types.AttributeValue
	pages := dynamodb.NewScanPaginator(e.client, &dynamodb.ScanInput{TableName: aws.String(e.table), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			e.t.Fatal(err)
		}
		for _, it := range page.Items {
			if keep(it) {
				out = append(out, it)
			}
		}
	}
	return out
}

func (e *env) putRaw(items ...map[string]types.AttributeValue) {
	e.t.Helper()
	for _, it := range items {
		if _, err := e.client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: it}); err != nil {
			e.t.Fatal(err)
		}
	}
}

func attr(it map[string]types.AttributeValue, name string) string {
	s, _ := it[name].(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

// TestCheckFindsWhatADeletedAccountLeft deletes an account, then puts
// back, as a deletion that missed them would leave them, its session,
// membership, comment, reaction, trail entry and a newsletter email
// waiting in the outbox: the checker names each; once the account's
// tombstone has expired it still names what only an account has.
func TestCheckFindsWhatADeletedAccountLeft(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	post := e.publish(e.post("ada", "compost"), start.Add(-time.Hour))
	ann, _ := e.reader("ann@example.com", post.ID)
	bob, _ := e.reader("bob@example.com", post.ID)
	e.consistent()
	names := func(it map[string]types.AttributeValue) bool {
		return strings.Contains(attr(it, "PK")+attr(it, "SK")+attr(it, "readerId")+attr(it, "accountId"), ann)
	}
	saved := e.rawItems(func(it map[string]types.AttributeValue) bool {
		return names(it) && attr(it, "type") != "account" && attr(it, "type") != "accountEmail" && attr(it, "type") != "reader"
	})
	kinds := map[string]bool{}
	for _, it := range saved {
		kinds[attr(it, "type")] = true
	}
	for _, k := range []string{"session", "member", "comment", "reaction", "trail"} {
		if !kinds[k] {
			t.Fatalf("no %s of the reader saved: %v", k, kinds)
		}
	}
	if err := e.store.DeleteAccount(ctx, ann, "ann@example.com"); err != nil {
		t.Fatal(err)
	}
	e.consistent()

	e.putRaw(saved...)
	if _, err := e.store.EnqueueMail(ctx, storage.Email{ID: "n1", To: "ann@example.com", Subject: "News", Text: "News.",
		Kind: "newsletter", CreatedAt: start}); err != nil {
		t.Fatal(err)
	}
	found := strings.Join(must[[]string](t)(e.store.Check(ctx)), "\n")
	for _, want := range []string{
		fmt.Sprintf("deleted account %q left session", ann),
		fmt.Sprintf("deleted account %q left its membership", ann),
		fmt.Sprintf("deleted account %q left comment", ann),
		fmt.Sprintf("deleted account %q left a reaction", ann),
		fmt.Sprintf("deleted account %q left trail entry", ann),
		"pending newsletter email n1 goes to an address no account holds",
	} {
		if !strings.Contains(found, want) {
			t.Errorf("the checker found:\n%s\nwant a finding %q", found, want)
		}
	}
	if strings.Contains(found, bob) {
		t.Errorf("the checker found:\n%s\nnothing of another reader", found)
	}

	// The tombstone expires: what only an account has still names an
	// account that is not there.
	if _, err := e.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(e.table),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "ACCOUNT#" + ann},
			"SK": &types.AttributeValueMemberS{Value: "ACCOUNT#" + ann}}}); err != nil {
		t.Fatal(err)
	}
	found = strings.Join(must[[]string](t)(e.store.Check(ctx)), "\n")
	for _, want := range []string{
		fmt.Sprintf("names account %q, which does not exist", ann),
		"its membership names account",
	} {
		if !strings.Contains(found, want) {
			t.Errorf("after the tombstone, the checker found:\n%s\nwant a finding %q", found, want)
		}
	}
}

// TestCheckFindsADeletionThatDidNotFinish: an account closed but still
// holding its address (a deletion cut short) is reported until
// deleteMyAccount is sent again.
func TestCheckFindsADeletionThatDidNotFinish(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	post := e.publish(e.post("ada", "compost"), start.Add(-time.Hour))
	ann, _ := e.reader("ann@example.com", post.ID)
	if _, err := e.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(e.table),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "ACCOUNT#" + ann},
			"SK": &types.AttributeValueMemberS{Value: "ACCOUNT#" + ann}},
		UpdateExpression: aws.String("SET closedAt = :t"), ExpressionAttributeValues: map[string]types.AttributeValue{
			":t": &types.AttributeValueMemberS{Value: "2026-01-01T00:00:00.000Z"}}}); err != nil {
		t.Fatal(err)
	}
	found := strings.Join(must[[]string](t)(e.store.Check(ctx)), "\n")
	if want := fmt.Sprintf("account %q is closed but its deletion did not finish", ann); !strings.Contains(found, want) {
		t.Errorf("the checker found:\n%s\nwant %q", found, want)
	}
	if err := e.store.DeleteAccount(ctx, ann, "ann@example.com"); err != nil {
		t.Fatal(err)
	}
	e.consistent()
}

// TestMigrateTrails turns readers' comments, reactions and memberships
// back into what was written before the trail existed, runs the sweep
// that writes their entries, first stopped half-way as a crash would,
// then to the end: the checker finds nothing, deleting an account then
// leaves nothing of it, and a run after the end costs one GetItem.
func TestMigrateTrails(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	var posts []*storage.Post
	for i := range 3 {
		posts = append(posts, e.publish(e.post("ada", fmt.Sprint("post-", i)), start.Add(-time.Duration(i+1)*time.Hour)))
	}
	ann, annsComment := e.reader("ann@example.com", posts[0].ID)
	bob, _ := e.reader("bob@example.com", posts[1].ID)
	must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: posts[2].ID, Body: "Ann again.",
		Reader: &storage.ReaderProfile{ID: ann, Name: "Ann"}}))
	must[*storage.Comment](t)(e.store.AddComment(ctx, storage.NewComment{PostID: posts[2].ID, Body: "Staff.", AuthorID: "ada"}))
	e.consistent()

	// Ann's 2 comments, 2 reactions and membership, and Bob's comment,
	// 2 reactions and membership, each with its entry.
	if n := must[int](t)(legacytest.WithoutTrails(ctx, e.client, e.table)); n != 9 {
		t.Fatalf("trail entries deleted: %d, want 9", n)
	}
	found := strings.Join(must[[]string](t)(e.store.Check(ctx)), "\n")
	for _, want := range []string{"comment " + annsComment.ID + " of reader", "membership of reader", "reaction to "} {
		if !strings.Contains(found, want) || !strings.Contains(found, "is not in the reader's trail") {
			t.Errorf("the checker on data without trails found:\n%s\nwant %q not in the reader's trail", found, want)
		}
	}

	stopped := storage.New(e.client, e.table, storage.WithClock(e.clock.Now), storage.WithMigrationStop(1, 1))
	first, err := stopped.MigrateTrails(ctx)
	if !errors.Is(err, migrations.ErrStopped) {
		t.Fatalf("migrate = %v, want it stopped", err)
	}
	m := must[storage.Trails](t)(e.store.MigrateTrails(ctx))
	equal(t, "entries written", first.Entries+m.Entries, 9)
	if first.Entries == 0 || m.Entries == 0 {
		t.Errorf("entries written before the stop and after: %d and %d, want some in each", first.Entries, m.Entries)
	}
	e.consistent()
	n := counted(func(ctx context.Context) { must[storage.Trails](t)(e.store.MigrateTrails(ctx)) })
	equal(t, "requests of a run after the end", fmt.Sprint(n), "map[GetItem:1]")

	if err := e.store.DeleteAccount(ctx, ann, "ann@example.com"); err != nil {
		t.Fatal(err)
	}
	e.consistent()
	// What is left is the tombstone, and the rate of the reader's
	// comments, which holds hashes only and expires a minute after the
	// last one.
	left := e.rawItems(func(it map[string]types.AttributeValue) bool {
		return strings.Contains(attr(it, "PK")+attr(it, "SK")+attr(it, "readerId")+attr(it, "accountId"), ann) &&
			!(attr(it, "type") == "account" && attr(it, "email") == "") && attr(it, "type") != "rate"
	})
	if len(left) > 0 {
		t.Errorf("after the deletion, %d items still name the account: %v", len(left), left)
	}
	if bobs := e.rawItems(func(it map[string]types.AttributeValue) bool { return attr(it, "readerId") == bob }); len(bobs) != 1 {
		t.Errorf("Bob's comments: %d, want his 1", len(bobs))
	}
}

// TestMigrateTrailsInEveryPublication: a reader's older comment and
// reaction in another publication than the Store's get their entries
// from the sweep of every publication, and that publication's checker
// then finds nothing.
func TestMigrateTrailsInEveryPublication(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pub := must[*storage.Publication](t)(e.store.CreatePublication(ctx, storage.NewPublication{Slug: "beta", Title: "Beta"}))
	beta := must[*storage.Store](t)(e.store.In(pub.ID))
	must[*storage.Author](t)(beta.CreateAuthor(ctx, storage.NewAuthor{ID: "ada", Name: "Ada"}))
	p := must[*storage.Post](t)(beta.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "Hallo", Slug: "hallo", Body: "Text"}))
	p = must[*storage.Post](t)(beta.Publish(ctx, storage.PublishPost{ID: p.ID, At: start.Add(-time.Hour)}))
	must[*storage.Comment](t)(beta.AddComment(ctx, storage.NewComment{PostID: p.ID, Body: "Hi.", Reader: &storage.ReaderProfile{ID: "reader-1", Name: "R"}}))
	if err := beta.React(ctx, storage.Subject{PostID: p.ID}, storage.Reactor{ID: "reader-1"}, "LIKE"); err != nil {
		t.Fatal(err)
	}
	if err := beta.SyncAllCounts(ctx); err != nil {
		t.Fatal(err)
	}
	equal(t, "entries deleted", must[int](t)(legacytest.WithoutTrails(ctx, e.client, e.table)), 2)
	if len(must[[]string](t)(beta.Check(ctx))) == 0 {
		t.Fatal("the checker of the publication found nothing missing from the trail")
	}
	equal(t, "entries written", must[storage.Trails](t)(e.store.MigrateAllTrails(ctx)).Entries, 2)
	if bad := must[[]string](t)(beta.Check(ctx)); len(bad) > 0 {
		t.Errorf("the checker of the publication after the sweep: %q", bad)
	}
}
