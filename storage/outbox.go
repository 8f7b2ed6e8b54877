package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// The webhooks' outbox: one item per webhook and event (PK WEBHOOK#<id>,
// SK OUTBOX#<eventId>), put only when absent, so handling an event twice
// delivers it once. While a delivery is pending it is in GSI1 partition
// OUTBOX under the time of its next attempt, so what is due is one Query;
// once delivered or given up it leaves the index and expires after
// DeliveryRetention, long after the event log forgot the event. Each
// attempt adds an item to the webhook's delivery history
// (DELIVERY#<time>#<eventId>#<attempt>, expiring after DeliveryRetention),
// read newest first in one Query. Request budgets:
//
//	AddOutbox          1 TransactWriteItems per webhook and event (the item, and a check that the webhook is not being deleted)
//	DueOutbox          1 Query of GSI1
//	NextOutbox         1 Query of GSI1, Limit 1 (outboxnext.go)
//	ClaimOutbox        1 UpdateItem (a claim: the next attempt is moved past the delivery's timeout)
//	StartAttempt       1 TransactWriteItems (the claim of an attempt, and the webhook's check)
//	RecordAttempt      1 TransactWriteItems (the outbox item, a history item, the webhook's check)
//	RecentDeliveries   1 Query per webhook
//
// A webhook being deleted (DeleteWebhook) gets nothing more: every write
// of its partition but the deletion's checks in the same transaction that
// the webhook is not marked, so none lands after the deletion's sweep,
// and StartAttempt marks the delivery it claims as being sent until its
// claim ends, so the deletion waits for the attempts that started before
// it to end.

// DeliveryRetention is how long delivered and given-up deliveries and the
// delivery history are kept.
const DeliveryRetention = 7 * 24 * time.Hour

// Outbox states.
const (
	OutboxPending   = "PENDING"
	OutboxDelivered = "DELIVERED"
	OutboxFailed    = "FAILED"
)

// OutboxItem is the delivery of one event to one webhook.
type OutboxItem struct {
	WebhookID string
	EventID   string
	EventType EventType
	// Body is the request body, the same bytes on every attempt.
	Body []byte
	// Attempts is how many attempts were made.
	Attempts int
	// NextAttemptAt is when the next attempt is due (zero once done).
	NextAttemptAt time.Time
	CreatedAt     time.Time
	State         string
	LastStatus    int
	LastError     string
}

// DeliveryAttempt is one attempt to deliver an event, as the history
// keeps it.
type DeliveryAttempt struct {
	WebhookID  string
	EventID    string
	EventType  EventType
	Attempt    int
	At         time.Time
	StatusCode int // 0: no answer
	Duration   time.Duration
	Error      string
	// NextAttemptAt is when it is tried again; zero when it is not.
	NextAttemptAt time.Time
}

