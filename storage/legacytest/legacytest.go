// Package legacytest writes a blog into a table in layout 1, the layout of
// the version before layouts had numbers, item by item, with the item
// shapes that version wrote: authors without slugs or author slug
// reservations; posts and copies without authorSlug, a rendered body, a
// table of contents, a word count, a reading time, a derived excerpt or
// slugs; counters without month attributes and with a "-" entry in their
// scheduled maps; cleared bios, avatars and descriptions kept as empty
// strings; comments without versions, whose top-level ones carry
// no replies. The tests of storage.Store.Migrate start from it, on every
// backend.
package legacytest

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// keyTime is layout 1's form of times, in items and in keys.
func keyTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

type author struct {
	PK        string            `dynamodbav:"PK"`
	SK        string            `dynamodbav:"SK"`
	GSI1PK    string            `dynamodbav:"GSI1PK"`
	GSI1SK    string            `dynamodbav:"GSI1SK"`
	Type      string            `dynamodbav:"type"`
	ID        string            `dynamodbav:"id"`
	Name      string            `dynamodbav:"name"`
	Bio       *string           `dynamodbav:"bio,omitempty"`
	AvatarURL *string           `dynamodbav:"avatarUrl,omitempty"`
	CreatedAt string            `dynamodbav:"createdAt"`
	UpdatedAt string            `dynamodbav:"updatedAt"`
	PostCount int64             `dynamodbav:"postCount"`
	Version   int64             `dynamodbav:"version"`
	NameVer   int64             `dynamodbav:"nameVer"`
	Scheduled map[string]string `dynamodbav:"scheduled,omitempty"`
}

type category struct {
	PK          string            `dynamodbav:"PK"`
	SK          string            `dynamodbav:"SK"`
	GSI1PK      string            `dynamodbav:"GSI1PK"`
	GSI1SK      string            `dynamodbav:"GSI1SK"`
	Type        string            `dynamodbav:"type"`
	Slug        string            `dynamodbav:"slug"`
	Name        string            `dynamodbav:"name"`
	Description *string           `dynamodbav:"description,omitempty"`
	CreatedAt   string            `dynamodbav:"createdAt"`
	UpdatedAt   string            `dynamodbav:"updatedAt"`
	PostCount   int64             `dynamodbav:"postCount"`
	Version     int64             `dynamodbav:"version"`
	NameVer     int64             `dynamodbav:"nameVer"`
	Scheduled   map[string]string `dynamodbav:"scheduled,omitempty"`
}

type catRef struct {
	Slug string `dynamodbav:"slug"`
	Name string `dynamodbav:"name"`
}

