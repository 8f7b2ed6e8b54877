package feedstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
)

// Leases: which server of the fleet does a piece of the change feed's
// work. A lease is one item of the LEASES partition, named by its sort
// key: SHARD#<shardId> for a shard of the table's stream, WORKER#<name>
// for a worker (changefeed.Worker). It names its owner, a server, which
// holds it while the server's own item in the same partition
// (SERVER#<owner>, its heartbeat) has not expired and the lease is not
// released. A server renews its one heartbeat, however many leases it
// holds: a fleet's idle cost is one write a server a renewal.
//
// Every change is a conditional write, so two servers never both believe
// they hold a lease:
//   - taking it needs it free (absent, released or already ours), or its
//     owner's heartbeat expired or gone: a transaction that checks the
//     heartbeat and names the owner it replaces;
//   - checkpointing and releasing it need it still ours: a server that
//     lost it (it paused past its heartbeat's expiry and another took
//     over) learns so at its next write (ErrLeaseLost), or when it next
//     reads the leases, and stops.
//
// A lease keeps what its work has done: a shard's checkpoint (the
// sequence number of the last record whose events are in the event log)
// and whether the shard is finished (closed and read to its end); a
// worker's checkpoint (the last event-log position it handled). A new
// holder goes on from there.
//
// Expiry is compared with the clock of the server that writes: servers'
// clocks must agree to well within a lease's duration (NTP does). A
// heartbeat's expiry is kept in leaseUntil; its expiresAt, the table's
// TTL attribute, removes the heartbeat of a server gone for a day. A
// lease never carries expiresAt: it must never be deleted by TTL.

// ErrLeaseHeld means another owner holds the lease.
var ErrLeaseHeld = errors.New("lease held by another owner")

// ErrLeaseLost means the lease is no longer the caller's: it expired and
// another owner took it, or it was never taken.
var ErrLeaseLost = errors.New("lease lost")

// ShardLease names the lease of the stream shard id.
func ShardLease(id string) string { return prefixShardLease + id }

// WorkerLease names the lease of the worker name.
func WorkerLease(name string) string { return prefixWorkerLease + name }

// Lease is a lease as stored.
type Lease struct {
	// Name is ShardLease(id) or WorkerLease(name).
	Name string
	// Owner is who took it last; it holds the lease while now is before
	// Until, its heartbeat's expiry (zero when the lease is released or
	// the owner has no heartbeat).
	Owner string
	Until time.Time
	// Checkpoint is a shard's: the sequence number of the last record
	// whose events are in the event log ("" before the first).
	Checkpoint string
	// Finished is a shard's: closed and read to its end.
	Finished bool
	// Position is a worker's: the last event-log position it handled.
	Position int64
}

// ShardID returns the shard of a shard lease, and false for a worker's.
func (l Lease) ShardID() (string, bool) { return strings.CutPrefix(l.Name, prefixShardLease) }

// HeldAt reports whether someone holds the lease at t.
func (l Lease) HeldAt(t time.Time) bool { return l.Owner != "" && t.Before(l.Until) }

type leaseItem struct {
	PK         string `dynamodbav:"PK"`
	SK         string `dynamodbav:"SK"`
	Type       string `dynamodbav:"type"`
	Owner      string `dynamodbav:"owner"`
	Released   bool   `dynamodbav:"released,omitempty"`
	Checkpoint string `dynamodbav:"checkpoint,omitempty"`
	Finished   bool   `dynamodbav:"finished,omitempty"`
	Position   int64  `dynamodbav:"position,omitempty"`
}

func (it *leaseItem) lease() Lease {
	return Lease{Name: it.SK, Owner: it.Owner, Checkpoint: it.Checkpoint, Finished: it.Finished, Position: it.Position}
}

// heartbeatItem is a server's heartbeat: its leases are held until
// LeaseUntil.
type heartbeatItem struct {
	PK         string `dynamodbav:"PK"`
	SK         string `dynamodbav:"SK"`
	Type       string `dynamodbav:"type"`
	Owner      string `dynamodbav:"owner"`
	LeaseUntil int64  `dynamodbav:"leaseUntil"` // Unix milliseconds
	ExpiresAt  int64  `dynamodbav:"expiresAt"`  // Unix seconds, TTL
}

// heartbeatTTL is how long after its expiry TTL removes a heartbeat.
const heartbeatTTL = 24 * time.Hour

func validLeaseName(name string) error {
	if (!strings.HasPrefix(name, prefixShardLease) || name == prefixShardLease) &&
		(!strings.HasPrefix(name, prefixWorkerLease) || name == prefixWorkerLease) {
		return fmt.Errorf("lease name %q: not a ShardLease or WorkerLease", name)
	}
	return nil
}

