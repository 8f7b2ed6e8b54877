package storage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// TestPageRebuildsThatOverlapConverge runs two rebuilds of a list's page
// index at once, as a pages worker that lost its lease mid-rebuild and
// the one that took it over do: A reads the list with 810 posts (two
// chunks), then 20 posts leave it and B rebuilds the index from the list
// (790 posts: nothing to change), then A writes what it read. A's writes
// must not land over B's rebuild: the index agrees with the list, and A
// says it lost, so the worker rebuilds its list again.
func TestPageRebuildsThatOverlapConverge(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	db, table := testBackend(t, clock, "pagerebuild")
	s := New(db, table, WithClock(clock))
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	list := TagListPartition("t")
	write := func(from, to int, del bool) {
		t.Helper()
		var reqs []types.WriteRequest
		for i := from; i < to; i++ {
			id := fmt.Sprintf("p%04d", i)
			k := s.ks.TagCopy(id, "t")
			if del {
				reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: dynamo.MustKey(k)}})
				continue
			}
			it, err := attributevalue.MarshalMap(postItem{PK: k.PK, SK: k.SK, GSI1PK: s.ks.TagPartition("t"), Type: typeTagPost, ID: id,
				GSI1SK: keys.PostSort(now.Add(-time.Duration(1000-i)*time.Minute), id)})
			if err != nil {
				t.Fatal(err)
			}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		}
		for len(reqs) > 0 {
			n := min(25, len(reqs))
			out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{s.table: reqs[:n]}})
			if err != nil {
				t.Fatal(err)
			}
			reqs = append(reqs[n:], out.UnprocessedItems[s.table]...)
		}
	}
	agrees := func(what string) bool {
		t.Helper()
		sks, err := s.listSortKeys(ctx, list, keys.PrefixPost)
		if err != nil {
			t.Fatal(err)
		}
		have, err := s.pageChunks(ctx, list)
		if err != nil {
			t.Fatal(err)
		}
		if d := pageIndexDiff(s.ks, list, sks, have); d != "" {
			t.Errorf("%s: the page index of %d posts %.200s", what, len(sks), d)
			return false
		}
		return true
	}
	write(0, 790, false)
	if _, err := s.SyncPages(ctx, list); err != nil {
		t.Fatal(err)
	}
	write(790, 810, false)
	a, err := s.readPages(ctx, list, time.Time{}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	write(790, 810, true)
	if _, err := s.SyncPages(ctx, list); err != nil {
		t.Fatal(err)
	}
	did, err := s.writePages(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	agrees("after the overlapping rebuilds")
	if !did.Lost {
		t.Errorf("the rebuild that read first: %+v, want it lost to the later one", did)
	}
	// The other way round: the 20 posts join the list after A read it
	// with 790, and B's rebuild writes a second chunk that A's must not
	// delete.
	a, err = s.readPages(ctx, list, time.Time{}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	write(790, 810, false)
	if _, err := s.SyncPages(ctx, list); err != nil {
		t.Fatal(err)
	}
	if _, err := s.writePages(ctx, a); err != nil {
		t.Fatal(err)
	}
	agrees("after a rebuild that read fewer posts came last")
	pg, err := s.NumberedPosts(ctx, list, 81, PageStep)
	if err != nil {
		t.Fatal(err)
	}
	if pg.TotalPages != 81 || len(pg.Posts) != 10 || pg.Posts[9].ID != "p0809" {
		t.Errorf("page 81: %d pages, posts %d, want 81 and the 10 newest", pg.TotalPages, len(pg.Posts))
	}
}
