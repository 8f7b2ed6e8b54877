package graph

import (
	"crypto/hmac"
	"encoding/base64"
	"strconv"
	"testing"
	"time"
)

func TestPreviewTokens(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	token := func(payload string, key []byte) string {
		return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(sign(key, []byte(payload)))
	}
	exp := strconv.FormatInt(now.Add(time.Hour).Unix(), 10)
	verify := func(tok string, at time.Time) (string, bool) {
		p, mac, ok := parsePreview(tok, at)
		if !ok || !hmac.Equal(mac, sign(key, p.raw)) {
			return "", false
		}
		return p.postID, true
	}
	if id, ok := verify(token("v1\npost-1\n"+exp, key), now); !ok || id != "post-1" {
		t.Fatalf("valid token: %q %v", id, ok)
	}
	for name, tok := range map[string]string{
		"expired":           token("v1\npost-1\n"+strconv.FormatInt(now.Unix(), 10), key),
		"another key":       token("v1\npost-1\n"+exp, []byte("another key of thirty-two bytes!")),
		"other version":     token("v2\npost-1\n"+exp, key),
		"no post":           token("v1\n\n"+exp, key),
		"extra part":        token("v1\npost-1\n"+exp+"\nx", key),
		"no signature":      base64.RawURLEncoding.EncodeToString([]byte("v1\npost-1\n" + exp)),
		"padded":            token("v1\npost-1\n"+exp, key) + "=",
		"long":              token("v1\n"+string(make([]byte, 600))+"\n"+exp, key),
		"empty":             "",
		"not base64":        "!!.!!",
		"time not a number": token("v1\npost-1\nsoon", key),
	} {
		if id, ok := verify(tok, now); ok {
			t.Errorf("%s: verified as %q", name, id)
		}
	}
}

func TestPageOf(t *testing.T) {
	two, c := 2, "c"
	for name, tt := range map[string]struct {
		first, last   *int
		after, before *string
		limit         int
		backward, bad bool
	}{
		"nothing":          {limit: 20},
		"first":            {first: &two, limit: 2},
		"last":             {last: &two, limit: 2, backward: true},
		"before alone":     {before: &c, limit: 20, backward: true},
		"first and last":   {first: &two, last: &two, bad: true},
		"first and before": {first: &two, before: &c, limit: 2},
	} {
		p, err := pageOf(tt.first, tt.after, tt.last, tt.before)
		if (err != nil) != tt.bad || err == nil && (p.Limit != tt.limit || p.Backward != tt.backward) {
			t.Errorf("%s: %+v, %v", name, p, err)
		}
	}
}
