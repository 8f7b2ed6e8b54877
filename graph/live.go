package graph

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/gqlhttp"
	"github.com/blogql/blog/graph/model"
	"github.com/blogql/blog/live"
	"github.com/blogql/blog/storage"
)

// Subscriptions: the change feed's events (package live) shown as queries
// show them, to what the subscriber may see, checked for every event.

// DefaultSubscriptionsPerConnection is how many subscriptions one
// connection may hold when LiveOptions does not say.
const DefaultSubscriptionsPerConnection = 20

// Error codes of subscriptions.
const (
	CodeCursorExpired        = "CURSOR_EXPIRED"
	CodeSlowConsumer         = "SLOW_CONSUMER"
	CodeShuttingDown         = "SHUTTING_DOWN"
	CodeTooManySubscriptions = "TOO_MANY_SUBSCRIPTIONS"
)

// LiveOptions configure subscriptions.
type LiveOptions struct {
	// Hub gives the events; nil refuses every subscription with
	// UNAVAILABLE.
	Hub *live.Hub
	// PerConnection bounds the subscriptions one connection holds at
	// once; zero means DefaultSubscriptionsPerConnection.
	PerConnection int
}

var (
	errNoHub                = fmt.Errorf("%w: this server serves no subscriptions", storage.ErrUnavailable)
	errTooManySubscriptions = errors.New("too many subscriptions on this connection")
	errTokenExpired         = fmt.Errorf("%w: the token has expired: subscribe again with a new token and the last cursor as after", auth.ErrUnauthenticated)
)

// liveErrorCodes extend errorCodes with the errors of subscriptions.
var liveErrorCodes = []struct {
	target error
	code   string
}{
	{live.ErrExpired, CodeCursorExpired},
	{live.ErrAhead, CodeBadUserInput},
	{live.ErrSlow, CodeSlowConsumer},
	{live.ErrClosed, CodeShuttingDown},
	{errTooManySubscriptions, CodeTooManySubscriptions},
}

// liveError returns the extensions and message of a subscription's
// error, or false when err is not one.
func liveError(err error) (map[string]any, string, bool) {
	for _, e := range liveErrorCodes {
		if errors.Is(err, e.target) {
			msg := e.target.Error()
			switch e.target {
			case live.ErrSlow, live.ErrClosed:
				msg += ": subscribe again with the last cursor as after"
			case live.ErrAhead:
				return map[string]any{"code": e.code, "field": "after"}, "after: " + msg, true
			}
			return map[string]any{"code": e.code}, msg, true
		}
	}
	return nil, "", false
}

// afterCursor returns the position after names, -1 when it is nil; a
// string that is not an event's cursor sealed by this server's key is a
// *storage.ValidationError.
func (r *Resolver) afterCursor(after *string) (int64, error) {
	if after == nil {
		return -1, nil
	}
	return r.store.EventPosition(*after)
}

// connectionKey marks the context of a connection, with how many
// subscriptions it holds.
type connectionKey struct{}

// withConnection counts the subscriptions of each request: a WebSocket
// connection's, or an SSE stream's.
func withConnection(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), connectionKey{}, new(atomic.Int32))))
	})
}

// subscribe starts a subscription of the actor of ctx to the events match
// takes, after the cursor after; resolve turns each into what is sent, or
// skips it (ok false), and says when it is the last. The subscription
// ends when ctx does, when the actor's token expires, or when the hub ends
// it; its last event then carries the error.
//
// An idle subscription holds no goroutine of its own: a pump runs while
// there are events to resolve and send (see pump), started by the hub
// when one is queued, by the token's expiry and once at the start.
func subscribe[T any](r *Resolver, ctx context.Context, after *string, match func(storage.Event) bool,
	resolve func(context.Context, storage.LoggedEvent) (v T, ok, last bool, err error)) (<-chan graphql.Event[T], error) {
	pos, err := r.afterCursor(after)
	if err != nil {
		return nil, err
	}
	if r.live.Hub == nil {
		return nil, errNoHub
	}
	count, _ := ctx.Value(connectionKey{}).(*atomic.Int32)
	if count == nil {
		count = new(atomic.Int32)
	}
	if int(count.Add(1)) > r.live.PerConnection {
		count.Add(-1)
		return nil, errTooManySubscriptions
	}
	// running until the subscription is registered: what the hub
	// notifies before then, the first run takes.
	p := &pump[T]{ctx: ctx, next: ctx, resolve: resolve, cursor: r.store.EventCursor, out: make(chan graphql.Event[T]), running: true}
	// The hub carries every publication's events: a subscription takes
	// only its own publication's.
	ours := func(e storage.Event) bool { return r.store.Ours(e) && match(e) }
	p.sub, err = r.live.Hub.SubscribeNotify(ctx, pos, ours, p.wake)
	if err != nil {
		count.Add(-1)
		return nil, err
	}
	// A stream that takes the answers when told needs no goroutine of
	// its own waiting for them.
	p.ready = gqlhttp.AnswerReady(ctx)
	var stopExpiry context.CancelFunc = func() {}
	if exp := auth.ActorFrom(ctx).Expires; !exp.IsZero() {
		// The token's time is the store's clock's, which checked it.
		p.next, stopExpiry = context.WithTimeout(ctx, exp.Sub(r.store.Now()))
	}
	// release is set before anything may call it: a ctx already ended
	// runs p.end at once, and it waits for the stops to be known.
	var stopsMu sync.Mutex
	var stops []func() bool
	p.release = func() {
		stopsMu.Lock()
		for _, stop := range stops {
			stop()
		}
		stopsMu.Unlock()
		stopExpiry()
		p.sub.Close()
		count.Add(-1)
	}
	stopsMu.Lock()
	// ctx's end (the client's, the stream's) ends the subscription with
	// no answer: no one reads them any more.
	stops = append(stops, context.AfterFunc(p.next, p.wake), context.AfterFunc(ctx, p.end))
	stopsMu.Unlock()
	go p.run()
	return p.out, nil
}