type outboxItem struct {
	PK         string `dynamodbav:"PK"`
	SK         string `dynamodbav:"SK"`
	GSI1PK     string `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK     string `dynamodbav:"GSI1SK,omitempty"`
	Type       string `dynamodbav:"type"`
	WebhookID  string `dynamodbav:"webhookId"`
	EventID    string `dynamodbav:"eventId"`
	EventType  string `dynamodbav:"eventType"`
	Body       []byte `dynamodbav:"body"`
	Attempts   int    `dynamodbav:"attempts"`
	Next       string `dynamodbav:"nextAttemptAt,omitempty"`
	CreatedAt  string `dynamodbav:"createdAt"`
	State      string `dynamodbav:"state"`
	LastStatus int    `dynamodbav:"lastStatus,omitempty"`
	LastError  string `dynamodbav:"lastError,omitempty"`
	ExpiresAt  int64  `dynamodbav:"expiresAt,omitempty"`
	// Sending is, while an attempt is being made, when its claim ends.
	Sending string `dynamodbav:"sending,omitempty"`
}

func toOutboxItem(ks keys.Space, o OutboxItem, now time.Time) outboxItem {
	k := outboxKey(ks, o.WebhookID, o.EventID)
	it := outboxItem{PK: k.PK, SK: k.SK, Type: typeOutbox, WebhookID: o.WebhookID, EventID: o.EventID,
		EventType: string(o.EventType), Body: o.Body, Attempts: o.Attempts, CreatedAt: keys.Time(o.CreatedAt),
		State: o.State, LastStatus: o.LastStatus, LastError: o.LastError}
	if o.State == OutboxPending {
		it.GSI1PK, it.GSI1SK = ks.Partition(outboxIndex), outboxDueKey(o.NextAttemptAt, o.WebhookID, o.EventID)
		it.Next = keys.Time(o.NextAttemptAt)
	} else {
		it.ExpiresAt = now.Add(DeliveryRetention).Unix()
	}
	return it
}

func (it *outboxItem) item() OutboxItem {
	return OutboxItem{WebhookID: it.WebhookID, EventID: it.EventID, EventType: EventType(it.EventType), Body: it.Body,
		Attempts: it.Attempts, NextAttemptAt: keys.ParseTime(it.Next), CreatedAt: keys.ParseTime(it.CreatedAt),
		State: it.State, LastStatus: it.LastStatus, LastError: it.LastError}
}

type deliveryItem struct {
	PK         string `dynamodbav:"PK"`
	SK         string `dynamodbav:"SK"`
	Type       string `dynamodbav:"type"`
	WebhookID  string `dynamodbav:"webhookId"`
	EventID    string `dynamodbav:"eventId"`
	EventType  string `dynamodbav:"eventType"`
	Attempt    int    `dynamodbav:"attempt"`
	At         string `dynamodbav:"at"`
	StatusCode int    `dynamodbav:"statusCode,omitempty"`
	DurationMS int64  `dynamodbav:"durationMs"`
	Error      string `dynamodbav:"error,omitempty"`
	Next       string `dynamodbav:"nextAttemptAt,omitempty"`
	ExpiresAt  int64  `dynamodbav:"expiresAt"`
}

func toDeliveryItem(ks keys.Space, d DeliveryAttempt) deliveryItem {
	k := deliveryKey(ks, d.WebhookID, d.At, d.EventID, d.Attempt)
	it := deliveryItem{PK: k.PK, SK: k.SK, Type: typeDelivery, WebhookID: d.WebhookID, EventID: d.EventID,
		EventType: string(d.EventType), Attempt: d.Attempt, At: keys.Time(d.At), StatusCode: d.StatusCode,
		DurationMS: d.Duration.Milliseconds(), Error: d.Error, ExpiresAt: d.At.Add(DeliveryRetention).Unix()}
	if !d.NextAttemptAt.IsZero() {
		it.Next = keys.Time(d.NextAttemptAt)
	}
	return it
}

// AddOutbox writes o unless the outbox has the delivery of its event to
// its webhook already; it reports whether it wrote it. It returns
// ErrNotFound when the webhook is gone or being deleted.
func (s *Store) AddOutbox(ctx context.Context, o OutboxItem) (bool, error) {
	t := s.db.NewTxn()
	if err := t.Put(toOutboxItem(s.ks, o, s.Now()), ptr(dynamo.CondNotExists()), ErrAlreadyExists); err != nil {
		return false, err
	}
	if err := t.Check(webhookKey(s.ks, o.WebhookID), condLiveWebhook(), ErrNotFound); err != nil {
		return false, err
	}
	err := s.db.Exec(ctx, t)
	switch {
	case errors.Is(err, ErrAlreadyExists):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("add outbox item %s/%s: %w", o.WebhookID, o.EventID, err)
	}
	return true, nil
}

// GetOutbox returns the delivery of the event to the webhook, or
// ErrNotFound.
func (s *Store) GetOutbox(ctx context.Context, webhookID, eventID string) (OutboxItem, error) {
	var it outboxItem
	if !ValidWebhookID(webhookID) || eventID == "" || len(eventID) > MaxIDLength {
		return OutboxItem{}, fmt.Errorf("outbox: %w", ErrNotFound)
	}
	if err := s.db.Get(ctx, outboxKey(s.ks, webhookID, eventID), true, &it); err != nil {
		return OutboxItem{}, fmt.Errorf("outbox %s/%s: %w", webhookID, eventID, err)
	}
	return it.item(), nil
}

// DueOutbox returns up to limit pending deliveries whose next attempt is
// due at now, earliest first, in one Query of GSI1. The index is
// eventually consistent: ClaimOutbox tells which are still due.
func (s *Store) DueOutbox(ctx context.Context, now time.Time, limit int) ([]OutboxItem, error) {
	// '$' sorts right after '#': every key of a time up to now.
	kc := expression.Key(keys.AttrGSI1PK).Equal(expression.Value(s.ks.Partition(outboxIndex))).
		And(expression.Key(keys.AttrGSI1SK).LessThan(expression.Value(keys.Time(now) + "$")))
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(kc))
	if err != nil {
		return nil, err
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String(keys.IndexGSI1), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), Limit: aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, fmt.Errorf("due outbox: %w", err)
	}
	var items []outboxItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return nil, fmt.Errorf("decode outbox: %w", err)
	}
	due := make([]OutboxItem, 0, len(items))
	for i := range items {
		due = append(due, items[i].item())
	}
	return due, nil
}

// ClaimOutbox moves the next attempt of the pending delivery o to until,
// provided nothing else moved it since o was read, so one attempt is made
// however often it is seen due; a server that stops mid-attempt leaves it
// due again at until. It returns o as claimed, or ErrVersionConflict when
// another claim or a result came first.
func (s *Store) ClaimOutbox(ctx context.Context, o OutboxItem, until time.Time) (OutboxItem, error) {
	k := outboxKey(s.ks, o.WebhookID, o.EventID)
	cond := expression.Name("state").Equal(expression.Value(OutboxPending)).
		And(expression.Name("attempts").Equal(expression.Value(o.Attempts))).
		And(expression.Name(keys.AttrGSI1SK).Equal(expression.Value(outboxDueKey(o.NextAttemptAt, o.WebhookID, o.EventID))))
	upd := expression.Set(expression.Name("nextAttemptAt"), expression.Value(keys.Time(until))).
		Set(expression.Name(keys.AttrGSI1SK), expression.Value(outboxDueKey(until, o.WebhookID, o.EventID)))
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithCondition(cond).WithUpdate(upd))
	if err != nil {
		return o, err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: dynamo.MustKey(k), UpdateExpression: expr.Update(),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var lost *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &lost):
		return o, fmt.Errorf("claim %s/%s: %w", o.WebhookID, o.EventID, ErrVersionConflict)
	case err != nil:
		return o, fmt.Errorf("claim %s/%s: %w", o.WebhookID, o.EventID, err)
	}
	o.NextAttemptAt = until
	return o, nil
}

// StartAttempt claims the pending delivery o for an attempt until until,
// as ClaimOutbox does, provided its webhook is not being deleted, and
// marks it as being sent until then. It returns o as claimed,
// ErrVersionConflict when another claim or a result came first, or
// ErrNotFound when the webhook is gone or being deleted: the attempt
// must not be made.
func (s *Store) StartAttempt(ctx context.Context, o OutboxItem, until time.Time) (OutboxItem, error) {
	t := s.db.NewTxn()
	cond := expression.Name("state").Equal(expression.Value(OutboxPending)).
		And(expression.Name("attempts").Equal(expression.Value(o.Attempts))).
		And(expression.Name(keys.AttrGSI1SK).Equal(expression.Value(outboxDueKey(o.NextAttemptAt, o.WebhookID, o.EventID))))
	upd := expression.Set(expression.Name("nextAttemptAt"), expression.Value(keys.Time(until))).
		Set(expression.Name(keys.AttrGSI1SK), expression.Value(outboxDueKey(until, o.WebhookID, o.EventID))).
		Set(expression.Name("sending"), expression.Value(keys.Time(until)))
	if err := t.Update(outboxKey(s.ks, o.WebhookID, o.EventID), upd, &cond, ErrVersionConflict); err != nil {
		return o, err
	}
	if err := t.Check(webhookKey(s.ks, o.WebhookID), condLiveWebhook(), ErrNotFound); err != nil {
		return o, err
	}
	if err := s.db.Exec(ctx, t); err != nil {
		return o, fmt.Errorf("start attempt %s/%s: %w", o.WebhookID, o.EventID, err)
	}
	o.NextAttemptAt = until
	return o, nil
}

// RecordAttempt writes the delivery o as it stands after an attempt
// (its Attempts counting it, no longer being sent) and the attempt d in
// the history, in one transaction, provided the outbox item still has
// attempts (the count before it) and its webhook is not being deleted.
// It returns ErrVersionConflict when it has not, and ErrNotFound when
// the webhook is gone or being deleted.
func (s *Store) RecordAttempt(ctx context.Context, o OutboxItem, attempts int, d DeliveryAttempt) error {
	t := s.db.NewTxn()
	cond := expression.Name("attempts").Equal(expression.Value(attempts))
	if err := t.Put(toOutboxItem(s.ks, o, s.Now()), &cond, ErrVersionConflict); err != nil {
		return err
	}
	if err := t.Put(toDeliveryItem(s.ks, d), nil, nil); err != nil {
		return err
	}
	if err := t.Check(webhookKey(s.ks, o.WebhookID), condLiveWebhook(), ErrNotFound); err != nil {
		return err
	}
	if err := s.db.Exec(ctx, t); err != nil {
		return fmt.Errorf("record delivery %s/%s: %w", o.WebhookID, o.EventID, err)
	}
	return nil
}

// DeleteOutbox deletes the delivery of the event to the webhook, as when
// the webhook is gone: 1 DeleteItem.
func (s *Store) DeleteOutbox(ctx context.Context, webhookID, eventID string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: dynamo.MustKey(outboxKey(s.ks, webhookID, eventID))})
	if err != nil {
		return fmt.Errorf("delete outbox item %s/%s: %w", webhookID, eventID, err)
	}
	return nil
}

// RecordDelivery adds d to its webhook's delivery history alone, as a
// ping's attempt is, provided the webhook is not being deleted (else
// ErrNotFound): 1 TransactWriteItems.
func (s *Store) RecordDelivery(ctx context.Context, d DeliveryAttempt) error {
	t := s.db.NewTxn()
	if err := t.Put(toDeliveryItem(s.ks, d), nil, nil); err != nil {
		return err
	}
	if err := t.Check(webhookKey(s.ks, d.WebhookID), condLiveWebhook(), ErrNotFound); err != nil {
		return err
	}
	if err := s.db.Exec(ctx, t); err != nil {
		return fmt.Errorf("record delivery %s/%s: %w", d.WebhookID, d.EventID, err)
	}
	return nil
}

// RecentDeliveries returns the webhook's latest limit attempts, newest
// first, in one Query. Expired ones DynamoDB has not removed yet are left
// out.
func (s *Store) RecentDeliveries(ctx context.Context, webhookID string, limit int) ([]DeliveryAttempt, error) {
	kc := expression.Key(keys.AttrPK).Equal(expression.Value(webhookPartition(s.ks, webhookID))).
		And(expression.KeyBeginsWith(expression.Key(keys.AttrSK), prefixDeliver))
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(kc))
	if err != nil {
		return nil, err
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ScanIndexForward: aws.Bool(false), Limit: aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, fmt.Errorf("deliveries of %s: %w", webhookID, err)
	}
	var items []deliveryItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return nil, fmt.Errorf("decode deliveries: %w", err)
	}
	now := s.Now().Unix()
	ds := make([]DeliveryAttempt, 0, len(items))
	for _, it := range items {
		if it.ExpiresAt < now {
			continue
		}
		ds = append(ds, DeliveryAttempt{WebhookID: it.WebhookID, EventID: it.EventID, EventType: EventType(it.EventType),
			Attempt: it.Attempt, At: keys.ParseTime(it.At), StatusCode: it.StatusCode,
			Duration: time.Duration(it.DurationMS) * time.Millisecond, Error: it.Error, NextAttemptAt: keys.ParseTime(it.Next)})
	}
	return ds, nil
}

// sweepEvery is how often sweepWebhook looks again at the attempts it
// waits for.
const sweepEvery = 50 * time.Millisecond

// sweepWebhook deletes every item of the webhook id's partition, 25 at a
// time, once the attempts being made (Sending, until their claim ends)
// have ended: the webhook is marked deleting, so nothing else is written
// to the partition meanwhile.
func (s *Store) sweepWebhook(ctx context.Context, id string) error {
	pk := webhookPartition(s.ks, id)
	expr, err := dynamo.BuildExpr(expression.NewBuilder().
		WithKeyCondition(expression.Key(keys.AttrPK).Equal(expression.Value(pk))).
		WithProjection(expression.NamesList(expression.Name(keys.AttrPK), expression.Name(keys.AttrSK), expression.Name("sending"))))
	if err != nil {
		return err
	}
	for {
		sending := false
		pages := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
			TableName: aws.String(s.table), KeyConditionExpression: expr.KeyCondition(),
			ProjectionExpression: expr.Projection(), ExpressionAttributeNames: expr.Names(),
			ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true),
		})
		now := s.Now()
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return fmt.Errorf("read %s: %w", pk, err)
			}
			var ks []item
			for _, it := range page.Items {
				var o outboxItem
				if err := attributevalue.UnmarshalMap(it, &o); err != nil {
					return fmt.Errorf("decode %s: %w", pk, err)
				}
				if o.Sending != "" && keys.ParseTime(o.Sending).After(now) {
					sending = true
					continue
				}
				delete(it, "sending")
				ks = append(ks, it)
			}
			for chunk := range slices.Chunk(ks, 25) {
				if err := s.batchDelete(ctx, chunk); err != nil {
					return err
				}
			}
		}
		if !sending {
			return nil
		}
		if err := sleepFor(ctx, sweepEvery); err != nil {
			return err
		}
	}
}

// StuckAfter is how long past its due time Check takes a pending delivery
// to be stuck: the webhooks' worker retries what is due every second.
const StuckAfter = time.Hour

// webhookItems are the webhooks' items Check reads.
type webhookItems struct {
	hooks      map[string]*webhookItem
	count      *webhookCountItem
	outbox     []*outboxItem
	deliveries []*deliveryItem
}

func (w *webhookItems) add(typ string, it item) error {
	if w.hooks == nil {
		w.hooks = map[string]*webhookItem{}
	}
	switch typ {
	case typeWebhook:
		h := &webhookItem{}
		if err := attributevalue.UnmarshalMap(it, h); err != nil {
			return err
		}
		w.hooks[h.ID] = h
	case typeWebhookCount:
		w.count = &webhookCountItem{}
		return attributevalue.UnmarshalMap(it, w.count)
	case typeOutbox:
		o := &outboxItem{}
		w.outbox = append(w.outbox, o)
		return attributevalue.UnmarshalMap(it, o)
	case typeDelivery:
		d := &deliveryItem{}
		w.deliveries = append(w.deliveries, d)
		return attributevalue.UnmarshalMap(it, d)
	}
	return nil
}

// check returns what is wrong with the webhooks' items at now.
func (w *webhookItems) check(ks keys.Space, now time.Time) []string {
	var bad []string
	badf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	var n int64
	if w.count != nil {
		n = w.count.Count
	}
	live := 0
	for id, h := range w.hooks {
		switch {
		case h.DeletingAt == "":
			live++
		case now.Sub(keys.ParseTime(h.DeletingAt)) > StuckAfter:
			badf("webhook %s is being deleted since %s: deleteWebhook again finishes it", id, h.DeletingAt)
		}
	}
	if int64(live) != n {
		badf("webhook count is %d, want %d", n, live)
	}
	for id, h := range w.hooks {
		if k := webhookKey(ks, id); h.PK != k.PK || h.SK != k.SK || h.Secret == "" || len(h.Events) == 0 {
			badf("webhook %s is malformed", id)
		}
	}
	for _, o := range w.outbox {
		if w.hooks[o.WebhookID] == nil {
			badf("outbox item %s/%s is an orphan: its webhook is gone", o.WebhookID, o.EventID)
			continue
		}
		if o.State != OutboxPending {
			if o.GSI1PK != "" || o.ExpiresAt == 0 {
				badf("outbox item %s/%s is %s but still indexed or never expires", o.WebhookID, o.EventID, o.State)
			}
			continue
		}
		next := keys.ParseTime(o.Next)
		switch {
		case o.GSI1PK != ks.Partition(outboxIndex) || o.GSI1SK != outboxDueKey(next, o.WebhookID, o.EventID):
			badf("outbox item %s/%s is pending but not indexed by its next attempt", o.WebhookID, o.EventID)
		case now.Sub(next) > StuckAfter:
			badf("outbox item %s/%s is stuck: due since %s", o.WebhookID, o.EventID, o.Next)
		}
	}
	for _, d := range w.deliveries {
		if w.hooks[d.WebhookID] == nil {
			badf("delivery %s/%s is an orphan: its webhook is gone", d.WebhookID, d.SK)
		}
	}
	return bad
}