// Heartbeat renews owner's heartbeat until d from now, holding every
// lease owner has taken (and not released) until then, and returns that
// time: one UpdateItem, whatever the number of leases.
func (s *Store) Heartbeat(ctx context.Context, owner string, d time.Duration) (time.Time, error) {
	if owner == "" {
		return time.Time{}, errors.New("heartbeat: owner is required")
	}
	until := s.Now().Add(d)
	upd := expression.Set(expression.Name("type"), expression.Value(TypeHeartbeat)).
		Set(expression.Name("owner"), expression.Value(owner)).
		Set(expression.Name("leaseUntil"), expression.Value(until.UnixMilli())).
		Set(expression.Name("expiresAt"), expression.Value(until.Add(heartbeatTTL).Unix()))
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithUpdate(upd))
	if err != nil {
		return time.Time{}, err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.db.Name()),
		Key:                       dynamo.MustKey(heartbeatKey(owner)),
		UpdateExpression:          expr.Update(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("heartbeat of %s: %w", owner, err)
	}
	return until, nil
}

// TakeLease takes the lease name for owner when it is free (never taken,
// released, or owner's already) or its owner's heartbeat has expired,
// and returns it with its checkpoint; its Until is owner's heartbeat's,
// which the caller renews (Heartbeat). Taking a free lease is one
// UpdateItem; taking over another's, one more TransactWriteItems. It
// fails with ErrLeaseHeld when another owner holds it.
func (s *Store) TakeLease(ctx context.Context, name, owner string) (Lease, error) {
	if err := validLeaseName(name); err != nil || owner == "" {
		return Lease{}, errors.Join(err, errors.New("take lease: owner and name are required"))
	}
	free := expression.AttributeNotExists(expression.Name(attrPK)).
		Or(expression.Name("released").Equal(expression.Value(true))).
		Or(ownedBy(owner))
	it, err := s.updateLease(ctx, name, takeUpdate(owner), free)
	var held *heldError
	switch {
	case errors.As(err, &held):
		it, err = s.takeOver(ctx, name, owner, held.owner)
	case errors.Is(err, ErrLeaseLost):
		err = ErrLeaseHeld
	}
	if err != nil {
		return Lease{}, fmt.Errorf("take lease %s: %w", name, err)
	}
	return it.lease(), nil
}

func takeUpdate(owner string) expression.UpdateBuilder {
	return expression.Set(expression.Name("owner"), expression.Value(owner)).
		Set(expression.Name("type"), expression.Value(TypeLease)).
		Remove(expression.Name("released"))
}

// takeOver takes the lease name from prev, whose heartbeat must have
// expired, for owner: one transaction that checks the heartbeat and that
// the lease is still prev's.
func (s *Store) takeOver(ctx context.Context, name, owner, prev string) (*leaseItem, error) {
	t := s.db.NewTxn()
	expired := expression.AttributeNotExists(expression.Name(attrPK)).
		Or(expression.Name("leaseUntil").LessThanEqual(expression.Value(s.Now().UnixMilli())))
	if err := t.Check(heartbeatKey(prev), expired, ErrLeaseHeld); err != nil {
		return nil, err
	}
	if err := t.Update(leaseKey(name), takeUpdate(owner), ptr(ownedBy(prev)), ErrLeaseHeld); err != nil {
		return nil, err
	}
	if err := s.db.Exec(ctx, t); err != nil {
		return nil, err
	}
	// The transaction returns nothing: read what the lease keeps.
	var it leaseItem
	if err := s.db.Get(ctx, leaseKey(name), true, &it); err != nil {
		return nil, err
	}
	if it.Owner != owner {
		return nil, ErrLeaseHeld
	}
	return &it, nil
}

