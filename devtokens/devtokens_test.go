package devtokens

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
)

// secrets is a data store's keys, made when first asked for.
type secrets map[string][]byte

func (s secrets) Secret(_ context.Context, name string) ([]byte, error) {
	if s[name] == nil {
		s[name] = make([]byte, 32)
		_, _ = rand.Read(s[name])
	}
	return s[name], nil
}

// TestDevelopmentTokensFollowTheTrustDomains logs the development tokens:
// the admin's and the author's are signed with the data store's staff
// key, the reader's with its reader key, which the verifier accepts for
// readers only.
func TestDevelopmentTokensFollowTheTrustDomains(t *testing.T) {
	var log bytes.Buffer
	keys := secrets{}
	now := time.Now()
	v, _, err := Verifier(context.Background(), keys, Options{Loopback: true, Logger: slog.New(slog.NewJSONHandler(&log, nil)), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var rec struct{ Role, Header string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Header != "" {
			tokens[rec.Role] = strings.TrimPrefix(rec.Header, "Authorization: Bearer ")
		}
	}
	staffOnly, err := auth.NewVerifier(auth.Config{Secret: keys[secretName]})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, role := range []string{auth.RoleAdmin, auth.RoleAuthor} {
		if a, err := staffOnly.Verify(ctx, tokens[role]); err != nil || !a.HasRole(role) {
			t.Errorf("the %s's token with the staff key = %+v, %v", role, a, err)
		}
	}
	if _, err := staffOnly.Verify(ctx, tokens[auth.RoleReader]); err == nil {
		t.Error("the reader's token verifies with the staff key")
	}
	if a, err := v.Verify(ctx, tokens[auth.RoleReader]); err != nil || !a.HasRole(auth.RoleReader) {
		t.Errorf("the reader's token = %+v, %v, want a reader", a, err)
	}
	forged, err := Mint(auth.Config{Secret: keys[readerSecretName]}, "jamie-rivera", auth.RoleAdmin, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, forged); err == nil || !strings.Contains(err.Error(), "reader key") {
		t.Errorf("an admin token of the development reader key: %v, want refused", err)
	}
}
