package gqlhttp

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/vektah/gqlparser/v2/gqlerror"
)

// CodeBadRequest is the extensions.code of a request this endpoint cannot
// take as a GraphQL request: a method, media type, body or parameter that
// is not one, before any document is parsed.
const CodeBadRequest = "BAD_REQUEST"

// WriteError answers a request that never reached GraphQL with status and
// one GraphQL error, message with code in extensions.code, and no data.
func WriteError(w http.ResponseWriter, status int, message, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	encodeError(w, message, code)
}

// encodeError writes the body of WriteError.
func encodeError(w io.Writer, message, code string) {
	_ = json.NewEncoder(w).Encode(map[string]gqlerror.List{
		"errors": {{Message: message, Extensions: map[string]any{"code": code}}},
	})
}
