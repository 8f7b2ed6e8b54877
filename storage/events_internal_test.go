package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/storage/internal/keys"
)

// feed stands in for a stream with NEW_AND_OLD_IMAGES until the table
// has one: after each write through the Store it scans the whole (small)
// table and turns every item that changed into the record DynamoDB
// Streams would deliver for it, so the translation is tested on the items
// the store really writes, copies and counters included.
type feed struct {
	t     *testing.T
	db    *dynamodb.Client
	table string
	now   *time.Time
	seen  map[key]map[string]types.AttributeValue
	seq   int
	all   []streamtypes.Record
}

// newFeedTest returns a Store on a new table called name, whose clock
// reads *now, and the feed of the table's changes.
func newFeedTest(t *testing.T, name string, now *time.Time) (*Store, *feed) {
	t.Helper()
	clock := func() time.Time { return *now }
	db, table := testBackend(t, clock, name)
	s := New(db, table, WithClock(clock))
	if err := s.CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, &feed{t: t, db: db, table: table, now: now}
}

func (f *feed) scan() map[key]map[string]types.AttributeValue {
	f.t.Helper()
	items := map[key]map[string]types.AttributeValue{}
	pages := dynamodb.NewScanPaginator(f.db, &dynamodb.ScanInput{TableName: aws.String(f.table), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		out, err := pages.NextPage(context.Background())
		if err != nil {
			f.t.Fatal(err)
		}
		for _, it := range out.Items {
			var k key
			if err := attributevalue.UnmarshalMap(it, &k); err != nil {
				f.t.Fatal(err)
			}
			items[k] = it
		}
	}
	return items
}

// records returns the stream records of what changed since the last call,
// in key order.
func (f *feed) records() []streamtypes.Record {
	f.t.Helper()
	now := f.scan()
	var ks []key
	for k := range now {
		ks = append(ks, k)
	}
	for k := range f.seen {
		if _, ok := now[k]; !ok {
			ks = append(ks, k)
		}
	}
	slices.SortFunc(ks, func(a, b key) int { return strings.Compare(a.PK+"\x00"+a.SK, b.PK+"\x00"+b.SK) })
	var recs []streamtypes.Record
	for _, k := range ks {
		old, cur := f.seen[k], now[k]
		name := streamtypes.OperationTypeModify
		switch {
		case old == nil:
			name = streamtypes.OperationTypeInsert
		case cur == nil:
			name = streamtypes.OperationTypeRemove
		case equalItems(f.t, old, cur):
			continue
		}
		recs = append(recs, f.record(name, old, cur))
	}
	f.seen = now
	f.all = append(f.all, recs...)
	return recs
}

func (f *feed) record(name streamtypes.OperationType, old, cur map[string]types.AttributeValue) streamtypes.Record {
	f.seq++
	return streamtypes.Record{
		EventID:   aws.String(fmt.Sprintf("%032x", f.seq)),
		EventName: name,
		Dynamodb: &streamtypes.StreamRecord{
			ApproximateCreationDateTime: aws.Time(*f.now),
			SequenceNumber:              aws.String(fmt.Sprintf("%021d", f.seq*100)),
			StreamViewType:              streamtypes.StreamViewTypeNewAndOldImages,
			OldImage:                    toStream(f.t, old),
			NewImage:                    toStream(f.t, cur),
		},
	}
}

func equalItems(t *testing.T, a, b map[string]types.AttributeValue) bool {
	var x, y any
	if err := attributevalue.UnmarshalMap(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := attributevalue.UnmarshalMap(b, &y); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

// toStream converts an item to the stream API's attribute values.
func toStream(t *testing.T, item map[string]types.AttributeValue) map[string]streamtypes.AttributeValue {
	if item == nil {
		return nil
	}
	out := map[string]streamtypes.AttributeValue{}
	for n, v := range item {
		out[n] = toStreamValue(t, v)
	}
	return out
}

func toStreamValue(t *testing.T, v types.AttributeValue) streamtypes.AttributeValue {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return &streamtypes.AttributeValueMemberS{Value: v.Value}
	case *types.AttributeValueMemberN:
		return &streamtypes.AttributeValueMemberN{Value: v.Value}
	case *types.AttributeValueMemberBOOL:
		return &streamtypes.AttributeValueMemberBOOL{Value: v.Value}
	case *types.AttributeValueMemberNULL:
		return &streamtypes.AttributeValueMemberNULL{Value: v.Value}
	case *types.AttributeValueMemberB:
		return &streamtypes.AttributeValueMemberB{Value: v.Value}
	case *types.AttributeValueMemberSS:
		return &streamtypes.AttributeValueMemberSS{Value: v.Value}
	case *types.AttributeValueMemberNS:
		return &streamtypes.AttributeValueMemberNS{Value: v.Value}
	case *types.AttributeValueMemberBS:
		return &streamtypes.AttributeValueMemberBS{Value: v.Value}
	case *types.AttributeValueMemberM:
		return &streamtypes.AttributeValueMemberM{Value: toStream(t, v.Value)}
	case *types.AttributeValueMemberL:
		l := make([]streamtypes.AttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = toStreamValue(t, e)
		}
		return &streamtypes.AttributeValueMemberL{Value: l}
	}
	t.Fatalf("attribute value %T", v)
	return nil
}

// events translates the records of what changed since the last call.
func (f *feed) events() []Event {
	f.t.Helper()
	var out []Event
	for _, r := range f.records() {
		evs, err := EventsOf(r)
		if err != nil {
			f.t.Fatal(err)
		}
		out = append(out, evs...)
	}
	return out
}

func typesOf(evs []Event) []EventType {
	out := []EventType{}
	for _, e := range evs {
		out = append(out, e.Type)
	}
	slices.Sort(out)
	return out
}

// TestEventsOfWrites writes a blog's life through the Store and checks
// the events the change feed gets from every item each write changed:
// one event for what the write means, none for the copies, counters,
// slug reservations, queue entries, rate and idempotency records it
// wrote with it.
func TestEventsOfWrites(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s, f := newFeedTest(t, "events", &now)
	f.records()

	var post *Post
	var page *SitePage
	var added, held, rejected *Comment
	var scheduled time.Time
	reader := &ReaderProfile{ID: "reader-1", Name: "Grace"}
	idem := 0
	key := func() string { idem++; return fmt.Sprintf("key-%d", idem) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// edit updates the post at its current version.
	edit := func(patch PostPatch) {
		t.Helper()
		cur, err := s.GetPost(ctx, post.ID)
		must(err)
		patch.ID, patch.ExpectedVersion = post.ID, cur.Version
		_, err = s.UpdatePost(ctx, patch)
		must(err)
	}
	steps := []struct {
		name  string
		write func()
		want  []EventType
		check func(t *testing.T, evs []Event)
	}{
		{"a new author is author.updated", func() {
			_, err := s.CreateAuthor(ctx, NewAuthor{ID: "ada", Name: "Ada", IdempotencyKey: key()})
			must(err)
		}, []EventType{EventAuthorUpdated}, nil},
		{"a new category is category.updated", func() {
			_, err := s.CreateCategory(ctx, NewCategory{Slug: "go", Name: "Go"})
			must(err)
			_, err = s.CreateCategory(ctx, NewCategory{Slug: "db", Name: "Databases"})
			must(err)
		}, []EventType{EventCategoryUpdated, EventCategoryUpdated}, nil},
		{"a draft is no event", func() {
			var err error
			post, err = s.CreatePost(ctx, NewPost{AuthorID: "ada", Title: "Hello", Slug: "hello", Body: "Hi.", Categories: []string{"go"}, IdempotencyKey: key()})
			must(err)
		}, nil, nil},
		{"publishing is post.published", func() {
			_, err := s.Publish(ctx, PublishPost{ID: post.ID, IdempotencyKey: key()})
			must(err)
		}, []EventType{EventPostPublished}, func(t *testing.T, evs []Event) {
			d := evs[0].Data
			wantPaths := []string{"/", "/posts/hello", "/authors/ada", "/categories/go", "/archive/2026/03"}
			wantTags := []string{frontend.TagPost(post.ID), "author:ada", "feed", "search", "category:go", "archive:2026-03", "authors", "categories"}
			if d.PostID != post.ID || d.Slug != "hello" || d.AuthorID != "ada" || !slices.Equal(d.Categories, []string{"go"}) ||
				!d.PublishedAt.Equal(now) || !slices.Equal(d.Paths, wantPaths) || !slices.Equal(d.CacheTags, wantTags) {
				t.Errorf("data = %+v, want post %s, slug hello, author ada, category go, published now, paths %v, tags %v", d, post.ID, wantPaths, wantTags)
			}
		}},
		{"the comment is comment.added (the post item's and the copies' counts follow from the counts worker)", func() {
			var err error
			added, err = s.AddComment(ctx, NewComment{PostID: post.ID, AuthorID: "ada", Body: "First."})
			must(err)
		}, []EventType{EventCommentAdded}, func(t *testing.T, evs []Event) {
			if d := evs[0].Data; d.PostID != post.ID || d.CommentID != added.ID || d.AuthorID != "ada" || !slices.Equal(d.CacheTags, []string{frontend.TagComments(post.ID), "comments"}) {
				t.Errorf("comment.added data = %+v", d)
			}
		}},
		{"the counts worker's sync of the post item is post.counts.updated (the copies' none)", func() {
			_, err := s.SyncCounts(ctx, post.ID)
			must(err)
		}, []EventType{EventPostCountsUpdated}, func(t *testing.T, evs []Event) {
			if d := evs[0].Data; d.PostID != post.ID || !slices.Equal(d.CacheTags, []string{frontend.TagCounts(post.ID), "counts"}) || !slices.Contains(d.Paths, "/") || slices.Contains(d.Paths, "/posts/"+post.Slug) {
				t.Errorf("post.counts.updated data = %+v, want the post, tag counts:<id> and its section alone, the lists' pages and not the post's", d)
			}
		}},
		{"a held comment is comment.pending", func() {
			var err error
			held, err = s.AddComment(ctx, NewComment{PostID: post.ID, Reader: reader, Rules: ReaderRules{Hold: true, PerMinute: 5}, Body: "Nice."})
			must(err)
		}, []EventType{EventCommentPending}, func(t *testing.T, evs []Event) {
			if d := evs[0].Data; d.CommentID != held.ID || d.ReaderID != reader.ID || len(d.CacheTags) != 0 {
				t.Errorf("data = %+v, want comment %s of reader %s, no tags", d, held.ID, reader.ID)
			}
		}},
		{"approving is comment.approved", func() {
			_, err := s.ApproveComment(ctx, CommentRef{PostID: post.ID, CommentID: held.ID})
			must(err)
		}, []EventType{EventCommentApproved}, nil},
		{"another held comment is comment.pending", func() {
			var err error
			rejected, err = s.AddComment(ctx, NewComment{PostID: post.ID, Reader: reader, Rules: ReaderRules{Hold: true, PerMinute: 5}, Body: "Spam."})
			must(err)
		}, []EventType{EventCommentPending}, nil},
		{"rejecting is comment.rejected", func() {
			_, err := s.RejectComment(ctx, CommentRef{PostID: post.ID, CommentID: rejected.ID})
			must(err)
		}, []EventType{EventCommentRejected}, nil},
		{"editing a comment is comment.edited", func() {
			_, err := s.UpdateComment(ctx, CommentEdit{PostID: post.ID, CommentID: held.ID, Body: "Very nice."})
			must(err)
		}, []EventType{EventCommentEdited}, nil},
		{"a reader's edit held again is comment.deleted and comment.pending", func() {
			_, err := s.UpdateComment(ctx, CommentEdit{PostID: post.ID, CommentID: held.ID, Body: "Nicer.", Reader: reader, Rules: ReaderRules{HoldEdits: true}})
			must(err)
		}, []EventType{EventCommentDeleted, EventCommentPending}, nil},
		{"approving it again is comment.approved", func() {
			_, err := s.ApproveComment(ctx, CommentRef{PostID: post.ID, CommentID: held.ID})
			must(err)
		}, []EventType{EventCommentApproved}, nil},
		{"deleting a pending comment is no event", func() {
			c, err := s.AddComment(ctx, NewComment{PostID: post.ID, Reader: reader, Rules: ReaderRules{Hold: true, PerMinute: 5}, Body: "Oops."})
			must(err)
			f.records()
			_, err = s.DeleteComment(ctx, CommentRef{PostID: post.ID, CommentID: c.ID})
			must(err)
		}, nil, nil},
		{"deleting a comment is comment.deleted", func() {
			_, err := s.DeleteComment(ctx, CommentRef{PostID: post.ID, CommentID: added.ID})
			must(err)
		}, []EventType{EventCommentDeleted}, nil},
		{"a new title is post.published.edited", func() {
			edit(PostPatch{Title: aws.String("Hello, world")})
		}, []EventType{EventPostEdited}, nil},
		{"a body rendered again into other HTML by another renderer is post.published.edited", func() {
			body := "See [the site](https://blog.example/)."
			edit(PostPatch{Body: &body})
			f.records()
			other := New(s.db.Client(), s.table, WithClock(clock), WithSiteURL("https://blog.example"))
			_, err := other.ClaimRenderer(ctx)
			must(err)
			r, err := other.Rerender(ctx)
			must(err)
			if r.Rendered != 1 {
				t.Errorf("rendered %d posts again, want 1", r.Rendered)
			}
		}, []EventType{EventPostEdited}, nil},
		{"a new slug and categories are post.published.edited with both", func() {
			edit(PostPatch{Slug: aws.String("hello-world"), Categories: &[]string{"db"}})
		}, []EventType{EventPostEdited}, func(t *testing.T, evs []Event) {
			d := evs[0].Data
			if d.Slug != "hello-world" || !slices.Equal(d.PreviousSlugs, []string{"hello"}) ||
				!slices.Equal(d.Categories, []string{"db"}) || !slices.Equal(d.PreviousCategories, []string{"go"}) {
				t.Errorf("data = %+v, want slug hello-world after hello, category db after go", d)
			}
			for _, p := range []string{"/posts/hello", "/posts/hello-world", "/categories/go", "/categories/db"} {
				if !slices.Contains(d.Paths, p) {
					t.Errorf("paths %v lack %s", d.Paths, p)
				}
			}
			for _, tag := range []string{"category:go", "category:db"} {
				if !slices.Contains(d.CacheTags, tag) {
					t.Errorf("tags %v lack %s", d.CacheTags, tag)
				}
			}
		}},
		{"renaming the author is author.updated alone, not an edit of each post", func() {
			_, err := s.UpdateAuthor(ctx, AuthorPatch{ID: "ada", Name: aws.String("Ada Lovelace"), Slug: aws.String("lovelace")})
			must(err)
		}, []EventType{EventAuthorUpdated}, func(t *testing.T, evs []Event) {
			d := evs[0].Data
			if d.AuthorID != "ada" || d.Slug != "lovelace" || !slices.Equal(d.PreviousSlugs, []string{"ada"}) ||
				!slices.Equal(d.Paths, []string{"/authors/ada", "/authors/lovelace"}) || !slices.Equal(d.CacheTags, []string{"author:ada", "search", "authors"}) {
				t.Errorf("data = %+v", d)
			}
		}},
		{"renaming a category is category.updated alone", func() {
			_, err := s.UpdateCategory(ctx, CategoryPatch{Slug: "db", Name: aws.String("Data")})
			must(err)
		}, []EventType{EventCategoryUpdated}, nil},
		{"unpublishing is post.unpublished", func() {
			_, err := s.Unpublish(ctx, PostRef{ID: post.ID})
			must(err)
		}, []EventType{EventPostUnpublished}, nil},
		{"publishing later is post.scheduled", func() {
			scheduled = now.Add(time.Hour)
			_, err := s.Publish(ctx, PublishPost{ID: post.ID, At: scheduled})
			must(err)
		}, []EventType{EventPostScheduled}, nil},
		{"an edit of a scheduled post is no event", func() {
			edit(PostPatch{Title: aws.String("Hello again")})
		}, nil, nil},
		{"another time is post.rescheduled", func() {
			_, err := s.Publish(ctx, PublishPost{ID: post.ID, At: now.Add(2 * time.Hour)})
			must(err)
		}, []EventType{EventPostRescheduled}, func(t *testing.T, evs []Event) {
			if d := evs[0].Data; !d.PublishedAt.Equal(now.Add(2*time.Hour)) || !d.PreviousPublishedAt.Equal(scheduled) {
				t.Errorf("publishedAt %v after %v, want %v after %v", d.PublishedAt, d.PreviousPublishedAt, now.Add(2*time.Hour), scheduled)
			}
		}},
		{"a scheduled post made a draft is post.unscheduled", func() {
			_, err := s.Unpublish(ctx, PostRef{ID: post.ID})
			must(err)
		}, []EventType{EventPostUnscheduled}, nil},
		{"publishing a scheduled post now is post.published", func() {
			_, err := s.Publish(ctx, PublishPost{ID: post.ID, At: now.Add(time.Hour)})
			must(err)
			f.records()
			_, err = s.Publish(ctx, PublishPost{ID: post.ID})
			must(err)
		}, []EventType{EventPostPublished}, nil},
		{"a published post dated later is post.unpublished and post.scheduled", func() {
			_, err := s.Publish(ctx, PublishPost{ID: post.ID, At: now.Add(time.Hour)})
			must(err)
		}, []EventType{EventPostScheduled, EventPostUnpublished}, nil},
		{"once its time has passed, an edit before it goes live is no event", func() {
			now = now.Add(2 * time.Hour)
			edit(PostPatch{Excerpt: aws.String("Short.")})
		}, nil, nil},
		{"going live is post.published", func() {
			n, err := s.GoLive(ctx)
			must(err)
			if n != 1 {
				t.Errorf("GoLive made %d posts go live, want 1", n)
			}
		}, []EventType{EventPostPublished}, func(t *testing.T, evs []Event) {
			d := evs[0].Data
			cur, err := s.GetPost(ctx, post.ID)
			must(err)
			if !d.PublishedAt.Equal(cur.PublishedAt) || d.PublishedAt.After(now) || !d.PreviousPublishedAt.IsZero() || d.Slug != "hello-world" ||
				!slices.Contains(d.Paths, "/posts/hello-world") || !slices.Contains(d.CacheTags, frontend.TagFeed) {
				t.Errorf("data = %+v, want the post published at %v on its page and in the feed", d, cur.PublishedAt)
			}
		}},
		{"sweeping again is no event", func() {
			n, err := s.GoLive(ctx)
			must(err)
			if n != 0 {
				t.Errorf("GoLive made %d posts go live again", n)
			}
		}, nil, nil},
		{"after going live, an edit is post.published.edited", func() {
			edit(PostPatch{Excerpt: aws.String("Shorter.")})
		}, []EventType{EventPostEdited}, nil},
		{"deleting the post is post.deleted, and comment.deleted for each comment removed", func() {
			_, err := s.DeletePost(ctx, PostRef{ID: post.ID})
			must(err)
		}, []EventType{EventCommentDeleted, EventPostDeleted}, func(t *testing.T, evs []Event) {
			for _, e := range evs {
				if e.Type == EventPostDeleted && (e.Data.Slug != "hello-world" || !slices.Contains(e.Data.Paths, "/posts/hello-world")) {
					t.Errorf("post.deleted data = %+v, want its last slug and page", e.Data)
				}
			}
		}},
		{"a deleted draft is no event", func() {
			p, err := s.CreatePost(ctx, NewPost{AuthorID: "ada", Title: "Draft", Slug: "draft"})
			must(err)
			f.records()
			_, err = s.DeletePost(ctx, PostRef{ID: p.ID})
			must(err)
		}, nil, nil},
		{"a published page is page.published, a draft page no event", func() {
			body := "Run:\n\n```go\nx := 1\n```\n"
			var err error
			page, err = s.CreatePage(ctx, NewPage{Title: "About", Slug: "about", Body: body})
			must(err)
			_, err = s.CreatePage(ctx, NewPage{Title: "Draft", Slug: "draft-page", Body: body})
			must(err)
			_, err = s.PublishPage(ctx, PageRef{ID: page.ID})
			must(err)
		}, []EventType{EventPagePublished}, nil},
		{"a page body rendered again into other HTML is page.published.edited, a draft page's no event", func() {
			other := New(s.db.Client(), s.table, WithClock(clock), WithSiteURL("https://blog.example"), WithHighlight(true))
			_, err := other.ClaimRenderer(ctx)
			must(err)
			r, err := other.Rerender(ctx)
			must(err)
			if r.Rendered != 2 {
				t.Errorf("rendered %d pages again, want 2", r.Rendered)
			}
		}, []EventType{EventPageEdited}, func(t *testing.T, evs []Event) {
			if d := evs[0].Data; d.PageID != page.ID || !slices.Equal(d.Paths, []string{"/about"}) {
				t.Errorf("data = %+v, want page %s at /about", d, page.ID)
			}
		}},
		{"a page body rendered again into the same HTML is no event", func() {
			other := New(s.db.Client(), s.table, WithClock(clock), WithSiteURL("https://blog.example"), WithHighlight(true), WithHeadingIDPrefix("x-"))
			_, err := other.ClaimRenderer(ctx)
			must(err)
			r, err := other.Rerender(ctx)
			must(err)
			if r.Rendered != 2 {
				t.Errorf("rendered %d pages again, want 2", r.Rendered)
			}
		}, nil, nil},
	}
	for _, step := range steps {
		now = now.Add(time.Second)
		step.write()
		evs := f.events()
		want := slices.Clone(step.want)
		if want == nil {
			want = []EventType{}
		}
		slices.Sort(want)
		if got := typesOf(evs); !slices.Equal(got, want) {
			t.Fatalf("%s: events %v, want %v", step.name, got, want)
		}
		if step.check != nil {
			t.Run(step.name, func(t *testing.T) { step.check(t, evs) })
		}
	}

	t.Run("the same record yields the same ids, other records others", func(t *testing.T) {
		ids := map[string]bool{}
		for _, r := range f.all {
			a, err := EventsOf(r)
			must(err)
			b, err := EventsOf(r)
			must(err)
			for i := range a {
				if a[i].ID != b[i].ID || !strings.HasPrefix(a[i].ID, "evt_") {
					t.Errorf("ids %s and %s of one record", a[i].ID, b[i].ID)
				}
				if ids[a[i].ID] {
					t.Errorf("id %s twice", a[i].ID)
				}
				ids[a[i].ID] = true
			}
		}
	})
}

// TestEventsOfWritesCoversTheCopies checks that the writes of
// TestEventsOfWrites' kind bring records of every item that means no
// event, so its "no other event" is tested on them: copies, counters,
// slug reservations, queue entries, readers, rates, idempotency records
// and schedule items.
func TestEventsOfWritesCoversTheCopies(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	s, f := newFeedTest(t, "eventcopies", &now)
	f.records()
	_, err := s.CreateAuthor(ctx, NewAuthor{ID: "ada", Name: "Ada"})
	if err == nil {
		_, err = s.CreateCategory(ctx, NewCategory{Slug: "go", Name: "Go"})
	}
	var p *Post
	if err == nil {
		p, err = s.CreatePost(ctx, NewPost{AuthorID: "ada", Title: "T", Slug: "t", Categories: []string{"go"}})
	}
	if err == nil {
		_, err = s.Publish(ctx, PublishPost{ID: p.ID, IdempotencyKey: "k"})
	}
	if err == nil {
		_, err = s.AddComment(ctx, NewComment{PostID: p.ID, Reader: &ReaderProfile{ID: "r", Name: "R"}, Rules: ReaderRules{Hold: true, PerMinute: 5}, Body: "Hi."})
	}
	if err == nil {
		p, err = s.CreatePost(ctx, NewPost{AuthorID: "ada", Title: "Later", Slug: "later"})
	}
	if err == nil {
		_, err = s.Publish(ctx, PublishPost{ID: p.ID, At: now.Add(time.Hour)})
	}
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range f.records() {
		img := r.Dynamodb.NewImage
		if img == nil {
			img = r.Dynamodb.OldImage
		}
		if v, ok := img["type"].(*streamtypes.AttributeValueMemberS); ok {
			seen[v.Value] = true
		}
		if v, ok := img["PK"].(*streamtypes.AttributeValueMemberS); ok && v.Value == keys.StatsPartition {
			seen[typeStats] = true
		}
	}
	for _, typ := range []string{typeAuthorPost, typeCategoryPost, typeSlug, typeAuthorSlug, typeStats, typeQueued, typeReader, typeRate, typeIdempotency, typeSchedule} {
		if !seen[typ] {
			t.Errorf("no record of a %s item among %v", typ, seen)
		}
	}
}

// handRecords builds stream records by hand, numbered in order, all
// written at at.
type handRecords struct {
	t   *testing.T
	at  time.Time
	seq int
}

// record is the record of a write of name from old to cur, items or nil.
func (h *handRecords) record(name streamtypes.OperationType, old, cur any) streamtypes.Record {
	img := func(v any) map[string]streamtypes.AttributeValue {
		if v == nil {
			return nil
		}
		av, err := attributevalue.MarshalMap(v)
		if err != nil {
			h.t.Fatal(err)
		}
		return toStream(h.t, av)
	}
	h.seq++
	return streamtypes.Record{
		EventID: aws.String(fmt.Sprintf("e%d", h.seq)), EventName: name,
		Dynamodb: &streamtypes.StreamRecord{
			ApproximateCreationDateTime: aws.Time(h.at), SequenceNumber: aws.String(fmt.Sprint(h.seq)),
			OldImage: img(old), NewImage: img(cur),
		},
	}
}
