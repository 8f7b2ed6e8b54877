package gqlhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// mediaEventStream is the media type of Server-Sent Events.
const mediaEventStream = "text/event-stream"

// eventIDExtension is the key of an answer's extensions that holds the
// id of the event it is (SetEventID); the SSE transport sends it as the
// event's id, and takes it out of the answer.
const eventIDExtension = "eventId"

// SetEventID makes resp, one answer of a subscription, an event with id:
// over SSE its `id:` line, which a browser's EventSource sends back as
// Last-Event-ID when it reconnects (see StreamOptions.ResumeVariable).
func SetEventID(resp *graphql.Response, id string) {
	if resp.Extensions == nil {
		resp.Extensions = map[string]any{}
	}
	resp.Extensions[eventIDExtension] = id
}

// sse serves GraphQL over Server-Sent Events in graphql-sse's distinct
// connections mode: a POST with a JSON body, or a GET with the parameters
// in its URL (a query, a persisted query's hash or a subscription; no
// mutation), that accepts text/event-stream. Each answer is a `next`
// event (with an `id:` line when the answer has an event id), and a
// `complete` event ends the stream; a comment line every keepAlive keeps
// idle connections open through proxies. gqlgen's transport.SSE takes
// POST only and writes no ids.
type sse struct {
	keepAlive time.Duration
	// resume names the variable Last-Event-ID sets.
	resume string
}

var _ graphql.Transport = sse{}

func (sse) Supports(r *http.Request) bool {
	if r.Header.Get("Upgrade") != "" || !strings.Contains(r.Header.Get("Accept"), mediaEventStream) {
		return false
	}
	return r.Method == http.MethodGet || r.Method == http.MethodPost
}

func (t sse) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	start := graphql.Now()
	params, err := t.params(r)
	if err != nil {
		WriteError(w, http.StatusBadRequest, err.Error(), CodeBadRequest)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	h := w.Header()
	h.Set("Content-Type", mediaEventStream+"; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: pass the events on as they come
	w.WriteHeader(http.StatusOK)
	out := &sseWriter{w: w, rc: http.NewResponseController(w)}
	out.comment()

	stopKeepAlive := func() {}
	if t.keepAlive > 0 {
		// A timer, not a goroutine: an idle stream costs no stack for it.
		var keepAlive *time.Timer
		keepAlive = time.AfterFunc(t.keepAlive, func() {
			if out.comment() {
				keepAlive.Reset(t.keepAlive)
			}
		})
		stopKeepAlive = func() { keepAlive.Stop() }
	}
	held := false
	defer func() {
		if !held {
			stopKeepAlive()
		}
	}()

	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs == nil && r.Method == http.MethodGet && opCtx.Operation.Operation == ast.Mutation {
		errs = gqlerror.List{{Message: "a mutation cannot be sent with GET: send it with POST", Extensions: map[string]any{"code": CodeBadRequest}}}
	}
	if errs != nil {
		out.next(exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs))
		out.complete()
		return
	}
	st, _ := ctx.Value(streamKey{}).(*streamState)
	var (
		p    *pushed
		push *push
	)
	if st != nil && st.hold != nil {
		ctx, p, push = withPush(ctx)
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	if p != nil && push.used.Load() {
		// The resolver announces its answers: this goroutine ends, and
		// the stream goes on until they end or the stream does.
		held = true
		finish := st.hold()
		p.send = out.next
		p.end = func(last bool) {
			if last && ctx.Err() == nil {
				out.complete()
			}
			stopKeepAlive()
			finish()
		}
		context.AfterFunc(ctx, p.announce)
		p.start(ctx, responses)
		return
	}
	for {
		resp := responses(ctx)
		if resp == nil {
			break
		}
		if !out.next(resp) {
			return
		}
	}
	if ctx.Err() == nil {
		out.complete()
	}
}

// params reads the request's GraphQL parameters: a POST's JSON body, or a
// GET's URL. Last-Event-ID, when the transport resumes, sets its
// variable.
func (t sse) params(r *http.Request) (*graphql.RawParams, error) {
	var p *graphql.RawParams
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		if p, err = decodeParams(body); err != nil {
			return nil, err
		}
	} else {
		q := r.URL.Query()
		p = &graphql.RawParams{Query: q.Get("query"), OperationName: q.Get("operationName")}
		for name, v := range map[string]*map[string]any{"variables": &p.Variables, "extensions": &p.Extensions} {
			if s := q.Get(name); s != "" {
				dec := json.NewDecoder(strings.NewReader(s))
				dec.UseNumber()
				if err := dec.Decode(v); err != nil {
					return nil, errNotJSON
				}
			}
		}
	}
	if id := r.Header.Get("Last-Event-ID"); id != "" && t.resume != "" {
		if p.Variables == nil {
			p.Variables = map[string]any{}
		}
		p.Variables[t.resume] = id
	}
	return p, nil
}

// sseWriter writes the events of one response, one at a time.
type sseWriter struct {
	mu     sync.Mutex
	w      io.Writer
	rc     *http.ResponseController
	failed bool
}

// write writes b and flushes it; it returns false once a write failed.
func (s *sseWriter) write(b []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed {
		return false
	}
	if _, err := s.w.Write(b); err != nil || s.rc.Flush() != nil {
		s.failed = true
	}
	return !s.failed
}

func (s *sseWriter) comment() bool { return s.write([]byte(":\n\n")) }

func (s *sseWriter) complete() bool { return s.write([]byte("event: complete\ndata:\n\n")) }

// next writes resp as a next event, with its event id.
func (s *sseWriter) next(resp *graphql.Response) bool {
	var b bytes.Buffer
	b.WriteString("event: next\n")
	if id, ok := resp.Extensions[eventIDExtension].(string); ok {
		delete(resp.Extensions, eventIDExtension)
		if len(resp.Extensions) == 0 {
			resp.Extensions = nil
		}
		b.WriteString("id: " + id + "\n")
	}
	b.WriteString("data: ")
	writeResponse(&b, resp)
	b.WriteString("\n\n")
	return s.write(b.Bytes())
}
