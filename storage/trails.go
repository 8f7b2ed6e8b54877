package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
	"github.com/blogql/blog/storage/internal/migrations"
)

// The trail entries of what readers left before the trail existed. A
// comment, reaction or membership written before then has no entry in
// its reader's trail (privacy.go), so deleting the reader's account
// would miss it, and Check reports it. MigrateTrails writes the missing
// entries beside live servers, within the current layout:
//
//   - it reads the feed's GSI1 partition (every published post, scheduled
//     ones too), then the members' GSI1 partition, a page at a time, and
//     records after each page where it is in a checkpoint item
//     (TrailsMark), so a run stopped half-way goes on from there; a run
//     that reached the end marks the item done, and from then on a run
//     costs one GetItem;
//   - for each post of a page it reads the post's comments and reactions
//     (two consistent Queries of the post's partition, keys and reader
//     ids only), then the trail entries they need (one consistent
//     BatchGetItem a hundred), and for each that is missing writes it in
//     one TransactWriteItems with a check that the thing is still there
//     and that its reader's account is not closed, as every write that
//     leaves a trail checks; a member likewise, from the member's page.
//
// Its cost: per 100 posts, 1 Query of the feed and 1 PutItem of the
// checkpoint; per post 2 Queries (more for a post whose comments pass a
// megabyte); per 100 comments, reactions or members, 1 BatchGetItem;
// per entry written, 1 TransactWriteItems (2 write units for the
// entry, 2 read units for each check). Running it again, or on several
// servers at once, writes nothing twice: what was written is found
// written.
//
// Comments of a post that is no longer published (unpublished, or a
// draft again) are not in the feed and are not reached: Check still
// reports them. A thing whose reader's account is being deleted while
// the sweep reaches it keeps no entry, and Check reports it once the
// deletion is done.

const typeTrailsMark = "trailsMark"

// The phases of the sweep: the posts, then the members.
const (
	trailsPosts   = "posts"
	trailsMembers = "members"
)

// trailsMark is where the sweep is: its phase, the last key of the page
// it finished, or done.
type trailsMark struct {
	PK     string `dynamodbav:"PK"`
	SK     string `dynamodbav:"SK"`
	Type   string `dynamodbav:"type"`
	Phase  string `dynamodbav:"phase,omitempty"`
	Last   key    `dynamodbav:"last"`
	GSI1PK string `dynamodbav:"lastGSI1PK,omitempty"`
	GSI1SK string `dynamodbav:"lastGSI1SK,omitempty"`
	Done   bool   `dynamodbav:"done,omitempty"`
}

// Trails is what MigrateTrails did.
type Trails struct {
	// Entries is how many trail entries were written.
	Entries int
}

// errTrailGone means a thing whose trail entry the sweep writes is gone.
var errTrailGone = errors.New("gone")

// trailWant is a trail entry the sweep makes sure of: the entry, the
// thing it names, and its reader.
type trailWant struct {
	entry, thing      key
	readerID, kind, r string
}

// MigrateTrails writes the trail entries that comments, reactions and
// memberships written before the trail lack (see above). It returns what
// it did, or the first error, with the checkpoint left where the last
// finished page put it, so the next run goes on; migrations.ErrStopped
// when WithMigrationStop stopped it.
func (s *Store) MigrateTrails(ctx context.Context) (Trails, error) {
	var out Trails
	mk := s.ks.TrailsMark()
	var at trailsMark
	err := s.db.Get(ctx, mk, true, &at)
	switch {
	case err == nil && at.Done:
		return out, nil
	case err != nil && !errors.Is(err, ErrNotFound):
		return out, fmt.Errorf("trails: read checkpoint: %w", err)
	}
	if at.Phase == "" {
		at.Phase = trailsPosts
	}
	size := trailPage
	if s.migrationStop.size > 0 {
		size = s.migrationStop.size
	}
	for pages := 0; ; pages++ {
		if s.migrationStop.pages > 0 && pages == s.migrationStop.pages {
			return out, migrations.ErrStopped
		}
		partition := s.ks.Partition(keys.FeedPartition)
		if at.Phase == trailsMembers {
			partition = s.ks.MembersPartition()
		}
		in, err := s.db.KeyQuery(expression.Key(keys.AttrGSI1PK).Equal(expression.Value(partition)))
		if err != nil {
			return out, err
		}
		// GSI1 is never read consistently; a post or member it has not
		// shown yet was written by this version, with its trail.
		in.IndexName, in.Limit, in.ConsistentRead = aws.String(keys.IndexGSI1), aws.Int32(int32(size)), nil
		if at.Last.PK != "" {
			in.ExclusiveStartKey, err = attributevalue.MarshalMap(map[string]string{
				"PK": at.Last.PK, "SK": at.Last.SK, keys.AttrGSI1PK: at.GSI1PK, keys.AttrGSI1SK: at.GSI1SK})
			if err != nil {
				return out, fmt.Errorf("trails: checkpoint: %w", err)
			}
		}
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return out, fmt.Errorf("trails: read the %s: %w", at.Phase, err)
		}
		n, err := s.trailPageWants(ctx, at.Phase, page.Items)
		out.Entries += n
		if err != nil {
			return out, err
		}
		next := trailsMark{PK: mk.PK, SK: mk.SK, Type: typeTrailsMark, Phase: at.Phase}
		switch {
		case len(page.LastEvaluatedKey) > 0:
			var last map[string]string
			if err := attributevalue.UnmarshalMap(page.LastEvaluatedKey, &last); err != nil {
				return out, fmt.Errorf("trails: checkpoint: %w", err)
			}
			next.Last, next.GSI1PK, next.GSI1SK = key{PK: last["PK"], SK: last["SK"]}, last[keys.AttrGSI1PK], last[keys.AttrGSI1SK]
		case at.Phase == trailsPosts:
			next.Phase = trailsMembers
		default:
			next.Done = true
		}
		av, err := attributevalue.MarshalMap(next)
		if err != nil {
			return out, fmt.Errorf("trails: checkpoint: %w", err)
		}
		if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: av}); err != nil {
			return out, fmt.Errorf("trails: checkpoint: %w", err)
		}
		if next.Done {
			return out, nil
		}
		at = next
	}
}

