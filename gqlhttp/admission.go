package gqlhttp

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/blogql/blog/admission"
)

// Admission to the executor (package admission). With Options.Admission,
// a request (not a stream: a subscription holds no slot) takes one of the
// gate's slots before it is executed, waiting in the queue of
// Options.AdmissionKey while every slot is taken, within the request's
// time limit. An answer the answer cache sends for the exact request
// takes no slot (New puts the stage inside withCacheHeaders). What it
// costs to wait is small and taken first: a request whose queue is full
// is refused before its body is read (unless the answer cache read it
// first), and the body is read before it waits, so a slot is never held
// by a client sending slowly; the answer is kept in memory and sent after
// the slot is given back, so none is held by a client reading slowly
// either. A request
// refused, by a full queue or by its time limit passing in the queue, is
// answered 503 with Retry-After and one SERVER_BUSY error; one whose
// client went away leaves its queue.

// errQueueTimeout is a request whose time limit passed in its queue.
var errQueueTimeout = errors.New("the server was too busy to start the request in time, try again later")

// withAdmission runs next for each request once it holds a slot of gate
// (nil: at once) in the queue of key.
func withAdmission(gate *admission.Gate, key string, next http.Handler) http.Handler {
	if gate == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gate.Full(key) {
			notAdmitted(w, admission.ErrQueueFull)
			return
		}
		body, read := r.Body.(readBody)
		switch {
		case read && body.err != nil:
			bodyNotRead(w, body.err)
			return
		case !read && r.Body != nil && r.Body != http.NoBody:
			b, err := io.ReadAll(r.Body)
			if err != nil {
				bodyNotRead(w, err)
				return
			}
			r.Body = readBody{Reader: bytes.NewReader(b)}
		}
		release, err := gate.Enter(r.Context(), key)
		if err != nil {
			notAdmitted(w, err)
			return
		}
		if _, kept := w.(*bufferedResponse); kept {
			// The answer cache keeps the answer in memory already.
			defer release()
			next.ServeHTTP(w, r)
			return
		}
		buf := &bufferedResponse{header: w.Header()}
		func() {
			defer release()
			next.ServeHTTP(buf, r)
		}()
		if buf.status == 0 {
			buf.status = http.StatusOK
		}
		w.WriteHeader(buf.status)
		w.Write(buf.body.Bytes())
	})
}

// notAdmitted answers a request the gate refused (ErrQueueFull) or whose
// context ended in the queue.
func notAdmitted(w http.ResponseWriter, err error) {
	if !errors.Is(err, admission.ErrQueueFull) {
		err = errQueueTimeout
	}
	w.Header().Set("Retry-After", "1")
	w.Header().Set("Cache-Control", "no-store")
	WriteError(w, http.StatusServiceUnavailable, err.Error(), CodeServerBusy)
}
