package gqlhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// GraphQL over WebSocket, the graphql-transport-ws protocol (the npm
// graphql-ws client's), served with the subscriptions' answers pushed
// (push.go): an idle connection holds one goroutine, its reader, and
// timers. It is the only WebSocket protocol served: the older graphql-ws
// protocol (subscriptions-transport-ws, unmaintained, Apollo Client's
// deprecated WebSocketLink) has no client of this API (the playground
// and the TypeScript client subscribe over SSE, graphql-ws's client
// speaks graphql-transport-ws), and a handshake that does not offer
// graphql-transport-ws is refused.
//
// The protocol: the client sends connection_init within initTimeout
// (else 4408), whose payload InitFunc checks (refused: 4403, with its
// reason); a second one closes with 4429. The server answers
// connection_ack; then subscribe (before the ack: 4401; an id in use:
// 4409) starts an operation whose answers are next messages, ended by
// complete, or by one error message when the operation could not start.
// A client's complete stops its operation. Both sides may ping; the
// server pings every keepAlive and closes a connection that sent nothing
// for twice that. A message the protocol does not know closes with 4400.

const subprotocolTransportWS = "graphql-transport-ws"

// Close codes of graphql-transport-ws.
const (
	closeInvalidMessage    = 4400
	closeUnauthorized      = 4401
	closeInitTimeout       = 4408
	closeSubscriberExists  = 4409
	closeTooManyInitialise = 4429
)

const (
	// websocketReadLimit bounds a client's message.
	websocketReadLimit = 1 << 20
	// websocketWriteTimeout bounds a write: a client that does not read
	// is closed, not waited for.
	websocketWriteTimeout = 10 * time.Second
)

// websocketTransport serves graphql-transport-ws.
type websocketTransport struct {
	initFunc  func(ctx context.Context, payload map[string]any) (context.Context, error)
	keepAlive time.Duration
	shutdown  <-chan struct{}
}

var _ graphql.Transport = websocketTransport{}

// Supports takes the WebSocket handshakes that offer graphql-transport-ws.
func (websocketTransport) Supports(r *http.Request) bool {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return false
	}
	for _, p := range websocket.Subprotocols(r) {
		if p == subprotocolTransportWS {
			return true
		}
	}
	return false
}

func (t websocketTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	up := websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		Subprotocols:     []string{subprotocolTransportWS},
		// The gate checked the origin.
		CheckOrigin: func(*http.Request) bool { return true },
		// A connection takes a write buffer while it writes a message
		// and gives it back: an idle one holds none.
		WriteBufferPool: writeBuffers,
	}
	conn, err := up.Upgrade(hijacker{w}, r, nil)
	if err != nil {
		return // Upgrade answered the request
	}
	conn.SetReadLimit(websocketReadLimit)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	c := &wsConnection{t: t, conn: conn, exec: exec, headers: r.Header, ctx: ctx, ops: map[string]*wsOperation{}}
	// The stream's end (the client's, the idle timeout, a shutdown's
	// grace) closes the connection.
	stop := context.AfterFunc(ctx, func() { c.close(websocket.CloseNormalClosure, "terminated") })
	defer stop()
	c.serve()
}

// wsConnection is one graphql-transport-ws connection.
type wsConnection struct {
	t       websocketTransport
	conn    *websocket.Conn
	exec    graphql.GraphExecutor
	headers http.Header
	// ctx is the connection's: the request's, then connection_init's.
	// Only the reader changes it.
	ctx context.Context

	writeMu sync.Mutex

	mu sync.Mutex
	// initialised once connection_init came; acked once it was accepted.
	initialised, acked bool
	// alive is set by every message, and cleared by every ping sent.
	alive  bool
	closed bool
	ops    map[string]*wsOperation
}

// wsOperation is a running operation of a connection.
type wsOperation struct{ cancel context.CancelFunc }

