package tests

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/blogql/blog/auth"
)

// testReaderSecret signs the reader tokens of the tests that configure a
// reader key: what a frontend's comment form holds.
var testReaderSecret = []byte("end-to-end-tests-reader-secret-0123456789")

// withReaderKey configures the reader key of a test server.
func withReaderKey(c *auth.Config) { c.Reader.Secret = testReaderSecret }

// TestReaderKeySignsReadersOnly has a frontend's reader key sign tokens:
// a reader's comments, and an admin's, an author's and an editor's token
// are refused with 401 UNAUTHENTICATED, their mutations writing nothing,
// while the staff key's tokens, readers' included, work as before.
func TestReaderKeySignsReadersOnly(t *testing.T) {
	s := newServerWith(t, withReaderKey, publishReaders)
	b := s.seedReadersBlog(t)
	ctx := context.Background()

	reader := s.claims("auth0|reader-1", auth.RoleReader)
	reader.Name = "Rita Reader"
	r := ok[*AddCommentResponse](t)(AddComment(ctx, s.withClaims(reader, testReaderSecret), AddCommentInput{PostId: b.post, Body: "Signed by the frontend."}))
	equal(t, "commenter", r.AddComment.Comment.Commenter.Name, "Rita Reader")
	_, err := CreatePost(ctx, s.withClaims(reader, testReaderSecret), CreatePostInput{Title: "Mine", Slug: "mine"})
	equal(t, "a reader's createPost", code(err), "FORBIDDEN")

	for _, c := range []struct {
		name  string
		sub   string
		roles []string
	}{
		{"an admin", "admin", []string{auth.RoleAdmin}},
		{"an author", "ada", []string{auth.RoleAuthor}},
		{"an editor", "ada", []string{"editor"}},
		{"a reader and an admin", "admin", []string{auth.RoleReader, auth.RoleAdmin}},
	} {
		t.Run("the reader key cannot sign "+c.name, func(t *testing.T) {
			client := s.withClaims(s.claims(c.sub, c.roles...), testReaderSecret)
			before := s.snapshot()
			_, err := CreateCategory(ctx, client, CreateCategoryInput{Slug: "by-the-frontend", Name: "By the frontend"})
			equal(t, "createCategory code", code(err), "UNAUTHENTICATED")
			equal(t, "createCategory status", status(err), http.StatusUnauthorized)
			if err == nil || !strings.Contains(err.Error(), "reader key") {
				t.Errorf("error %v, want one that names the reader key", err)
			}
			_, err = AddComment(ctx, client, AddCommentInput{PostId: b.post, Body: "Not as a reader either."})
			equal(t, "addComment code", code(err), "UNAUTHENTICATED")
			s.unchanged(before)
		})
	}

	t.Run("the staff key's tokens work as before", func(t *testing.T) {
		ok[*CreateCategoryResponse](t)(CreateCategory(ctx, s.as("admin", auth.RoleAdmin), CreateCategoryInput{Slug: "by-staff", Name: "By staff"}))
		s.clock.Advance(time.Minute)
		ok[*AddCommentResponse](t)(AddComment(ctx, s.reader("auth0|reader-2", "Old Frontend", ""), AddCommentInput{PostId: b.post, Body: "Signed with the staff key, as before."}))
		s.consistent()
	})
}

// TestReaderProviderCannotSignStaff has an identity provider of readers
// sign an admin token with the staff provider's key id and issuer, and
// the reader key sign one with the staff's kid: the key that verifies
// decides, so both are refused and write nothing, while the staff
// provider's admin and the reader provider's reader are served.
func TestReaderProviderCannotSignStaff(t *testing.T) {
	staffKey, readerKey := newRSAKey(t), newRSAKey(t)
	staffIDP, readerIDP := jwksServer(t, "idp-1", staffKey), jwksServer(t, "idp-1", readerKey)
	s := newServerWith(t, func(c *auth.Config) {
		c.Secret = nil
		c.JWKSURL = staffIDP + "/.well-known/jwks.json"
		c.Reader = auth.ReaderConfig{JWKSURL: readerIDP + "/.well-known/jwks.json", Secret: testReaderSecret}
	}, publishReaders)
	ctx := context.Background()
	sign := func(c auth.Claims, method jwt.SigningMethod, key any) string {
		tok := jwt.NewWithClaims(method, c)
		tok.Header["kid"] = "idp-1"
		signed, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return signed
	}
	admin := s.claims("admin", auth.RoleAdmin) // the staff provider's issuer and audience
	create := func(token string) error {
		_, err := CreateCategory(ctx, s.withToken(token), CreateCategoryInput{Slug: "forged", Name: "Forged"})
		return err
	}
	before := s.snapshot()
	for name, token := range map[string]string{
		"the reader provider's key": sign(admin, jwt.SigningMethodRS256, readerKey),
		"the reader secret":         sign(admin, jwt.SigningMethodHS256, testReaderSecret),
	} {
		err := create(token)
		equal(t, name+": code", code(err), "UNAUTHENTICATED")
		equal(t, name+": status", status(err), http.StatusUnauthorized)
	}
	s.unchanged(before)
	if err := create(sign(admin, jwt.SigningMethodRS256, staffKey)); err != nil {
		t.Fatalf("the staff provider's admin: %v", err)
	}
	staffAdmin := s.withToken(sign(admin, jwt.SigningMethodRS256, staffKey))
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, staffAdmin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada Lovelace"}))
	ada := s.withToken(sign(s.claims("ada", auth.RoleAuthor), jwt.SigningMethodRS256, staffKey))
	post := ok[*CreatePostResponse](t)(CreatePost(ctx, ada, CreatePostInput{Title: "Open", Slug: "open"})).CreatePost.Post.Id
	ok[*PublishPostResponse](t)(PublishPost(ctx, ada, PublishPostInput{Id: post}))
	rosa := s.withToken(sign(s.claims("google-oauth2|rosa", auth.RoleReader), jwt.SigningMethodRS256, readerKey))
	ok[*AddCommentResponse](t)(AddComment(ctx, rosa, AddCommentInput{PostId: post, Body: "Signed by the readers' provider."}))
	s.consistent()
}

func newRSAKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// jwksServer serves a JWKS of key under kid and returns its URL.
func jwksServer(t *testing.T, kid string, key *rsa.PrivateKey) string {
	t.Helper()
	b64 := base64.RawURLEncoding
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
			"n": b64.EncodeToString(key.N.Bytes()), "e": b64.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
		}}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
