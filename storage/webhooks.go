package storage

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/blogql/blog/storage/internal/dynamo"
	"github.com/blogql/blog/storage/internal/keys"
)

// Webhooks: the endpoints the change feed's public events are sent to.
// Every webhook is an item of the partition WEBHOOKS, so the list is one
// Query; the partition's COUNT item counts them in the transactions that
// create and delete them, which is how a 101st is refused without a race.
// Their outbox and delivery history (outbox.go) live in a partition of
// each webhook's own. Request budgets:
//
//	CreateWebhook                 1 TransactWriteItems
//	DeleteWebhook                 1 GetItem, 1 TransactWriteItems (the mark), Queries and BatchWrites of its partition, 1 DeleteItem
//	UpdateWebhook                 1 UpdateItem
//	RotateWebhookSecret           1 GetItem, 1 UpdateItem
//	Webhooks                      1 Query
//	GetWebhook                    1 GetItem

// Webhook limits.
const (
	MaxWebhooks                = 100
	MaxWebhookURLLength        = 2000
	MaxWebhookDescriptionRunes = 500
	MaxWebhookEvents           = 32
)

// PublicEvents are the events a webhook may subscribe to: the change
// feed's events that show in the public API. post.scheduled,
// post.rescheduled, post.unscheduled, comment.pending and comment.rejected
// are about what only authors and admins see, so no webhook gets them.
// The staff's events (publication.member.*) are the exception: they carry
// account ids and roles, never addresses, for the admins' own tools that
// mirror the staff (staffevents.go).
var PublicEvents = []EventType{
	EventPostPublished, EventPostEdited, EventPostUnpublished, EventPostDeleted, EventPostCountsUpdated,
	EventAuthorUpdated, EventCategoryUpdated, EventTagUpdated, EventSeriesUpdated,
	EventCommentAdded, EventCommentEdited, EventCommentApproved, EventCommentDeleted,
	EventPagePublished, EventPageEdited, EventPageUnpublished, EventPageDeleted, EventSiteUpdated,
	EventPostPagesUpdated,
	EventMemberAdded, EventMemberRoleChanged, EventMemberRemoved,
}

// Webhook is an endpoint that receives events. Its secrets are never
// shown after they are made; the GraphQL schema has no field for them.
type Webhook struct {
	ID          string
	URL         string
	Events      []EventType
	Description string
	Enabled     bool
	// DisabledReason says why the server disabled the webhook (empty when
	// enabled or disabled by an admin).
	DisabledReason string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// LastSuccessAt is when an endpoint last answered 2xx.
	LastSuccessAt time.Time
	// LogAfter is the event log's head when the webhook was made: it gets
	// the events logged after it (Since). Nil for a webhook made before
	// the head was kept.
	LogAfter *int64
	// Secret signs every delivery; PreviousSecret signs too until
	// PreviousUntil, after a rotation. They are kept as the caller wrote
	// them (package webhooks seals them).
	Secret         string
	PreviousSecret string
	PreviousUntil  time.Time
}

// Since reports whether e came after w was made: e was logged after the
// log's head at w's creation, or, for a webhook made before the head was
// kept, e's time is not before w's creation's second. Event times are
// stream records' approximate creation times, rounded down to the second
// by DynamoDB and to the minute by DynamoDB Local, so the head is what
// tells the events of the minute a webhook was made apart.
func (w *Webhook) Since(e LoggedEvent) bool {
	if w.LogAfter != nil {
		return e.Position > *w.LogAfter
	}
	return !e.Time.Before(w.CreatedAt.Truncate(time.Second))
}

// Subscribed reports whether w is enabled and gets events of type t.
func (w *Webhook) Subscribed(t EventType) bool { return w.Enabled && slices.Contains(w.Events, t) }

// Secrets returns the secrets that sign a delivery at now: the current
// one, and the previous one during its grace period.
func (w *Webhook) Secrets(now time.Time) []string {
	if w.PreviousSecret != "" && now.Before(w.PreviousUntil) {
		return []string{w.Secret, w.PreviousSecret}
	}
	return []string{w.Secret}
}

