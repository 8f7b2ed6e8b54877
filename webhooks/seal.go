package webhooks

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
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
// derived from the table's server key "webhooks" (storage.Store.Secret,
// an item of its own), so a webhook's item alone (a stream record of it,
// an export of some items, a log of an item) does not show its secret.
// Anyone who reads the whole table reads the key too: the sealing is no
// defence against that.

// sealedPrefix starts a sealed secret.
const sealedPrefix = "sealed1:"

// sealKeyName is the server key the sealing key is derived from.
const sealKeyName = "webhooks"

// sealer seals and opens secrets once it has read its key.
type sealer struct {
	mu   sync.Mutex
	aead cipher.AEAD
}

// key returns the AEAD of the table's key, reading (or making) it the
// first time; a failure is tried again on the next call.
func (s *Service) key(ctx context.Context) (cipher.AEAD, error) {
	s.seal.mu.Lock()
	defer s.seal.mu.Unlock()
	if s.seal.aead != nil {
		return s.seal.aead, nil
	}
	k, err := s.store.Secret(ctx, sealKeyName)
	if err != nil {
		return nil, fmt.Errorf("webhooks' sealing key: %w", err)
	}
	mac := hmac.New(sha256.New, k)
	mac.Write([]byte("blog webhook secrets"))
	block, err := aes.NewCipher(mac.Sum(nil))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	s.seal.aead = aead
	return aead, nil
}

// sealSecret returns secret sealed for the table.
func (s *Service) sealSecret(ctx context.Context, secret string) (string, error) {
	aead, err := s.key(ctx)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return sealedPrefix + base64.StdEncoding.EncodeToString(aead.Seal(nonce, nonce, []byte(secret), nil)), nil
}

// openSecret returns the secret sealed is; one kept unsealed is returned
// as it is.
func (s *Service) openSecret(ctx context.Context, sealed string) (string, error) {
	rest, ok := strings.CutPrefix(sealed, sealedPrefix)
	if !ok {
		return sealed, nil
	}
	aead, err := s.key(ctx)
	if err != nil {
		return "", err
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
