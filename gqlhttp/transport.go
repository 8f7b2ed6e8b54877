package gqlhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Media types of GraphQL responses.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// postJSON serves GraphQL over POST with an application/json body exactly
// as gqlgen's transport.POST does, but writes the executor's answer as it
// is. gqlgen's transport passes the answer through encoding/json, which
// scans and copies the data the executor has just written as JSON: about
// 70 µs for a category page, more for a post page with its comments, on
// every request. GET requests stay with gqlgen's transport: a CDN answers
// most of them (see cache.go).
type postJSON struct{}

var _ graphql.Transport = postJSON{}

// Supports reports whether r is a POST with a JSON body.
func (postJSON) Supports(r *http.Request) bool {
	if r.Header.Get("Upgrade") != "" {
		return false
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && r.Method == http.MethodPost && mediaType == mediaJSON
}

// Do reads the request, runs it and writes the answer, with gqlgen's
// statuses: 400 and BAD_REQUEST for a body that is not JSON or not the
// parameters of a request (decodeParams) and, for a document that does
// not parse or validate, 422 in application/json or 400 in
// application/graphql-response+json.
func (postJSON) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	contentType := responseMediaType(r)
	w.Header().Set("Content-Type", contentType)
	start := graphql.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.Header().Del("Content-Type")
		bodyNotRead(w, err)
		return
	}
	params, err := decodeParams(body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		writeResponse(w, exec.DispatchError(ctx, gqlerror.List{badRequest(err.Error())}))
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		status := http.StatusOK
		if errcode.GetErrorKind(errs) == errcode.KindProtocol {
			status = http.StatusUnprocessableEntity
			if contentType == mediaGraphQLResponse {
				status = http.StatusBadRequest
			}
		}
		w.WriteHeader(status)
		writeResponse(w, exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	writeResponse(w, responses(ctx))
}

// errNotJSON is the error of a body that is not JSON.
var errNotJSON = errors.New("the body is not JSON")

// decodeParams reads the body of a POST request: one JSON object with
// "query" (a string), and optionally "operationName" (a string),
// "variables" and "extensions" (objects), each at most once, and nothing
// after it; null counts as absent. A key that is one of those four in
// another case, or with a character that folds to one of theirs ("ſ" for
// "s", as encoding/json reads it), is refused: another reader of the body
// (a proxy, a cache, a log) could take it for the parameter itself, and
// see another request than the one that runs. Other keys are ignored.
// Its errors are in the API's words: they reach the client.
func decodeParams(body []byte) (*graphql.RawParams, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	switch tok, err := dec.Token(); {
	case err != nil:
		return nil, errNotJSON
	case tok == json.Delim('['):
		return nil, errors.New("the body is a list: batched requests are not supported, send one JSON object")
	case tok != json.Delim('{'):
		return nil, errors.New("the body must be a JSON object")
	}
	p := &graphql.RawParams{}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errNotJSON
		}
		key, _ := tok.(string)
		if seen[key] {
			return nil, fmt.Errorf("the body has %q more than once", key)
		}
		if err := checkParamName(key, "the body"); err != nil {
			return nil, err
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, errNotJSON
		}
		if string(raw) == "null" {
			continue
		}
		var err2 error
		switch key {
		case "query":
			err2 = decodeParam(raw, &p.Query, `"query" must be a string`)
		case "operationName":
			err2 = decodeParam(raw, &p.OperationName, `"operationName" must be a string`)
		case "variables":
			err2 = decodeParam(raw, &p.Variables, `"variables" must be an object`)
		case "extensions":
			err2 = decodeParam(raw, &p.Extensions, `"extensions" must be an object`)
		}
		if err2 != nil {
			return nil, err2
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, errNotJSON
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("the body has more after its JSON object")
	}
	return p, nil
}

// paramNames are the names of the parameters of a GraphQL request, in a
// POST's body as in a GET's URL.
var paramNames = []string{"query", "operationName", "variables", "extensions"}

// checkParamName returns an error, naming where (the body, the URL), for
// a name that is one of paramNames written otherwise: in another case, or
// with a character that folds to one of theirs.
func checkParamName(name, where string) error {
	for _, p := range paramNames {
		if name != p && strings.EqualFold(name, p) {
			return fmt.Errorf("%s has %q: the parameter is %q, spelt exactly so", where, name, p)
		}
	}
	return nil
}

// decodeParam decodes raw into v, numbers as json.Number; it returns an
// error with message when raw is not of v's kind.
func decodeParam(raw json.RawMessage, v any, message string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return errors.New(message)
	}
	return nil
}

// bodyNotRead answers a request whose body could not be read: 408 when it
// did not arrive in time, 413 when it was too large, else 400. The
// connection is closed: what is left of the body is not read.
func bodyNotRead(w http.ResponseWriter, err error) {
	w.Header().Set("Connection", "close")
	var netErr net.Error
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &netErr) && netErr.Timeout(), errors.Is(err, os.ErrDeadlineExceeded):
		WriteError(w, http.StatusRequestTimeout, "the request body did not arrive in time", CodeBadRequest)
	case errors.As(err, &tooBig):
		WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", tooBig.Limit), CodeBadRequest)
	default:
		WriteError(w, http.StatusBadRequest, "could not read the request body", CodeBadRequest)
	}
}

// responseMediaType picks the media type of the answer from the Accept
// header as gqlgen does: application/json unless the client asks for
// application/graphql-response+json, or names no type this server writes.
func responseMediaType(r *http.Request) string {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return mediaJSON
	}
	for part := range strings.SplitSeq(accept, ",") {
		mediaType, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mediaType {
		case "*/*", "application/*", mediaJSON:
			return mediaJSON
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		}
	}
	return mediaGraphQLResponse
}

// writeResponse writes resp. An answer that is only data and extensions,
// the usual one, is written around the data as the executor wrote it, as
// encoding/json would write it; anything else goes through encoding/json
// as gqlgen would write it.
func writeResponse(w io.Writer, resp *graphql.Response) {
	if resp != nil && len(resp.Errors) == 0 && resp.Label == "" &&
		resp.Path == nil && resp.HasNext == nil && len(resp.Data) > 0 {
		var ext []byte
		if len(resp.Extensions) > 0 {
			var err error
			if ext, err = json.Marshal(resp.Extensions); err != nil {
				panic(err) // extensions are the server's own values
			}
		}
		_, _ = io.WriteString(w, `{"data":`)
		_, _ = w.Write(resp.Data)
		if ext != nil {
			_, _ = io.WriteString(w, `,"extensions":`)
			_, _ = w.Write(ext)
		}
		_, _ = io.WriteString(w, "}")
		return
	}
	b, err := json.Marshal(resp)
	if err != nil {
		// The executor writes valid JSON; anything else is a bug.
		panic(err)
	}
	_, _ = w.Write(b)
}