// WebhookPolicy is what the server allows of a webhook's URL.
type WebhookPolicy struct {
	// AllowPrivate lets URLs name loopback, private and link-local
	// addresses (unsafe: the server's network is then reachable).
	AllowPrivate bool
	// AllowHTTP lets URLs be plain http://, as a development setup does.
	AllowHTTP bool
	// PrivateHint, when set, ends the refusal of a URL that names such
	// an address: how the server allows them (its flag).
	PrivateHint string
}

// WebhookInput is a new webhook, or the changes to one (nil: unchanged).
type WebhookInput struct {
	URL         *string
	Events      []EventType // nil: unchanged
	Description *string
	Enabled     *bool
}

type webhookItem struct {
	PK             string   `dynamodbav:"PK"`
	SK             string   `dynamodbav:"SK"`
	Type           string   `dynamodbav:"type"`
	ID             string   `dynamodbav:"id"`
	URL            string   `dynamodbav:"url"`
	Events         []string `dynamodbav:"events"`
	Description    string   `dynamodbav:"description,omitempty"`
	Enabled        bool     `dynamodbav:"enabled"`
	DisabledReason string   `dynamodbav:"disabledReason,omitempty"`
	CreatedAt      string   `dynamodbav:"createdAt"`
	UpdatedAt      string   `dynamodbav:"updatedAt"`
	LastSuccessAt  string   `dynamodbav:"lastSuccessAt,omitempty"`
	Secret         string   `dynamodbav:"secret"`
	PreviousSecret string   `dynamodbav:"previousSecret,omitempty"`
	PreviousUntil  string   `dynamodbav:"previousUntil,omitempty"`
	LogAfter       *int64   `dynamodbav:"logAfter,omitempty"`
	// DeletingAt marks a webhook being deleted (DeleteWebhook): it is
	// gone to every reader, and no delivery starts or is recorded.
	DeletingAt string `dynamodbav:"deletingAt,omitempty"`
}

// condLiveWebhook is the condition that the webhook item exists and is
// not being deleted.
func condLiveWebhook() expression.ConditionBuilder {
	return dynamo.CondExists().And(expression.AttributeNotExists(expression.Name("deletingAt")))
}

func (it *webhookItem) webhook() *Webhook {
	w := &Webhook{ID: it.ID, URL: it.URL, Description: it.Description, Enabled: it.Enabled,
		DisabledReason: it.DisabledReason, CreatedAt: keys.ParseTime(it.CreatedAt), UpdatedAt: keys.ParseTime(it.UpdatedAt),
		LastSuccessAt: keys.ParseTime(it.LastSuccessAt), Secret: it.Secret, PreviousSecret: it.PreviousSecret,
		PreviousUntil: keys.ParseTime(it.PreviousUntil), LogAfter: it.LogAfter}
	for _, e := range it.Events {
		w.Events = append(w.Events, EventType(e))
	}
	slices.Sort(w.Events)
	return w
}

// webhookCountItem counts the webhooks; WebhooksMax is the publication's
// own quota of them, when a platform admin set one (quotas.go).
type webhookCountItem struct {
	PK          string `dynamodbav:"PK"`
	SK          string `dynamodbav:"SK"`
	Type        string `dynamodbav:"type"`
	Count       int64  `dynamodbav:"count"`
	WebhooksMax *int64 `dynamodbav:"webhooksMax,omitempty"`
}

// ValidateWebhook returns a *ValidationError when in is not a valid new
// webhook (create) or change to one under p; CreateWebhook and
// UpdateWebhook check it again.
func ValidateWebhook(in WebhookInput, p WebhookPolicy, create bool) error {
	return validateWebhook(in, p, create)
}

// validateWebhook checks a new webhook (full) or the changes to one.
func validateWebhook(in WebhookInput, p WebhookPolicy, full bool) error {
	if in.URL != nil || full {
		if err := validateWebhookURL(deref(in.URL), p); err != nil {
			return err
		}
	}
	if in.Events != nil || full {
		if len(in.Events) == 0 || len(in.Events) > MaxWebhookEvents {
			return invalid("events", "must name 1 to %d events", MaxWebhookEvents)
		}
		for _, e := range in.Events {
			if !slices.Contains(PublicEvents, e) {
				return invalid("events", "%q is not an event a webhook can receive", string(e))
			}
		}
	}
	if in.Description != nil {
		if err := validateText("description", *in.Description, false, MaxWebhookDescriptionRunes); err != nil {
			return err
		}
	}
	return nil
}

