package gqlhttp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Detached streams. A stream over HTTP/1 lasts as long as its client
// stays, mostly idle; served by the server's goroutine of its connection,
// it would keep that goroutine's stack, grown by the middlewares and the
// operation's start, and the connection's read and write buffers (10 KB),
// for as long. So the gate takes the connection over (Hijack) and serves
// the stream in a goroutine of its own, with a response writer that
// writes to the connection itself, unbuffered: an event is one write. The
// server's goroutine ends, and with it what it held. The response is
// delimited by the connection's close (Connection: close). An SSE
// stream's connection is read by one more goroutine, small, that ends the
// stream when the client goes; a WebSocket's is read by its transport.
// A request the server cannot hand over (HTTP/2) is served in place.

// detached is a stream's connection taken over from the server, and its
// response writer.
type detached struct {
	conn   net.Conn
	r      *http.Request
	cancel context.CancelFunc
	// br holds what the server read past the request, when anything.
	br *bufio.Reader

	header      http.Header
	wroteHeader bool
	failed      error
}

// detach takes r's connection over from the server, when it can: r's
// body read whole first, as the connection then belongs to the stream.
// The request it returns has a context of its own, ended by cancel; for a
// stream that is not a WebSocket, also when the client closes the
// connection.
func detach(w http.ResponseWriter, r *http.Request, websocket bool) (*detached, bool) {
	if r.ProtoMajor != 1 {
		return nil, false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// The handler reports the error of the body, as it would have.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, false
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	d := &detached{conn: conn, r: r.WithContext(ctx), cancel: cancel, header: w.Header().Clone()}
	if brw.Reader.Buffered() > 0 {
		d.br = brw.Reader
	}
	if !websocket {
		go d.watch()
	}
	return d, true
}

// watch ends the stream when its client closes the connection; what the
// client sends is dropped, as a response that is a stream takes nothing.
func (d *detached) watch() {
	var b [32]byte
	for {
		if _, err := d.conn.Read(b[:]); err != nil {
			d.cancel()
			return
		}
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

var (
	_ http.ResponseWriter = (*detached)(nil)
	_ http.Hijacker       = (*detached)(nil)
)

func (d *detached) Header() http.Header { return d.header }

// WriteHeader writes the response's status line and header.
func (d *detached) WriteHeader(status int) {
	if d.wroteHeader {
		return
	}
	d.wroteHeader = true
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %03d %s\r\n", status, http.StatusText(status))
	d.header.Del("Content-Length")
	d.header.Del("Transfer-Encoding")
	d.header.Set("Connection", "close")
	if d.header.Get("Date") == "" {
		d.header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	}
	_ = d.header.Write(&b)
	b.WriteString("\r\n")
	_, d.failed = d.conn.Write(b.Bytes())
}

// Write writes p to the connection, at once.
func (d *detached) Write(p []byte) (int, error) {
	d.WriteHeader(http.StatusOK)
	if d.failed != nil {
		return 0, d.failed
	}
	n, err := d.conn.Write(p)
	if err != nil {
		d.failed = err
	}
	return n, err
}

// FlushError has nothing to flush: every write went out.
func (d *detached) FlushError() error {
	d.WriteHeader(http.StatusOK)
	return d.failed
}

func (d *detached) SetReadDeadline(t time.Time) error { return d.conn.SetReadDeadline(t) }

func (d *detached) SetWriteDeadline(t time.Time) error { return d.conn.SetWriteDeadline(t) }

// Hijack gives the connection to a WebSocket's upgrade, with small
// buffers: gorilla/websocket keeps the reader for the connection's life.
func (d *detached) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if d.wroteHeader {
		return nil, nil, errors.New("gqlhttp: hijack after the response started")
	}
	d.wroteHeader = true
	br := d.br
	if br == nil {
		br = bufio.NewReaderSize(d.conn, websocketReadBuffer)
	}
	return d.conn, bufio.NewReadWriter(br, bufio.NewWriterSize(d.conn, websocketHandshakeBuffer)), nil
}

const (
	// websocketReadBuffer is the read buffer of a WebSocket connection:
	// its client sends small messages (subscribe, pong), seldom.
	websocketReadBuffer = 1024
	// websocketHandshakeBuffer is where gorilla/websocket writes the
	// handshake's answer.
	websocketHandshakeBuffer = 1024
)
