package graph

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
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
// statuses: 400 for a body that is not JSON and, for a document that does
// not parse or validate, 422 in application/json or 400 in
// application/graphql-response+json.
func (postJSON) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	contentType := responseMediaType(r)
	w.Header().Set("Content-Type", contentType)
	start := graphql.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeResponse(w, exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf("could not read request body: %+v", err)}))
		return
	}
	params := &graphql.RawParams{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(params); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		writeResponse(w, exec.DispatchError(ctx, gqlerror.List{
			gqlerror.Errorf("json request body could not be decoded: %+v body:%s", err, body),
		}))
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

// writeResponse writes resp. An answer that is only data, the usual one, is
// written around the data as the executor wrote it; anything else goes
// through encoding/json as gqlgen would write it.
func writeResponse(w io.Writer, resp *graphql.Response) {
	if resp != nil && len(resp.Errors) == 0 && len(resp.Extensions) == 0 && resp.Label == "" &&
		resp.Path == nil && resp.HasNext == nil && len(resp.Data) > 0 {
		b := make([]byte, 0, len(resp.Data)+len(`{"data":}`))
		b = append(append(append(b, `{"data":`...), resp.Data...), '}')
		_, _ = w.Write(b)
		return
	}
	b, err := json.Marshal(resp)
	if err != nil {
		// The executor writes valid JSON; anything else is a bug.
		panic(err)
	}
	_, _ = w.Write(b)
}
