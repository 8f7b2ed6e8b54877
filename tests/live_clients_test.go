package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Idle subscribers in a process of their own: TestLiveFigures starts this
// test binary again to run TestLiveClients, which opens the subscriptions
// and reports on its standard output, so that the server's process holds
// the server's side of each subscriber and nothing else.

// Lines TestLiveClients writes, and the environment that starts it.
const (
	clientsOpen     = "liveclients: open"
	clientsReceived = "liveclients: received"
	clientsEnvURL   = "LIVE_CLIENTS_URL"
	clientsEnvN     = "LIVE_CLIENTS_N"
	clientsEnvPost  = "LIVE_CLIENTS_POST"
	clientsEnvWS    = "LIVE_CLIENTS_WEBSOCKET"
)

// TestLiveClients is the clients' process of TestLiveFigures: it opens
// LIVE_CLIENTS_N commentAdded subscriptions to LIVE_CLIENTS_POST on the
// server at LIVE_CLIENTS_URL (over WebSocket when LIVE_CLIENTS_WEBSOCKET
// is set, else SSE), writes clientsOpen once all are open, clientsReceived
// once each has received one event, and ends when its standard input
// closes. Without LIVE_CLIENTS_URL it is skipped.
func TestLiveClients(t *testing.T) {
	base := os.Getenv(clientsEnvURL)
	if base == "" {
		t.Skip("the clients' process of TestLiveFigures")
	}
	n, err := strconv.Atoi(os.Getenv(clientsEnvN))
	if err != nil {
		t.Fatal(err)
	}
	post := os.Getenv(clientsEnvPost)
	ws := os.Getenv(clientsEnvWS) != ""
	var received sync.WaitGroup
	received.Add(n)
	var failed atomic.Int32
	open := func() error {
		var first sync.Once
		got := func() { first.Do(received.Done) }
		if ws {
			return openWebsocketClient(base, post, got)
		}
		return openSSEClient(base, post, got)
	}
	// A few dials at a time: the listener's backlog is bounded.
	work := make(chan struct{})
	var opened sync.WaitGroup
	for range 32 {
		go func() {
			for range work {
				if err := open(); err != nil {
					if failed.Add(1) == 1 {
						fmt.Fprintln(os.Stderr, "liveclients:", err)
					}
					received.Done()
				}
				opened.Done()
			}
		}()
	}
	opened.Add(n)
	for range n {
		work <- struct{}{}
	}
	close(work)
	opened.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d subscriptions failed", failed.Load())
	}
	fmt.Println(clientsOpen)
	received.Wait()
	fmt.Println(clientsReceived)
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// openSSEClient posts a commentAdded subscription and reads its events
// in a goroutine, calling got for each.
func openSSEClient(base, post string, got func()) error {
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{"query": commentAddedQuery, "variables": map[string]any{"post": post}})
	req, _ := http.NewRequest(http.MethodPost, base, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if err := req.Write(conn); err != nil {
		conn.Close()
		return err
	}
	br := bufio.NewReaderSize(conn, 1024)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return err
	}
	if resp.StatusCode != http.StatusOK {
		conn.Close()
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	go func() {
		defer conn.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if os.Getenv("LIVE_CLIENTS_DEBUG") != "" {
				fmt.Fprintln(os.Stderr, sc.Text())
			}
			if sc.Text() == "event: next" {
				got()
			}
		}
	}()
	return nil
}

// openWebsocketClient opens a graphql-transport-ws connection with one
// commentAdded subscription, and reads its messages in a goroutine,
// answering pings and calling got for each next.
func openWebsocketClient(base, post string, got func()) error {
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: waitLimit, ReadBufferSize: 1024, WriteBufferSize: 1024}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(base, "http"), nil)
	if err != nil {
		return err
	}
	var m struct {
		Type string `json:"type"`
	}
	_ = conn.SetReadDeadline(time.Now().Add(waitLimit))
	if err := conn.WriteJSON(map[string]any{"type": "connection_init"}); err != nil {
		conn.Close()
		return err
	}
	if err := conn.ReadJSON(&m); err != nil || m.Type != "connection_ack" {
		conn.Close()
		return fmt.Errorf("connection_init: %q, %v", m.Type, err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	sub := map[string]any{"type": "subscribe", "id": "1", "payload": map[string]any{"query": commentAddedQuery, "variables": map[string]any{"post": post}}}
	if err := conn.WriteJSON(sub); err != nil {
		conn.Close()
		return err
	}
	go func() {
		defer conn.Close()
		for {
			if err := conn.ReadJSON(&m); err != nil {
				return
			}
			switch m.Type {
			case "ping":
				_ = conn.WriteJSON(map[string]any{"type": "pong"})
			case "next":
				got()
			}
		}
	}()
	return nil
}

// clientsProcess is a running TestLiveClients.
type clientsProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
}

// startClients starts TestLiveClients with n subscriptions to post on
// the server at base, and returns once they are open.
func startClients(t *testing.T, base, post string, n int, websocket bool) *clientsProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLiveClients$", "-test.count=1")
	cmd.Env = append(os.Environ(), clientsEnvURL+"="+base, clientsEnvN+"="+strconv.Itoa(n), clientsEnvPost+"="+post)
	if websocket {
		cmd.Env = append(cmd.Env, clientsEnvWS+"=1")
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &clientsProcess{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}
	t.Cleanup(c.stop)
	c.wait(t, clientsOpen)
	return c
}

// wait reads the clients' output up to line.
func (c *clientsProcess) wait(t *testing.T, line string) {
	t.Helper()
	for c.lines.Scan() {
		if c.lines.Text() == line {
			return
		}
	}
	t.Fatalf("the clients' process ended before %q", line)
}

// stop ends the clients' process, which closes its connections.
func (c *clientsProcess) stop() {
	if c.stdin != nil {
		c.stdin.Close()
		c.stdin = nil
		_ = c.cmd.Wait()
	}
}
