package storage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

func (e *env) tagPage(slug string, p storage.PageArgs) *storage.Result[*storage.Post] {
	return must[*storage.Result[*storage.Post]](e.t)(e.store.TagPosts(context.Background(), slug, p, storage.Period{}))
}

func tagNames(p *storage.Post) []string {
	var out []string
	for _, t := range p.Tags {
		out = append(out, t.Slug+"="+t.Name)
	}
	return out
}

func TestTagPagesNewestFirstBothWays(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	var posts []*storage.Post
	for i := range 5 {
		p := e.coPost("ada", fmt.Sprintf("p%d", i), nil, nil, []string{"Go Tips", "DynamoDB"})
		posts = append(posts, e.publish(p, start.Add(-time.Duration(5-i)*time.Hour)))
	}
	equalSlices(t, "tags as created", tagNames(posts[0]), []string{"go-tips=Go Tips", "dynamodb=DynamoDB"})
	// A draft and a scheduled post are not on the page, nor counted.
	e.coPost("ada", "draft", nil, nil, []string{"go tips"})
	e.publish(e.coPost("ada", "later", nil, nil, []string{"Go Tips"}), start.Add(time.Hour))

	first := e.tagPage("go-tips", storage.PageArgs{Limit: 2})
	equalSlices(t, "first page", ids(first.Items), []string{posts[4].ID, posts[3].ID})
	equal(t, "first page has next", first.HasNext, true)
	second := e.tagPage("go-tips", storage.PageArgs{Limit: 2, After: first.Cursors[1]})
	equalSlices(t, "second page", ids(second.Items), []string{posts[2].ID, posts[1].ID})
	back := e.tagPage("go-tips", storage.PageArgs{Limit: 2, Before: second.Cursors[0], Backward: true})
	equalSlices(t, "back from the second page", ids(back.Items), []string{posts[4].ID, posts[3].ID})
	last := e.tagPage("go-tips", storage.PageArgs{Limit: 2, Backward: true})
	equalSlices(t, "last page", ids(last.Items), []string{posts[1].ID, posts[0].ID})

	tag := must[*storage.Tag](t)(e.store.GetTag(ctx, "go-tips"))
	equal(t, "name", tag.Name, "Go Tips")
	equal(t, "postCount", tag.PostCount, 5)
	list := must[*storage.Result[*storage.Tag]](t)(e.store.Tags(ctx, storage.PageArgs{Limit: 10}))
	var got []string
	for _, tg := range list.Items {
		got = append(got, fmt.Sprintf("%s:%d", tg.Slug, tg.PostCount))
	}
	equalSlices(t, "tags", got, []string{"dynamodb:5", "go-tips:5"})

	// Taking a tag off a post takes it off the page.
	p := must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: posts[4].ID, ExpectedVersion: posts[4].Version, Tags: &[]string{"DynamoDB"}}))
	equalSlices(t, "tags after the edit", tagNames(p), []string{"dynamodb=DynamoDB"})
	equal(t, "postCount after the edit", must[*storage.Tag](t)(e.store.GetTag(ctx, "go-tips")).PostCount, 4)
	e.consistent()
}

