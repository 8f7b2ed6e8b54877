package embedded

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// The DynamoDB JSON 1.0 protocol: a POST whose X-Amz-Target header names
// the operation (DynamoDB_20120810.GetItem, or
// DynamoDBStreams_20120810.GetRecords for DynamoDB Streams) and whose body is the input as
// JSON; the answer is the output as JSON (application/x-amz-json-1.0) with
// the CRC32 of the body in X-Amz-Crc32, or an error body with its __type
// and message.
//
// Invariant: every request gets exactly one answer in this shape; a fault
// of the engine (an error that is not an *apiError, or a panic) is logged
// and answered as InternalServerError (500), which the SDK retries.

const targetPrefix = "DynamoDB_20120810."

// operation is one API operation: it decodes its input from body and
// returns its output, either a value for encoding/json or a jsonBody.
type operation func(s *store, ctx context.Context, body []byte) (any, error)

// jsonBody is an output that writes its own JSON.
type jsonBody interface {
	appendJSON(b []byte) []byte
}

var operations map[string]operation

func init() {
	operations = map[string]operation{
		"CreateTable":        opCreateTable,
		"DescribeTable":      opDescribeTable,
		"ListTables":         opListTables,
		"DeleteTable":        opDeleteTable,
		"UpdateTable":        opUpdateTable,
		"UpdateTimeToLive":   opUpdateTimeToLive,
		"DescribeTimeToLive": opDescribeTimeToLive,
		"GetItem":            opGetItem,
		"PutItem":            opPutItem,
		"UpdateItem":         opUpdateItem,
		"DeleteItem":         opDeleteItem,
		"BatchGetItem":       opBatchGetItem,
		"BatchWriteItem":     opBatchWriteItem,
		"Query":              opQuery,
		"Scan":               opScan,
		"TransactWriteItems": opTransactWriteItems,
		"TransactGetItems":   opTransactGetItems,
	}
}

// RoundTrip answers a DynamoDB request in this process, as if it went over
// the network. It returns an error only for a request whose context has
// ended before it started, or whose body cannot be read; every other
// failure is a DynamoDB error answer.
func (e *Engine) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := r.Context().Err(); err != nil {
		// Like a transport whose caller gave up before it sent anything.
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, err
	}
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	status, out := e.s.serve(r.Context(), r.Header.Get("X-Amz-Target"), body)
	// The engine must outlive the request: its cleanup closes the store.
	runtime.KeepAlive(e)
	h := make(http.Header, 4)
	writeHeaders(h, out)
	answer := &answerBody{buf: out}
	answer.Reset(out)
	return &http.Response{
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          answer,
		ContentLength: int64(len(out)),
		Request:       r,
	}, nil
}

// ServeHTTP answers DynamoDB requests over HTTP, for clients in other
// processes.
func (e *Engine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "DynamoDB takes POST requests", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 16<<20))
	if err != nil {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	status, out := e.s.serve(r.Context(), r.Header.Get("X-Amz-Target"), body)
	runtime.KeepAlive(e)
	writeHeaders(w.Header(), out)
	w.WriteHeader(status)
	_, _ = w.Write(out)
	releaseAnswer(out)
}

// answers holds the buffers answers are written into. An answer of a
// RoundTrip goes back when its body is closed: whoever read it has copied
// what they keep. A buffer that grew past maxPooledAnswer is let go.
var answers sync.Pool

const maxPooledAnswer = 256 << 10

// answerBuffer returns an empty buffer for an answer.
func answerBuffer() []byte {
	if p, ok := answers.Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return make([]byte, 0, 16<<10)
}

func releaseAnswer(b []byte) {
	if cap(b) > 0 && cap(b) <= maxPooledAnswer {
		answers.Put(&b)
	}
}

// answerBody is the body of a RoundTrip's answer. Closing it gives its
// buffer back; reading it after that reads nothing.
type answerBody struct {
	bytes.Reader
	buf []byte
}

func (b *answerBody) Close() error {
	if b.buf != nil {
		releaseAnswer(b.buf)
		b.buf = nil
		b.Reset(nil)
	}
	return nil
}

func writeHeaders(h http.Header, body []byte) {
	var id [16]byte
	_, _ = rand.Read(id[:])
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	h.Set("X-Amzn-Requestid", hex.EncodeToString(id[:]))
}

// serve runs the operation target names on body and returns the status
// and body of the answer.
func (s *store) serve(ctx context.Context, target string, body []byte) (status int, out []byte) {
	var op operation
	if name, ok := strings.CutPrefix(target, targetPrefix); ok {
		op = operations[name]
	} else if name, ok := strings.CutPrefix(target, streamsTargetPrefix); ok {
		op = streamOperations[name]
	}
	if op == nil {
		return errorBody(&apiError{code: "UnknownOperationException", msg: ""})
	}
	defer func() {
		if r := recover(); r != nil {
			slog.Error("embedded dynamodb: panic", "operation", target, "panic", r)
			status, out = errorBody(errInternal())
		}
	}()
	select {
	case <-s.closing:
		return errorBody(&apiError{code: "InternalServerError", msg: "The database is closed.", status: http.StatusInternalServerError})
	default:
	}
	res, err := op(s, ctx, body)
	if err != nil {
		var apiErr *apiError
		if !errors.As(err, &apiErr) {
			slog.Error("embedded dynamodb: request failed", "operation", target, "err", err)
			apiErr = errInternal()
		}
		return errorBody(apiErr)
	}
	if p, ok := res.(*page); ok {
		return http.StatusOK, p.answer()
	}
	if b, ok := res.(jsonBody); ok {
		return http.StatusOK, b.appendJSON(answerBuffer())
	}
	raw, err := json.Marshal(res)
	if err != nil {
		slog.Error("embedded dynamodb: encode answer", "operation", target, "err", err)
		return errorBody(errInternal())
	}
	return http.StatusOK, raw
}

// errorBody returns the answer of an error.
func errorBody(e *apiError) (int, []byte) {
	b := []byte(`{"__type":`)
	b = appendString(b, e.typePrefix()+e.code)
	b = append(b, `,"Message":`...)
	b = appendString(b, e.msg)
	if e.reasons != nil {
		b = append(b, `,"CancellationReasons":[`...)
		for i, r := range e.reasons {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"Code":`...)
			b = appendString(b, r.Code)
			if r.Message != "" {
				b = append(b, `,"Message":`...)
				b = appendString(b, r.Message)
			}
			if r.Item != nil {
				b = append(b, `,"Item":`...)
				b = appendItem(b, r.Item)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if e.item != nil {
		b = append(b, `,"Item":`...)
		b = appendItem(b, e.item)
	}
	return e.httpStatus(), append(b, '}')
}

// decode reads an operation's input; a body that is not JSON of the
// input's shape is a SerializationException, as DynamoDB answers it.
func decode(body []byte, in any) error {
	if err := json.Unmarshal(body, in); err != nil {
		var apiErr *apiError
		if errors.As(err, &apiErr) {
			return apiErr
		}
		return &apiError{code: "SerializationException", msg: fmt.Sprintf("Start of structure or map found where not expected: %v", err)}
	}
	return nil
}
