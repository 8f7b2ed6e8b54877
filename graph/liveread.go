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
// events.
type eventReads struct {
	store *storage.Store

	mu    sync.Mutex
	reads map[eventReadKey]*eventRead
	order []eventReadKey
}

const eventReadsKept = 256

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
	return &eventReads{store: store, reads: map[eventReadKey]*eventRead{}}
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
