package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/blogql/blog/storage"
)

// TestSignInTriesAgainWhenARefusalWasNotAboutTheRequest: a sign-in whose
// transaction is refused, for its first action, while its request still
// stands unexpired (DynamoDB Local, busy, has answered so) is tried
// again, nothing having been written, and succeeds; once consumed the
// link is refused as used.
func TestSignInTriesAgainWhenARefusalWasNotAboutTheRequest(t *testing.T) {
	e := newRaceEnv(t)
	ctx := context.Background()
	var token string
	if err := e.store.RequestSignIn(ctx, storage.SignInRequest{Email: "ann@example.com", Client: "203.0.113.7", RedirectTo: "https://blog.test/",
		Compose: func(tok, _ string) (storage.Email, error) {
			token = tok
			return storage.Email{Subject: "Sign in", Text: "link", HTML: "<p>link</p>", Kind: "sign-in"}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	e.hooks.at("TransactWriteItems", 1, cancelled("ConditionalCheckFailed"))
	in, err := e.store.CompleteSignIn(ctx, storage.SignInCredentials{Token: token})
	if err != nil {
		t.Fatalf("a sign-in refused once though its request stood: %v, want it tried again", err)
	}
	if in.Account.Email != "ann@example.com" || in.Session.ID == "" {
		t.Errorf("signed in as %+v, session %+v", in.Account, in.Session)
	}
	if _, err := e.store.CompleteSignIn(ctx, storage.SignInCredentials{Token: token}); !errors.Is(err, storage.ErrSignInInvalid) {
		t.Errorf("the link used again: %v, want ErrSignInInvalid", err)
	}
}
