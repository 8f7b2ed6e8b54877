package tests

import (
	"encoding/csv"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

const membersQuery = `query($q: String, $first: Int, $after: String) {
	members(query: $q, first: $first, after: $after) {
		edges { cursor node { accountId email emailVerified tier newsletters newsletter replyNotifications createdAt lastSeenAt } }
		pageInfo { hasNextPage endCursor } } }`

type membersAnswer struct {
	Edges []struct {
		Node struct {
			AccountID     string   `json:"accountId"`
			Email         string   `json:"email"`
			EmailVerified bool     `json:"emailVerified"`
			Tier          string   `json:"tier"`
			Newsletters   []string `json:"newsletters"`
			Newsletter    bool     `json:"newsletter"`
			// ReplyNotifications is the member's choice of emails about
			// replies (replynotify_test.go).
			ReplyNotifications bool      `json:"replyNotifications"`
			CreatedAt          time.Time `json:"createdAt"`
			LastSeenAt         time.Time `json:"lastSeenAt"`
		} `json:"node"`
	} `json:"edges"`
	PageInfo struct {
		HasNextPage bool   `json:"hasNextPage"`
		EndCursor   string `json:"endCursor"`
	} `json:"pageInfo"`
}

func (m membersAnswer) emails() string {
	var out []string
	for _, e := range m.Edges {
		out = append(out, e.Node.Email)
	}
	return strings.Join(out, " ")
}

// signInAs signs email in by its link and returns the session.
func (r *signInRig) signInAs(t *testing.T, email string) sessionAnswer {
	t.Helper()
	if a := r.request(t, email, "https://blog.test/"); a.code() != "" {
		t.Fatalf("requestSignInLink = %s", a.body)
	}
	link, _ := r.deliver(t).signInLink(t)
	var s sessionAnswer
	if a := r.gql(t, "", completeByLink, map[string]any{"token": tokenOf(t, link)}, "completeSignIn", &s); a.code() != "" {
		t.Fatalf("completeSignIn = %s", a.body)
	}
	return s
}

// members asks for the members as token.
func (r *signInRig) members(t *testing.T, token string, vars map[string]any) (membersAnswer, gqlAnswer) {
	t.Helper()
	var m membersAnswer
	a := r.gql(t, token, membersQuery, vars, "members", &m)
	return m, a
}

// TestSignInMakesMembers: completing a sign-in makes the reader a member
// of the publication in the sign-in's own transaction, once however often
// they sign in; admins list and search the members by address, in one
// Query a page, and no one else may.
func TestSignInMakesMembers(t *testing.T) {
	r := newSignInRig(t, 50)
	adminToken := r.token(auth.RoleAdmin)

	ann := r.signInAs(t, "ann@example.com")
	equal(t, "completeSignIn's DynamoDB requests", total(r.requests()), 2)
	equal(t, "its TransactWriteItems", r.requests()["TransactWriteItems"], 1)
	signedInAt := r.clock.Now()
	r.clock.Advance(time.Minute)
	again := r.signInAs(t, "Ann@Example.com")
	equal(t, "a second sign-in's DynamoDB requests", total(r.requests()), 2)
	equal(t, "the same account", again.Account.ID, ann.Account.ID)
	for _, e := range []string{"bob@example.com", "anna@example.org", "carl@example.com"} {
		r.signInAs(t, e)
	}

	m, a := r.members(t, adminToken, nil)
	if a.code() != "" {
		t.Fatalf("members = %s", a.body)
	}
	equal(t, "members' DynamoDB requests", total(r.requests()), 1)
	equal(t, "its Query", r.requests()["Query"], 1)
	equal(t, "members, by address, each once", m.emails(), "ann@example.com anna@example.org bob@example.com carl@example.com")
	n := m.Edges[0].Node
	equal(t, "accountId", n.AccountID, ann.Account.ID)
	equal(t, "emailVerified", n.EmailVerified, true)
	equal(t, "tier", n.Tier, "FREE")
	equal(t, "newsletters", len(n.Newsletters), 0)
	equal(t, "createdAt: the first sign-in", n.CreatedAt.Equal(signedInAt), true)
	equal(t, "lastSeenAt: the second", n.LastSeenAt.Equal(signedInAt.Add(time.Minute)), true)

	t.Run("search by the start of the address", func(t *testing.T) {
		m, _ := r.members(t, adminToken, map[string]any{"q": "ANN"})
		equal(t, "query ANN", m.emails(), "ann@example.com anna@example.org")
		equal(t, "its DynamoDB requests", total(r.requests()), 1)
		m, _ = r.members(t, adminToken, map[string]any{"q": "zed"})
		equal(t, "query zed", m.emails(), "")
	})
	t.Run("pages", func(t *testing.T) {
		m, _ := r.members(t, adminToken, map[string]any{"first": 3})
		equal(t, "page 1", m.emails(), "ann@example.com anna@example.org bob@example.com")
		equal(t, "hasNextPage", m.PageInfo.HasNextPage, true)
		m, _ = r.members(t, adminToken, map[string]any{"first": 3, "after": m.PageInfo.EndCursor})
		equal(t, "page 2", m.emails(), "carl@example.com")
		equal(t, "hasNextPage", m.PageInfo.HasNextPage, false)
		_, a := r.members(t, adminToken, map[string]any{"first": 101})
		equal(t, "first 101", a.code(), "BAD_USER_INPUT")
	})
	t.Run("admins only", func(t *testing.T) {
		_, a := r.members(t, "", nil)
		equal(t, "anonymous", a.code(), "UNAUTHENTICATED")
		_, a = r.members(t, r.tokenOf("reader-1", auth.RoleReader), nil)
		equal(t, "a reader", a.code(), "FORBIDDEN")
		_, a = r.members(t, ann.AccessToken, nil)
		equal(t, "a member's session", a.code(), "FORBIDDEN")
		_, a = r.members(t, r.tokenOf("author-1", auth.RoleAuthor), nil)
		equal(t, "an author", a.code(), "FORBIDDEN")
	})
	t.Run("a refresh marks the member seen once a day", func(t *testing.T) {
		// A refresh that asks for the account's email reads it: 3
		// requests, and 1 more for the first of a day.
		r.clock.Advance(time.Hour)
		var s sessionAnswer
		r.gql(t, "", refreshQuery, map[string]any{"t": again.RefreshToken}, "refreshSession", &s)
		equal(t, "a refresh on the sign-in's day: DynamoDB requests", total(r.requests()), 3)
		r.clock.Advance(24 * time.Hour)
		r.gql(t, "", refreshQuery, map[string]any{"t": s.RefreshToken}, "refreshSession", &s)
		equal(t, "the first refresh of the next day: DynamoDB requests", total(r.requests()), 4)
		seen := r.clock.Now()
		r.clock.Advance(time.Minute)
		r.gql(t, "", refreshQuery, map[string]any{"t": s.RefreshToken}, "refreshSession", &s)
		equal(t, "the second refresh of the day: DynamoDB requests", total(r.requests()), 3)
		m, _ := r.members(t, r.token(auth.RoleAdmin), map[string]any{"q": "ann@"})
		equal(t, "lastSeenAt", m.Edges[0].Node.LastSeenAt.Equal(seen), true)
	})
}

// csvServer serves the members' CSV export of r's store, counting each
// request's DynamoDB calls into r.
func (r *signInRig) csvServer(t *testing.T) string {
	t.Helper()
	h := graph.MembersCSV(r.store, r.opts.PublicationSlug, r.opts.Verifier, slog.New(slog.NewTextHandler(io.Discard, nil)))
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, counter := storage.WithRequestCounter(req.Context())
		r.mu.Lock()
		r.last = counter
		r.mu.Unlock()
		h.ServeHTTP(w, req.WithContext(ctx))
	}))
	t.Cleanup(hs.Close)
	return hs.URL + graph.MembersCSVPath
}

