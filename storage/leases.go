package storage

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
)

// Leases: which server of the fleet does a piece of the change feed's
// work. A lease is one item of the LEASES partition, named by its sort
// key: SHARD#<shardId> for a shard of the table's stream, WORKER#<name>
// for a worker (changefeed.Worker). Its holder is the owner while now is
// before until; every change is a conditional write, so two servers never
// both believe they hold it:
//   - taking it needs it free (absent, expired or released) or already
//     ours;
//   - renewing, checkpointing and releasing it need it still ours: a
//     server that lost it (it paused past the expiry and another took
//     over) learns so at its next write (ErrLeaseLost) and stops.
//
// A lease keeps what its work has done: a shard's checkpoint (the
// sequence number of the last record whose events are in the event log)
// and whether the shard is finished (closed and read to its end); a
// worker's checkpoint (the last event-log position it handled). A new
// holder goes on from there.
//
// Expiry is compared with the clock of the server that writes: servers'
// clocks must agree to well within a lease's duration (NTP does). The
// expiry is kept in leaseUntil, not expiresAt, which is the table's TTL
// attribute: a lease must never be deleted by TTL.

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
	// Until (a released lease has a zero Until).
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
	LeaseUntil int64  `dynamodbav:"leaseUntil"` // Unix milliseconds
	Checkpoint string `dynamodbav:"checkpoint,omitempty"`
	Finished   bool   `dynamodbav:"finished,omitempty"`
	Position   int64  `dynamodbav:"position,omitempty"`
}

func (it *leaseItem) lease() Lease {
	l := Lease{Name: it.SK, Owner: it.Owner, Checkpoint: it.Checkpoint, Finished: it.Finished, Position: it.Position}
	if it.LeaseUntil > 0 {
		l.Until = time.UnixMilli(it.LeaseUntil).UTC()
	}
	return l
}

func validLeaseName(name string) error {
	if (!strings.HasPrefix(name, prefixShardLease) || name == prefixShardLease) &&
		(!strings.HasPrefix(name, prefixWorkerLease) || name == prefixWorkerLease) {
		return fmt.Errorf("lease name %q: not a ShardLease or WorkerLease", name)
	}
	return nil
}

// TakeLease takes the lease name for owner until d from now, when it is
// free (never taken, expired or released) or owner's already, and returns
// it with its checkpoint. It fails with ErrLeaseHeld when another owner
// holds it.
func (s *Store) TakeLease(ctx context.Context, name, owner string, d time.Duration) (Lease, error) {
	if err := validLeaseName(name); err != nil || owner == "" {
		return Lease{}, errors.Join(err, errors.New("take lease: owner and name are required"))
	}
	now := s.Now()
	free := expression.AttributeNotExists(expression.Name(attrPK)).
		Or(expression.Name("leaseUntil").LessThanEqual(expression.Value(now.UnixMilli()))).
		Or(expression.Name("owner").Equal(expression.Value(owner)))
	upd := expression.Set(expression.Name("owner"), expression.Value(owner)).
		Set(expression.Name("leaseUntil"), expression.Value(now.Add(d).UnixMilli())).
		Set(expression.Name("type"), expression.Value(typeLease))
	it, err := s.updateLease(ctx, name, upd, free)
	if err != nil {
		if errors.Is(err, ErrLeaseLost) {
			return Lease{}, fmt.Errorf("take lease %s: %w", name, ErrLeaseHeld)
		}
		return Lease{}, fmt.Errorf("take lease %s: %w", name, err)
	}
	return it.lease(), nil
}

// RenewLease extends owner's lease name until d from now. It fails with
// ErrLeaseLost when the lease is not owner's.
func (s *Store) RenewLease(ctx context.Context, name, owner string, d time.Duration) (Lease, error) {
	upd := expression.Set(expression.Name("leaseUntil"), expression.Value(s.Now().Add(d).UnixMilli()))
	it, err := s.updateLease(ctx, name, upd, ownedBy(owner))
	if err != nil {
		return Lease{}, fmt.Errorf("renew lease %s: %w", name, err)
	}
	return it.lease(), nil
}

// ReleaseLease frees owner's lease name at once, keeping its checkpoint,
// so another server can take it without waiting for it to expire. A lease
// no longer owner's is left alone (ErrLeaseLost).
func (s *Store) ReleaseLease(ctx context.Context, name, owner string) error {
	upd := expression.Set(expression.Name("leaseUntil"), expression.Value(0))
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
	expr, err := buildExpr(expression.NewBuilder().WithCondition(expression.Name("finished").Equal(expression.Value(true))))
	if err != nil {
		return err
	}
	_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table), Key: mustKey(leaseKey(ShardLease(shard))),
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

// Leases returns every lease, in name order: one Query.
func (s *Store) Leases(ctx context.Context) ([]Lease, error) {
	var out []Lease
	err := s.queryAll(ctx, expression.Key(attrPK).Equal(expression.Value(leasesPartition)), func(av item) error {
		var it leaseItem
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return fmt.Errorf("decode lease: %w", err)
		}
		out = append(out, it.lease())
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read leases: %w", err)
	}
	return out, nil
}

func ownedBy(owner string) expression.ConditionBuilder {
	return expression.Name("owner").Equal(expression.Value(owner))
}

// updateLease applies upd to the lease name under cond and returns the
// lease as written; a failed condition is ErrLeaseLost.
func (s *Store) updateLease(ctx context.Context, name string, upd expression.UpdateBuilder, cond expression.ConditionBuilder) (*leaseItem, error) {
	if err := validLeaseName(name); err != nil {
		return nil, err
	}
	expr, err := buildExpr(expression.NewBuilder().WithUpdate(upd).WithCondition(cond))
	if err != nil {
		return nil, err
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       mustKey(leaseKey(name)),
		UpdateExpression:          expr.Update(),
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ReturnValues:              types.ReturnValueAllNew,
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
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
