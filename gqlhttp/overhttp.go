package gqlhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// overHTTP adapts one of gqlgen's HTTP transports (GET or POST) to the
// GraphQL over HTTP specification where gqlgen's answers differ from it:
//
//   - A request error (the document does not parse or validate, the
//     variables do not coerce) in application/json is a 200 response, so
//     that clients written before the specification read the errors; gqlgen
//     answers 422. In application/graphql-response+json gqlgen already
//     answers 400, as the specification asks.
//   - A request error has no data entry, since execution never started;
//     gqlgen writes "data": null.
//   - A request without a query (and without a persisted query's hash) has
//     invalid parameters rather than a document that failed: 400 in either
//     media type.
//   - A mutation sent with GET is 405 Method Not Allowed with Allow: POST
//     and a BAD_REQUEST error; gqlgen answers 406 with an error without a
//     code.
//
// It also coerces the variables as the specification says (variables.go).
type overHTTP struct {
	graphql.Transport
	schema *ast.Schema
}

// Do runs the wrapped transport and corrects its status and body.
func (t overHTTP) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	rw := &requestErrorWriter{ResponseWriter: w}
	t.Transport.Do(rw, r, watchRequest{GraphExecutor: exec, w: rw, schema: t.schema})
	rw.flush()
}

// watchRequest tells w whether the request names a query and whether it
// failed before execution: only the transport decodes the parameters, and
// only the executor knows the outcome. It coerces the variables too, which
// needs both.
type watchRequest struct {
	graphql.GraphExecutor
	w      *requestErrorWriter
	schema *ast.Schema
}

func (e watchRequest) CreateOperationContext(ctx context.Context, params *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	e.w.missingQuery = params.Query == "" && params.Extensions["persistedQuery"] == nil
	integralNumbers(params.Variables)
	opCtx, errs := e.GraphExecutor.CreateOperationContext(ctx, params)
	// A document that parsed but has no operation of that name: without
	// a name, gqlgen's message is "operation  not found".
	if opCtx != nil && opCtx.Doc != nil && opCtx.Operation == nil && len(errs) == 1 && params.OperationName == "" {
		errs[0].Message = fmt.Sprintf("the document has %d operations: name the one to run in operationName", len(opCtx.Doc.Operations))
	}
	// gqlparser has coerced the variables its way; they must also coerce
	// the specification's way, and its words about a value that does not
	// are the better ones. Nothing has run yet either way.
	if opCtx != nil && opCtx.Operation != nil && (len(errs) == 0 || isVariableError(errs)) {
		vars, err := coerceVariables(e.schema, opCtx.Operation, params.Variables)
		switch {
		case err != nil:
			errs = gqlerror.List{err}
		case len(errs) == 0:
			for k, v := range vars {
				opCtx.Variables[k] = v
			}
		}
	}
	e.w.requestError = len(errs) > 0
	return opCtx, errs
}

// isVariableError reports whether errs is gqlparser's error about a
// variable's value.
func isVariableError(errs gqlerror.List) bool {
	return len(errs) == 1 && len(errs[0].Path) > 0 && errs[0].Path[0] == ast.PathName("variable")
}

// requestErrorWriter passes a response through unless it is a request
// error: then it corrects the status and holds the body back until flush,
// which writes it without its data entry.
type requestErrorWriter struct {
	http.ResponseWriter
	missingQuery bool
	requestError bool
	getMutation  bool
	body         bytes.Buffer
}

func (w *requestErrorWriter) WriteHeader(code int) {
	switch {
	case w.missingQuery && code >= 400:
		code = http.StatusBadRequest
	case code == http.StatusUnprocessableEntity: // gqlgen's request error in application/json
		code = http.StatusOK
	case code == http.StatusNotAcceptable: // gqlgen's answer to a mutation over GET
		w.Header().Set("Allow", http.MethodPost)
		code = http.StatusMethodNotAllowed
		w.getMutation = true
	}
	if code >= 400 {
		w.requestError = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *requestErrorWriter) Write(b []byte) (int, error) {
	if w.requestError {
		return w.body.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *requestErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// flush writes a held-back request error without its data entry. A body
// that is not a GraphQL response goes out unchanged.
func (w *requestErrorWriter) flush() {
	if !w.requestError {
		return
	}
	var resp struct {
		Errors     json.RawMessage `json:"errors"`
		Extensions json.RawMessage `json:"extensions,omitempty"`
	}
	body := w.body.Bytes()
	if w.getMutation {
		encodeError(w.ResponseWriter, "GET requests only allow query operations; send a mutation with POST", CodeBadRequest)
		return
	}
	if err := json.Unmarshal(body, &resp); err == nil && resp.Errors != nil {
		if b, err := json.Marshal(resp); err == nil {
			body = b
		}
	}
	_, _ = w.ResponseWriter.Write(body)
}

// allowedMethods are the methods the endpoint answers.
const allowedMethods = "GET, POST, OPTIONS"

// checkMethod answers the requests no GraphQL transport takes, with the
// status HTTP has for them: 405 with Allow for another method (HEAD
// included: the endpoint has no representation to describe without
// running a query), 415 for a POST whose body is not application/json,
// 400 for a GET that gives a parameter twice or in another case, or
// variables or extensions that are not one JSON object (as for a JSON
// body, decodeParams).
// Every answer of the endpoint depends on the Accept header (its media
// type) and says so in Vary.
func checkMethod(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept")
		switch r.Method {
		case http.MethodOptions:
		case http.MethodGet:
			q := r.URL.Query()
			for _, p := range paramNames {
				if len(q[p]) > 1 {
					WriteError(w, http.StatusBadRequest, fmt.Sprintf("the URL has %q more than once", p), CodeBadRequest)
					return
				}
			}
			for _, name := range slices.Sorted(maps.Keys(q)) {
				if err := checkParamName(name, "the URL"); err != nil {
					WriteError(w, http.StatusBadRequest, err.Error(), CodeBadRequest)
					return
				}
			}
			// As in a POST's body (decodeParams): gqlgen's GET answers
			// these without a code, and takes what follows the object.
			for _, p := range []string{"variables", "extensions"} {
				var object map[string]json.RawMessage
				if v := q.Get(p); v != "" && json.Unmarshal([]byte(v), &object) != nil {
					WriteError(w, http.StatusBadRequest, fmt.Sprintf("%q must be a JSON object", p), CodeBadRequest)
					return
				}
			}
		case http.MethodPost:
			if mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mediaType != mediaJSON {
				w.Header().Set("Accept-Post", mediaJSON)
				WriteError(w, http.StatusUnsupportedMediaType, "the body of a POST must be application/json", CodeBadRequest)
				return
			}
		default:
			w.Header().Set("Allow", allowedMethods)
			WriteError(w, http.StatusMethodNotAllowed, "the endpoint takes GET and POST", CodeBadRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}