// pump takes a subscription's events and sends them, one goroutine at a
// time, for as long as there are some: run ends when none is left, and
// wake starts it again.
type pump[T any] struct {
	// ctx is the subscription's; next ends with it or when the actor's
	// token expires.
	ctx, next context.Context
	sub       *live.Sub
	resolve   func(context.Context, storage.LoggedEvent) (v T, ok, last bool, err error)
	// cursor returns the cursor of an event's position.
	cursor func(pos int64) string
	out    chan graphql.Event[T]
	// ready, when the transport wants it, is told before each send on
	// out and before out is closed.
	ready func()
	// release, once, gives back what the subscription holds.
	release func()
	once    sync.Once

	mu sync.Mutex
	// running is true while a run goes; again asks it to look once more
	// before it ends; done once the subscription ended.
	running, again, done bool
}

// wake makes sure a run looks for events; it never waits.
func (p *pump[T]) wake() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	if p.running {
		p.again = true
		return
	}
	p.running = true
	go p.run()
}

// end gives back what the subscription holds.
func (p *pump[T]) end() { p.once.Do(p.release) }

// run sends the events there are, until none is left or the subscription
// ended.
func (p *pump[T]) run() {
	for {
		if !p.send() {
			p.mu.Lock()
			p.done, p.running = true, false
			p.mu.Unlock()
			p.end()
			return
		}
		p.mu.Lock()
		if !p.again {
			p.running = false
			p.mu.Unlock()
			return
		}
		p.again = false
		p.mu.Unlock()
	}
}

// send resolves and sends each event the subscription has now; it
// returns false once the subscription ended (its channel then closed
// when it ended on its own).
func (p *pump[T]) send() bool {
	ctx := p.ctx
	put := func(ev graphql.Event[T]) bool {
		if p.ready != nil {
			p.ready()
		}
		select {
		case p.out <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for {
		if ctx.Err() != nil {
			return false
		}
		var err error
		if p.next.Err() == nil {
			var e storage.LoggedEvent
			var ok bool
			e, ok, err = p.sub.Poll(p.next)
			if err == nil && !ok {
				return true
			}
			if err == nil {
				renewLoaders(ctx)
				var v T
				var last bool
				v, ok, last, err = p.resolve(ctx, e)
				if err == nil && ok && !put(graphql.Event[T]{Context: context.WithValue(ctx, eventKey{}, p.cursor(e.Position)), Value: v}) {
					return false
				}
				if err == nil && !last {
					continue
				}
			}
		}
		if ctx.Err() != nil {
			return false
		}
		if p.next.Err() != nil {
			err = errTokenExpired
		}
		if err != nil {
			var zero T
			put(graphql.Event[T]{Context: context.WithValue(ctx, endKey{}, err), Value: zero})
		}
		if p.ready != nil {
			p.ready()
		}
		close(p.out)
		return false
	}
}

// eventKey carries an event's cursor in its context; endKey the error
// that ends its subscription.
type (
	eventKey struct{}
	endKey   struct{}
)

// liveResponses is the response hook of subscriptions: an event's answer
// carries its cursor as the event id (gqlhttp.SetEventID, the id of an
// SSE event), and the last answer of a subscription that ends on an error
// is that error alone.
func liveResponses(present graphql.ErrorPresenterFunc) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		if err, ok := ctx.Value(endKey{}).(error); ok {
			return &graphql.Response{Errors: gqlerror.List{present(ctx, err)}}
		}
		resp := next(ctx)
		if cursor, ok := ctx.Value(eventKey{}).(string); ok && resp != nil {
			gqlhttp.SetEventID(resp, cursor)
		}
		return resp
	}
}

