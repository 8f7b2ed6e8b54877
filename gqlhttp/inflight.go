package gqlhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/blogql/blog/inflight"
)

// The memory of requests in flight (package inflight). Every request has
// a Meter whose answer limit is the response limit (responsesize.go); the
// schema's resolvers charge it the large strings they load and answer
// (inflight.Load, inflight.Answer). Once the complexity limit has passed
// an operation, it reserves its complexity times Options.ComplexityBytes
// of the server's budget (Options.Budget), at most twice the response
// limit, waiting in the budget's queue; a request that does not get it in
// time, or that grows past what the budget has left, is answered 503 with
// Retry-After and one SERVER_BUSY error, and one that charges its answer
// past the response limit stops there and is answered RESPONSE_TOO_LARGE.

// CodeServerBusy is the code of a request refused because the requests in
// flight hold the whole memory budget.
const CodeServerBusy = "SERVER_BUSY"

// DefaultComplexityBytes is what one unit of complexity stands for in a
// reservation when Options.ComplexityBytes is zero.
const DefaultComplexityBytes = 1 << 10

// reservation returns the bytes an operation of complexity n reserves:
// n times per, at most twice the response limit maxResponse.
func reservation(n int, per, maxResponse int64) int64 {
	if per <= 0 {
		per = DefaultComplexityBytes
	}
	if int64(n) > 2*maxResponse/per {
		return 2 * maxResponse
	}
	return int64(n) * per
}

// admit reserves the operation's bytes (see reservation): nil, or
// SERVER_BUSY when the budget had no room in time.
func admit(ctx context.Context, complexity int, per, maxResponse int64) *gqlerror.Error {
	if err := inflight.Reserve(ctx, reservation(complexity, per, maxResponse)); err != nil {
		return inflightError(err)
	}
	return nil
}

// inflightError returns the GraphQL error of a Meter's error, or nil
// when err is not one.
func inflightError(err error) *gqlerror.Error {
	switch {
	case errors.Is(err, inflight.ErrBusy):
		return &gqlerror.Error{Message: err.Error(), Extensions: map[string]any{"code": CodeServerBusy}}
	case errors.Is(err, inflight.ErrTooLarge):
		return tooLargeError(0)
	}
	return nil
}

// tooLargeError returns the RESPONSE_TOO_LARGE error of a limit of max
// bytes (0: unsaid).
func tooLargeError(max int64) *gqlerror.Error {
	msg := "the answer would be larger than the limit: ask for fewer items or fields"
	if max > 0 {
		msg = fmt.Sprintf("the answer would be larger than %d bytes: ask for fewer items or fields", max)
	}
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": CodeResponseTooLarge}}
}

// withMeter gives every request passing through next a Meter of budget
// with an answer limit of maxResponse, and answers one that the budget
// refused 503 with Retry-After. observe, when set, is called with the
// bytes it answered and charged when it ends.
func withMeter(budget *inflight.Budget, maxResponse int64, observe func(answered, charged int64), next http.Handler) http.Handler {
	retryAfter := "1"
	if budget != nil {
		retryAfter = strconv.Itoa(max(1, int(budget.Wait().Seconds()+0.999)))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, m := inflight.Start(r.Context(), budget, maxResponse)
		defer m.Done()
		next.ServeHTTP(&busyWriter{ResponseWriter: w, ctx: ctx, retryAfter: retryAfter}, r.WithContext(ctx))
		if observe != nil {
			observe(m.Answered(), m.Charged())
		}
	})
}

// busyWriter turns the status of an answer the budget refused into 503
// with Retry-After.
type busyWriter struct {
	http.ResponseWriter
	ctx        context.Context
	retryAfter string
	wrote      bool
}

func (w *busyWriter) WriteHeader(code int) {
	if !w.wrote && errors.Is(inflight.Err(w.ctx), inflight.ErrBusy) {
		w.Header().Set("Retry-After", w.retryAfter)
		w.Header().Set("Cache-Control", "no-store")
		code = http.StatusServiceUnavailable
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *busyWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *busyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
