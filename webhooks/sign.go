package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every webhook secret, as the Standard Webhooks
// specification writes them.
const SecretPrefix = "whsec_"

// SecretBytes is how many random bytes a secret holds.
const SecretBytes = 32

// SecretLength is the length of a secret NewSecret makes.
var SecretLength = len(SecretPrefix) + base64.StdEncoding.EncodedLen(SecretBytes)

// NewSecret returns a new signing secret: SecretPrefix and the standard
// base64 of SecretBytes random bytes.
func NewSecret() string {
	b := make([]byte, SecretBytes)
	_, _ = rand.Read(b) // crypto/rand never fails on a supported platform
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// secretKey returns the HMAC key of secret: the base64-decoded part after
// SecretPrefix.
func secretKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(key) == 0 {
		return nil, errors.New("webhooks: a secret is " + SecretPrefix + " and base64")
	}
	return key, nil
}

// Sign returns the webhook-signature header of a message: "v1,<base64 of
// HMAC-SHA256 of id.timestamp.body>" for each secret, space-separated, so
// a receiver that knows any of them verifies it (during a rotation, the
// old and the new one).
func Sign(secrets []string, id string, ts time.Time, body []byte) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		key, err := secretKey(s)
		if err != nil {
			return "", err
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " "), nil
}

// Verify reports whether the webhook-signature header sig holds a valid
// v1 signature by secret of the message id, ts, body: what a receiver
// does (besides checking that ts is recent).
func Verify(secret, id string, ts time.Time, body []byte, sig string) bool {
	want, err := Sign([]string{secret}, id, ts, body)
	if err != nil {
		return false
	}
	for _, s := range strings.Fields(sig) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return true
		}
	}
	return false
}
