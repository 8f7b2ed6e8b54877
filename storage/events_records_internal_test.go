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
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/blogql/blog/frontend"
	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// TestEventsOfRecords covers what writes through the Store do not make:
// records a stream of another view type brings, TTL deletions, and the
// JSON form of an event.
func TestEventsOfRecords(t *testing.T) {
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	rec := (&handRecords{t: t, at: at}).record
	post := postItem{
		ID: "p1", Slug: "hello", Title: "Hello", Status: string(StatusPublished), AuthorID: "ada", AuthorSlug: "ada",
		Cats: []catRef{{Slug: "go", Name: "Go"}}, PublishedAt: keys.Time(at.Add(-time.Hour)), Slugs: []string{"hello", "hi"},
	}.withPostKeys(testKS)
	counted := post
	counted.CommentCount, counted.Version = 3, 4
	later := post
	later.PublishedAt, later.GoLiveAt = keys.Time(at.Add(time.Minute)), keys.Time(at.Add(time.Minute))
	pending := commentItem{Type: typeComment, ID: "c1", PostID: "p1", ReaderID: "r", Body: "x", Version: 1}
	pending.hold(testKS, "ada", keys.CommentID{Created: at, Random: "ab"})
	rejected := pending
	rejected.Status, rejected.GSI1PK, rejected.GSI1SK, rejected.ExpiresAt = string(CommentRejected), "", "", at.Unix()
	ttl := rec(streamtypes.OperationTypeRemove, rejected, nil)
	ttl.UserIdentity = &streamtypes.Identity{Type: aws.String("Service"), PrincipalId: aws.String("dynamodb.amazonaws.com")}

	for _, c := range []struct {
		name    string
		rec     streamtypes.Record
		want    []EventType
		wantErr bool
	}{
		{"a comment count on a published post is post.counts.updated", rec(streamtypes.OperationTypeModify, post, counted), []EventType{EventPostCountsUpdated}, false},
		{"a comment count on a draft is no event", func() streamtypes.Record {
			draft, counted := post, counted
			draft.Status, counted.Status = string(StatusDraft), string(StatusDraft)
			return rec(streamtypes.OperationTypeModify, draft.withPostKeys(testKS), counted.withPostKeys(testKS))
		}(), nil, false},
		{"the author copy of a post is no event", rec(streamtypes.OperationTypeInsert, nil, post.authorCopy(testKS)), nil, false},
		{"a category copy of a post is no event", rec(streamtypes.OperationTypeModify, post.categoryCopy(testKS, "go"), counted.categoryCopy(testKS, "go")), nil, false},
		{"a rejected comment removed by TTL is no event", ttl, nil, false},
		{"a published post put again unchanged is no event", rec(streamtypes.OperationTypeModify, post, post), nil, false},
		{"a new published post is post.published", rec(streamtypes.OperationTypeInsert, nil, post), []EventType{EventPostPublished}, false},
		{"a post published now is post.published though the record's time is rounded down", func() streamtypes.Record {
			now := post
			now.PublishedAt = keys.Time(at.Add(900 * time.Millisecond))
			return rec(streamtypes.OperationTypeInsert, nil, now)
		}(), []EventType{EventPostPublished}, false},
		{"a post published a minute later with the go-live marker is post.scheduled", rec(streamtypes.OperationTypeInsert, nil, later), []EventType{EventPostScheduled}, false},
		{"a post without categories is post.published though DynamoDB Local's image garbles its empty catVer", func() streamtypes.Record {
			r := rec(streamtypes.OperationTypeInsert, nil, post)
			r.Dynamodb.NewImage["catVer"] = &streamtypes.AttributeValueMemberS{Value: "post"}
			return r
		}(), []EventType{EventPostPublished}, false},
		{"the posts of an author's rename all renamed is author.updated again", func() streamtypes.Record {
			k := testKS.Author("ada")
			a := authorItem{PK: k.PK, SK: k.SK, Type: typeAuthor, ID: "ada", Name: "Ada King", Slug: "ada", Slugs: []string{"ada", "lovelace"}, NameVer: 2, RenamedVer: 1}
			done := a
			done.RenamedVer = 2
			return rec(streamtypes.OperationTypeModify, a, done)
		}(), []EventType{EventAuthorUpdated}, false},
		{"an author's count changed is no event", func() streamtypes.Record {
			k := testKS.Author("ada")
			a := authorItem{PK: k.PK, SK: k.SK, Type: typeAuthor, ID: "ada", Name: "Ada", Slug: "ada", NameVer: 2, RenamedVer: 2}
			counted := a
			counted.PostCount = 3
			return rec(streamtypes.OperationTypeModify, a, counted)
		}(), nil, false},
		{"the posts of a category's rename all renamed is category.updated again", func() streamtypes.Record {
			k := testKS.Category("go")
			c := categoryItem{PK: k.PK, SK: k.SK, Type: typeCategory, Slug: "go", Name: "Golang", NameVer: 1}
			done := c
			done.RenamedVer = 1
			return rec(streamtypes.OperationTypeModify, c, done)
		}(), []EventType{EventCategoryUpdated}, false},
		{"the posts of a tag's rename all renamed is tag.updated again", func() streamtypes.Record {
			k := testKS.Tag("go")
			tg := tagItem{PK: k.PK, SK: k.SK, Type: typeTag, Slug: "go", Name: "Golang", NameVer: 1}
			done := tg
			done.RenamedVer = 1
			return rec(streamtypes.OperationTypeModify, tg, done)
		}(), []EventType{EventTagUpdated}, false},
		{"a MODIFY without its old image fails", rec(streamtypes.OperationTypeModify, nil, post), nil, true},
		{"a REMOVE with its keys alone, a delete that lost a race on DynamoDB Local, is no event", func() streamtypes.Record {
			r := rec(streamtypes.OperationTypeRemove, nil, nil)
			r.Dynamodb.Keys = map[string]streamtypes.AttributeValue{
				"PK": &streamtypes.AttributeValueMemberS{Value: "POST#p1"}, "SK": &streamtypes.AttributeValueMemberS{Value: "REV#0000000001"},
			}
			return r
		}(), nil, false},
		{"a REMOVE without its old image or keys fails", rec(streamtypes.OperationTypeRemove, nil, nil), nil, true},
		{"a record without its time fails", func() streamtypes.Record {
			r := rec(streamtypes.OperationTypeInsert, nil, post)
			r.Dynamodb.ApproximateCreationDateTime = nil
			return r
		}(), nil, true},
		{"a stream of KEYS_ONLY fails", func() streamtypes.Record {
			r := rec(streamtypes.OperationTypeInsert, nil, post)
			r.Dynamodb.StreamViewType = streamtypes.StreamViewTypeKeysOnly
			return r
		}(), nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			evs, err := EventsOf(c.rec)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, c.wantErr)
			}
			got, want := typesOf(evs), append([]EventType{}, c.want...)
			if !slices.Equal(got, want) {
				t.Errorf("events %v, want %v", got, want)
			}
		})
	}

	t.Run("an author's rename announced again names the pages of the author's slugs and the author's tag", func(t *testing.T) {
		k := testKS.Author("ada")
		a := authorItem{PK: k.PK, SK: k.SK, Type: typeAuthor, ID: "ada", Name: "Ada King", Slug: "king", Slugs: []string{"king", "ada"}, NameVer: 2, RenamedVer: 1}
		done := a
		done.RenamedVer = 2
		evs, err := EventsOf(rec(streamtypes.OperationTypeModify, a, done))
		if err != nil || len(evs) != 1 {
			t.Fatalf("events %v, %v", evs, err)
		}
		if d := evs[0].Data; !slices.Equal(d.Paths, []string{"/authors/ada", "/authors/king"}) || !slices.Equal(d.CacheTags, []string{"author:ada", "search", "authors"}) {
			t.Errorf("data %+v", d)
		}
	})

	t.Run("paths follow the patterns given, an empty one leaves its pages out", func(t *testing.T) {
		evs, err := EventsWith(frontend.Paths{Post: "/blog/{slug}/", Month: "/{yyyy}-{mm}"}, rec(streamtypes.OperationTypeInsert, nil, post))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"/blog/hello/", "/2026-03"}
		if got := evs[0].Data.Paths; !slices.Equal(got, want) {
			t.Errorf("paths %v, want %v", got, want)
		}
		if got := evs[0].Data.PreviousSlugs; !slices.Equal(got, []string{"hi"}) {
			t.Errorf("previous slugs %v, want the redirect hi", got)
		}
	})

	t.Run("a post path may hold the post's date, as feeds link to it", func(t *testing.T) {
		p := frontend.Paths{Post: "/blog/{yyyy}/{mm}/{dd}/{slug}"}
		evs, err := EventsWith(p, rec(streamtypes.OperationTypeInsert, nil, post))
		if err != nil {
			t.Fatal(err)
		}
		want := p.PostPath("hello", evs[0].Data.PublishedAt)
		if got := evs[0].Data.Paths; !slices.Equal(got, []string{want}) || !strings.HasPrefix(want, "/blog/2026/03/") {
			t.Errorf("paths %v, want [%s] of March 2026", got, want)
		}
		if got := p.PostPath("draft", time.Time{}); got != "" {
			t.Errorf("a dated path of an undated post = %q, want none", got)
		}
	})

	t.Run("an event's JSON has lowerCamelCase names and leaves out what does not apply", func(t *testing.T) {
		evs, err := EventsOf(rec(streamtypes.OperationTypeInsert, nil, pending))
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(evs[0])
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`{"id":%q,"type":"comment.pending","publication":"default","time":"2026-03-14T09:00:00Z","data":{"postId":"p1","commentId":"c1","readerId":"r"}}`, evs[0].ID)
		if string(b) != want {
			t.Errorf("JSON\n%s\nwant\n%s", b, want)
		}
	})
}