// trailPageWants writes the trail entries the things of a page of the
// phase lack, and returns how many it wrote.
func (s *Store) trailPageWants(ctx context.Context, phase string, items []item) (int, error) {
	var wants []trailWant
	for _, it := range items {
		var head struct {
			ID        string `dynamodbav:"id"`
			AccountID string `dynamodbav:"accountId"`
		}
		if err := attributevalue.UnmarshalMap(it, &head); err != nil {
			return 0, fmt.Errorf("trails: decode: %w", err)
		}
		if phase == trailsMembers {
			wants = append(wants, trailWant{entry: s.ks.Trail(head.AccountID, keys.TrailMember, ""), thing: s.ks.Member(head.AccountID),
				readerID: head.AccountID, kind: keys.TrailMember})
			continue
		}
		w, err := s.postTrailWants(ctx, head.ID)
		if err != nil {
			return 0, err
		}
		wants = append(wants, w...)
	}
	if len(wants) == 0 {
		return 0, nil
	}
	entries := make([]key, len(wants))
	for i, w := range wants {
		entries[i] = w.entry
	}
	found, err := s.db.BatchGet(ctx, entries, true)
	if err != nil {
		return 0, fmt.Errorf("trails: read entries: %w", err)
	}
	n := 0
	for _, w := range wants {
		if _, ok := found[w.entry]; ok {
			continue
		}
		t := s.db.NewTxn()
		if err := s.leaveTrail(t, w.readerID, w.kind, w.r, s.Now()); err != nil {
			return n, err
		}
		if err := t.Check(w.thing, dynamo.CondExists(), errTrailGone); err != nil {
			return n, err
		}
		switch err := s.db.Exec(ctx, t); {
		case errors.Is(err, errTrailGone), errors.Is(err, ErrAccountClosed):
		case err != nil:
			return n, fmt.Errorf("trails: entry of reader %q: %w", w.readerID, err)
		default:
			n++
		}
	}
	return n, nil
}

// postTrailWants returns the trail entries the readers' comments and
// reactions on the post postID need: two consistent Queries.
func (s *Store) postTrailWants(ctx context.Context, postID string) ([]trailWant, error) {
	var wants []trailWant
	pk := s.ks.Post(postID).PK
	for _, prefix := range []string{keys.PrefixComment, keys.PrefixReaction} {
		in, err := s.db.KeyQuery(expression.Key(keys.AttrPK).Equal(expression.Value(pk)).
			And(expression.Key(keys.AttrSK).BeginsWith(prefix)))
		if err != nil {
			return nil, err
		}
		in.ProjectionExpression = aws.String("PK, SK, id, readerId")
		err = s.db.QueryAll(ctx, in, func(it item) error {
			var c struct {
				PK, SK   string
				ID       string `dynamodbav:"id"`
				ReaderID string `dynamodbav:"readerId"`
			}
			if err := attributevalue.UnmarshalMap(it, &c); err != nil {
				return err
			}
			thing := key{PK: c.PK, SK: c.SK}
			if prefix == keys.PrefixComment {
				if c.ReaderID != "" {
					ref := postID + "#" + c.ID
					wants = append(wants, trailWant{entry: s.ks.Trail(c.ReaderID, keys.TrailComment, ref), thing: thing,
						readerID: c.ReaderID, kind: keys.TrailComment, r: ref})
				}
				return nil
			}
			subject, readerID, ok := keys.ParseReaction(c.SK)
			if !ok {
				return nil
			}
			ref := postID + "#" + subject
			wants = append(wants, trailWant{entry: s.ks.Trail(readerID, keys.TrailReaction, ref), thing: thing,
				readerID: readerID, kind: keys.TrailReaction, r: ref})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("trails of post %q: %w", postID, err)
		}
	}
	return wants, nil
}

// MigrateAllTrails runs MigrateTrails in every publication of the
// table's directory (ListPublications, a Query of 100 a page), and in
// the Store's own, and returns what they did together, or the first
// error. A table where every run is done costs a Query and one GetItem
// a publication.
func (s *Store) MigrateAllTrails(ctx context.Context) (Trails, error) {
	var out Trails
	err := s.inEveryPublication(ctx, "trails", func(st *Store) error {
		did, err := st.MigrateTrails(ctx)
		out.Entries += did.Entries
		return err
	})
	return out, err
}