type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// serve reads the client's messages until the connection ends.
func (c *wsConnection) serve() {
	initTimer := time.AfterFunc(initTimeout, func() {
		c.mu.Lock()
		initialised := c.initialised
		c.mu.Unlock()
		if !initialised {
			c.close(closeInitTimeout, "Connection initialisation timeout")
		}
	})
	defer initTimer.Stop()
	for {
		_, data, err := c.conn.ReadMessage()
		if err != nil {
			c.close(websocket.CloseNormalClosure, "terminated")
			return
		}
		var m wsMessage
		if err := json.Unmarshal(data, &m); err != nil {
			c.close(closeInvalidMessage, "Invalid message received")
			return
		}
		c.mu.Lock()
		c.alive = true
		initialised, acked := c.initialised, c.acked
		c.mu.Unlock()
		switch m.Type {
		case "connection_init":
			if initialised {
				c.close(closeTooManyInitialise, "Too many initialisation requests")
				return
			}
			if !c.init(m.Payload) {
				return
			}
		case "ping":
			c.write(wsMessage{Type: "pong", Payload: m.Payload})
		case "pong":
		case "subscribe":
			if !acked {
				c.close(closeUnauthorized, "Unauthorized")
				return
			}
			if m.ID == "" {
				c.close(closeInvalidMessage, "Invalid message received")
				return
			}
			if !c.start(m.ID, m.Payload) {
				c.close(closeSubscriberExists, "Subscriber for "+m.ID+" already exists")
				return
			}
		case "complete":
			c.mu.Lock()
			op := c.ops[m.ID]
			delete(c.ops, m.ID)
			c.mu.Unlock()
			if op != nil {
				op.cancel()
			}
		default:
			c.close(closeInvalidMessage, "Invalid message received")
			return
		}
	}
}

// init accepts connection_init with payload, or closes the connection;
// then it pings every keepAlive.
func (c *wsConnection) init(payload json.RawMessage) bool {
	c.mu.Lock()
	c.initialised = true
	c.mu.Unlock()
	var p map[string]any
	if len(payload) > 0 && !bytes.Equal(payload, []byte("null")) {
		if err := json.Unmarshal(payload, &p); err != nil {
			c.close(closeInvalidMessage, "Invalid message received")
			return false
		}
	}
	if c.t.initFunc != nil {
		ctx, err := c.t.initFunc(c.ctx, p)
		if err != nil {
			reason := err.Error()
			if len(reason) > 120 { // a close frame's reason is at most 123 bytes
				reason = reason[:120]
			}
			c.close(closeForbidden, reason)
			return false
		}
		c.ctx = ctx
	}
	c.mu.Lock()
	c.acked = true
	c.mu.Unlock()
	c.write(wsMessage{Type: "connection_ack"})
	if c.t.keepAlive > 0 {
		_ = c.conn.SetReadDeadline(time.Now().Add(2 * c.t.keepAlive))
		var ping *time.Timer
		ping = time.AfterFunc(c.t.keepAlive, func() {
			c.mu.Lock()
			closed, alive := c.closed, c.alive
			c.alive = false
			c.mu.Unlock()
			if closed {
				return
			}
			if alive {
				_ = c.conn.SetReadDeadline(time.Now().Add(2 * c.t.keepAlive))
			}
			c.write(wsMessage{Type: "ping"})
			ping.Reset(c.t.keepAlive)
		})
		context.AfterFunc(c.ctx, func() { ping.Stop() })
	}
	return true
}

// start starts the operation id; false when one with the id runs.
func (c *wsConnection) start(id string, payload json.RawMessage) bool {
	ctx, cancel := context.WithCancel(c.ctx)
	op := &wsOperation{cancel: cancel}
	c.mu.Lock()
	if _, ok := c.ops[id]; ok || c.closed {
		c.mu.Unlock()
		cancel()
		return c.closed
	}
	c.ops[id] = op
	c.mu.Unlock()
	// The operation starts in a goroutine of its own, so that the
	// reader's stack stays what reading takes.
	go c.run(ctx, op, id, payload)
	return true
}