// post is a post item and, without Body and ThreadCount, each copy.
type post struct {
	PK           string           `dynamodbav:"PK"`
	SK           string           `dynamodbav:"SK"`
	GSI1PK       string           `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK       string           `dynamodbav:"GSI1SK,omitempty"`
	Type         string           `dynamodbav:"type"`
	ID           string           `dynamodbav:"id"`
	Slug         string           `dynamodbav:"slug"`
	Title        string           `dynamodbav:"title"`
	Excerpt      string           `dynamodbav:"excerpt,omitempty"`
	Body         string           `dynamodbav:"body,omitempty"`
	Status       string           `dynamodbav:"status"`
	AuthorID     string           `dynamodbav:"authorId"`
	AuthorName   string           `dynamodbav:"authorName"`
	AuthorVer    int64            `dynamodbav:"authorVer"`
	Cats         []catRef         `dynamodbav:"cats,omitempty"`
	CatVer       map[string]int64 `dynamodbav:"catVer,omitempty"`
	CreatedAt    string           `dynamodbav:"createdAt"`
	UpdatedAt    string           `dynamodbav:"updatedAt"`
	PublishedAt  string           `dynamodbav:"publishedAt,omitempty"`
	Version      int64            `dynamodbav:"version"`
	CommentCount int64            `dynamodbav:"commentCount"`
	ThreadCount  int64            `dynamodbav:"threadCount,omitempty"`
}

type comment struct {
	PK         string `dynamodbav:"PK"`
	SK         string `dynamodbav:"SK"`
	Type       string `dynamodbav:"type"`
	ID         string `dynamodbav:"id"`
	PostID     string `dynamodbav:"postId"`
	ParentID   string `dynamodbav:"parentId,omitempty"`
	AuthorID   string `dynamodbav:"authorId"`
	Body       string `dynamodbav:"body,omitempty"`
	CreatedAt  string `dynamodbav:"createdAt"`
	Deleted    bool   `dynamodbav:"deleted,omitempty"`
	ReplyCount int64  `dynamodbav:"replyCount,omitempty"`
}

type slug struct {
	PK     string `dynamodbav:"PK"`
	SK     string `dynamodbav:"SK"`
	Type   string `dynamodbav:"type"`
	PostID string `dynamodbav:"postId"`
}

type stats struct {
	PK            string            `dynamodbav:"PK"`
	SK            string            `dynamodbav:"SK"`
	Type          string            `dynamodbav:"type"`
	PostCount     int64             `dynamodbav:"postCount"`
	AuthorCount   int64             `dynamodbav:"authorCount"`
	CategoryCount int64             `dynamodbav:"categoryCount"`
	Scheduled     map[string]string `dynamodbav:"scheduled,omitempty"`
}

// Blog is what Write wrote, for a test to look for after a migration.
// Times are relative to the now Write was given.
type Blog struct {
	// Authors by id: "ada" and "lovelace" share the name Ada Lovelace,
	// "grace" is Grace Hopper. lovelace's bio and avatar were cleared,
	// and so was the description of the category aws.
	Authors map[string]string
	// Posts by slug: "intro" (ada, go, with headings, two months back
	// and with the comments below), "tables" (ada, go and aws, last
	// month), "compilers" (grace, aws, last month), "notes" (a draft of
	// ada's), "later" (grace, go, scheduled a month ahead).
	Posts map[string]string
	// Months counts the posts published by month ("2006-01") of the whole
	// blog; scheduled ones count from their month, as counters do.
	Months map[string]int
	// Thread is the id of intro's top-level comment with 12 replies,
	// Replies their ids in order; Tombstone a deleted comment with one
	// reply; Single a comment without replies.
	Thread, Tombstone, Single string
	Replies                   []string
}

// Write writes the blog into table, which must be empty, with the item
// shapes of layout 1. now is the time the blog is seen at: the scheduled
// post is a month after it.
func Write(ctx context.Context, db *dynamodb.Client, table string, now time.Time) (*Blog, error) {
	w := &writer{ctx: ctx, db: db, table: table}
	now = now.UTC().Truncate(time.Millisecond)
	created := now.AddDate(0, -6, 0)
	b := &Blog{Authors: map[string]string{}, Posts: map[string]string{}, Months: map[string]int{}}

	type postSpec struct {
		id, slug, title, author, body string
		cats                          []string
		publishedAt                   time.Time // zero: a draft
	}
	twoBack, lastMonth, ahead := now.AddDate(0, -2, 0), now.AddDate(0, -1, 0), now.AddDate(0, 1, 0)
	posts := []postSpec{
		{"0190a000-0000-7000-8000-000000000001", "intro", "Intro", "ada",
			"# Intro\n\nWhy this blog.\n\n## Part one\n\nSome *words*.\n\n## Part two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", []string{"go"}, twoBack},
		{"0190a000-0000-7000-8000-000000000002", "tables", "Tables", "ada", "Tables in DynamoDB.", []string{"go", "aws"}, lastMonth},
		{"0190a000-0000-7000-8000-000000000003", "compilers", "Compilers", "grace", "## Compilers\n\nA first one.", []string{"aws"}, lastMonth.Add(time.Hour)},
		{"0190a000-0000-7000-8000-000000000004", "notes", "Notes", "ada", "Not yet.", []string{"go"}, time.Time{}},
		{"0190a000-0000-7000-8000-000000000005", "later", "Later", "grace", "Soon.", []string{"go"}, ahead},
	}
	authors := []struct{ id, name string }{{"ada", "Ada Lovelace"}, {"lovelace", "Ada Lovelace"}, {"grace", "Grace Hopper"}}
	cats := map[string]string{"go": "Go", "aws": "AWS"}

	counts := map[string]int64{}                // author id or category slug → published posts
	scheduled := map[string]map[string]string{} // counter → entries
	entry := func(counter, id string, at time.Time) {
		if scheduled[counter] == nil {
			scheduled[counter] = map[string]string{"-": ""}
		}
		if at.After(now) {
			scheduled[counter][id] = keyTime(at)
		}
	}
	var published int64
	for _, p := range posts {
		b.Posts[p.slug] = p.id
		it := post{
			PK: "POST#" + p.id, SK: "POST#" + p.id, Type: "post", ID: p.id, Slug: p.slug, Title: p.title,
			Body: p.body, Status: "DRAFT", AuthorID: p.author, AuthorName: nameOf(authors, p.author), AuthorVer: 0,
			CatVer: map[string]int64{}, CreatedAt: keyTime(created), UpdatedAt: keyTime(created), Version: 1,
		}
		for _, c := range p.cats {
			it.Cats = append(it.Cats, catRef{c, cats[c]})
			it.CatVer[c] = 0
		}
		if p.id == posts[0].id {
			it.CommentCount, it.ThreadCount = 15, 3
		}
		if !p.publishedAt.IsZero() {
			it.Status, it.PublishedAt, it.Version = "PUBLISHED", keyTime(p.publishedAt), 2
			it.GSI1PK, it.GSI1SK = feedShard(p.id), "POST#"+keyTime(p.publishedAt)+"#"+p.id
			published++
			b.Months[p.publishedAt.Format("2006-01")]++
			for _, counter := range append([]string{p.author}, p.cats...) {
				counts[counter]++
				entry(counter, p.id, p.publishedAt)
			}
			entry("STATS", p.id, p.publishedAt)
		} else {
			it.GSI1PK, it.GSI1SK = "DRAFT#"+p.author, "DRAFT#"+keyTime(created)+"#"+p.id
		}
		w.put(it)
		w.put(slug{PK: "SLUG#" + p.slug, SK: "SLUG#" + p.slug, Type: "slug", PostID: p.id})
		if it.Status == "PUBLISHED" {
			ac := it
			ac.PK, ac.SK, ac.Type, ac.GSI1PK, ac.GSI1SK = "AUTHOR#"+p.author, "POST#"+keyTime(p.publishedAt)+"#"+p.id, "authorPost", "", ""
			ac.Body, ac.ThreadCount = "", 0
			w.put(ac)
			for _, c := range p.cats {
				cc := it
				cc.PK, cc.SK, cc.Type = "POST#"+p.id, "CAT#"+c, "categoryPost"
				cc.GSI1PK, cc.GSI1SK = "CAT#"+c, "POST#"+keyTime(p.publishedAt)+"#"+p.id
				cc.Body, cc.ThreadCount = "", 0
				w.put(cc)
			}
		}
	}
	// Layout 1 set a cleared bio, avatar or description to an empty
	// string: lovelace and aws had theirs cleared.
	bio, empty := "Writes.", ""
	for _, a := range authors {
		b.Authors[a.id] = a.name
		it := author{
			PK: "AUTHOR#" + a.id, SK: "AUTHOR#" + a.id, GSI1PK: "AUTHORS", GSI1SK: "AUTHOR#" + keyTime(created) + "#" + a.id,
			Type: "author", ID: a.id, Name: a.name, Bio: &bio, CreatedAt: keyTime(created), UpdatedAt: keyTime(created),
			PostCount: counts[a.id], Version: 1, Scheduled: scheduled[a.id],
		}
		if a.id == "lovelace" {
			it.Bio, it.AvatarURL, it.Version = &empty, &empty, 2
		}
		w.put(it)
	}
	for s, name := range cats {
		it := category{
			PK: "CAT#" + s, SK: "CAT#" + s, GSI1PK: "CATEGORIES", GSI1SK: "CAT#" + s, Type: "category",
			Slug: s, Name: name, CreatedAt: keyTime(created), UpdatedAt: keyTime(created),
			PostCount: counts[s], Version: 1, Scheduled: scheduled[s],
		}
		if s == "aws" {
			it.Description, it.Version = &empty, 2
		}
		w.put(it)
	}
	w.put(stats{PK: "STATS", SK: "STATS", Type: "stats", PostCount: published, AuthorCount: int64(len(authors)),
		CategoryCount: int64(len(cats)), Scheduled: scheduled["STATS"]})

	// The comments of intro: a thread of 12 replies, a comment without
	// replies, and a deleted one kept for its reply.
	intro, at := posts[0].id, twoBack.Add(time.Hour)
	top := func(body string, replies int64, deleted bool) *commentID {
		at = at.Add(time.Minute)
		c := &commentID{at: at, random: fmt.Sprintf("%08x", at.Unix()%0xffffffff)}
		it := comment{PK: "POST#" + intro, SK: "COMMENT#" + c.sortPart(), Type: "comment", ID: c.own(), PostID: intro,
			AuthorID: "grace", Body: body, CreatedAt: keyTime(at), Deleted: deleted, ReplyCount: replies}
		if deleted {
			it.Body = ""
		}
		w.put(it)
		return c
	}
	reply := func(parent *commentID, body string) string {
		at = at.Add(time.Minute)
		c := &commentID{at: at, random: fmt.Sprintf("%08x", at.Unix()%0xffffffff)}
		id := parent.own() + "." + c.own()
		w.put(comment{PK: "POST#" + intro, SK: "THREAD#" + parent.sortPart() + "#" + c.sortPart(), Type: "comment", ID: id,
			PostID: intro, ParentID: parent.own(), AuthorID: "ada", Body: body, CreatedAt: keyTime(at)})
		return id
	}
	thread := top("A thread.", 12, false)
	b.Thread = thread.own()
	for i := range 12 {
		b.Replies = append(b.Replies, reply(thread, fmt.Sprintf("Reply %d.", i+1)))
	}
	b.Single = top("A comment.", 0, false).own()
	tomb := top("", 1, true)
	b.Tombstone = tomb.own()
	reply(tomb, "Kept.")
	return b, w.err
}

func nameOf(authors []struct{ id, name string }, id string) string {
	for _, a := range authors {
		if a.id == id {
			return a.name
		}
	}
	return ""
}

// commentID is a comment id of layout 1 (and later): the creation time in
// milliseconds and a random part.
type commentID struct {
	at     time.Time
	random string
}

func (c *commentID) own() string      { return fmt.Sprintf("%013d-%s", c.at.UnixMilli(), c.random) }
func (c *commentID) sortPart() string { return keyTime(c.at) + "#" + c.own() }

// feedShard is layout 1's feed partition of a post, which layout 2 keeps.
func feedShard(postID string) string {
	h := fnv.New32a()
	h.Write([]byte(postID))
	return fmt.Sprintf("FEED#%d", h.Sum32()%4)
}

// writer puts items one by one and keeps the first error.
type writer struct {
	ctx   context.Context
	db    *dynamodb.Client
	table string
	err   error
}

func (w *writer) put(v any) {
	if w.err != nil {
		return
	}
	item, err := attributevalue.MarshalMap(v)
	if err == nil {
		_, err = w.db.PutItem(w.ctx, &dynamodb.PutItemInput{TableName: aws.String(w.table), Item: item})
	}
	if err != nil {
		w.err = fmt.Errorf("put %s: %w", item["PK"], err)
	}
}
