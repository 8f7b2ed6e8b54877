package storage_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/storage"
)

// TestCheckReportsSentEmailToNoAccount: a newsletter sent to an address
// no account holds (as one to a deleted account whose deletion did not
// take it) is reported by the checker, as one still waiting is.
func TestCheckReportsSentEmailToNoAccount(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.store.EnqueueMail(ctx, storage.Email{ID: "news-1", To: "gone@example.com", Subject: "News", Text: "News.",
		Kind: "newsletter", CreatedAt: e.store.Now()}); err != nil {
		t.Fatal(err)
	}
	due := must[[]storage.Email](t)(e.store.DueMail(ctx, storage.LaneBulk, e.store.Now(), 10))
	if len(due) != 1 {
		t.Fatalf("due = %v, want the newsletter", due)
	}
	if !must[bool](t)(e.store.ClaimMail(ctx, due[0], e.store.Now().Add(time.Minute))) {
		t.Fatal("the claim failed")
	}
	due[0].Attempts++
	if err := e.store.FinishMail(ctx, due[0], storage.MailResult{Sent: true, Transport: "smtp"}); err != nil {
		t.Fatal(err)
	}
	found := strings.Join(must[[]string](t)(e.store.Check(ctx)), "\n")
	if !strings.Contains(found, "sent newsletter email news-1 names an address no account holds") {
		t.Errorf("the checker found:\n%s\nwant the sent newsletter reported", found)
	}
}
