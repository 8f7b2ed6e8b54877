package gqlhttp

import (
	"context"
	"log/slog"
	"net/http"
	"regexp"

	"github.com/google/uuid"
)

// RequestIDHeader carries a request's id: a client or a proxy in front may
// send one, and every response returns the id its request was logged with.
const RequestIDHeader = "X-Request-ID"

// requestIDPattern is what a request id sent by a client may look like;
// anything else is replaced, so a header cannot forge or flood log lines.
var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:+/=-]{1,128}$`)

type requestIDKey struct{}

// WithRequestID gives every request an id: the X-Request-ID it came with
// when that is a plausible id, else a new random one. The id is returned in
// X-Request-ID and kept in the request's context, where RequestID finds it
// and LogHandler adds it to every log line. A request that already has an
// id keeps it.
func WithRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if RequestID(r.Context()) != "" {
			next.ServeHTTP(w, r)
			return
		}
		id := r.Header.Get(RequestIDHeader)
		if !requestIDPattern.MatchString(id) {
			id = uuid.NewString()
		}
		w.Header().Set(RequestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// RequestID returns the id of the request ctx belongs to, or "" outside a
// request.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// LogHandler returns h with request_id added to every record logged with
// the context of a request (the *Context methods of slog.Logger).
func LogHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(requestIDHandler); ok {
		return h
	}
	return requestIDHandler{h}
}

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
