package tests

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestLiveWebSocketProtocolErrorsCloseWithItsCodes sends what the
// graphql-transport-ws protocol forbids and checks that the connection
// closes with the code the protocol gives it.
func TestLiveWebSocketProtocolErrorsCloseWithItsCodes(t *testing.T) {
	s := newLiveServer(t)
	_, post := s.livePost(t)
	subscribe := func(id string) map[string]any {
		return map[string]any{"type": "subscribe", "id": id, "payload": map[string]any{"query": commentAddedQuery, "variables": map[string]any{"post": post}}}
	}
	initMsg := map[string]any{"type": "connection_init"}
	for _, c := range []struct {
		name string
		send []any
		code int
	}{
		{"a subscribe before connection_init", []any{subscribe("1")}, 4401},
		{"a second connection_init", []any{initMsg, initMsg}, 4429},
		{"a subscribe with an id in use", []any{initMsg, subscribe("1"), subscribe("1")}, 4409},
		{"a message of no type the protocol knows", []any{initMsg, map[string]any{"type": "start", "id": "1"}}, 4400},
		{"a message that is not JSON", []any{initMsg, "{"}, 4400},
	} {
		t.Run(c.name, func(t *testing.T) {
			equal(t, "close code", closeCodeAfter(t, s, c.send), c.code)
		})
	}
}

// closeCodeAfter opens a graphql-transport-ws connection, sends msgs (a
// string as it is) and returns the code the server closes it with.
func closeCodeAfter(t *testing.T, s *liveServer, msgs []any) int {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: waitLimit}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(s.url, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, m := range msgs {
		b, ok := m.(string)
		if !ok {
			j, _ := json.Marshal(m)
			b = string(j)
		}
		if err := conn.WriteMessage(websocket.TextMessage, []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	_ = conn.SetReadDeadline(time.Now().Add(waitLimit))
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if !asCloseError(err, &ce) {
				t.Fatalf("got %v, want a close frame", err)
			}
			return ce.Code
		}
	}
}

// TestLiveWebSocketRefusesTheOlderGraphQLWSProtocol: a handshake that
// offers only the older graphql-ws protocol (subscriptions-transport-ws),
// which no client of this API speaks, is refused with 400; one that also
// offers graphql-transport-ws gets that.
func TestLiveWebSocketRefusesTheOlderGraphQLWSProtocol(t *testing.T) {
	s := newLiveServer(t)
	url := "ws" + strings.TrimPrefix(s.url, "http")
	d := websocket.Dialer{Subprotocols: []string{"graphql-ws"}, HandshakeTimeout: waitLimit}
	conn, resp, err := d.Dial(url, nil)
	if err == nil {
		conn.Close()
		t.Fatal("a handshake offering only graphql-ws was accepted")
	}
	if resp == nil {
		t.Fatal(err)
	}
	equal(t, "status", resp.StatusCode, http.StatusBadRequest)

	d.Subprotocols = []string{"graphql-ws", "graphql-transport-ws"}
	conn, resp, err = d.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	equal(t, "subprotocol", resp.Header.Get("Sec-WebSocket-Protocol"), "graphql-transport-ws")
}