// TestEventsOfAPostWithoutCategories: a post without categories is
// stored without catVer (DynamoDB Local writes an empty map into the
// stream's images without its type, which the SDK reads back as another
// attribute's value, here cats' list), and the events of a post stored
// with an empty one by an earlier version are read all the same.
func TestEventsOfAPostWithoutCategories(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	db, table := testBackend(t, clock, "nocats")
	s := New(db, table, WithClock(clock))
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateAuthor(ctx, NewAuthor{ID: "ada", Slug: "ada", Name: "Ada"}); err != nil {
		t.Fatal(err)
	}
	p, err := s.CreatePost(ctx, NewPost{AuthorID: "ada", Title: "Hello", Slug: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: dynamo.MustKey(s.ks.Post(p.ID)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := out.Item["catVer"]; ok {
		t.Errorf("a post without categories is stored with catVer %#v", v)
	}

	post := postItem{ID: "p1", Slug: "hello", Title: "Hello", Status: string(StatusPublished), AuthorID: "ada", AuthorSlug: "ada",
		Cats: []catRef{}, PublishedAt: keys.Time(now.Add(-time.Hour))}.withPostKeys(testKS)
	edited := post
	edited.Title, edited.Version = "Hello again", 2
	img := func(v postItem) map[string]streamtypes.AttributeValue {
		av, err := attributevalue.MarshalMap(v)
		if err != nil {
			t.Fatal(err)
		}
		m := toStream(t, av)
		m["catVer"] = m["cats"] // what the SDK makes of DynamoDB Local's "catVer":{}
		return m
	}
	evs, err := EventsOf(streamtypes.Record{
		EventID: aws.String("e1"), EventName: streamtypes.OperationTypeModify,
		Dynamodb: &streamtypes.StreamRecord{ApproximateCreationDateTime: aws.Time(now), SequenceNumber: aws.String("1"),
			OldImage: img(post), NewImage: img(edited)},
	})
	if err != nil || !slices.Equal(typesOf(evs), []EventType{EventPostEdited}) {
		t.Errorf("events %v, %v; want post.published.edited", typesOf(evs), err)
	}
}
