package graph

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPreviewTokens seals and opens preview tokens: a token opens with
// its key until it expires, shows nothing of what it holds, and anything
// altered, forged, or sealed with another key does not open.
func TestPreviewTokens(t *testing.T) {
	aead := must(previewAEAD([]byte("0123456789abcdef0123456789abcdef")))
	other := must(previewAEAD([]byte("another key of thirty-two bytes!")))
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const id = "0190a000-0000-7000-8000-000000000001"
	token := sealPreview(aead, id, now.Add(time.Hour))

	if got, ok := openPreview(aead, token, now); !ok || got != id {
		t.Fatalf("valid token: %q %v", got, ok)
	}
	if again := sealPreview(aead, id, now.Add(time.Hour)); again == token {
		t.Error("two tokens of one post and time are the same: the nonce is not random")
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		t.Fatal(err)
	}
	exp := make([]byte, 8)
	binary.BigEndian.PutUint64(exp, uint64(now.Add(time.Hour).Unix()))
	for _, internal := range [][]byte{[]byte(id), []byte(id[:8]), exp, []byte(strconv.FormatInt(now.Add(time.Hour).Unix(), 10))} {
		if bytes.Contains(raw, internal) || strings.Contains(token, string(internal)) {
			t.Errorf("token %q shows %q", token, internal)
		}
	}

	// flip changes bit 0 of byte i of the sealed token.
	flip := func(i int) string {
		b := bytes.Clone(raw)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	for name, tok := range map[string]string{
		"expired":         token,
		"another key":     sealPreview(other, id, now.Add(2*time.Hour)),
		"nonce altered":   flip(0),
		"payload altered": flip(previewNonceBytes + 2),
		"tag altered":     flip(len(raw) - 1),
		"cut short":       base64.RawURLEncoding.EncodeToString(raw[:len(raw)-1]),
		"padded":          token + "=",
		"long":            sealPreview(aead, strings.Repeat("x", 600), now.Add(2*time.Hour)),
		"empty":           "",
		"not base64":      "!!!!",
		"the old format":  "djEKcG9zdC0xCjE3NzIzNzA4MDA.c2lnbmF0dXJl",
		"no post":         sealPreview(aead, "", now.Add(2*time.Hour)),
		"another purpose": base64.RawURLEncoding.EncodeToString(aead.Seal(raw[:previewNonceBytes:previewNonceBytes], raw[:previewNonceBytes], append(exp, id...), []byte("cursor"))),
	} {
		at := now
		if name == "expired" {
			at = now.Add(time.Hour)
		}
		if got, ok := openPreview(aead, tok, at); ok {
			t.Errorf("%s: opened as %q", name, got)
		}
	}
}

// TestPreviewTokensOfTheHMACDerivedKeyStillOpen: tokens sealed before the
// key was derived by HKDF (with an HMAC of its label) still open until
// they expire; new ones are sealed with the HKDF-derived key.
func TestPreviewTokensOfTheHMACDerivedKeyStillOpen(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	keys := must(previewKeysOf(secret))
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const id = "0190a000-0000-7000-8000-000000000001"
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("blog preview token encryption"))
	old := sealPreview(must(newGCM(m.Sum(nil))), id, now.Add(time.Hour))
	if got, ok := keys.open(old, now); !ok || got != id {
		t.Errorf("a token of the HMAC-derived key: %q %v", got, ok)
	}
	if _, ok := keys.open(old, now.Add(time.Hour)); ok {
		t.Error("an expired token of the HMAC-derived key opened")
	}
	hkdfKey := must(hkdf.Key(sha256.New, secret, nil, "blog preview token encryption", 32))
	tok := sealPreview(keys.aead, id, now.Add(time.Hour))
	if got, ok := openPreview(must(newGCM(hkdfKey)), tok, now); !ok || got != id {
		t.Errorf("a new token does not open with the HKDF-derived key: %q %v", got, ok)
	}
	if _, ok := openPreview(keys.legacy, tok, now); ok {
		t.Error("a new token opened with the HMAC-derived key")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
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
