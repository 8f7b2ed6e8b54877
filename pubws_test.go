package main

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// wsInit opens a graphql-transport-ws connection to base's /graphql
// addressed to host, sends connection_init with authorization in its
// payload (none when empty) and returns 0 when the server acknowledged
// it, else the close code it answered with.
func wsInit(t *testing.T, base, host, authorization string) int {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: time.Minute}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/graphql", http.Header{"Host": {host}})
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("%s: handshake: %v (status %d)", host, err, status)
	}
	defer conn.Close()
	payload := map[string]any{}
	if authorization != "" {
		payload["Authorization"] = strings.TrimPrefix(authorization, "Authorization: ")
	}
	if err := conn.WriteJSON(map[string]any{"type": "connection_init", "payload": payload}); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	var ack struct{ Type string }
	err = conn.ReadJSON(&ack)
	var ce *websocket.CloseError
	switch {
	case errors.As(err, &ce):
		return ce.Code
	case err != nil:
		t.Fatalf("%s: connection_init: %v", host, err)
	case ack.Type != "connection_ack":
		t.Fatalf("%s: connection_init answered %q", host, ack.Type)
	}
	return 0
}

// TestSubscriptionsRefuseTokensOfAnotherPublication: a WebSocket
// connection that signs in with connection_init is refused (4403) on A's
// host with a reader session made on B and with a staff token bound to
// B, as an HTTP request with them is (FORBIDDEN), and accepted on B's.
func TestSubscriptionsRefuseTokensOfAnotherPublication(t *testing.T) {
	env := map[string]string{"JWT_SECRET": platformSecret, "DATA_DIR": t.TempDir()}
	base, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json"}, env)
	defer stop()
	p := port(t, base)
	type host struct{ name, addr string }
	type credential struct{ what, auth string }
	a, b := host{"A", "localhost:" + p}, host{"B", "notes.localhost:" + p}
	// refused checks that each credential (what, auth) made on home is
	// refused on other, over HTTP and with connection_init, and that
	// connection_init with it is acknowledged on home.
	refused := func(home, other host, creds ...credential) {
		t.Helper()
		for _, c := range creds {
			if code, body := graphQLAt(t, base, other.addr, `{ account { email } }`, c.auth); errorCode(body) != "FORBIDDEN" {
				t.Errorf("%s: HTTP with %s = %d %.300s, want FORBIDDEN", other.name, c.what, code, body)
			}
			if code := wsInit(t, base, other.addr, c.auth); code != 4403 {
				t.Errorf("%s: connection_init with %s = close %d, want 4403", other.name, c.what, code)
			}
			if code := wsInit(t, base, home.addr, c.auth); code != 0 {
				t.Errorf("%s: connection_init with %s = close %d, want it acknowledged", home.name, c.what, code)
			}
		}
	}
	tok := newPubsiteTokens(t)
	session, _ := signInAt(t, base, b.addr, "http://"+b.addr+"/welcome", "hiker@example.com", tok)
	refused(b, a,
		credential{"B's reader session", session},
		credential{"B's owner token", tok.ownerB})
	sessionA, _ := signInAt(t, base, a.addr, "http://"+a.addr+"/welcome", "hiker@example.com", tok)
	refused(a, b,
		credential{"A's reader session", sessionA},
		credential{"A's admin token", tok.adminA})
}
