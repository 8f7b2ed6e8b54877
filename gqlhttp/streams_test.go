package gqlhttp

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func TestClientAddressCountsAnIPv6AddressBy64(t *testing.T) {
	for _, c := range []struct{ remote, want string }{
		{"192.0.2.7:4000", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:4000", "192.0.2.7"},
		{"[2001:db8:1:2:aaaa::1]:4000", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:bbbb::9]:4000", "2001:db8:1:2::/64"},
		{"[fe80::1%eth0]:4000", "fe80::/64"},
		{"not an address", "not an address"},
	} {
		if got := clientAddress(&http.Request{RemoteAddr: c.remote}); got != c.want {
			t.Errorf("%s: %q, want %q", c.remote, got, c.want)
		}
	}
}

// gateServer serves streams behind a gate of opts that stay open until
// the client leaves, each request from the address in its X-Remote
// header.
func gateServer(t *testing.T, opts *StreamOptions) string {
	t.Helper()
	stream := func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			c, err := (&websocket.Upgrader{}).Upgrade(hijacker{w}, r, nil)
			if err != nil {
				return
			}
			defer c.Close()
			_, _, _ = c.ReadMessage()
			return
		}
		w.Header().Set("Content-Type", mediaEventStream)
		w.WriteHeader(http.StatusOK)
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}
	gate := newStreamGate(opts).wrap(http.HandlerFunc(stream))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.RemoteAddr = r.Header.Get("X-Remote")
		gate.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// openSSE opens a stream from remote and returns its response, whose
// body the test closes at its end.
func openSSE(t *testing.T, url, remote string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", mediaEventStream)
	req.Header.Set("X-Remote", remote)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// refusal returns the code of a refused response's error.
func refusal(t *testing.T, resp *http.Response) string {
	t.Helper()
	var body struct {
		Errors []struct{ Extensions struct{ Code string } }
	}
	if err := json.NewDecoder(bufio.NewReader(resp.Body)).Decode(&body); err != nil || len(body.Errors) != 1 {
		t.Fatalf("status %d: %v %+v", resp.StatusCode, err, body)
	}
	return body.Errors[0].Extensions.Code
}

func TestTwoIPv6AddressesOfOne64ShareTheLimitOfAnAddress(t *testing.T) {
	url := gateServer(t, &StreamOptions{PerAddress: 1})
	if resp := openSSE(t, url, "[2001:db8:1:2::1]:4000"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the first stream: %d", resp.StatusCode)
	}
	resp := openSSE(t, url, "[2001:db8:1:2:ffff::2]:4001")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || refusal(t, resp) != CodeTooManyStreams {
		t.Fatalf("another address of the /64: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if resp := openSSE(t, url, "[2001:db8:1:3::1]:4000"); resp.StatusCode != http.StatusOK {
		t.Fatalf("an address of another /64: %d", resp.StatusCode)
	}
}

// gateObserver records what a gate reports.
type gateObserver struct {
	open    chan int
	refused chan string
}

func (o gateObserver) StreamsOpen(n int)           { o.open <- n }
func (o gateObserver) StreamRefused(reason string) { o.refused <- reason }

func TestTheServersLimitRefusesTheNextStreamOnBothProtocols(t *testing.T) {
	obs := gateObserver{open: make(chan int, 16), refused: make(chan string, 16)}
	url := gateServer(t, &StreamOptions{MaxStreams: 2, PerAddress: 10, Observe: obs})
	openSSE(t, url, "192.0.2.1:1")
	second := openSSE(t, url, "192.0.2.2:1")
	if second.StatusCode != http.StatusOK {
		t.Fatalf("the second stream: %d", second.StatusCode)
	}
	if got := []int{<-obs.open, <-obs.open}; got[1] != 2 {
		t.Fatalf("streams open: %v", got)
	}

	t.Run("SSE gets 503 with Retry-After", func(t *testing.T) {
		resp := openSSE(t, url, "192.0.2.3:1")
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != retryAfter {
			t.Fatalf("status %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		if code := refusal(t, resp); code != CodeUnavailable {
			t.Fatalf("code %s", code)
		}
		if r := <-obs.refused; r != RefusedServer {
			t.Fatalf("refused for %q", r)
		}
	})
	t.Run("a WebSocket is closed with 1013", func(t *testing.T) {
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 20 * time.Second}
		conn, resp, err := d.Dial("ws"+strings.TrimPrefix(url, "http"), http.Header{"X-Remote": {"192.0.2.4:1"}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if resp.Header.Get("Retry-After") != retryAfter {
			t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
		}
		_, _, err = conn.ReadMessage()
		ce, ok := err.(*websocket.CloseError)
		if !ok || ce.Code != closeTryAgainLater || !strings.HasPrefix(ce.Text, CodeUnavailable+":") {
			t.Fatalf("got %v, want a close with 1013 and %s", err, CodeUnavailable)
		}
		if r := <-obs.refused; r != RefusedServer {
			t.Fatalf("refused for %q", r)
		}
	})
	t.Run("a stream that ends makes room", func(t *testing.T) {
		second.Body.Close()
		if n := <-obs.open; n != 1 {
			t.Fatalf("streams open: %d", n)
		}
		if resp := openSSE(t, url, "192.0.2.5:1"); resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
}
