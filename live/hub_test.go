package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/blogql/blog/storage"
)

// memLog is an event log in memory: positions from 1, the first ones
// dropped from from on, as TTL drops them.
type memLog struct {
	mu     sync.Mutex
	events []storage.LoggedEvent
	from   int64
	// queries counts the calls of EventsAfter and EventLogHead.
	queries int
}

func (l *memLog) reads() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.queries
}

func (l *memLog) append(types ...storage.EventType) []storage.LoggedEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	var added []storage.LoggedEvent
	for _, t := range types {
		e := storage.LoggedEvent{Position: int64(len(l.events)) + 1, Event: storage.Event{ID: fmt.Sprint(len(l.events) + 1), Type: t}}
		l.events = append(l.events, e)
		added = append(added, e)
	}
	return added
}

func (l *memLog) EventsAfter(_ context.Context, after int64, limit int) ([]storage.LoggedEvent, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queries++
	var out []storage.LoggedEvent
	for _, e := range l.events {
		if e.Position > after && e.Position > l.from && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func (l *memLog) EventLogHead(context.Context) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queries++
	return int64(len(l.events)), nil
}

func all(storage.Event) bool { return true }

// positions returns the positions of the next n events of s.
func positions(t *testing.T, s *Sub, n int) []int64 {
	t.Helper()
	var got []int64
	for range n {
		e, err := s.Next(context.Background())
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		got = append(got, e.Position)
	}
	return got
}

func span(from, to int64) []int64 {
	var p []int64
	for i := from; i <= to; i++ {
		p = append(p, i)
	}
	return p
}

func TestReplayThenLiveGivesEveryEventOnceInOrderWithNoReadOfTheLog(t *testing.T) {
	log := &memLog{}
	hub := NewHub(log, Options{})
	log.append(slices.Repeat([]storage.EventType{storage.EventCommentAdded}, 150)...)
	if head, err := hub.Load(context.Background()); err != nil || head != 150 {
		t.Fatalf("Load: %d, %v", head, err)
	}
	// 50 events published after the load, one of them while a
	// subscription replays what came before.
	hub.Publish(log.append(slices.Repeat([]storage.EventType{storage.EventCommentAdded}, 50)...))
	reads := log.reads()
	s, err := hub.Subscribe(context.Background(), 10, all)
	if err != nil {
		t.Fatal(err)
	}
	hub.Publish(log.append(storage.EventCommentAdded, storage.EventCommentAdded))
	if got, want := positions(t, s, 192), span(11, 202); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if n := log.reads() - reads; n != 0 {
		t.Fatalf("the replay read the log %d times", n)
	}
}

func TestTheWindowKeepsTheLastEventsOnly(t *testing.T) {
	log := &memLog{}
	hub := NewHub(log, Options{Window: 3})
	log.append(storage.EventCommentAdded, storage.EventCommentAdded)
	if _, err := hub.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	hub.Publish(log.append(storage.EventCommentAdded, storage.EventCommentAdded))
	if first, last := hub.Window(); first != 1 || last != 4 {
		t.Fatalf("window (%d, %d], want (1, 4]", first, last)
	}
	ctx := context.Background()
	if _, err := hub.Subscribe(ctx, 0, all); !errors.Is(err, ErrExpired) {
		t.Fatalf("after 0: %v, want ErrExpired", err)
	}
	s, err := hub.Subscribe(ctx, 1, all)
	if err != nil {
		t.Fatal(err)
	}
	if got := positions(t, s, 3); !slices.Equal(got, span(2, 4)) {
		t.Fatalf("got %v", got)
	}
}

func TestACursorPastTheWindowWaitsForTheTail(t *testing.T) {
	log := &memLog{}
	hub := NewHub(log, Options{})
	if _, err := hub.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Another server's tail read 1 and 2 already: a client of it
	// resumes here after 2, before this server's tail read them.
	early := log.append(storage.EventCommentAdded, storage.EventCommentAdded)
	s, err := hub.Subscribe(context.Background(), 2, all)
	if err != nil {
		t.Fatal(err)
	}
	hub.Publish(early)
	hub.Publish(log.append(storage.EventCommentAdded))
	if got := positions(t, s, 1); !slices.Equal(got, []int64{3}) {
		t.Fatalf("got %v", got)
	}
}

func TestASubscriptionGetsOnlyTheEventsItTakes(t *testing.T) {
	log := &memLog{}
	hub := NewHub(log, Options{})
	log.append(storage.EventCommentAdded, storage.EventPostPublished, storage.EventCommentAdded)
	if _, err := hub.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, err := hub.Subscribe(context.Background(), 0, func(e storage.Event) bool { return e.Type == storage.EventPostPublished })
	if err != nil {
		t.Fatal(err)
	}
	hub.Publish(log.append(storage.EventCommentAdded, storage.EventPostPublished))
	if got := positions(t, s, 2); !slices.Equal(got, []int64{2, 5}) {
		t.Fatalf("got %v", got)
	}
}

// A subscriber whose queue is full takes the next events from the
// window, in order and each once, whatever runs of them the tail
// publishes, and is live again once it has taken them.
func TestASubscriberBehindTakesTheRestFromTheWindow(t *testing.T) {
	log := &memLog{}
	hub := NewHub(log, Options{QueueLength: 2})
	s, err := hub.Subscribe(context.Background(), -1, func(e storage.Event) bool { return e.Type == storage.EventCommentAdded })
	if err != nil {
		t.Fatal(err)
	}
	c, p := storage.EventCommentAdded, storage.EventPostPublished
	hub.Publish(log.append(c, p, c, c, p, c))
	hub.Publish(log.append(c, c, p))
	if got, want := positions(t, s, 3), []int64{1, 3, 4}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	hub.Publish(log.append(c))
	if got, want := positions(t, s, 4), []int64{6, 7, 8, 10}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if s.behind {
		t.Fatal("still behind at the window's end")
	}
	hub.Publish(log.append(c))
	if got := positions(t, s, 1); got[0] != 11 {
		t.Fatalf("live: got %v", got)
	}
}

// One that falls out of the window is ended, with what it had queued.
func TestASlowSubscriberIsEndedNotBuffered(t *testing.T) {
	log := &memLog{}
	hub := NewHub(log, Options{QueueLength: 2, Window: 4})
	s, err := hub.Subscribe(context.Background(), -1, all)
	if err != nil {
		t.Fatal(err)
	}
	hub.Publish(log.append(storage.EventCommentAdded, storage.EventCommentAdded, storage.EventCommentAdded))
	// The window drops 3, the first event it has not queued.
	hub.Publish(log.append(slices.Repeat([]storage.EventType{storage.EventCommentAdded}, 4)...))
	if len(s.queue) != 2 {
		t.Fatalf("queued %d events, want 2", len(s.queue))
	}
	if got := positions(t, s, 2); !slices.Equal(got, span(1, 2)) {
		t.Fatalf("got %v", got)
	}
	if _, err := s.Next(context.Background()); !errors.Is(err, ErrSlow) {
		t.Fatalf("got %v, want ErrSlow", err)
	}
	if n := hub.Subscribers(); n != 0 {
		t.Fatalf("%d subscribers left", n)
	}
}

func TestLoadStartsAfterWhatTheLogNoLongerHolds(t *testing.T) {
	log := &memLog{}
	hub := NewHub(log, Options{})
	log.append(storage.EventCommentAdded, storage.EventCommentAdded, storage.EventCommentAdded)
	log.from = 2 // 1 and 2 expired
	ctx := context.Background()
	if _, err := hub.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := hub.Subscribe(ctx, 0, all); !errors.Is(err, ErrExpired) {
		t.Errorf("after 0: %v, want ErrExpired", err)
	}
	if _, err := hub.Subscribe(ctx, 4, all); !errors.Is(err, ErrAhead) {
		t.Errorf("after 4: %v, want ErrAhead", err)
	}
	for _, after := range []int64{2, 3} {
		if _, err := hub.Subscribe(ctx, after, all); err != nil {
			t.Errorf("after %d: %v", after, err)
		}
	}
}

func TestAReplayIsNotCountedAgainstTheQueue(t *testing.T) {
	log := &memLog{}
	hub := NewHub(log, Options{QueueLength: 2})
	log.append(slices.Repeat([]storage.EventType{storage.EventCommentAdded}, 10)...)
	if _, err := hub.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, err := hub.Subscribe(context.Background(), 0, all)
	if err != nil {
		t.Fatal(err)
	}
	hub.Publish(log.append(storage.EventCommentAdded))
	if got := positions(t, s, 11); !slices.Equal(got, span(1, 11)) {
		t.Fatalf("got %v", got)
	}
}

func TestCloseEndsEverySubscription(t *testing.T) {
	log := &memLog{}
	hub := NewHub(log, Options{})
	s, err := hub.Subscribe(context.Background(), -1, all)
	if err != nil {
		t.Fatal(err)
	}
	hub.Publish(log.append(storage.EventCommentAdded))
	hub.Close()
	if got := positions(t, s, 1); got[0] != 1 {
		t.Fatalf("got %v", got)
	}
	if _, err := s.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("got %v, want ErrClosed", err)
	}
	if _, err := hub.Subscribe(context.Background(), -1, all); !errors.Is(err, ErrClosed) {
		t.Fatalf("a subscription after Close: %v", err)
	}
}