// subscriptionPost returns the post of a subscription once the actor of
// ctx may see it: NOT_FOUND otherwise.
func (r *Resolver) subscriptionPost(ctx context.Context, field, gid string) (string, error) {
	id, err := decodeIDOf(field, gid, kindPost)
	if err != nil {
		return "", err
	}
	if _, err := r.visible(ctx)(r.eventReads.currentPost(ctx, id)); err != nil {
		return "", err
	}
	return id, nil
}

// commentAdded streams the comments published on the post gid and, to
// those who may see them, the held ones.
func (r *Resolver) commentAdded(ctx context.Context, gid string, after *string) (<-chan graphql.Event[*model.CommentEvent], error) {
	if _, err := r.afterCursor(after); err != nil {
		return nil, err
	}
	id, err := r.subscriptionPost(ctx, "postId", gid)
	if err != nil {
		return nil, err
	}
	match := func(e storage.Event) bool {
		switch e.Type {
		case storage.EventCommentAdded, storage.EventCommentApproved, storage.EventCommentPending:
			return e.Data.PostID == id
		}
		return false
	}
	return subscribe(r, ctx, after, match, func(ctx context.Context, e storage.LoggedEvent) (*model.CommentEvent, bool, bool, error) {
		p, err := r.eventReads.post(ctx, e)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, false, true, nil // the post is gone: so is the subscription
		}
		if err != nil || !r.sees(ctx, p) {
			return nil, false, false, err
		}
		c, err := r.eventReads.comment(ctx, e)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, false, false, nil // deleted since
		}
		if err != nil || !seesComment(ctx, c, p) || c.Deleted {
			return nil, false, false, err
		}
		return &model.CommentEvent{Cursor: r.store.EventCursor(e.Position), Time: e.Time, Comment: c}, true, false, nil
	})
}

// commentKinds are the kinds of comment changes commentUpdated delivers.
var commentKinds = map[storage.EventType]model.CommentChangeKind{
	storage.EventCommentEdited:  model.CommentChangeKindEdited,
	storage.EventCommentDeleted: model.CommentChangeKindDeleted,
}

// commentUpdated streams the edits and deletions of the comments
// published on the post gid, as the actor of ctx may see them.
func (r *Resolver) commentUpdated(ctx context.Context, gid string, after *string) (<-chan graphql.Event[*model.CommentChangeEvent], error) {
	if _, err := r.afterCursor(after); err != nil {
		return nil, err
	}
	id, err := r.subscriptionPost(ctx, "postId", gid)
	if err != nil {
		return nil, err
	}
	match := func(e storage.Event) bool {
		_, ok := commentKinds[e.Type]
		return ok && e.Data.PostID == id
	}
	return subscribe(r, ctx, after, match, func(ctx context.Context, e storage.LoggedEvent) (*model.CommentChangeEvent, bool, bool, error) {
		p, err := r.eventReads.post(ctx, e)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, false, true, nil // the post is gone: so is the subscription
		}
		if err != nil || !r.sees(ctx, p) {
			return nil, false, false, err
		}
		ev := &model.CommentChangeEvent{Cursor: r.store.EventCursor(e.Position), Time: e.Time, Kind: commentKinds[e.Type],
			CommentID: commentGID(e.Data.PostID, e.Data.CommentID)}
		if ev.Kind == model.CommentChangeKindDeleted {
			return ev, true, false, nil
		}
		c, err := r.eventReads.comment(ctx, e)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, false, false, nil // deleted since: its own event follows
		}
		if err != nil || c.Deleted || !seesComment(ctx, c, p) {
			return nil, false, false, err
		}
		ev.Comment = c
		return ev, true, false, nil
	})
}

// moderationQueueChanged streams the comments held, approved and
// rejected on the posts the actor of ctx moderates.
func (r *Resolver) moderationQueueChanged(ctx context.Context, after *string) (<-chan graphql.Event[*model.CommentEvent], error) {
	if _, err := r.afterCursor(after); err != nil {
		return nil, err
	}
	if _, err := author(ctx); err != nil {
		return nil, err
	}
	match := func(e storage.Event) bool {
		switch e.Type {
		case storage.EventCommentPending, storage.EventCommentApproved, storage.EventCommentRejected:
			return true
		}
		return false
	}
	return subscribe(r, ctx, after, match, func(ctx context.Context, e storage.LoggedEvent) (*model.CommentEvent, bool, bool, error) {
		p, err := r.eventReads.post(ctx, e)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, false, false, nil
		}
		if err != nil || !auth.ActorFrom(ctx).Acts(p.AuthorID) {
			return nil, false, false, err
		}
		c, err := r.eventReads.comment(ctx, e)
		if errors.Is(err, storage.ErrNotFound) {
			return nil, false, false, nil // deleted since
		}
		if err != nil {
			return nil, false, false, err
		}
		return &model.CommentEvent{Cursor: r.store.EventCursor(e.Position), Time: e.Time, Comment: c}, true, false, nil
	})
}