// validateWebhookURL checks a webhook's endpoint: an absolute http(s) URL
// without credentials or fragment, of bounded length; https unless the
// policy allows http; and, unless it allows private addresses, no
// localhost or address literal off the public internet (names are
// checked again on the addresses they resolve to, at delivery).
func validateWebhookURL(v string, p WebhookPolicy) error {
	const field = "url"
	if v == "" || !utf8.ValidString(v) || len(v) > MaxWebhookURLLength || strings.ContainsFunc(v, badInURL) {
		return invalid(field, "must be an absolute https URL of at most %d characters without spaces", MaxWebhookURLLength)
	}
	u, err := url.Parse(v)
	switch {
	case err != nil || !u.IsAbs() || u.Hostname() == "" || u.Opaque != "":
		return invalid(field, "must be an absolute http or https URL")
	case u.Scheme != "https" && u.Scheme != "http":
		return invalid(field, "must be an http or https URL")
	case u.Scheme == "http" && !p.AllowHTTP:
		return invalid(field, "must be https: plain http is allowed in the development mode only")
	case u.User != nil:
		return invalid(field, "must not carry credentials")
	case u.Fragment != "" || strings.Contains(v, "#"):
		return invalid(field, "must not have a fragment")
	case !p.AllowPrivate && !publicHost(u.Hostname()):
		if p.PrivateHint != "" {
			return invalid(field, "must not name a loopback, private or link-local host: %s", p.PrivateHint)
		}
		return invalid(field, "must not name a loopback, private or link-local host")
	}
	return nil
}

func eventStrings(events []EventType) []string {
	out := make([]string, 0, len(events))
	for _, e := range events {
		if !slices.Contains(out, string(e)) {
			out = append(out, string(e))
		}
	}
	return out
}

// CreateWebhook creates an enabled webhook with in (URL and events
// required) signed with secret. It returns a *ValidationError for bad
// input or when MaxWebhooks exist already, a *QuotaError (limit
// "webhooks") when the publication's quota is reached, and writes nothing
// then.
func (s *Store) CreateWebhook(ctx context.Context, in WebhookInput, secret string, p WebhookPolicy) (*Webhook, error) {
	if err := validateWebhook(in, p, true); err != nil {
		return nil, err
	}
	// Read before the webhook is written: every event of a write made
	// after it exists is logged after this head.
	head, err := s.feed.EventLogHead(ctx)
	if err != nil {
		return nil, fmt.Errorf("create webhook: %w", err)
	}
	now := keys.Time(s.Now())
	id := newID()
	k := webhookKey(s.ks, id)
	it := webhookItem{PK: k.PK, SK: k.SK, Type: typeWebhook, ID: id, URL: *in.URL, Events: eventStrings(in.Events),
		Description: deref(in.Description), Enabled: true, CreatedAt: now, UpdatedAt: now, Secret: secret, LogAfter: &head}
	full := invalid("url", "at most %d webhooks can exist; delete one first", MaxWebhooks)
	// The count's condition holds both bounds, MaxWebhooks and the
	// publication's quota (quotas.go); a missing count is none yet.
	count := expression.Name("count")
	cond := count.AttributeNotExists().Or(count.LessThan(expression.Value(MaxWebhooks)).
		And(withinQuota("count", attrWebhooksMax, s.quota.Webhooks)))
	upd := expression.Set(expression.Name("type"), expression.Value(typeWebhookCount)).Add(count, expression.Value(1))
	return dynamo.RetryWrite(ctx, func() (*Webhook, error) {
		t := s.db.NewTxn()
		if err := t.Put(it, ptr(dynamo.CondNotExists()), ErrAlreadyExists); err != nil {
			return nil, err
		}
		if err := t.Update(webhookCountKey(s.ks), upd, &cond, errWebhookCounter); err != nil {
			return nil, err
		}
		err := s.db.Exec(ctx, t)
		if errors.Is(err, errWebhookCounter) {
			err = s.webhookCounterRefused(ctx, full)
		}
		if err != nil {
			return nil, fmt.Errorf("create webhook: %w", err)
		}
		return it.webhook(), nil
	})
}

