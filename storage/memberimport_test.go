package storage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/blogql/blog/storage"
)

// TestImportMembers: an imported list makes each new address a member
// who gets the newsletter, in the items a first sign-in makes (a later
// sign-in at the address finds its account, and the consistency checks
// find nothing), passing over an address that has an account, one given
// twice, and writing nothing for a list with a malformed address.
func TestImportMembers(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	signIn := func(email string) storage.SignedIn {
		t.Helper()
		var token string
		if err := e.store.RequestSignIn(ctx, storage.SignInRequest{Email: email, Client: "203.0.113.7", RedirectTo: "https://blog.test/",
			Compose: func(tok, _ string) (storage.Email, error) {
				token = tok
				return storage.Email{Subject: "Sign in", Text: "link", Kind: "sign-in"}, nil
			}}); err != nil {
			t.Fatal(err)
		}
		return must[storage.SignedIn](t)(e.store.CompleteSignIn(ctx, storage.SignInCredentials{Token: token}))
	}
	old := signIn("old@example.com")

	var invalid *storage.ValidationError
	if _, err := e.store.ImportMembers(ctx, []string{"new@example.com", "not an address"}); !errors.As(err, &invalid) {
		t.Fatalf("import with a malformed address: %v, want a validation error", err)
	}
	list := []string{"Old@example.com", "Twice@example.com", "twice@example.com"}
	for i := range 30 { // more than one transaction's
		list = append(list, fmt.Sprintf("member%02d@example.com", i))
	}
	made := must[[]storage.Account](t)(e.store.ImportMembers(ctx, list))
	equal(t, "accounts made", len(made), 31)

	members, last := must2(t)(e.store.NewsletterSubscribers(ctx, "", 100))
	equal(t, "last", last, "")
	equal(t, "members who get the newsletter", len(members), 32)
	for _, m := range members {
		if !m.EmailVerified || m.Tier != storage.TierFree || (m.Email == "old@example.com") != (m.AccountID == old.Account.ID) {
			t.Errorf("member %+v", m)
		}
	}
	equal(t, "a later sign-in's account", signIn("twice@example.com").Account.ID, made[0].ID)
	equal(t, "findings", fmt.Sprint(must[[]string](t)(e.store.Check(ctx))), "[]")
}

// must2 returns NewsletterSubscribers' results, failing t on its error.
func must2(t *testing.T) func([]*storage.Member, string, error) ([]*storage.Member, string) {
	return func(m []*storage.Member, last string, err error) ([]*storage.Member, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return m, last
	}
}