// postKinds are the kinds of post events subscriptions deliver.
var postKinds = map[storage.EventType]model.PostEventKind{
	storage.EventPostPublished:   model.PostEventKindPublished,
	storage.EventPostEdited:      model.PostEventKindEdited,
	storage.EventPostUnpublished: model.PostEventKindUnpublished,
	storage.EventPostDeleted:     model.PostEventKindDeleted,
}

// postEvent returns the PostEvent of e for the actor of ctx: the post as
// it is now when the actor may see it; ok is false for an event about a
// post the actor may not see (only the news that it went away reaches
// those who saw it).
func (r *Resolver) postEvent(ctx context.Context, e storage.LoggedEvent) (ev *model.PostEvent, ok bool, err error) {
	kind := postKinds[e.Type]
	ev = &model.PostEvent{Cursor: r.store.EventCursor(e.Position), Time: e.Time, Kind: kind, PostID: postGID(e.Data.PostID)}
	if kind == model.PostEventKindDeleted {
		ev.Deleted = true
		return ev, true, nil
	}
	p, err := r.eventReads.post(ctx, e)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil, false, nil // deleted since: its own event follows
	case err != nil:
		return nil, false, err
	case r.sees(ctx, p):
		ev.Post = p
	case kind != model.PostEventKindUnpublished:
		return nil, false, nil
	}
	return ev, true, nil
}

// postUpdated streams the changes of the post gid.
func (r *Resolver) postUpdated(ctx context.Context, gid string, after *string) (<-chan graphql.Event[*model.PostEvent], error) {
	if _, err := r.afterCursor(after); err != nil {
		return nil, err
	}
	id, err := r.subscriptionPost(ctx, "id", gid)
	if err != nil {
		return nil, err
	}
	match := func(e storage.Event) bool {
		_, ok := postKinds[e.Type]
		return ok && e.Data.PostID == id
	}
	return subscribe(r, ctx, after, match, func(ctx context.Context, e storage.LoggedEvent) (*model.PostEvent, bool, bool, error) {
		ev, ok, err := r.postEvent(ctx, e)
		return ev, ok, ok && ev.Deleted, err
	})
}

// postPublished streams the posts that become public, of one category
// when category is set.
func (r *Resolver) postPublished(ctx context.Context, category, after *string) (<-chan graphql.Event[*model.PostEvent], error) {
	if _, err := r.afterCursor(after); err != nil {
		return nil, err
	}
	if category != nil {
		if _, err := r.store.GetCategory(ctx, *category); err != nil {
			return nil, err
		}
	}
	match := func(e storage.Event) bool {
		return e.Type == storage.EventPostPublished && (category == nil || slices.Contains(e.Data.Categories, *category))
	}
	return subscribe(r, ctx, after, match, func(ctx context.Context, e storage.LoggedEvent) (*model.PostEvent, bool, bool, error) {
		ev, ok, err := r.postEvent(ctx, e)
		return ev, ok && ev.Post != nil, false, err
	})
}

// initConnection returns what checks a WebSocket connection's
// connection_init: its payload's Authorization, "Bearer <token>", signs
// the connection in as the token's actor; without one the connection
// keeps the actor of its handshake's own header (anonymous for a
// browser). A token that does not verify closes the connection.
func initConnection(v *auth.Verifier) func(ctx context.Context, payload map[string]any) (context.Context, error) {
	return func(ctx context.Context, payload map[string]any) (context.Context, error) {
		var header string
		for k, val := range payload {
			if strings.EqualFold(k, "Authorization") {
				s, ok := val.(string)
				if !ok {
					return ctx, fmt.Errorf("%w: Authorization must be a string", auth.ErrUnauthenticated)
				}
				header = s
			}
		}
		if header == "" {
			return ctx, nil
		}
		r, _ := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
		r.Header.Set("Authorization", header)
		a, err := v.Authenticate(r)
		if err != nil {
			if !errors.Is(err, auth.ErrUnauthenticated) {
				return ctx, errors.New("the token could not be verified, try again")
			}
			return ctx, err
		}
		return auth.WithActor(ctx, a), nil
	}
}
