package graph

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/blogql/blog/auth"
)

// TestWithActor checks what the token middleware answers before any
// resolver runs: the actor of a valid token passes on, an invalid token is
// 401 UNAUTHENTICATED, and an identity provider that cannot be reached is
// 503 INTERNAL, logged.
func TestWithActor(t *testing.T) {
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer idp.Close()
	secret := []byte("0123456789abcdef0123456789abcdef")
	v, err := auth.NewVerifier(auth.Config{Secret: secret, JWKSURL: idp.URL})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	h := withActor(v, slog.New(slog.NewTextHandler(&log, nil)), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := auth.ActorFrom(r.Context())
		w.Write([]byte("actor " + a.ID + " " + strings.Join(a.Roles, ",")))
	}))

	valid, err := auth.Sign(secret, auth.Claims{
		RegisteredClaims: jwt.RegisteredClaims{Subject: "ada", ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour))},
		Roles:            []string{auth.RoleAdmin},
	})
	if err != nil {
		t.Fatal(err)
	}
	seg := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	// The keys are fetched before the signature is checked, so any
	// signature will do.
	ofProvider := seg(map[string]string{"alg": "RS256", "kid": "k1"}) + "." +
		seg(map[string]any{"sub": "ada", "exp": time.Now().Add(time.Hour).Unix()}) + ".c2ln"

	tests := []struct {
		name, header string
		status       int
		body         string
	}{
		{"no token is anonymous", "", http.StatusOK, "actor  "},
		{"a valid token names its actor", "Bearer " + valid, http.StatusOK, "actor ada admin"},
		{"an invalid token is refused", "Bearer " + valid + "x", http.StatusUnauthorized, `"code":"UNAUTHENTICATED"`},
		{"unreachable keys are the server's fault", "Bearer " + ofProvider, http.StatusServiceUnavailable, `"code":"INTERNAL"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.body) {
				t.Errorf("got %d %q, want %d with %q", rec.Code, rec.Body, tt.status, tt.body)
			}
		})
	}
	if !strings.Contains(log.String(), "signing keys unavailable") {
		t.Errorf("the failed fetch was not logged: %s", log.String())
	}
}
