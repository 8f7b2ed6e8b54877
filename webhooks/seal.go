package webhooks

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/blogql/blog/storage"
)

// Webhook secrets are kept sealed in the table: AES-256-GCM under a key
// derived by HKDF from the table's server key "webhooks"
// (storage.Store.Secret, an item of its own), so a webhook's item alone (a
// stream record of it, an export of some items, a log of an item) does
// not show its secret. Anyone who reads the whole table reads the key
// too: the sealing is no defence against that.
//
// Secrets sealed before the key was derived by HKDF carry the prefix
// legacyPrefix: their key was an HMAC of the same label, and they still
// open with it. A webhook's secret is sealed anew only when it is rotated
// (the old one signs beside it for the grace, then goes), so those
// secrets stay in the table until their webhook rotates: the legacy key
// stays as long as one may be there.

// Prefixes of sealed secrets.
const (
	sealedPrefix = "sealed2:"
	legacyPrefix = "sealed1:"
)

// sealKeyName is the server key the sealing key is derived from, and
// sealLabel the label of the derivation.
const (
	sealKeyName = "webhooks"
	sealLabel   = "blog webhook secrets"
)

// sealer seals and opens secrets once it has read its key.
type sealer struct {
	mu           sync.Mutex
	aead, legacy cipher.AEAD
}

// keys returns the AEADs of the table's key, reading (or making) it the
// first time; a failure is tried again on the next call. aead seals,
// legacy opens secrets of legacyPrefix.
func (s *Service) keys(ctx context.Context) (aead, legacy cipher.AEAD, err error) {
	s.seal.mu.Lock()
	defer s.seal.mu.Unlock()
	if s.seal.aead != nil {
		return s.seal.aead, s.seal.legacy, nil
	}
	k, err := s.store.Secret(ctx, sealKeyName)
	if err != nil {
		return nil, nil, fmt.Errorf("webhooks' sealing key: %w", err)
	}
	derived, err := hkdf.Key(sha256.New, k, nil, sealLabel, 32)
	if err != nil {
		return nil, nil, fmt.Errorf("webhooks' sealing key: %w", err)
	}
	if aead, err = newGCM(derived); err != nil {
		return nil, nil, err
	}
	mac := hmac.New(sha256.New, k)
	mac.Write([]byte(sealLabel))
	if legacy, err = newGCM(mac.Sum(nil)); err != nil {
		return nil, nil, err
	}
	s.seal.aead, s.seal.legacy = aead, legacy
	return aead, legacy, nil
}

// newGCM returns the AES-256-GCM cipher of key.
func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("webhooks' sealing key: %w", err)
	}
	return cipher.NewGCM(block)
}

// sealSecret returns secret sealed for the table.
func (s *Service) sealSecret(ctx context.Context, secret string) (string, error) {
	aead, _, err := s.keys(ctx)
	if err != nil {
		return "", err
	}
	return sealWith(aead, sealedPrefix, secret), nil
}

// sealWith returns secret sealed with aead, after prefix.
func sealWith(aead cipher.AEAD, prefix, secret string) string {
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return prefix + base64.StdEncoding.EncodeToString(aead.Seal(nonce, nonce, []byte(secret), nil))
}

// openSecret returns the secret sealed is; one kept unsealed is returned
// as it is.
func (s *Service) openSecret(ctx context.Context, sealed string) (string, error) {
	rest, ok := strings.CutPrefix(sealed, sealedPrefix)
	legacyRest, isLegacy := strings.CutPrefix(sealed, legacyPrefix)
	if !ok && !isLegacy {
		return sealed, nil
	}
	aead, legacy, err := s.keys(ctx)
	if err != nil {
		return "", err
	}
	if isLegacy {
		aead, rest = legacy, legacyRest
	}
	raw, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(raw) < aead.NonceSize() {
		return "", errors.New("webhooks: a sealed secret is malformed")
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], nil)
	if err != nil {
		return "", errors.New("webhooks: a sealed secret does not open with the table's key")
	}
	return string(plain), nil
}

// secretsOf returns the secrets that sign deliveries to w at now, opened.
func (s *Service) secretsOf(ctx context.Context, w *storage.Webhook, now time.Time) ([]string, error) {
	sealed := w.Secrets(now)
	out := make([]string, len(sealed))
	for i, v := range sealed {
		var err error
		if out[i], err = s.openSecret(ctx, v); err != nil {
			return nil, err
		}
	}
	return out, nil
}