// errWebhookCounter is the failure of the webhooks' count's condition:
// webhookCounterRefused tells which bound refused.
var errWebhookCounter = errors.New("the webhooks' count refused the create")

// GetWebhook returns the webhook id, or ErrNotFound.
func (s *Store) GetWebhook(ctx context.Context, id string) (*Webhook, error) {
	if !ValidWebhookID(id) {
		return nil, fmt.Errorf("webhook: %w", ErrNotFound)
	}
	var it webhookItem
	if err := s.db.Get(ctx, webhookKey(s.ks, id), true, &it); err != nil {
		return nil, fmt.Errorf("webhook %q: %w", id, err)
	}
	if it.DeletingAt != "" {
		return nil, fmt.Errorf("webhook %q: %w", id, ErrNotFound)
	}
	return it.webhook(), nil
}

// ValidWebhookID reports whether id can be a webhook's id.
func ValidWebhookID(id string) bool { return validateID("id", id) == nil }

// Webhooks returns every webhook, oldest first, in one Query; those being
// deleted are left out.
func (s *Store) Webhooks(ctx context.Context) ([]*Webhook, error) {
	kc := expression.Key(keys.AttrPK).Equal(expression.Value(s.ks.Partition(webhooksPartition))).
		And(expression.KeyBeginsWith(expression.Key(keys.AttrSK), prefixWebhook))
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithKeyCondition(kc))
	if err != nil {
		return nil, err
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	var items []webhookItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return nil, fmt.Errorf("decode webhooks: %w", err)
	}
	hooks := make([]*Webhook, 0, len(items))
	for i := range items {
		if items[i].DeletingAt == "" {
			hooks = append(hooks, items[i].webhook())
		}
	}
	slices.SortFunc(hooks, func(a, b *Webhook) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return hooks, nil
}

// UpdateWebhook changes the webhook id as in says; enabling it clears the
// reason it was disabled for. It returns ErrNotFound, or a
// *ValidationError and writes nothing.
func (s *Store) UpdateWebhook(ctx context.Context, id string, in WebhookInput, p WebhookPolicy) (*Webhook, error) {
	if err := validateWebhook(in, p, false); err != nil {
		return nil, err
	}
	upd := expression.Set(expression.Name("updatedAt"), expression.Value(keys.Time(s.Now())))
	if in.URL != nil {
		upd = upd.Set(expression.Name("url"), expression.Value(*in.URL))
	}
	if in.Events != nil {
		upd = upd.Set(expression.Name("events"), expression.Value(eventStrings(in.Events)))
	}
	if in.Description != nil {
		if *in.Description == "" {
			upd = upd.Remove(expression.Name("description"))
		} else {
			upd = upd.Set(expression.Name("description"), expression.Value(*in.Description))
		}
	}
	if in.Enabled != nil {
		upd = upd.Set(expression.Name("enabled"), expression.Value(*in.Enabled)).Remove(expression.Name("disabledReason"))
	}
	return s.updateWebhook(ctx, id, upd)
}

func (s *Store) updateWebhook(ctx context.Context, id string, upd expression.UpdateBuilder) (*Webhook, error) {
	if !ValidWebhookID(id) {
		return nil, fmt.Errorf("webhook: %w", ErrNotFound)
	}
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithUpdate(upd).WithCondition(condLiveWebhook()))
	if err != nil {
		return nil, err
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: dynamo.MustKey(webhookKey(s.ks, id)),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValues: "ALL_NEW",
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return nil, fmt.Errorf("webhook %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("update webhook %q: %w", id, err)
	}
	var it webhookItem
	if err := attributevalue.UnmarshalMap(out.Attributes, &it); err != nil {
		return nil, fmt.Errorf("decode webhook %q: %w", id, err)
	}
	return it.webhook(), nil
}

