package gqlhttp

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Streams: subscriptions over GraphQL over WebSocket (the
// graphql-transport-ws protocol, websocket.go) and GraphQL over
// Server-Sent Events (sse.go). A
// stream outlives the request timeout and the server's read and write
// timeouts; keepalives find dead peers instead.

// Defaults of StreamOptions.
const (
	DefaultStreamsPerAddress = 20
	DefaultKeepAlive         = 25 * time.Second
	DefaultIdleTimeout       = 5 * time.Minute
	// initTimeout is how long a WebSocket connection may take to send
	// connection_init.
	initTimeout = 10 * time.Second
	// shutdownGrace is how long a stream has, once Shutdown is closed,
	// to send its last answers before it is closed.
	shutdownGrace = 500 * time.Millisecond
)

// Codes of refused streams.
const (
	// CodeTooManyStreams refuses a stream past the streams of one
	// client address (StreamOptions.PerAddress).
	CodeTooManyStreams = "TOO_MANY_CONNECTIONS"
	// CodeUnavailable refuses a stream past the streams of the server
	// (StreamOptions.MaxStreams).
	CodeUnavailable = "UNAVAILABLE"
	CodeForbidden   = "FORBIDDEN"
)

// retryAfter is the Retry-After, in seconds, of a refused stream.
const retryAfter = "10"

// Why a stream was refused, as StreamObserver.StreamRefused names it.
const (
	RefusedAddress = "address"
	RefusedServer  = "server"
)

// StreamObserver receives what the gate of streams does: the streams
// open after each one opens or ends, and each refusal with its reason
// (RefusedAddress or RefusedServer).
type StreamObserver interface {
	StreamsOpen(n int)
	StreamRefused(reason string)
}

// Close codes of WebSocket connections.
const (
	// closeForbidden closes a connection whose connection_init's token
	// is refused (graphql-transport-ws).
	closeForbidden = 4403
	// closeServiceRestart closes every connection when the server shuts
	// down (RFC 6455): clients reconnect, to another server.
	closeServiceRestart = 1012
	// closeTryAgainLater closes a connection past the limits of streams
	// (RFC 6455's registry): graphql-ws's client retries it with its
	// back-off, where its own 4429 (too many connection_init) is final
	// to it, and a browser sees no handshake's status.
	closeTryAgainLater = 1013
)

// StreamOptions configure the streams of subscriptions.
type StreamOptions struct {
	// InitFunc gets the payload of a WebSocket connection's
	// connection_init and returns the connection's context (the actor of
	// the token it carries); an error closes the connection with 4403 and
	// its message. Nil accepts every payload.
	InitFunc func(ctx context.Context, payload map[string]any) (context.Context, error)
	// CheckOrigin reports whether a WebSocket handshake may come from a
	// page of r's Origin; refused ones get 403. Nil allows requests
	// without an Origin and those from the request's own host.
	CheckOrigin func(r *http.Request) bool
	// PerAddress bounds the streams (WebSocket connections and SSE
	// responses) open at once from one client address, an IPv6 address's
	// /64 counted as one; past it an SSE request gets 429
	// TOO_MANY_CONNECTIONS, a WebSocket is closed with 1013. Zero means
	// DefaultStreamsPerAddress.
	PerAddress int
	// MaxStreams bounds the streams open at once on the server, from
	// every address; past it an SSE request gets 503 UNAVAILABLE, a
	// WebSocket is closed with 1013. Zero means no bound.
	MaxStreams int
	// Observe, when set, gets the streams open and the refusals.
	Observe StreamObserver
	// KeepAlive is how often a stream with nothing to send gets a ping
	// (WebSocket: graphql-transport-ws's ping, a peer that does not answer
	// in twice this is closed; SSE: a comment line). Zero means
	// DefaultKeepAlive.
	KeepAlive time.Duration
	// ResumeVariable names the variable an SSE request's Last-Event-ID
	// header sets: a browser's EventSource resumes after the last event
	// id it received. Empty: the header is ignored.
	ResumeVariable string
	// Shutdown, when closed, ends every stream: WebSocket connections
	// are closed with 1012 (service restart), SSE responses end.
	Shutdown <-chan struct{}
	// Running, when set, holds one for each stream served apart from the
	// server's goroutine of its connection (an HTTP/1 stream, the
	// server's http.Server.Shutdown does not wait for it), until it ends:
	// a server waits for it after Shutdown is closed.
	Running *sync.WaitGroup
	// IdleTimeout closes a WebSocket connection that has held no
	// operation for this long; zero means DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// isStream reports whether r asks for a stream: a WebSocket handshake, or
// an answer in text/event-stream.
func isStream(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") ||
		strings.Contains(r.Header.Get("Accept"), mediaEventStream)
}

// streamTransports returns the transports of opts' streams.
func streamTransports(opts *StreamOptions) []graphql.Transport {
	keepAlive := opts.KeepAlive
	if keepAlive <= 0 {
		keepAlive = DefaultKeepAlive
	}
	wsPushed := websocketTransport{initFunc: opts.InitFunc, keepAlive: keepAlive, shutdown: opts.Shutdown}
	return []graphql.Transport{sse{keepAlive: keepAlive, resume: opts.ResumeVariable}, wsPushed}
}

// streamGate admits streams: at most perAddress from one client address,
// with no deadline but their own, ended when the server shuts down.
type streamGate struct {
	opts       *StreamOptions
	perAddress int
	// shutdown ends when opts.Shutdown is closed, by endAll.
	shutdown context.Context
	endAll   context.CancelFunc

	mu   sync.Mutex
	open map[string]int
	// total is how many streams are open, from every address.
	total int
	// running counts the streams served apart (detach).
	running *sync.WaitGroup
}

func newStreamGate(opts *StreamOptions) *streamGate {
	n := opts.PerAddress
	if n <= 0 {
		n = DefaultStreamsPerAddress
	}
	g := &streamGate{opts: opts, perAddress: n, open: map[string]int{}, running: opts.Running}
	if g.running == nil {
		g.running = new(sync.WaitGroup)
	}
	g.shutdown, g.endAll = context.WithCancel(context.Background())
	if opts.Shutdown != nil {
		go func() {
			<-opts.Shutdown
			g.endAll()
		}()
	}
	return g
}

// wrap returns next behind the gate.
func (g *streamGate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		websocketRequest := strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
		if websocketRequest && !g.originAllowed(r) {
			WriteError(w, http.StatusForbidden, "WebSocket connections from this origin are not allowed", CodeForbidden)
			return
		}
		addr := clientAddress(r)
		if refused := g.acquire(addr); refused != "" {
			g.refuse(w, r, websocketRequest, refused)
			return
		}
		if d, ok := detach(w, r, websocketRequest); ok {
			// The stream goes on in a goroutine of its own: the server's
			// goroutine of the connection ends, and with it what it held.
			g.running.Add(1)
			go g.serve(next, d, d.r, d.cancel, true, func() {
				d.conn.Close()
				g.release(addr)
				g.running.Done()
			})
			return
		}
		defer g.release(addr)
		// The server's read and write timeouts are for requests, not
		// streams (a hijacked connection has none).
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Time{})
		ctx, cancel := context.WithCancel(r.Context())
		g.serve(next, w, r.WithContext(ctx), cancel, false, func() {})
	})
}

