package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Scheduled posts go live with a write. Readers see a scheduled post as
// soon as its time passes, by its sort key alone (lists bound their keys
// by the time of the read), but the change feed sees only writes; so a
// scheduled post carries a marker, goLiveAt (its publishedAt), and has a
// schedule item SCHEDULE / <publishedAt>#<postId>, both written in the
// post's own transactions. GoLive, run about every second on one server
// of the fleet, reads the schedule items that are due in every
// publication from the go-live index (schedule_index.go) and removes each
// post's marker in a transaction that also deletes its schedule item:
// that write is the post's go-live in the stream (post.published), and
// nothing readers see changes with it.
//
// Invariants (Check verifies them):
//   - a post has the marker exactly when it has a schedule item, whose
//     time is the marker's, which is the post's publishedAt; only a
//     published post has one;
//   - a write gives a post the marker when it publishes it, or changes
//     its publishedAt, with a publishedAt after the store's clock at the
//     write; any other write keeps the marker as it was (an edit of a
//     post whose time has passed does not make it go live: GoLive does);
//   - the go-live write is conditional on the marker still naming the
//     schedule item's time, so it happens once per scheduled time however
//     many servers sweep, and a post rescheduled, unpublished or deleted
//     meanwhile (whose write moved or deleted the schedule item with the
//     marker) is left alone;
//   - the go-live write changes no version: an editor's expected version
//     still holds. Post writes are conditional on the marker as read, so
//     none puts back a marker that went live meanwhile.

const (
	// attrGoLiveAt is the post item's go-live marker.
	attrGoLiveAt = "goLiveAt"
	// goLivePage is how many due schedule items one Query of GoLive reads.
	goLivePage = 100
)

// Internal outcomes of a go-live transaction.
var (
	// errNotScheduled means the post is gone or no longer scheduled at
	// the schedule item's time.
	errNotScheduled = errors.New("post not scheduled at this time")
	// errScheduleGone means the schedule item is gone.
	errScheduleGone = errors.New("schedule item gone")
)

