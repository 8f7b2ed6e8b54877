package tests

import (
	"encoding/json"
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

// TestLiveWebSocketServesTheOlderGraphQLWSProtocol checks that a client
// of the older graphql-ws protocol (subscriptions-transport-ws) is still
// served: its connection_init is acknowledged.
func TestLiveWebSocketServesTheOlderGraphQLWSProtocol(t *testing.T) {
	s := newLiveServer(t)
	d := websocket.Dialer{Subprotocols: []string{"graphql-ws"}, HandshakeTimeout: waitLimit}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(s.url, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	equal(t, "subprotocol", resp.Header.Get("Sec-WebSocket-Protocol"), "graphql-ws")
	if err := conn.WriteJSON(map[string]any{"type": "connection_init"}); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(waitLimit))
	var m struct{ Type string }
	if err := conn.ReadJSON(&m); err != nil {
		t.Fatal(err)
	}
	equal(t, "answer", m.Type, "connection_ack")
}
