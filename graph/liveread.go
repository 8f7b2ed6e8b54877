package graph

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/blogql/blog/storage"
)

// eventReads reads the post and the comment an event is about once for
// every subscriber of this server: a comment on a post a thousand pages
// follow is one read of each, not a thousand. Each subscriber then checks
// what it may see itself. It keeps the reads of the last eventReadsKept
// events: a client that resumes over and over, replaying the same events
// from the hub's window, reads them once.
type eventReads struct {
	store *storage.Store

	mu    sync.Mutex
	reads map[eventReadKey]*eventRead
	order []eventReadKey
	// posts are the public posts subscriptions started on, read once per
	// postCheckTTL (postsOrder oldest first).
	posts      map[string]*postCheck
	postsOrder []string
}

// postCheck is a post read for the start of subscriptions, until at.
type postCheck struct {
	read  eventRead
	until time.Time
}

// Subscriptions that start on a public post share its read for
// postCheckTTL: a client that resubscribes over and over reads it once in
// that time. What the subscriber may see of each event is checked with
// the event's own read, so a post that became private since shows
// nothing more. A post that is not public, or not found, is read again
// by the next subscription: it may be public by then.
const (
	postCheckTTL  = 5 * time.Second
	postChecksMax = 1024
)

// eventReadsKept bounds the reads kept: a post or a comment each, a
// kilobyte or two.
const eventReadsKept = 4096

type eventReadKey struct {
	position int64
	comment  bool
}

// eventRead is one read, made by the first subscriber that asks for it.
type eventRead struct {
	once    sync.Once
	post    *storage.Post
	comment *storage.Comment
	err     error
}

func newEventReads(store *storage.Store) *eventReads {
	return &eventReads{store: store, reads: map[eventReadKey]*eventRead{}, posts: map[string]*postCheck{}}
}

func (er *eventReads) entry(k eventReadKey) *eventRead {
	er.mu.Lock()
	defer er.mu.Unlock()
	if r, ok := er.reads[k]; ok {
		return r
	}
	r := &eventRead{}
	er.reads[k] = r
	er.order = append(er.order, k)
	if len(er.order) > eventReadsKept {
		delete(er.reads, er.order[0])
		er.order = er.order[1:]
	}
	return r
}

// eventReadTimeout bounds a shared read: no one subscriber's end cancels
// it.
const eventReadTimeout = 10 * time.Second

// read runs read once for k; a failure other than ErrNotFound is not
// kept, so the next subscriber reads again.
func (er *eventReads) read(ctx context.Context, k eventReadKey, read func(ctx context.Context, r *eventRead)) *eventRead {
	r := er.entry(k)
	r.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), eventReadTimeout)
		defer cancel()
		read(ctx, r)
	})
	if r.err != nil && !errors.Is(r.err, storage.ErrNotFound) {
		er.mu.Lock()
		if er.reads[k] == r {
			delete(er.reads, k)
		}
		er.mu.Unlock()
	}
	return r
}

// post returns the post of the event e, as it was when the first
// subscriber asked. The post is shared: nothing may change it.
func (er *eventReads) post(ctx context.Context, e storage.LoggedEvent) (*storage.Post, error) {
	r := er.read(ctx, eventReadKey{position: e.Position}, func(ctx context.Context, r *eventRead) {
		r.post, r.err = er.store.GetPost(ctx, e.Data.PostID)
	})
	return r.post, r.err
}

// comment returns the comment of the event e, shared as post's is.
func (er *eventReads) comment(ctx context.Context, e storage.LoggedEvent) (*storage.Comment, error) {
	r := er.read(ctx, eventReadKey{position: e.Position, comment: true}, func(ctx context.Context, r *eventRead) {
		cs, errs := er.store.GetComments(ctx, []storage.CommentKey{{PostID: e.Data.PostID, CommentID: e.Data.CommentID}})
		r.comment, r.err = cs[0], errs[0]
	})
	return r.comment, r.err
}

// currentPost returns the post id for the start of a subscription: as it
// was at most postCheckTTL ago when it was public then, else as it is.
// The post is shared: nothing may change it.
func (er *eventReads) currentPost(ctx context.Context, id string) (*storage.Post, error) {
	now := time.Now()
	er.mu.Lock()
	c, ok := er.posts[id]
	if !ok || now.After(c.until) {
		c = &postCheck{until: now.Add(postCheckTTL)}
		if !ok {
			er.postsOrder = append(er.postsOrder, id)
		}
		er.posts[id] = c
		if len(er.postsOrder) > postChecksMax {
			delete(er.posts, er.postsOrder[0])
			er.postsOrder = er.postsOrder[1:]
		}
	}
	er.mu.Unlock()
	r := &c.read
	r.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), eventReadTimeout)
		defer cancel()
		r.post, r.err = er.store.GetPost(ctx, id)
	})
	if r.err != nil || !r.post.VisibleAt(er.store.Now()) {
		er.mu.Lock()
		if er.posts[id] == c {
			c.until = time.Time{}
		}
		er.mu.Unlock()
	}
	return r.post, r.err
}