// scheduleItem is a scheduled post's entry in the SCHEDULE partition,
// and in the go-live index (GSI1 GOLIVE, schedule_index.go). An item an
// earlier version wrote has no GSI1 attributes until IndexSchedule.
type scheduleItem struct {
	PK     string `dynamodbav:"PK"`
	SK     string `dynamodbav:"SK"`
	GSI1PK string `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK string `dynamodbav:"GSI1SK,omitempty"`
	Type   string `dynamodbav:"type"`
	PostID string `dynamodbav:"postId"`
	// At is the post's publishedAt, a key time.
	At string `dynamodbav:"at"`
}

func newScheduleItem(ks keys.Space, at, postID string) scheduleItem {
	k := scheduleKey(ks, at, postID)
	return scheduleItem{PK: k.PK, SK: k.SK, GSI1PK: keys.GoLivePartition, GSI1SK: keys.GoLiveSort(at, ks.ID(), postID),
		Type: typeSchedule, PostID: postID, At: at}
}

// goLiveAt returns the marker a write from before (nil: create) to after
// gives the post at now (a key time): none for a draft; the marker as it
// was when the write keeps the post published at the same time; its
// publishedAt when it publishes or moves it to a time after now.
func goLiveAt(before, after *postItem, now string) string {
	switch {
	case !after.published():
		return ""
	case before.published() && before.PublishedAt == after.PublishedAt:
		return before.GoLiveAt
	case after.PublishedAt > now:
		return after.PublishedAt
	}
	return ""
}

// scheduleActions sets the marker of after (nil: a deletion) for a write
// at now and adds to t the schedule items the change of marker moves:
// none when it stays, a put and a delete at most.
func scheduleActions(ks keys.Space, t *dynamo.Txn, before, after *postItem, now string) error {
	var was, is, id string
	if before != nil {
		was, id = before.GoLiveAt, before.ID
	}
	if after != nil {
		after.GoLiveAt = goLiveAt(before, after, now)
		is, id = after.GoLiveAt, after.ID
	}
	if was == is {
		return nil
	}
	var errs []error
	if was != "" {
		errs = append(errs, t.Delete(scheduleKey(ks, was, id), nil, nil))
	}
	if is != "" {
		errs = append(errs, t.Put(newScheduleItem(ks, is, id), nil, nil))
	}
	return errors.Join(errs...)
}

// condMarker is the condition that the post's marker is as read.
func condMarker(at string) expression.ConditionBuilder {
	if at == "" {
		return expression.Name(attrGoLiveAt).AttributeNotExists()
	}
	return expression.Name(attrGoLiveAt).Equal(expression.Value(at))
}

// sweepSchedule makes the scheduled posts of the Store's publication
// whose time has passed go live, as GoLive does, from the publication's
// SCHEDULE partition (a consistent Query of at most 100 items, and one
// more for every 100 after) rather than the go-live index: IndexSchedule
// runs it for the items an earlier version wrote.
func (s *Store) sweepSchedule(ctx context.Context) (int, error) {
	return s.goLiveDue(ctx, dueRange{
		source: "the schedule",
		pkAttr: keys.AttrPK, skAttr: keys.AttrSK, pk: s.ks.Partition(schedulePartition),
	}, s.goLive)
}

// dueRange is where a sweep reads the schedule items: the partition pk
// of the key attributes pkAttr and skAttr, of the table or, when index is
// set, of that index. Its source names it in errors.
type dueRange struct {
	source         string
	index          string
	pkAttr, skAttr string
	pk             string
}

// goLiveDue reads the schedule items of r that are due at the store's
// clock (one Query of at most goLivePage items, consistent on the table,
// and one more for every goLivePage after) and makes each go live with
// goLive. It returns how many did, and the first error of a read or a
// write with the posts that went live before it.
func (s *Store) goLiveDue(ctx context.Context, r dueRange, goLive func(context.Context, scheduleItem) (bool, error)) (int, error) {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(
		expression.Key(r.pkAttr).Equal(expression.Value(r.pk)).
			And(expression.Key(r.skAttr).LessThan(expression.Value(s.nowKey() + "$"))))) // '$' sorts after '#'
	if err != nil {
		return 0, err
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		Limit:                     aws.Int32(goLivePage),
	}
	if r.index == "" {
		in.ConsistentRead = aws.Bool(true)
	} else {
		in.IndexName = aws.String(r.index)
	}
	n := 0
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return n, fmt.Errorf("go live: read %s: %w", r.source, err)
		}
		var due []scheduleItem
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &due); err != nil {
			return n, fmt.Errorf("go live: decode %s: %w", r.source, err)
		}
		for _, it := range due {
			did, err := goLive(ctx, it)
			if err != nil {
				return n, fmt.Errorf("go live: post %q at %s: %w", it.PostID, it.At, err)
			}
			if did {
				n++
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return n, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// goLive removes the marker of the post of the schedule item it and
// deletes it, and reports whether it did. When the post is no longer
// scheduled at its time, it deletes the item if it is still there.
func (s *Store) goLive(ctx context.Context, it scheduleItem) (bool, error) {
	t := s.db.NewTxn()
	marked := dynamo.CondExists().And(condMarker(it.At))
	err := firstErr(
		t.Update(s.ks.Post(it.PostID), expression.Remove(expression.Name(attrGoLiveAt)), &marked, errNotScheduled),
		t.Delete(scheduleKey(s.ks, it.At, it.PostID), ptr(dynamo.CondExists()), errScheduleGone),
	)
	if err != nil {
		return false, err
	}
	err = s.db.Exec(ctx, t)
	switch {
	case err == nil:
		return true, nil
	case !errors.Is(err, errNotScheduled) && !errors.Is(err, errScheduleGone):
		return false, err
	case len(t.Reasons()) > 1 && aws.ToString(t.Reasons()[1].Code) == "ConditionalCheckFailed":
		// Gone live, moved or deleted by another write, with its item.
		return false, nil
	}
	return false, s.dropStale(ctx, it)
}

// dropStale deletes the schedule item it, on the condition that its post
// is gone or not scheduled at its time; a failed condition means the item
// is gone, or names its post again, and leaves it.
func (s *Store) dropStale(ctx context.Context, it scheduleItem) error {
	t := s.db.NewTxn()
	notMarked := dynamo.CondNotExists().Or(expression.Name(attrGoLiveAt).AttributeNotExists()).
		Or(expression.Name(attrGoLiveAt).NotEqual(expression.Value(it.At)))
	err := firstErr(
		t.Check(s.ks.Post(it.PostID), notMarked, dynamo.ErrRetry),
		t.Delete(scheduleKey(s.ks, it.At, it.PostID), ptr(dynamo.CondExists()), dynamo.ErrRetry),
	)
	if err != nil {
		return err
	}
	if err := s.db.Exec(ctx, t); err != nil && !errors.Is(err, dynamo.ErrRetry) {
		return fmt.Errorf("delete stale schedule item: %w", err)
	}
	return nil
}

// goLiveGrace is how long a schedule item may stay due before Check
// reports it stuck: the sweep runs about every second.
const goLiveGrace = time.Minute

// checkSchedule returns what is wrong with the schedule items and the
// posts' markers at now: an item without its scheduled post, a marked
// post without its item or marked at another time than its publishedAt,
// a post scheduled after now without a marker (written by an earlier
// version: Migrate marks it), and an item due for longer than a minute.
func checkSchedule(ks keys.Space, items []*scheduleItem, posts map[string]*postItem, now, stuck string) []string {
	var bad []string
	badf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	found := map[string]string{} // post id → the item's time
	for _, it := range items {
		p := posts[it.PostID]
		switch {
		case scheduleKey(ks, it.At, it.PostID) != key{PK: it.PK, SK: it.SK}:
			badf("schedule item %s/%s has wrong keys", it.PK, it.SK)
		case p == nil || p.GoLiveAt != it.At:
			badf("schedule item %s names post %s, which is not scheduled at %s", it.SK, it.PostID, it.At)
		case it.At <= stuck:
			badf("schedule item %s is due since %s and the post has not gone live (stuck)", it.SK, it.At)
		}
		found[it.PostID] = it.At
	}
	for id, p := range posts {
		switch {
		case p.GoLiveAt != "" && (!p.published() || p.GoLiveAt != p.PublishedAt):
			badf("post %s is marked to go live at %s, but is %s at %s", id, p.GoLiveAt, p.Status, p.PublishedAt)
		case p.GoLiveAt != "" && found[id] != p.GoLiveAt:
			badf("post %s is marked to go live at %s and has no schedule item of that time", id, p.GoLiveAt)
		case p.GoLiveAt == "" && p.published() && p.PublishedAt > now:
			badf("post %s is scheduled at %s without a go-live marker", id, p.PublishedAt)
		}
	}
	return bad
}