// serve serves the stream r with next, until cancel ends r's context:
// when the stream holds no operation for the idle timeout, or after the
// grace of a shutdown; then after runs. A detached stream's transport
// may keep the stream after next returns (streamState.hold).
func (g *streamGate) serve(next http.Handler, w http.ResponseWriter, r *http.Request, cancel context.CancelFunc, detached bool, after func()) {
	idle := g.opts.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	st := &streamState{idle: idle, end: cancel}
	st.idleTimer = time.AfterFunc(idle, cancel)
	// At shutdown, the subscriptions' last answers (SHUTTING_DOWN) go
	// out before the stream is ended. No goroutine waits per stream.
	stop := context.AfterFunc(g.shutdown, func() { time.AfterFunc(shutdownGrace, cancel) })
	var once sync.Once
	finish := func() {
		once.Do(func() {
			cancel()
			st.idleTimer.Stop()
			stop()
			after()
		})
	}
	if detached {
		st.hold = func() func() {
			st.held = true
			return finish
		}
		// The server's goroutine recovered a handler's panic; this one
		// does as it did, and ends the stream.
		defer func() {
			if v := recover(); v != nil {
				logPanic(v)
				finish()
			}
		}()
	}
	next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), streamKey{}, st)))
	if !st.held {
		finish()
	}
}

func (g *streamGate) originAllowed(r *http.Request) bool {
	if g.opts.CheckOrigin != nil {
		return g.opts.CheckOrigin(r)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	host, ok := strings.CutPrefix(origin, "https://")
	if !ok {
		host, ok = strings.CutPrefix(origin, "http://")
	}
	return ok && strings.EqualFold(host, r.Host)
}

// acquire counts a stream of addr, or returns why it is refused.
func (g *streamGate) acquire(addr string) (refused string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.opts.MaxStreams > 0 && g.total >= g.opts.MaxStreams:
		refused = RefusedServer
	case g.open[addr] >= g.perAddress:
		refused = RefusedAddress
	default:
		g.open[addr]++
		g.total++
		g.observeLocked()
		return ""
	}
	if g.opts.Observe != nil {
		g.opts.Observe.StreamRefused(refused)
	}
	return refused
}