// RotateWebhookSecret makes secret the webhook's signing secret; the one
// it replaces still signs until until. It returns ErrNotFound.
// Requests: 1 GetItem, 1 UpdateItem.
func (s *Store) RotateWebhookSecret(ctx context.Context, id, secret string, until time.Time) (*Webhook, error) {
	w, err := s.GetWebhook(ctx, id)
	if err != nil {
		return nil, err
	}
	upd := expression.Set(expression.Name("secret"), expression.Value(secret)).
		Set(expression.Name("previousSecret"), expression.Value(w.Secret)).
		Set(expression.Name("previousUntil"), expression.Value(keys.Time(until))).
		Set(expression.Name("updatedAt"), expression.Value(keys.Time(s.Now())))
	return s.updateWebhook(ctx, id, upd)
}

// DisableWebhook turns the webhook off, saying why. A missing webhook is
// no error: there is nothing left to disable.
func (s *Store) DisableWebhook(ctx context.Context, id, reason string) error {
	upd := expression.Set(expression.Name("enabled"), expression.Value(false)).
		Set(expression.Name("disabledReason"), expression.Value(reason)).
		Set(expression.Name("updatedAt"), expression.Value(keys.Time(s.Now())))
	_, err := s.updateWebhook(ctx, id, upd)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// WebhookSucceeded records that the webhook's endpoint answered 2xx at.
func (s *Store) WebhookSucceeded(ctx context.Context, id string, at time.Time) error {
	_, err := s.updateWebhook(ctx, id, expression.Set(expression.Name("lastSuccessAt"), expression.Value(keys.Time(at))))
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// DeleteWebhook deletes the webhook id and its outbox and delivery
// history, and returns once no delivery to it can start, none is being
// made, and nothing of it is left. It first marks the webhook deleting:
// from then on it is gone to every reader, no delivery to it starts
// (StartAttempt) and none is recorded or added (RecordAttempt,
// AddOutbox); then it waits for the attempts already started to end and
// deletes its partition, then the webhook. A deletion cut short (a
// timeout, a crash) leaves the webhook marked: DeleteWebhook again
// finishes it and succeeds. It returns ErrNotFound when there is no such
// webhook, marked or not. Requests: 1 GetItem, 1 TransactWriteItems
// (the mark and the count), the sweep's Queries and BatchWriteItems, 1
// DeleteItem.
func (s *Store) DeleteWebhook(ctx context.Context, id string) error {
	if !ValidWebhookID(id) {
		return fmt.Errorf("webhook: %w", ErrNotFound)
	}
	var it webhookItem
	if err := s.db.Get(ctx, webhookKey(s.ks, id), true, &it); err != nil {
		return fmt.Errorf("delete webhook %q: %w", id, err)
	}
	if it.DeletingAt == "" {
		t := s.db.NewTxn()
		mark := expression.Set(expression.Name("deletingAt"), expression.Value(keys.Time(s.Now())))
		if err := t.Update(webhookKey(s.ks, id), mark, ptr(condLiveWebhook()), dynamo.ErrRetry); err != nil {
			return err
		}
		if err := t.Update(webhookCountKey(s.ks), expression.Add(expression.Name("count"), expression.Value(-1)), nil, nil); err != nil {
			return err
		}
		err := s.db.Exec(ctx, t)
		if errors.Is(err, dynamo.ErrRetry) {
			// Deleted, or marked, by another meanwhile.
			return s.DeleteWebhook(ctx, id)
		}
		if err != nil {
			return fmt.Errorf("delete webhook %q: %w", id, err)
		}
	}
	if err := s.sweepWebhook(ctx, id); err != nil {
		return fmt.Errorf("delete webhook %q: %w", id, err)
	}
	expr, err := dynamo.BuildExpr(expression.NewBuilder().WithCondition(expression.AttributeExists(expression.Name("deletingAt"))))
	if err != nil {
		return err
	}
	_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: dynamo.MustKey(webhookKey(s.ks, id)),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	var failed *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &failed) { // failed: another deletion finished first
		return fmt.Errorf("delete webhook %q: %w", id, err)
	}
	return nil
}