// run runs the operation id: its answers as they come, or as its
// resolver announces them.
func (c *wsConnection) run(ctx context.Context, op *wsOperation, id string, payload json.RawMessage) {
	defer func() {
		if v := recover(); v != nil {
			logPanic(v)
			c.close(websocket.CloseInternalServerErr, "internal error")
		}
	}()
	start := graphql.Now()
	ctx = graphql.StartOperationTrace(ctx)
	var params graphql.RawParams
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&params); err != nil {
		c.sendError(id, op, &gqlerror.Error{Message: "invalid json"})
		return
	}
	params.Headers = c.headers
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	rc, errs := c.exec.CreateOperationContext(ctx, &params)
	if errs != nil {
		resp := c.exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs)
		if errcode.GetErrorKind(errs) == errcode.KindProtocol {
			c.sendError(id, op, resp.Errors...)
			return
		}
		c.next(id, &graphql.Response{Errors: errs})
		c.end(id, op, true)
		return
	}
	ctx = graphql.WithOperationContext(ctx, rc)
	defer func() {
		if r := recover(); r != nil {
			err := rc.Recover(ctx, r)
			gqlErr, ok := err.(*gqlerror.Error)
			if !ok {
				gqlErr = &gqlerror.Error{Message: fmt.Sprint(err)}
			}
			c.sendError(id, op, gqlErr)
		}
	}()
	ctx, p, push := withPush(ctx)
	responses, ctx := c.exec.DispatchOperation(ctx, rc)
	if push.used.Load() {
		p.send = func(resp *graphql.Response) bool { return c.next(id, resp) }
		p.end = func(bool) { c.end(id, op, true) }
		context.AfterFunc(ctx, p.announce)
		p.start(ctx, responses)
		return
	}
	for {
		resp := responses(ctx)
		if resp == nil {
			break
		}
		c.next(id, resp)
	}
	c.end(id, op, true)
}

// end ends the operation id, with complete when complete is true and the
// client has not completed it itself.
func (c *wsConnection) end(id string, op *wsOperation, complete bool) {
	c.mu.Lock()
	running := c.ops[id] == op
	if running {
		delete(c.ops, id)
	}
	c.mu.Unlock()
	op.cancel()
	if running && complete {
		c.write(wsMessage{ID: id, Type: "complete"})
	}
}

// next sends resp as a next message; false once the connection failed.
func (c *wsConnection) next(id string, resp *graphql.Response) bool {
	b, err := json.Marshal(resp)
	if err != nil {
		panic(err)
	}
	return c.write(wsMessage{ID: id, Type: "next", Payload: b})
}

// sendError ends the operation id with an error message.
func (c *wsConnection) sendError(id string, op *wsOperation, errs ...*gqlerror.Error) {
	b, err := json.Marshal(errs)
	if err != nil {
		panic(err)
	}
	c.write(wsMessage{ID: id, Type: "error", Payload: b})
	c.end(id, op, false)
}

// write writes m; false once the connection failed.
func (c *wsConnection) write(m wsMessage) bool {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(websocketWriteTimeout))
	if err := c.conn.WriteJSON(m); err != nil {
		go c.close(websocket.CloseNormalClosure, "terminated")
		return false
	}
	return true
}

// close closes the connection, once, with code and reason (while the
// server shuts down, with 1012 whatever they are), and stops its
// operations.
func (c *wsConnection) close(code int, reason string) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	ops := c.ops
	c.ops = map[string]*wsOperation{}
	c.mu.Unlock()
	for _, op := range ops {
		op.cancel()
	}
	select {
	case <-c.t.shutdown:
		code, reason = closeServiceRestart, "the server is restarting: reconnect, resume with the last cursor"
	default:
	}
	_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
	_ = c.conn.Close()
}
