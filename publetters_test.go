package main

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// outboxTo returns the text of the first email of the local outbox to
// email whose subject holds subject, "" when there is none yet; the
// default publication's admin reads the outbox.
func outboxTo(t *testing.T, base, email, subject string, tok pubsiteTokens) string {
	t.Helper()
	_, body := graphQLAt(t, base, "localhost", `{ outboxEmails(first: 50) { to subject text } }`, tok.adminA)
	var mails struct {
		OutboxEmails []struct{ To, Subject, Text string }
	}
	dataOf(t, "outboxEmails", body, &mails)
	for _, m := range mails.OutboxEmails {
		if m.To == email && strings.Contains(m.Subject, subject) {
			return m.Text
		}
	}
	return ""
}

// memberOf returns B's or A's member email as the staff token auth sees
// it: whether they get the newsletter and reply notifications.
func memberOf(t *testing.T, base, host, email, auth string) (newsletter, replies bool) {
	t.Helper()
	_, body := graphQLAt(t, base, host, `{ members(first: 50) { edges { node { email newsletter replyNotifications } } } }`, auth)
	var resp struct {
		Members struct {
			Edges []struct {
				Node struct {
					Email                          string
					Newsletter, ReplyNotifications bool
				}
			}
		}
	}
	dataOf(t, host+": members", body, &resp)
	for _, e := range resp.Members.Edges {
		if e.Node.Email == email {
			return e.Node.Newsletter, e.Node.ReplyNotifications
		}
	}
	t.Fatalf("%s: no member %s in %.400s", host, email, body)
	return false, false
}

var (
	newsletterLink = regexp.MustCompile(`Unsubscribe: (\S+)`)
	repliesLink    = regexp.MustCompile(`(http\S+/notifications/replies/unsubscribe\S+)`)
)

// TestPublicationLettersEndToEnd: on B, a reader who signed in on B's
// host and subscribed gets B's post by email, from the change feed's
// newsletter worker, and its unsubscribe link, clicked or posted
// one-click on B's host, unsubscribes them from B and not from A (where
// the same reader is a member too); refused on A's host. Opted in to
// reply notifications on B, they are emailed when B's owner replies to
// their comment, and that email's link turns them off on B's host.
func TestPublicationLettersEndToEnd(t *testing.T) {
	env := map[string]string{"JWT_SECRET": platformSecret, "DATA_DIR": t.TempDir()}
	base, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json"}, env)
	defer stop()
	p := port(t, base)
	a, b := "localhost:"+p, "notes.localhost:"+p
	tok := newPubsiteTokens(t)

	const email = "walker@example.com"
	onA, _ := signInAt(t, base, a, "http://"+a+"/welcome", email, tok)
	onB, _ := signInAt(t, base, b, "http://"+b+"/welcome", email, tok)
	for host, session := range map[string]string{a: onA, b: onB} {
		mustGraphQL(t, base, host, `mutation { setNewsletterSubscription(input: {subscribed: true}) { subscribed } }`, nil, session)
	}
	mustGraphQL(t, base, b, `mutation { setReplyNotifications(input: {enabled: true}) { enabled } }`, nil, onB)

	post := newPost(t, base, b, "Ridge walk", "ridge-walk", tok.ownerB)
	var letter string
	eventually(t, "B's newsletter in the outbox", func() bool {
		letter = outboxTo(t, base, email, "Ridge walk", tok)
		return letter != ""
	}, logs.String)
	m := newsletterLink.FindStringSubmatch(letter)
	if m == nil || !strings.HasPrefix(m[1], "http://"+b+"/newsletter/unsubscribe?") {
		t.Fatalf("B's newsletter has no unsubscribe link on B's host: %s", letter)
	}
	link := m[1]

	// A reply on B to the reader's comment.
	var comment struct {
		AddComment struct{ Comment struct{ ID, Status string } }
	}
	mustGraphQL(t, base, b, `mutation { addComment(input: {postId: "`+post+`", body: "Which ridge?"}) { comment { id status } } }`, &comment, onB)
	if comment.AddComment.Comment.Status == "PENDING" {
		mustGraphQL(t, base, b, `mutation { approveComment(input: {id: "`+comment.AddComment.Comment.ID+`"}) { comment { id } } }`, nil, tok.ownerB)
	}
	mustGraphQL(t, base, b, `mutation { addComment(input: {postId: "`+post+`", parentId: "`+comment.AddComment.Comment.ID+`", body: "The long one."}) { comment { id } } }`, nil, tok.ownerB)
	var reply string
	eventually(t, "B's reply notification in the outbox", func() bool {
		reply = outboxTo(t, base, email, "New reply", tok)
		return reply != ""
	}, logs.String)
	rm := repliesLink.FindStringSubmatch(reply)
	if rm == nil || !strings.HasPrefix(rm[1], "http://"+b+"/") {
		t.Fatalf("B's reply notification has no link on B's host: %s", reply)
	}

	refused := at(t, base, http.MethodGet, link, "")
	refused.host = a
	if code, _, _ := refused.do(t); code != http.StatusBadRequest {
		t.Errorf("B's unsubscribe link on A's host = %d, want 400", code)
	}
	if code, _, page := at(t, base, http.MethodPost, link, "List-Unsubscribe=One-Click", "Content-Type: application/x-www-form-urlencoded").do(t); code != http.StatusOK {
		t.Errorf("B's one-click unsubscribe on B's host = %d %.200s, want 200", code, page)
	}
	if code, _, page := at(t, base, http.MethodGet, link, "").do(t); code != http.StatusOK {
		t.Errorf("B's unsubscribe link clicked on B's host = %d %.200s, want 200", code, page)
	}
	if code, _, page := at(t, base, http.MethodGet, rm[1], "").do(t); code != http.StatusOK {
		t.Errorf("B's reply notifications' link on B's host = %d %.200s, want 200", code, page)
	}
	if letters, replies := memberOf(t, base, b, email, tok.ownerB); letters || replies {
		t.Errorf("B's member after the links: newsletter %v, reply notifications %v; want both off", letters, replies)
	}
	if letters, _ := memberOf(t, base, a, email, tok.adminA); !letters {
		t.Errorf("A's member after B's links: no newsletter, want A's still")
	}
}
