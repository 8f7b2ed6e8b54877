package tests

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/mailer"
	"github.com/blogql/blog/storage"
)

// signInRig is a server that signs readers in, its emails sent by SMTP
// with STARTTLS and AUTH to an SMTP server of the test.
type signInRig struct {
	*server
	smtp   *smtpServer
	worker *mailer.Worker
}

const testUserAgent = "signin-test/1.0 (a reader's browser)"

func newSignInRig(t *testing.T, clientAddresses int) *signInRig {
	t.Helper()
	return newSignInRigOn(t, nil, clientAddresses)
}

// newSignInRigOn is newSignInRig on a store made with storeOpts too.
func newSignInRigOn(t *testing.T, storeOpts []storage.Option, clientAddresses int) *signInRig {
	t.Helper()
	ss := newSMTPServer(t)
	sender, err := mailer.NewSMTP(mailer.SMTPConfig{
		Host: "127.0.0.1", Port: ss.port, Username: ss.user, Password: ss.password,
		From: "Test Blog <no-reply@blog.test>", TLS: mailer.TLSStartTLS,
		TLSConfig: &tls.Config{RootCAs: ss.rootCAs, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := newServerOn(t, storeOpts, withReaderKey, publishReaders, func(_ *storage.ClientConfig, o *graph.HandlerOptions) {
		o.SignIn = graph.SignInOptions{Key: testReaderSecret, Issuer: testIssuer, Audience: testAudience,
			Origins: []string{"https://blog.test"}, SiteName: "Test Blog", ClientAddresses: clientAddresses}
	})
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	return &signInRig{server: s, smtp: ss, worker: mailer.NewWorker(s.store, sender, logger)}
}

// gqlAnswer is a GraphQL answer over HTTP.
type gqlAnswer struct {
	status int
	body   string
	Data   map[string]json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

func (a gqlAnswer) code() string {
	if len(a.Errors) == 0 {
		return ""
	}
	c, _ := a.Errors[0].Extensions["code"].(string)
	return c
}

func (a gqlAnswer) ext(name string) any {
	if len(a.Errors) == 0 {
		return nil
	}
	return a.Errors[0].Extensions[name]
}

// gql sends query with vars over HTTP, with token as its bearer token
// when it is not empty, and decodes the answer's data field name into
// out when out is not nil and the answer has no error.
func (s *server) gql(t *testing.T, token, query string, vars map[string]any, name string, out any) gqlAnswer {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		t.Fatal(err)
	}
	headers := map[string]string{"User-Agent": testUserAgent}
	if token != "" {
		headers["Authorization"] = "Bearer " + token
	}
	h := s.fetch(t, http.MethodPost, s.url, string(body), headers)
	a := gqlAnswer{status: h.status, body: h.body}
	if err := json.Unmarshal([]byte(h.body), &a); err != nil {
		t.Fatalf("answer %q: %v", h.body, err)
	}
	if out != nil && len(a.Errors) == 0 {
		if err := json.Unmarshal(a.Data[name], out); err != nil {
			t.Fatalf("data %s of %q: %v", name, h.body, err)
		}
	}
	return a
}

const (
	requestSignInQuery = `mutation($email: String!, $to: String!) {
		requestSignInLink(input: {email: $email, redirectTo: $to}) { sent expiresAt } }`
	sessionFields  = `accessToken accessTokenExpiresAt refreshToken redirectTo session { id createdAt lastUsedAt userAgent } account { id email emailVerified createdAt }`
	completeByLink = `mutation($token: String) { completeSignIn(input: {token: $token}) { ` + sessionFields + ` } }`
	completeByCode = `mutation($email: String, $code: String) { completeSignIn(input: {email: $email, code: $code}) { ` + sessionFields + ` } }`
	refreshQuery   = `mutation($t: String!) { refreshSession(input: {refreshToken: $t}) { ` + sessionFields + ` } }`
	accountQuery   = `{ account { id email emailVerified sessions { id createdAt lastUsedAt userAgent } } }`
)

type sessionAnswer struct {
	AccessToken  string  `json:"accessToken"`
	RefreshToken string  `json:"refreshToken"`
	RedirectTo   *string `json:"redirectTo"`
	Session      struct {
		ID        string `json:"id"`
		UserAgent string `json:"userAgent"`
	} `json:"session"`
	Account struct {
		ID            string `json:"id"`
		Email         string `json:"email"`
		EmailVerified bool   `json:"emailVerified"`
	} `json:"account"`
}

// request asks for a sign-in email.
func (r *signInRig) request(t *testing.T, email, redirectTo string) gqlAnswer {
	t.Helper()
	return r.gql(t, "", requestSignInQuery, map[string]any{"email": email, "to": redirectTo}, "", nil)
}

// deliver sends what the outbox has due and returns the one email that
// arrived.
func (r *signInRig) deliver(t *testing.T) parsedEmail {
	t.Helper()
	return r.deliverN(t, 1)[0]
}

// deliverN sends what the outbox has due and returns the n emails that
// arrived, checking each came over TLS.
func (r *signInRig) deliverN(t *testing.T, n int) []parsedEmail {
	t.Helper()
	before := len(r.smtp.messages())
	if err := r.worker.SendDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := r.smtp.messages()[before:]
	if len(got) != n {
		t.Fatalf("%d emails arrived, want %d", len(got), n)
	}
	var out []parsedEmail
	for _, m := range got {
		if !m.tls {
			t.Error("an email was sent without STARTTLS")
		}
		out = append(out, parseEmail(t, m.data))
	}
	return out
}

// tokenOf returns the token of a sign-in link.
func tokenOf(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("token")
}

// TestReadersSignInByEmailLink signs a reader in end to end: the email
// arrives by SMTP with both parts and the link, the link makes a session
// once, the session's access token comments as a reader and is never
// staff, its refresh token rotates and a reused one revokes the session,
// a code signs in too, and the reader lists, revokes and ends sessions.
func TestReadersSignInByEmailLink(t *testing.T) {
	r := newSignInRig(t, 0)
	b := r.seedReadersBlog(t)

	a := r.request(t, "Reader@Example.com", "https://blog.test/welcome?next=%2Fposts")
	if a.code() != "" || !strings.Contains(string(a.Data["requestSignInLink"]), `"sent":true`) {
		t.Fatalf("requestSignInLink = %s", a.body)
	}
	equal(t, "requestSignInLink's DynamoDB requests", total(r.requests()), 2)
	equal(t, "its BatchGetItem", r.requests()["BatchGetItem"], 1)
	equal(t, "its TransactWriteItems", r.requests()["TransactWriteItems"], 1)

	e := r.deliver(t)
	msg := r.smtp.messages()[0]
	equal(t, "RCPT TO", msg.to, "reader@example.com")
	equal(t, "MAIL FROM", msg.from, "no-reply@blog.test")
	equal(t, "To", e.header.Get("To"), "<reader@example.com>")
	equal(t, "From", e.header.Get("From"), `"Test Blog" <no-reply@blog.test>`)
	equal(t, "Subject", e.header.Get("Subject"), "Your sign-in link for Test Blog")
	for _, h := range []string{"Message-Id", "Date", "Mime-Version"} {
		if e.header.Get(h) == "" {
			t.Errorf("the email has no %s header", h)
		}
	}
	link, code := e.signInLink(t)
	if !strings.HasPrefix(link, "https://blog.test/welcome?") || !strings.Contains(link, "next=%2Fposts") {
		t.Errorf("link %q, want the redirect with its query", link)
	}
	token := tokenOf(t, link)

	var first sessionAnswer
	a = r.gql(t, "", completeByLink, map[string]any{"token": token}, "completeSignIn", &first)
	if a.code() != "" {
		t.Fatalf("completeSignIn = %s", a.body)
	}
	equal(t, "completeSignIn's DynamoDB requests", total(r.requests()), 2)
	equal(t, "its GetItem", r.requests()["GetItem"], 1)
	equal(t, "its TransactWriteItems", r.requests()["TransactWriteItems"], 1)
	equal(t, "account email", first.Account.Email, "reader@example.com")
	equal(t, "emailVerified", first.Account.EmailVerified, true)
	equal(t, "redirectTo", *first.RedirectTo, "https://blog.test/welcome?next=%2Fposts")
	equal(t, "userAgent", first.Session.UserAgent, testUserAgent)

	t.Run("the link works once", func(t *testing.T) {
		a := r.gql(t, "", completeByLink, map[string]any{"token": token}, "", nil)
		equal(t, "replayed link", a.code(), "BAD_USER_INPUT")
		equal(t, "reason", a.ext("reason"), any("INVALID_SIGN_IN"))
		a = r.gql(t, "", completeByCode, map[string]any{"email": "reader@example.com", "code": code}, "", nil)
		equal(t, "the code of a used link", a.code(), "BAD_USER_INPUT")
	})

	t.Run("the access token comments as a reader and is never staff", func(t *testing.T) {
		a := r.gql(t, first.AccessToken, `mutation($p: ID!) { addComment(input: {postId: $p, body: "Signed in by email."}) { comment { commenter { isAuthor } } } }`,
			map[string]any{"p": b.post}, "", nil)
		if a.code() != "" || !strings.Contains(a.body, `"isAuthor":false`) {
			t.Fatalf("addComment with the session = %s", a.body)
		}
		a = r.gql(t, first.AccessToken, `mutation { createCategory(input: {slug: "by-a-reader", name: "By a reader"}) { category { slug } } }`, nil, "", nil)
		equal(t, "createCategory with a reader session", a.code(), "FORBIDDEN")
		a = r.gql(t, first.AccessToken, `{ outboxEmails { id } }`, nil, "", nil)
		equal(t, "outboxEmails with a reader session", a.code(), "FORBIDDEN")
		admin, err := auth.Sign(testReaderSecret, r.claims(first.Account.ID, auth.RoleAdmin))
		if err != nil {
			t.Fatal(err)
		}
		a = r.gql(t, admin, `{ account { id } }`, nil, "", nil)
		equal(t, "an admin token of the reader key", a.status, http.StatusUnauthorized)
	})

	var rotated sessionAnswer
	t.Run("the refresh token rotates and a reused one revokes the session", func(t *testing.T) {
		a := r.gql(t, "", refreshQuery, map[string]any{"t": first.RefreshToken}, "refreshSession", &rotated)
		if a.code() != "" || rotated.RefreshToken == first.RefreshToken || rotated.Session.ID != first.Session.ID {
			t.Fatalf("refreshSession = %s", a.body)
		}
		a = r.gql(t, rotated.AccessToken, accountQuery, nil, "", nil)
		if !strings.Contains(a.body, first.Session.ID) {
			t.Errorf("account with the new access token = %s", a.body)
		}
		a = r.gql(t, "", refreshQuery, map[string]any{"t": first.RefreshToken}, "", nil)
		equal(t, "a reused refresh token", a.code(), "UNAUTHENTICATED")
		equal(t, "reason", a.ext("reason"), any("REFRESH_TOKEN_REUSED"))
		a = r.gql(t, "", refreshQuery, map[string]any{"t": rotated.RefreshToken}, "", nil)
		equal(t, "the current token of the revoked session", a.code(), "UNAUTHENTICATED")
		equal(t, "reason", a.ext("reason"), any("INVALID_REFRESH_TOKEN"))
	})

	var byCode, byLink sessionAnswer
	t.Run("a code signs in the same account, a wrong one does not", func(t *testing.T) {
		r.clock.Advance(time.Second)
		r.request(t, "reader@example.com", "https://blog.test/")
		_, code := r.deliver(t).signInLink(t)
		wrong := "000000"
		if code == wrong {
			wrong = "000001"
		}
		a := r.gql(t, "", completeByCode, map[string]any{"email": "reader@example.com", "code": wrong}, "", nil)
		equal(t, "a wrong code", a.code(), "BAD_USER_INPUT")
		a = r.gql(t, "", completeByCode, map[string]any{"email": "READER@example.com", "code": code}, "completeSignIn", &byCode)
		if a.code() != "" {
			t.Fatalf("completeSignIn by code = %s", a.body)
		}
		equal(t, "completeSignIn by code's DynamoDB requests", total(r.requests()), 2)
		equal(t, "its Query", r.requests()["Query"], 1)
		equal(t, "account", byCode.Account.ID, first.Account.ID)
	})

	t.Run("the answer is the same for a known and an unknown address", func(t *testing.T) {
		known := r.request(t, "reader@example.com", "https://blog.test/")
		knownRequests := r.requests()
		unknown := r.request(t, "stranger@example.com", "https://blog.test/")
		equal(t, "answer", unknown.body, known.body)
		equal(t, "DynamoDB requests", total(r.requests()), total(knownRequests))
		emails := r.deliverN(t, 2)
		slices.SortFunc(emails, func(a, b parsedEmail) int { return strings.Compare(a.header.Get("To"), b.header.Get("To")) })
		if emails[0].header.Get("To") != "<reader@example.com>" || emails[1].header.Get("To") != "<stranger@example.com>" {
			t.Fatalf("emails to %q and %q", emails[0].header.Get("To"), emails[1].header.Get("To"))
		}
		link, _ := emails[0].signInLink(t)
		r.gql(t, "", completeByLink, map[string]any{"token": tokenOf(t, link)}, "completeSignIn", &byLink)
		equal(t, "account of the link", byLink.Account.ID, first.Account.ID)
	})

	t.Run("a reader lists, revokes and ends sessions", func(t *testing.T) {
		var acct struct {
			Sessions []struct {
				ID        string `json:"id"`
				UserAgent string `json:"userAgent"`
			} `json:"sessions"`
		}
		r.gql(t, byLink.AccessToken, accountQuery, nil, "account", &acct)
		if len(acct.Sessions) != 2 || acct.Sessions[0].ID != byCode.Session.ID || acct.Sessions[1].ID != byLink.Session.ID {
			t.Fatalf("sessions = %+v, want the code's and the link's", acct.Sessions)
		}
		revoke := `mutation($id: ID!) { revokeSession(input: {id: $id}) { sessionId } }`
		a := r.gql(t, byLink.AccessToken, revoke, map[string]any{"id": byCode.Session.ID}, "", nil)
		if a.code() != "" {
			t.Fatalf("revokeSession = %s", a.body)
		}
		a = r.gql(t, "", refreshQuery, map[string]any{"t": byCode.RefreshToken}, "", nil)
		equal(t, "refresh of a revoked session", a.code(), "UNAUTHENTICATED")
		a = r.gql(t, byLink.AccessToken, revoke, map[string]any{"id": byCode.Session.ID}, "", nil)
		equal(t, "revoking it again", a.code(), "NOT_FOUND")
		a = r.gql(t, r.tokenOf("someone-else"), revoke, map[string]any{"id": byLink.Session.ID}, "", nil)
		equal(t, "revoking with a token of no session", a.code(), "FORBIDDEN")

		a = r.gql(t, byLink.AccessToken, `mutation { signOut { sessionId } }`, nil, "", nil)
		if a.code() != "" || !strings.Contains(a.body, byLink.Session.ID) {
			t.Fatalf("signOut = %s", a.body)
		}
		a = r.gql(t, "", refreshQuery, map[string]any{"t": byLink.RefreshToken}, "", nil)
		equal(t, "refresh after signing out", a.code(), "UNAUTHENTICATED")
		r.gql(t, byLink.AccessToken, accountQuery, nil, "account", &acct)
		equal(t, "sessions left", len(acct.Sessions), 0)
	})

	t.Run("admins read the outbox", func(t *testing.T) {
		var emails []struct {
			To        string  `json:"to"`
			State     string  `json:"state"`
			Transport string  `json:"transport"`
			Text      *string `json:"text"`
		}
		a := r.gql(t, r.tokenOf("admin", auth.RoleAdmin), `{ outboxEmails(first: 10) { to state transport text } }`, nil, "outboxEmails", &emails)
		if a.code() != "" || len(emails) != 4 {
			t.Fatalf("outboxEmails = %s, want the 4 emails", a.body)
		}
		for _, e := range emails {
			if e.State != storage.MailSent || e.Transport != "smtp" || e.Text != nil {
				t.Errorf("email %+v, want sent by SMTP, its bodies (links) gone", e)
			}
		}
		a = r.gql(t, "", `{ outboxEmails { id } }`, nil, "", nil)
		equal(t, "outboxEmails anonymous", a.code(), "UNAUTHENTICATED")
	})
	r.consistent()
}

// tokenOf returns a staff-key token of sub with roles.
func (s *server) tokenOf(sub string, roles ...string) string {
	tok, err := auth.Sign(testSecret, s.claims(sub, roles...))
	if err != nil {
		s.t.Fatal(err)
	}
	return tok
}

// TestSignInRefusesBadLinksAndInput sends expired, forged and replayed
// links, foreign redirects and malformed addresses: each is refused with
// a clear error, and nothing is written or mailed for bad input. Two
// completions of one link at once make one session.
func TestSignInRefusesBadLinksAndInput(t *testing.T) {
	r := newSignInRig(t, 0)

	before := r.snapshot()
	for _, c := range []struct{ name, email, to, field string }{
		{"a foreign origin", "reader@example.com", "https://evil.test/welcome", "redirectTo"},
		{"another scheme", "reader@example.com", "javascript://blog.test/%0aalert(1)", "redirectTo"},
		{"another port", "reader@example.com", "https://blog.test:8443/", "redirectTo"},
		{"a relative redirect", "reader@example.com", "/welcome", "redirectTo"},
		{"credentials in the redirect", "reader@example.com", "https://user@blog.test/", "redirectTo"},
		{"no at sign", "reader.example.com", "https://blog.test/", "email"},
		{"a display name", "Reader <reader@example.com>", "https://blog.test/", "email"},
		{"two addresses", "a@example.com, b@example.com", "https://blog.test/", "email"},
		{"a header injection", "reader@example.com\r\nBcc: x@example.com", "https://blog.test/", "email"},
		{"no dotted domain", "reader@localhost", "https://blog.test/", "email"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := r.request(t, c.email, c.to)
			equal(t, "code", a.code(), "BAD_USER_INPUT")
			equal(t, "field", a.ext("field"), any(c.field))
		})
	}
	r.unchanged(before)

	r.request(t, "reader@example.com", "https://blog.test/")
	link, _ := r.deliver(t).signInLink(t)
	token := tokenOf(t, link)

	t.Run("a forged token", func(t *testing.T) {
		forged := []rune(token)
		forged[3] ^= 1
		a := r.gql(t, "", completeByLink, map[string]any{"token": string(forged)}, "", nil)
		equal(t, "forged", a.code(), "BAD_USER_INPUT")
		a = r.gql(t, "", completeByLink, map[string]any{"token": "not-a-token"}, "", nil)
		equal(t, "made up", a.code(), "BAD_USER_INPUT")
		a = r.gql(t, "", `mutation($t: String, $e: String, $c: String) { completeSignIn(input: {token: $t, email: $e, code: $c}) { accessToken } }`,
			map[string]any{"t": token, "e": "reader@example.com", "c": "123456"}, "", nil)
		equal(t, "a token and a code", a.code(), "BAD_USER_INPUT")
	})

	t.Run("two completions at once make one session", func(t *testing.T) {
		var wg sync.WaitGroup
		answers := make([]gqlAnswer, 2)
		for i := range answers {
			wg.Go(func() { answers[i] = r.gql(t, "", completeByLink, map[string]any{"token": token}, "", nil) })
		}
		wg.Wait()
		okN, refused := 0, 0
		for _, a := range answers {
			switch a.code() {
			case "":
				okN++
			case "BAD_USER_INPUT":
				refused++
			}
		}
		if okN != 1 || refused != 1 {
			t.Fatalf("answers %s / %s, want one session and one refusal", answers[0].body, answers[1].body)
		}
	})

	t.Run("an expired link", func(t *testing.T) {
		r.clock.Advance(time.Second)
		r.request(t, "late@example.com", "https://blog.test/")
		link, code := r.deliver(t).signInLink(t)
		r.clock.Advance(storage.DefaultSignInTTL + time.Second)
		a := r.gql(t, "", completeByLink, map[string]any{"token": tokenOf(t, link)}, "", nil)
		equal(t, "expired link", a.code(), "BAD_USER_INPUT")
		equal(t, "reason", a.ext("reason"), any("INVALID_SIGN_IN"))
		a = r.gql(t, "", completeByCode, map[string]any{"email": "late@example.com", "code": code}, "", nil)
		equal(t, "expired code", a.code(), "BAD_USER_INPUT")
	})
	r.consistent()
}

// TestSignInEmailsAreLimited sends a sixth email to one address in an
// hour, and emails to more addresses than one client may mail: both are
// RATE_LIMITED, say which limit and when to retry, and send nothing.
func TestSignInEmailsAreLimited(t *testing.T) {
	r := newSignInRig(t, 3)
	for i := range storage.SignInEmailsPerHour {
		if a := r.request(t, "often@example.com", "https://blog.test/"); a.code() != "" {
			t.Fatalf("email %d: %s", i+1, a.body)
		}
		r.clock.Advance(time.Minute)
	}
	a := r.request(t, "often@example.com", "https://blog.test/")
	equal(t, "the 6th email to one address", a.code(), "RATE_LIMITED")
	equal(t, "reason", a.ext("reason"), any("EMAIL"))
	equal(t, "retryAfter", a.ext("retryAfter"), any(float64(55*60)))
	if err := r.worker.SendDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	equal(t, "emails sent", len(r.smtp.messages()), storage.SignInEmailsPerHour)

	for _, addr := range []string{"second@example.com", "third@example.com"} {
		if a := r.request(t, addr, "https://blog.test/"); a.code() != "" {
			t.Fatalf("%s: %s", addr, a.body)
		}
	}
	before := r.snapshot()
	a = r.request(t, "fourth@example.com", "https://blog.test/")
	equal(t, "a 4th address from one client", a.code(), "RATE_LIMITED")
	equal(t, "reason", a.ext("reason"), any("CLIENT"))
	r.unchanged(before)

	r.clock.Advance(time.Hour)
	if a := r.request(t, "fourth@example.com", "https://blog.test/"); a.code() != "" {
		t.Errorf("an hour later: %s", a.body)
	}
}

// TestSignInEmailFailures has the SMTP server refuse the recipient, for a
// moment (451: the email is tried again and goes) and for good (550: it
// fails, and admins read why).
func TestSignInEmailFailures(t *testing.T) {
	r := newSignInRig(t, 0)
	ctx := context.Background()
	admin := r.tokenOf("admin", auth.RoleAdmin)
	outbox := func() []map[string]any {
		var emails []map[string]any
		r.gql(t, admin, `{ outboxEmails { to state attempts lastError } }`, nil, "outboxEmails", &emails)
		return emails
	}

	r.smtp.setRefuse(&smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try later"})
	r.request(t, "later@example.com", "https://blog.test/")
	if err := r.worker.SendDue(ctx); err != nil {
		t.Fatal(err)
	}
	e := outbox()[0]
	if e["state"] != storage.MailPending || e["attempts"] != float64(1) || !strings.Contains(e["lastError"].(string), "451") {
		t.Fatalf("after a 451: %v", e)
	}
	r.smtp.setRefuse(nil)
	r.clock.Advance(time.Minute)
	if err := r.worker.SendDue(ctx); err != nil {
		t.Fatal(err)
	}
	equal(t, "state after the retry", outbox()[0]["state"], any(storage.MailSent))
	equal(t, "emails received", len(r.smtp.messages()), 1)

	r.smtp.setRefuse(&smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"})
	r.clock.Advance(time.Second)
	r.request(t, "nobody@example.com", "https://blog.test/")
	if err := r.worker.SendDue(ctx); err != nil {
		t.Fatal(err)
	}
	e = outbox()[0]
	if e["to"] != "nobody@example.com" || e["state"] != storage.MailFailed || !strings.Contains(e["lastError"].(string), "550") {
		t.Fatalf("after a 550: %v", e)
	}
	r.clock.Advance(time.Hour)
	if err := r.worker.SendDue(ctx); err != nil {
		t.Fatal(err)
	}
	equal(t, "emails received", len(r.smtp.messages()), 1)
	r.consistent()
}
