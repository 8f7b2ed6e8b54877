package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/blogql/blog/demo"
)

// TestStaffEventsReachOnlyTheirPublicationsWebhooks: on publication B
// (Field Notes) an account added to the staff by its address, given
// another role and removed is publication.member.added, .role.changed and
// .removed at B's webhook, naming B, the account and its roles and never
// the address; A's webhook, subscribed to the same events, gets only the
// change of A's own staff made after them.
func TestStaffEventsReachOnlyTheirPublicationsWebhooks(t *testing.T) {
	args, env, open := platformBackend(t)
	args = append(args, "-webhooks-allow-private-unsafe", "-webhooks-allow-http=true")
	_, _, stop := startServer(t, args, env)
	stop()
	store, closeStore := open()
	notes, err := store.PublicationBySlug(context.Background(), demo.NotesSlug)
	if err != nil {
		t.Fatal(err)
	}
	signInMember(t, store, "zoe@example.com")
	closeStore()

	base, _, stop := startServer(t, args, env)
	defer stop()
	hooks := &hookLog{}
	receiver := httptest.NewServer(hooks)
	defer receiver.Close()
	host, mae := "notes.localhost:"+port(t, base), pubToken(t, "owner", demo.NotesOwner, demo.NotesSlug)
	admin := platformToken(t, "admin", "ops")
	events := `["publication.member.added", "publication.member.role.changed", "publication.member.removed"]`
	mustGraphQL(t, base, host, fmt.Sprintf(`mutation { createWebhook(input: {url: %q, events: %s}) { secret } }`, receiver.URL+"/b", events), nil, mae)
	mustGraphQL(t, base, "localhost", fmt.Sprintf(`mutation { createWebhook(input: {url: %q, events: %s}) { secret } }`, receiver.URL+"/a", events), nil, admin)

	var added struct {
		AddPublicationMember struct{ Member struct{ Account string } }
	}
	mustGraphQL(t, base, host, fmt.Sprintf(`mutation { addPublicationMember(input: {publication: %q, email: "zoe@example.com", role: AUTHOR}) { member { account } } }`, demo.NotesSlug), &added, mae)
	zoe := added.AddPublicationMember.Member.Account
	// By id, on its own host, with a token bound by slug.
	mustGraphQL(t, base, host, fmt.Sprintf(`mutation { changePublicationMemberRole(input: {publication: %q, account: %q, role: EDITOR}) { member { role } } }`, notes.ID, zoe), nil, mae)
	mustGraphQL(t, base, host, fmt.Sprintf(`mutation { removePublicationMember(input: {publication: %q, account: %q}) { member { role } } }`, demo.NotesSlug, zoe), nil, mae)

	type staffData struct{ PublicationID, AccountID, Role, PreviousRole string }
	dataOf := func(d delivery) staffData {
		var msg struct{ Data staffData }
		if err := json.Unmarshal([]byte(d.body), &msg); err != nil {
			t.Fatalf("delivery %s: %v", d.body, err)
		}
		return msg.Data
	}
	// The demo's own staff (its owner, added by the seeding whose events
	// the feed may log after the webhook was made) is left out; the
	// deliveries of a webhook may come in any order.
	zoes := func() map[string]delivery {
		out := map[string]delivery{}
		for _, d := range hooks.deliveries("/b", "") {
			if dataOf(d).AccountID == zoe {
				out[d.typ] = d
			}
		}
		return out
	}
	eventually(t, "B's three staff events", func() bool { return len(zoes()) == 3 }, hooks.String)
	for typ, want := range map[string]staffData{
		"publication.member.added":        {notes.ID, zoe, "AUTHOR", ""},
		"publication.member.role.changed": {notes.ID, zoe, "EDITOR", "AUTHOR"},
		"publication.member.removed":      {notes.ID, zoe, "", "EDITOR"},
	} {
		d := zoes()[typ]
		if got := dataOf(d); got != want {
			t.Errorf("B's %s: %+v, want %+v", typ, got, want)
		}
		if strings.Contains(d.body, "@") {
			t.Errorf("B's %s carries an address: %s", typ, d.body)
		}
	}

	// A's own change, logged after B's: once A's webhook has it, it has
	// passed B's events without sending them.
	mustGraphQL(t, base, "localhost", `mutation { addPublicationMember(input: {publication: "default", account: "yan", role: CONTRIBUTOR}) { member { account } } }`, nil, admin)
	eventually(t, "A's staff event", func() bool {
		for _, d := range hooks.deliveries("/a", "") {
			if dataOf(d).AccountID == "yan" {
				return true
			}
		}
		return false
	}, hooks.String)
	for _, d := range hooks.deliveries("/a", "") {
		if data := dataOf(d); data.PublicationID != "default" {
			t.Errorf("A's webhook got %s %+v, want only A's own staff", d.typ, data)
		}
	}
}
