package webhooks_test

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/webhooks"
)

// TestSecretsSealedWithTheHMACDerivedKeyStillSign stores a webhook whose
// secret is sealed as before the sealing key was derived by HKDF (AES-GCM
// under an HMAC of the label, prefix "sealed1:"): its deliveries are
// still signed with its secret, and a rotation seals the new one with the
// HKDF-derived key.
func TestSecretsSealedWithTheHMACDerivedKeyStillSign(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	r := newReceiver(t)
	key, err := e.store.Secret(ctx, "webhooks")
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("blog webhook secrets"))
	block, err := aes.NewCipher(mac.Sum(nil))
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	secret := webhooks.NewSecret()
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	sealed := "sealed1:" + base64.StdEncoding.EncodeToString(aead.Seal(nonce, nonce, []byte(secret), nil))
	url := r.URL
	w, err := e.store.CreateWebhook(ctx, storage.WebhookInput{URL: &url, Events: []storage.EventType{storage.EventPostPublished}}, sealed, e.hooks.Policy())
	if err != nil {
		t.Fatal(err)
	}

	e.handle(e.published("a"))
	got := r.deliveries()
	if len(got) != 1 || !verify(t, got[0], secret) {
		t.Fatalf("%d deliveries, want 1 signed with the secret sealed before", len(got))
	}

	if _, _, err := e.hooks.Rotate(ctx, w.ID); err != nil {
		t.Fatal(err)
	}
	stored, err := e.store.GetWebhook(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stored.Secret, "sealed2:") {
		t.Errorf("the rotated secret is kept as %.8s…, want sealed with the HKDF-derived key", stored.Secret)
	}
}