// ReleaseLease frees owner's lease name at once, keeping its checkpoint,
// so another server can take it without waiting for owner's heartbeat to
// expire. A lease no longer owner's is left alone (ErrLeaseLost).
func (s *Store) ReleaseLease(ctx context.Context, name, owner string) error {
	upd := expression.Set(expression.Name("released"), expression.Value(true))
	if _, err := s.updateLease(ctx, name, upd, ownedBy(owner)); err != nil {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	return nil
}

// CheckpointWorker records that the worker lease name's holder owner has
// handled the event log up to position. It fails with ErrLeaseLost when
// the lease is not owner's.
func (s *Store) CheckpointWorker(ctx context.Context, name, owner string, position int64) error {
	upd := expression.Set(expression.Name("position"), expression.Value(position))
	if _, err := s.updateLease(ctx, name, upd, ownedBy(owner)); err != nil {
		return fmt.Errorf("checkpoint %s: %w", name, err)
	}
	return nil
}

// CheckpointShard records that the records of shard up to the sequence
// number seq are handled ("" leaves the checkpoint as it is), and with
// finished that the shard is read to its end: the write of a batch whose
// records mean no event. It fails with ErrLeaseLost when the shard's
// lease is not owner's.
func (s *Store) CheckpointShard(ctx context.Context, shard, owner, seq string, finished bool) error {
	upd, ok := shardCheckpoint(seq, finished)
	if !ok {
		return nil
	}
	if _, err := s.updateLease(ctx, ShardLease(shard), upd, ownedBy(owner)); err != nil {
		return fmt.Errorf("checkpoint shard %s: %w", shard, err)
	}
	return nil
}

// shardCheckpoint is the update of a shard lease's checkpoint, and false
// when there is nothing to update.
func shardCheckpoint(seq string, finished bool) (expression.UpdateBuilder, bool) {
	var upd expression.UpdateBuilder
	switch {
	case seq != "" && finished:
		upd = expression.Set(expression.Name("checkpoint"), expression.Value(seq)).Set(expression.Name("finished"), expression.Value(true))
	case seq != "":
		upd = expression.Set(expression.Name("checkpoint"), expression.Value(seq))
	case finished:
		upd = expression.Set(expression.Name("finished"), expression.Value(true))
	default:
		return upd, false
	}
	return upd, true
}

// DeleteShardLease deletes the lease of a finished shard that the stream
// no longer lists, whoever took it last; a lease of a shard not finished
// is left alone.
func (s *Store) DeleteShardLease(ctx context.Context, shard string) error {
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithCondition(expression.Name("finished").Equal(expression.Value(true))))
	if err != nil {
		return err
	}
	_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.db.Name()), Key: dynamo.MustKey(leaseKey(ShardLease(shard))),
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	var failed *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &failed) {
		return fmt.Errorf("delete the lease of shard %s: %w", shard, err)
	}
	return nil
}

// Leases returns every lease, in name order, each held until its
// owner's heartbeat expires (unless released): one Query.
func (s *Store) Leases(ctx context.Context) ([]Lease, error) {
	var (
		out   []Lease
		items []leaseItem
		until = map[string]time.Time{}
	)
	in, err := s.db.KeyQuery(expression.Key(attrPK).Equal(expression.Value(leasesPartition)))
	if err != nil {
		return nil, err
	}
	err = s.db.QueryAll(ctx, in, func(av item) error {
		var head struct {
			Type string `dynamodbav:"type"`
		}
		if err := attributevalue.UnmarshalMap(av, &head); err != nil {
			return fmt.Errorf("decode lease: %w", err)
		}
		if head.Type == TypeHeartbeat {
			var hb heartbeatItem
			if err := attributevalue.UnmarshalMap(av, &hb); err != nil {
				return fmt.Errorf("decode heartbeat: %w", err)
			}
			until[hb.Owner] = time.UnixMilli(hb.LeaseUntil).UTC()
			return nil
		}
		var it leaseItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return fmt.Errorf("decode lease: %w", err)
		}
		items = append(items, it)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read leases: %w", err)
	}
	for _, it := range items {
		l := it.lease()
		if !it.Released {
			l.Until = until[it.Owner]
		}
		out = append(out, l)
	}
	return out, nil
}

func ownedBy(owner string) expression.ConditionBuilder {
	return expression.Name("owner").Equal(expression.Value(owner))
}

// heldError is a failed condition of a lease held by owner.
type heldError struct{ owner string }

func (e *heldError) Error() string { return "lease held by " + e.owner }
func (e *heldError) Is(target error) bool {
	return target == ErrLeaseLost
}

// updateLease applies upd to the lease name under cond and returns the
// lease as written; a failed condition is ErrLeaseLost, a *heldError
// naming the owner when the lease has one.
func (s *Store) updateLease(ctx context.Context, name string, upd expression.UpdateBuilder, cond expression.ConditionBuilder) (*leaseItem, error) {
	if err := validLeaseName(name); err != nil {
		return nil, err
	}
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithUpdate(upd).WithCondition(cond))
	if err != nil {
		return nil, err
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(s.db.Name()),
		Key:                                 dynamo.MustKey(leaseKey(name)),
		UpdateExpression:                    expr.Update(),
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		var old leaseItem
		if attributevalue.UnmarshalMap(failed.Item, &old) == nil && old.Owner != "" {
			return nil, &heldError{old.Owner}
		}
		return nil, ErrLeaseLost
	}
	if err != nil {
		return nil, err
	}
	var it leaseItem
	if err := attributevalue.UnmarshalMap(out.Attributes, &it); err != nil {
		return nil, fmt.Errorf("decode lease: %w", err)
	}
	return &it, nil
}
