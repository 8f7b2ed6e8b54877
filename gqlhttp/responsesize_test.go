package gqlhttp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAnswersAreMeasuredMarshalled checks the size limit on the answer the
// executor marshalled ({"hello":"world"}, 17 bytes): at the limit it is
// sent whole, one byte past it the answer is one RESPONSE_TOO_LARGE error
// with data null.
func TestAnswersAreMeasuredMarshalled(t *testing.T) {
	const answer = `{"hello":"world"}`
	for _, tt := range []struct {
		name  string
		limit int64
		code  string
	}{
		{name: "an answer at the limit is whole", limit: int64(len(answer))},
		{name: "an answer past it is one error", limit: int64(len(answer)) - 1, code: CodeResponseTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := New(newTestSchema(), Options{ComplexityLimit: testComplexityLimit, MaxResponseBytes: tt.limit})
			req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(`{"query":"{ hello }"}`))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var resp struct {
				Data   json.RawMessage
				Errors []struct {
					Extensions map[string]any
				}
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
				t.Fatalf("status %d, %v: %s", rec.Code, err, rec.Body)
			}
			if tt.code == "" {
				if len(resp.Errors) > 0 || string(resp.Data) != answer {
					t.Errorf("answer %s", rec.Body)
				}
				return
			}
			if len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != tt.code || string(resp.Data) != "null" {
				t.Errorf("answer %s, want one %s error and data null", rec.Body, tt.code)
			}
		})
	}
}
