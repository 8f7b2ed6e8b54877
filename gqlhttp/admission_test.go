package gqlhttp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/admission"
)

// admissionSite is a server of two sites, /a and /b, whose GraphQL
// handlers share one admission gate, each site its own queue. Every
// request that reaches the executor says so on entered (its X-Name) and
// is held there until its name is sent on proceed.
type admissionSite struct {
	t       *testing.T
	gate    *admission.Gate
	url     string
	entered chan string
	proceed map[string]chan struct{}
}

func newAdmissionSite(t *testing.T, slots, queue int, timeout time.Duration) *admissionSite {
	s := &admissionSite{t: t, gate: admission.New(slots, queue, 0), entered: make(chan string, 16), proceed: map[string]chan struct{}{}}
	for _, name := range []string{"A1", "A2", "A3", "A4", "B1"} {
		s.proceed[name] = make(chan struct{})
	}
	hold := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			name := r.Header.Get("X-Name")
			s.entered <- name
			<-s.proceed[name]
			next.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	for _, key := range []string{"a", "b"} {
		mux.Handle("/"+key, New(newTestSchema(), Options{
			ComplexityLimit: testComplexityLimit, RequestTimeout: timeout,
			Admission: s.gate, AdmissionKey: key, Wrap: hold,
		}))
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// reply is what a client got.
type reply struct {
	status int
	retry  string
	code   string // extensions.code of the first error
	err    error
}

// send posts { hello } as name to the site of key, with ctx, and returns
// a channel of its answer.
func (s *admissionSite) send(ctx context.Context, key, name string) <-chan reply {
	out := make(chan reply, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/"+key, strings.NewReader(`{"query":"{ hello }"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Name", name)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out <- reply{err: err}
			return
		}
		defer resp.Body.Close()
		var body struct {
			Errors []struct {
				Extensions map[string]any `json:"extensions"`
			} `json:"errors"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		a := reply{status: resp.StatusCode, retry: resp.Header.Get("Retry-After")}
		if len(body.Errors) > 0 {
			a.code, _ = body.Errors[0].Extensions["code"].(string)
		}
		out <- a
	}()
	return out
}

// waitFor returns once key's queue holds n requests.
func (s *admissionSite) waitFor(key string, n int) {
	s.t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for s.gate.Waiting(key) != n {
		<-tick.C
	}
}

// next returns the name of the next request that reached the executor.
func (s *admissionSite) next() string {
	return <-s.entered
}

func (s *admissionSite) ok(name string, got <-chan reply) {
	s.t.Helper()
	if a := <-got; a.err != nil || a.status != http.StatusOK || a.code != "" {
		s.t.Errorf("%s: %+v, want 200 without errors", name, a)
	}
}

// TestAdmissionTakesPublicationsInTurn: with one slot, held by A1, A2
// and A3 waiting in a's queue and then B1 in b's, the slot A1 gives back
// goes to B1, the request of the site with none running, before A2 and
// A3, which then run in the order they came.
func TestAdmissionTakesPublicationsInTurn(t *testing.T) {
	s := newAdmissionSite(t, 1, 4, time.Minute)
	ctx := context.Background()
	a1 := s.send(ctx, "a", "A1")
	if got := s.next(); got != "A1" {
		t.Fatalf("first to run: %s, want A1", got)
	}
	a2 := s.send(ctx, "a", "A2")
	s.waitFor("a", 1)
	a3 := s.send(ctx, "a", "A3")
	s.waitFor("a", 2)
	b1 := s.send(ctx, "b", "B1")
	s.waitFor("b", 1)
	for _, want := range []string{"B1", "A2", "A3"} {
		prev := map[string]string{"B1": "A1", "A2": "B1", "A3": "A2"}[want]
		close(s.proceed[prev])
		if got := s.next(); got != want {
			t.Fatalf("after %s: %s ran, want %s", prev, got, want)
		}
	}
	close(s.proceed["A3"])
	for name, got := range map[string]<-chan reply{"A1": a1, "A2": a2, "A3": a3, "B1": b1} {
		s.ok(name, got)
	}
	if n := s.gate.Held(); n != 0 {
		t.Errorf("the gate holds %d sites after every request ended, want 0", n)
	}
}

// TestAdmissionQueueLeftOnCancel: a request whose client goes away while
// it waits leaves its queue and never runs; the slot goes to the next.
func TestAdmissionQueueLeftOnCancel(t *testing.T) {
	s := newAdmissionSite(t, 1, 4, time.Minute)
	a1 := s.send(context.Background(), "a", "A1")
	s.next()
	ctx, cancel := context.WithCancel(context.Background())
	a2 := s.send(ctx, "a", "A2")
	s.waitFor("a", 1)
	cancel()
	if a := <-a2; a.err == nil {
		t.Errorf("A2 cancelled in the queue was answered: %+v", a)
	}
	s.waitFor("a", 0)
	a3 := s.send(context.Background(), "a", "A3")
	s.waitFor("a", 1)
	close(s.proceed["A1"])
	if got := s.next(); got != "A3" {
		t.Fatalf("after A1: %s ran, want A3", got)
	}
	close(s.proceed["A3"])
	s.ok("A1", a1)
	s.ok("A3", a3)
}

// TestAdmissionRefusals: past its queue's bound, or past its time limit
// in the queue, a request is answered 503 SERVER_BUSY with Retry-After,
// and never runs; another site's queue is its own.
func TestAdmissionRefusals(t *testing.T) {
	s := newAdmissionSite(t, 1, 1, time.Minute)
	ctx := context.Background()
	a1 := s.send(ctx, "a", "A1")
	s.next()
	a2 := s.send(ctx, "a", "A2")
	s.waitFor("a", 1)
	for _, name := range []string{"A3", "A4"} {
		if a := <-s.send(ctx, "a", name); a.status != http.StatusServiceUnavailable || a.code != CodeServerBusy || a.retry != "1" {
			t.Errorf("%s past a full queue: %+v, want 503 SERVER_BUSY with Retry-After 1", name, a)
		}
	}
	b1 := s.send(ctx, "b", "B1")
	s.waitFor("b", 1)

	// A site whose requests have 1 ms to run: its request waits in the
	// queue past its time limit, since the slot is held until A1 goes.
	short := New(newTestSchema(), Options{ComplexityLimit: testComplexityLimit, RequestTimeout: time.Millisecond, Admission: s.gate, AdmissionKey: "t"})
	srv := httptest.NewServer(short)
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"query":"{ hello }"}`))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Errors []struct {
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != CodeServerBusy {
		t.Errorf("a request past its time limit in the queue: %d %+v, want 503 SERVER_BUSY", resp.StatusCode, body.Errors)
	}
	if n := s.gate.Waiting("t"); n != 0 {
		t.Errorf("%d requests past their time limit still wait", n)
	}

	close(s.proceed["A1"])
	for _, want := range []string{"B1", "A2"} {
		if got := s.next(); got != want {
			t.Fatalf("%s ran, want %s", got, want)
		}
		close(s.proceed[want])
	}
	for name, got := range map[string]<-chan reply{"A1": a1, "A2": a2, "B1": b1} {
		s.ok(name, got)
	}
}

// TestAdmissionLeavesStreamsOut: a stream held open takes no slot, so
// with the only slot free and no queue a request still runs beside it.
func TestAdmissionLeavesStreamsOut(t *testing.T) {
	gate := admission.New(1, 0, 0)
	entered, proceed := make(chan string, 2), make(chan struct{})
	h := New(newTestSchema(), Options{
		ComplexityLimit: testComplexityLimit, Admission: gate, AdmissionKey: "a",
		Streams: &StreamOptions{PerAddress: 10},
		Wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				name := r.Header.Get("X-Name")
				entered <- name
				if name == "stream" {
					<-proceed
				}
				next.ServeHTTP(w, r)
			})
		},
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	stream := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"query":"{ hello }"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", mediaEventStream)
		req.Header.Set("X-Name", "stream")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		stream <- err
	}()
	if got := <-entered; got != "stream" {
		t.Fatalf("%s reached the executor, want the stream", got)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"query":"{ hello }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Name", "query")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a query beside an open stream: %d, want 200", resp.StatusCode)
	}
	close(proceed)
	if err := <-stream; err != nil {
		t.Errorf("the stream: %v", err)
	}
}