func TestRenameAndMergeTagsKeepCopiesExact(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	e.author("bob", "Bob")
	e.category("go", "Go")
	a := e.publish(e.coPost("ada", "a", []string{"bob"}, []string{"go"}, []string{"golang", "aws"}), start.Add(-2*time.Hour))
	b := e.publish(e.coPost("ada", "b", nil, nil, []string{"Go"}), start.Add(-time.Hour))
	draft := e.coPost("bob", "d", nil, nil, []string{"golang"})

	tag := must[*storage.Tag](t)(e.store.RenameTag(ctx, storage.TagRename{Slug: "golang", Name: "Golang!"}))
	equal(t, "renamed", tag.Name, "Golang!")
	res := must[*storage.Result[*storage.Post]](t)(e.store.AuthorPosts(ctx, "bob", storage.PageArgs{Limit: 10}, storage.Period{}, false))
	equalSlices(t, "tags on bob's copy", tagNames(res.Items[0]), []string{"golang=Golang!", "aws=aws"})
	e.consistent()

	into := must[*storage.Tag](t)(e.store.MergeTags(ctx, storage.TagMerge{From: "golang", Into: "go"}))
	equal(t, "merged count", into.PostCount, 2)
	equalSlices(t, "go's page", ids(e.tagPage("go", storage.PageArgs{Limit: 10}).Items), []string{b.ID, a.ID})
	equalSlices(t, "golang's page", ids(e.tagPage("golang", storage.PageArgs{Limit: 10}).Items), nil)
	equal(t, "golang leads to go", must[*storage.Tag](t)(e.store.GetTag(ctx, "golang")).Slug, "go")
	got := must[*storage.Post](t)(e.store.GetPost(ctx, a.ID))
	equalSlices(t, "a's tags", tagNames(got), []string{"go=Go", "aws=aws"})
	list := must[*storage.Result[*storage.Tag]](t)(e.store.Tags(ctx, storage.PageArgs{Limit: 10}))
	equal(t, "tags listed", len(list.Items), 2)
	e.consistent()

	// The draft moves at its next write; naming the merged tag gives the
	// other one.
	d := must[*storage.Post](t)(e.store.UpdatePost(ctx, storage.PostPatch{ID: draft.ID, ExpectedVersion: draft.Version, Title: ptr("New")}))
	equalSlices(t, "draft's tags", tagNames(d), []string{"go=Go"})
	c := e.coPost("ada", "c", nil, nil, []string{"Golang", "GO"})
	equalSlices(t, "new post naming both", tagNames(c), []string{"go=Go"})
	e.consistent()

	// Bad merges write nothing.
	for name, in := range map[string]storage.TagMerge{
		"into itself":       {From: "go", Into: "go"},
		"into a merged tag": {From: "aws", Into: "golang"},
		"a bad slug":        {From: "A B", Into: "go"},
	} {
		if _, err := e.store.MergeTags(ctx, in); !errors.Is(err, storage.ErrInvalidInput) {
			t.Errorf("%s: %v, want invalid input", name, err)
		}
	}
	if _, err := e.store.MergeTags(ctx, storage.TagMerge{From: "nope", Into: "go"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a missing tag: %v, want not found", err)
	}
	e.consistent()
}

func TestTagsBadInputWritesNothing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	var eleven []string
	for i := range storage.MaxTags + 1 {
		eleven = append(eleven, fmt.Sprintf("tag %d", i))
	}
	p := e.coPost("ada", "p", nil, nil, eleven[:storage.MaxTags])
	equal(t, "tags", len(p.Tags), storage.MaxTags)
	for name, tags := range map[string][]string{
		"an 11th tag":     eleven,
		"a name too long": {strings.Repeat("a", storage.MaxTagNameLength+1)},
		"no slug":         {"!!!"},
		"two lines":       {"a\nb"},
	} {
		if _, err := e.store.CreatePost(ctx, storage.NewPost{AuthorID: "ada", Title: "T", Slug: "q", Tags: tags}); !errors.Is(err, storage.ErrInvalidInput) {
			t.Errorf("create with %s: %v, want invalid input", name, err)
		}
		if _, err := e.store.UpdatePost(ctx, storage.PostPatch{ID: p.ID, ExpectedVersion: p.Version, Tags: &tags}); !errors.Is(err, storage.ErrInvalidInput) {
			t.Errorf("update with %s: %v, want invalid input", name, err)
		}
	}
	list := must[*storage.Result[*storage.Tag]](t)(e.store.Tags(ctx, storage.PageArgs{Limit: 100}))
	equal(t, "tags made", len(list.Items), storage.MaxTags)
	e.consistent()
}

// TestConcurrentTagMergeWithPostEdits merges a tag while its posts are
// edited (their tags changed, some to the merged tag again): every post
// ends up on the other tag's page and every count is exact.
func TestConcurrentTagMergeWithPostEdits(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.author("ada", "Ada")
	var posts []*storage.Post
	for i := range 8 {
		posts = append(posts, e.publish(e.coPost("ada", fmt.Sprintf("p%d", i), nil, nil, []string{"golang", "x"}), start.Add(-time.Duration(i+1)*time.Minute)))
	}
	e.coPost("ada", "go", nil, nil, []string{"go"})
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i, p := range posts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 3 {
				tags := []string{"golang", fmt.Sprintf("y%d", (i+round)%3)}
				if err := e.updateUntilDone(storage.PostPatch{ID: p.ID, Tags: &tags}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			_, err := e.store.MergeTags(ctx, storage.TagMerge{From: "golang", Into: "go"})
			if !errors.Is(err, storage.ErrBusy) {
				if err != nil {
					errs <- err
				}
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Writes that named golang after the merge moved their posts to go
	// themselves; the merge, sent again, finds nothing left to move.
	must[*storage.Tag](t)(e.store.MergeTags(ctx, storage.TagMerge{From: "golang", Into: "go"}))
	equal(t, "go's page", len(e.tagPage("go", storage.PageArgs{Limit: 100}).Items), len(posts))
	equal(t, "golang's page", len(e.tagPage("golang", storage.PageArgs{Limit: 100}).Items), 0)
	e.consistent()
}