func (g *streamGate) release(addr string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open[addr]--; g.open[addr] <= 0 {
		delete(g.open, addr)
	}
	g.total--
	g.observeLocked()
}

func (g *streamGate) observeLocked() {
	if g.opts.Observe != nil {
		g.opts.Observe.StreamsOpen(g.total)
	}
}

// refuse answers a stream the gate refused, for the reason refused, in
// its protocol's way, with Retry-After: an SSE request (or any other)
// with 429 or 503 and the error's code; a WebSocket with the handshake
// and a close frame of 1013 whose reason starts with the code, since a
// browser's WebSocket shows no handshake's status.
func (g *streamGate) refuse(w http.ResponseWriter, r *http.Request, websocketRequest bool, refused string) {
	status, code, msg := http.StatusTooManyRequests, CodeTooManyStreams, "too many open subscription streams from this address"
	if refused == RefusedServer {
		status, code, msg = http.StatusServiceUnavailable, CodeUnavailable, "this server holds as many subscription streams as it may"
	}
	w.Header().Set("Retry-After", retryAfter)
	if !websocketRequest {
		WriteError(w, status, msg+": try again later", code)
		return
	}
	up := websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		Subprotocols:     websocket.Subprotocols(r),
		CheckOrigin:      func(*http.Request) bool { return true },
	}
	conn, err := up.Upgrade(hijacker{w}, r, http.Header{"Retry-After": {retryAfter}})
	if err != nil {
		return // the upgrader answered the handshake with its error
	}
	defer conn.Close()
	reason := code + ": " + msg + ", retry after " + retryAfter + " s"
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(closeTryAgainLater, reason), time.Now().Add(time.Second))
}

// logPanic logs the panic v of a stream's goroutine as the server logs
// a handler's; http.ErrAbortHandler, which aborts a response, is not
// logged.
func logPanic(v any) {
	if v == http.ErrAbortHandler {
		return
	}
	slog.Error("gqlhttp: panic serving a stream", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
}

// clientAddress returns the address r came from as the gate counts it:
// an IPv4 address, or the /64 of an IPv6 one, which one host is given
// whole.
func clientAddress(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	addr := ap.Addr().Unmap()
	if addr.Is4() {
		return addr.String()
	}
	return netip.PrefixFrom(addr.WithZone(""), 64).Masked().String()
}

// writeBuffers are the WebSocket connections' write buffers.
var writeBuffers = &sync.Pool{}

// hijacker lets gorilla/websocket take the connection of a response
// writer that wraps the server's (a middleware's, with Unwrap), which its
// type assertion alone would not find.
type hijacker struct{ http.ResponseWriter }

func (h hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(h.ResponseWriter).Hijack()
}

// streamKey marks the context of a stream's request, with its state.
type streamKey struct{}

// streamState counts the operations a stream runs: one that holds none
// for idle is ended.
type streamState struct {
	idle time.Duration
	end  context.CancelFunc
	// hold, on a detached stream, keeps the stream open after its
	// handler returns, for a transport whose answers go on without it
	// (push.go); it returns what ends the stream, to call once. held is
	// set once it was called.
	hold func() (finish func())
	held bool

	mu        sync.Mutex
	running   int
	idleTimer *time.Timer
}

func (st *streamState) begin() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.running++
	st.idleTimer.Stop()
}

func (st *streamState) done() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.running--; st.running == 0 {
		st.idleTimer.Reset(st.idle)
	}
}

// countOperations tells a stream's state when each of its operations
// starts and ends (its answers' handler returns nil).
func countOperations(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	st, ok := ctx.Value(streamKey{}).(*streamState)
	if !ok {
		return next(ctx)
	}
	st.begin()
	var once sync.Once
	responses := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		resp := responses(ctx)
		if resp == nil {
			once.Do(st.done)
		}
		return resp
	}
}

// subscriptionsOnStreams refuses a subscription sent as a plain request:
// it has one answer and a deadline, and would wait for its first event
// until the deadline.
type subscriptionsOnStreams struct{}

var (
	_ graphql.HandlerExtension        = subscriptionsOnStreams{}
	_ graphql.OperationContextMutator = subscriptionsOnStreams{}
)

func (subscriptionsOnStreams) ExtensionName() string { return "SubscriptionsOnStreams" }

func (subscriptionsOnStreams) Validate(graphql.ExecutableSchema) error { return nil }

func (subscriptionsOnStreams) MutateOperationContext(ctx context.Context, rc *graphql.OperationContext) *gqlerror.Error {
	if rc.Operation != nil && rc.Operation.Operation == ast.Subscription && ctx.Value(streamKey{}) == nil {
		return &gqlerror.Error{
			Message:    "a subscription needs a stream: a WebSocket (graphql-transport-ws) or a request that accepts text/event-stream",
			Extensions: map[string]any{"code": CodeBadRequest},
		}
	}
	return nil
}