// TestMembersCSVExport: an admin downloads every member as CSV, a page of
// 100 a Query, with cells that would start a spreadsheet formula made
// text; no one else may. (Quoting is graph's TestMemberRowQuotes: no
// address a sign-in takes needs it.)
func TestMembersCSVExport(t *testing.T) {
	r := newSignInRig(t, 50)
	u := r.csvServer(t)
	for _, e := range []string{"=cmd@example.com", "-sum@example.com", "+tag@example.com", "plain@example.com"} {
		r.signInAs(t, e)
	}
	got := r.fetch(t, http.MethodGet, u, "", map[string]string{"Authorization": "Bearer " + r.token(auth.RoleAdmin)})
	equal(t, "status", got.status, http.StatusOK)
	equal(t, "Content-Type", got.header.Get("Content-Type"), "text/csv; charset=utf-8")
	equal(t, "Cache-Control", got.header.Get("Cache-Control"), "private, no-store")
	equal(t, "DynamoDB requests", total(r.requests()), 1)
	if !strings.Contains(got.body, "\r\n") {
		t.Error("the rows do not end in CRLF")
	}
	rows, err := csv.NewReader(strings.NewReader(got.body)).ReadAll()
	if err != nil {
		t.Fatalf("CSV %q: %v", got.body, err)
	}
	equal(t, "rows", len(rows), 5)
	equal(t, "header", strings.Join(rows[0], ","), "account_id,email,email_verified,tier,newsletters,created_at,last_seen_at")
	var emails []string
	for _, row := range rows[1:] {
		emails = append(emails, row[1])
		equal(t, "tier", row[3], "FREE")
	}
	equal(t, "emails", strings.Join(emails, " "), "'+tag@example.com '-sum@example.com '=cmd@example.com plain@example.com")

	t.Run("admins only", func(t *testing.T) {
		got := r.fetch(t, http.MethodGet, u, "", nil)
		equal(t, "anonymous", got.status, http.StatusUnauthorized)
		got = r.fetch(t, http.MethodGet, u, "", map[string]string{"Authorization": "Bearer " + r.tokenOf("reader-1", auth.RoleReader)})
		equal(t, "a reader", got.status, http.StatusForbidden)
		got = r.fetch(t, http.MethodGet, u, "", map[string]string{"Authorization": "Bearer " + r.tokenOf("author-1", auth.RoleAuthor)})
		equal(t, "an author", got.status, http.StatusForbidden)
	})
}
