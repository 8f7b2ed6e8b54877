package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/blogql/blog/storage"
)

// TestDeletingAWebhookWhileEventsAreHandled deletes a webhook while the
// worker delivers 30 events to it and to a slow one: once the deletion
// is acknowledged its endpoint gets nothing more, and nothing of it is
// left in the table. A deletion cut short (its request timed out) is
// finished by the same deletion sent again, which succeeds.
func TestDeletingAWebhookWhileEventsAreHandled(t *testing.T) {
	for _, cutShort := range []bool{false, true} {
		t.Run(fmt.Sprintf("cut short and sent again %v", cutShort), func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			slow := newHeld(t)
			e.create(slow.URL, storage.EventPostPublished)

			// The deleted webhook's endpoint holds its first request until
			// the deletion has begun, and counts what arrives once it was
			// acknowledged.
			var (
				acked, late atomic.Int32
				first       = make(chan struct{})
				release     = make(chan struct{})
				once        sync.Once
			)
			fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if acked.Load() == 1 {
					late.Add(1)
				}
				held := false
				once.Do(func() { held = true })
				if held {
					close(first)
					<-release
				}
				w.WriteHeader(http.StatusNoContent)
			}))
			t.Cleanup(fast.Close)
			var releasing sync.Once
			free := func() { releasing.Do(func() { close(release) }) }
			t.Cleanup(free) // before fast.Close, should the test stop early
			gone, _ := e.create(fast.URL, storage.EventPostPublished)

			handled := make(chan error, 1)
			go func() {
				var events []storage.LoggedEvent
				for i := range 30 {
					events = append(events, storage.LoggedEvent{Position: int64(i + 1), Event: e.published(fmt.Sprintf("%032x", i))})
				}
				handled <- e.hooks.HandleEvents(ctx, events)
			}()
			<-first

			deleteCtx, cancel := context.WithCancel(ctx)
			deleted := make(chan error, 1)
			go func() { deleted <- e.store.DeleteWebhook(deleteCtx, gone.ID) }()
			// The webhook is gone to readers once the deletion marked it.
			for {
				if _, err := e.store.GetWebhook(ctx, gone.ID); errors.Is(err, storage.ErrNotFound) {
					break
				}
				runtime.Gosched()
			}
			if cutShort {
				cancel()
				if err := <-deleted; err == nil {
					// It had nothing to wait for: no attempt was under way.
					t.Fatal("the deletion ended while an attempt to the webhook was under way")
				}
				go func() { deleted <- e.store.DeleteWebhook(ctx, gone.ID) }()
			}
			free()
			if err := <-deleted; err != nil {
				t.Fatalf("deleteWebhook: %v, want it to succeed", err)
			}
			acked.Store(1)
			cancel()

			slow.free()
			if err := <-handled; err != nil {
				t.Fatal(err)
			}
			e.hooks.Wait()
			e.retry(e.hooks)
			if n := late.Load(); n != 0 {
				t.Errorf("the deleted webhook's endpoint got %d requests after the deletion was acknowledged", n)
			}
			for i := range 30 {
				if _, err := e.store.GetOutbox(ctx, gone.ID, e.published(fmt.Sprintf("%032x", i)).ID); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("event %d's delivery to the deleted webhook: %v, want none", i, err)
				}
			}
			if ds, err := e.store.RecentDeliveries(ctx, gone.ID, 100); err != nil || len(ds) != 0 {
				t.Errorf("the deleted webhook's history: %d attempts (%v), want none", len(ds), err)
			}
			if err := e.store.DeleteWebhook(ctx, gone.ID); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("deleting it once more: %v, want ErrNotFound", err)
			}
			e.consistent()
		})
	}
}
