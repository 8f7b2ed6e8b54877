package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/emersion/go-smtp"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/storage"
)

// TestPrivacyDeleteLeavesNoEmailNamingTheAddress: a reader's sign-in
// links and a newsletter went to them, and another newsletter failed for
// good, its reason naming the address; after they delete their account,
// no item of the table holds the address, the failed email is still in
// admins' view with the reason but not the address, another reader's
// emails stay, and the checker finds nothing.
func TestPrivacyDeleteLeavesNoEmailNamingTheAddress(t *testing.T) {
	r := newSignInRig(t, 50)
	ctx := context.Background()
	ann := r.signInAs(t, "ann@example.com")
	r.signInAs(t, "bob@example.com")
	// A second link, made for Ann's account.
	if a := r.request(t, "ann@example.com", "https://blog.test/"); a.code() != "" {
		t.Fatalf("requestSignInLink = %s", a.body)
	}
	r.deliver(t)
	news := func(id, to string) {
		t.Helper()
		if _, err := r.store.EnqueueMail(ctx, storage.Email{ID: id, To: to, Subject: "News", Text: "News.", HTML: "<p>News.</p>",
			Kind: "newsletter", CreatedAt: r.store.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	news("news-ann", "ann@example.com")
	news("news-bob", "bob@example.com")
	r.deliverN(t, 2)
	r.smtp.setRefuse(&smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "<Ann@Example.com>: no such user"})
	news("news-ann-2", "ann@example.com")
	if err := r.worker.SendDue(ctx); err != nil {
		t.Fatal(err)
	}
	r.smtp.setRefuse(nil)
	named := func() []string {
		var found []string
		for k, it := range scanAll(t, r.db, r.table) {
			if strings.Contains(strings.ToLower(fmt.Sprint(it)), "ann@example.com") {
				found = append(found, k)
			}
		}
		return found
	}
	if len(named()) == 0 {
		t.Fatal("no item names Ann's address before the deletion")
	}

	if a := r.gql(t, ann.AccessToken, deleteMine, map[string]any{"e": "ann@example.com"}, "", nil); a.code() != "" {
		t.Fatalf("deleteMyAccount = %s", a.body)
	}
	t.Logf("deleteMyAccount with 3 emails sent and 1 failed: %d DynamoDB requests %v", total(r.requests()), r.requests())
	if left := named(); len(left) > 0 {
		t.Errorf("after the deletion, items naming the address: %v", left)
	}
	var outbox []struct{ ID, To, State, LastError string }
	if a := r.gql(t, r.token(auth.RoleAdmin), `{ outboxEmails(first: 100) { id to state lastError } }`, nil, "outboxEmails", &outbox); a.code() != "" {
		t.Fatalf("outboxEmails = %s", a.body)
	}
	var failed, bobs int
	for _, e := range outbox {
		switch {
		case e.ID == "news-ann-2":
			failed++
			equal(t, "the failed email's recipient", e.To, storage.DeletedRecipient)
			equal(t, "its state", e.State, storage.MailFailed)
			equal(t, "its reason, without the address", e.LastError != "" && strings.Contains(e.LastError, "550") &&
				strings.Contains(e.LastError, "no such user"), true)
		case e.To == "bob@example.com":
			bobs++
		}
	}
	equal(t, "the failed email in admins' view", failed, 1)
	equal(t, "Bob's emails", bobs, 2)
	r.consistent()
}
