package tests

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/blogql/blog/auth"
	"github.com/blogql/blog/graph"
	"github.com/blogql/blog/storage"
)

// exportServer serves the data export of r's store; r.requests() after
// a download are the export's DynamoDB requests.
func (r *signInRig) exportServer(t *testing.T) string {
	t.Helper()
	h := graph.ExportMyData(r.store, r.opts.PublicationSlug, r.opts.Verifier, slog.New(slog.NewTextHandler(io.Discard, nil)))
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx, counter := storage.WithRequestCounter(req.Context())
		r.mu.Lock()
		r.last = counter
		r.mu.Unlock()
		h.ServeHTTP(w, req.WithContext(ctx))
	}))
	t.Cleanup(hs.Close)
	return hs.URL + graph.ExportPath
}

// download GETs the export with token and returns the status and body.
func download(t *testing.T, u, token string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

type exportDoc struct {
	Account struct {
		ID    string `json:"id"`
		Email string `json:"email"`
	} `json:"account"`
	Sessions     []map[string]any `json:"sessions"`
	Publications []struct {
		Publication string           `json:"publication"`
		Membership  map[string]any   `json:"membership"`
		Comments    []map[string]any `json:"comments"`
		Reactions   []map[string]any `json:"reactions"`
	} `json:"publications"`
}

const deleteMine = `mutation($e: String!) { deleteMyAccount(input: {email: $e}) { accountId } }`

// TestPrivacyExportAndDelete: a signed-in reader downloads everything the
// platform holds about them (their comment, not another reader's), then
// deletes their account: their tokens are refused at once, their comment
// goes and their reactions leave the counts, and signing in again with
// the address makes a new account.
func TestPrivacyExportAndDelete(t *testing.T) {
	r := newSignInRig(t, 50)
	ctx := context.Background()
	ok[*CreateAuthorResponse](t)(CreateAuthor(ctx, r.admin, CreateAuthorInput{Subject: ptr("ada"), Name: "Ada Lovelace"}))
	var created struct {
		Post struct {
			ID string `json:"id"`
		} `json:"post"`
	}
	if a := r.gql(t, r.tokenOf("ada", auth.RoleAuthor), `mutation { createPost(input: {title: "Compost", slug: "compost", body: "Heaps."}) { post { id } } }`,
		nil, "createPost", &created); a.code() != "" {
		t.Fatalf("createPost = %s", a.body)
	}
	post := created.Post.ID
	ok[*PublishPostResponse](t)(PublishPost(ctx, r.as("ada", auth.RoleAuthor), PublishPostInput{Id: post}))
	ann := r.signInAs(t, "ann@example.com")
	bob := r.signInAs(t, "bob@example.com")
	comment := func(token, body string) string {
		var c struct {
			Comment struct {
				ID string `json:"id"`
			} `json:"comment"`
		}
		if a := r.gql(t, token, `mutation($p: ID!, $b: String!) { addComment(input: {postId: $p, body: $b}) { comment { id } } }`,
			map[string]any{"p": post, "b": body}, "addComment", &c); a.code() != "" {
			t.Fatalf("addComment = %s", a.body)
		}
		return c.Comment.ID
	}
	comment(ann.AccessToken, "Ann's secret thoughts.")
	bobs := comment(bob.AccessToken, "Bob was here.")
	reactAs := func(token, subject, kind string) gqlAnswer {
		return r.gql(t, token, `mutation($s: ID!, $k: ReactionKind!) { react(input: {subjectId: $s, kind: $k}) { post { id } } }`,
			map[string]any{"s": subject, "k": kind}, "", nil)
	}
	for _, k := range []string{"LIKE", "CLAP"} {
		if a := reactAs(ann.AccessToken, post, k); a.code() != "" {
			t.Fatalf("react = %s", a.body)
		}
	}
	reactAs(ann.AccessToken, bobs, "LOVE")
	reactAs(bob.AccessToken, post, "LIKE")
	u := r.exportServer(t)

	t.Run("export: their data, not another reader's", func(t *testing.T) {
		status, h, body := download(t, u, ann.AccessToken)
		equal(t, "status", status, http.StatusOK)
		equal(t, "Content-Type", h.Get("Content-Type"), "application/json")
		equal(t, "Content-Disposition", h.Get("Content-Disposition"), `attachment; filename="my-data.json"`)
		var doc exportDoc
		if err := json.Unmarshal([]byte(body), &doc); err != nil {
			t.Fatalf("export is not JSON: %v\n%s", err, body)
		}
		equal(t, "account", doc.Account.Email, "ann@example.com")
		equal(t, "sessions", len(doc.Sessions), 1)
		equal(t, "no refresh secret", strings.Contains(body, ann.RefreshToken) || strings.Contains(body, "refreshHash"), false)
		if len(doc.Publications) != 1 {
			t.Fatalf("publications = %s", body)
		}
		p := doc.Publications[0]
		equal(t, "membership", p.Membership["tier"], any("FREE"))
		equal(t, "comments", len(p.Comments), 1)
		equal(t, "their comment", p.Comments[0]["body"], any("Ann's secret thoughts."))
		equal(t, "its post's title", p.Comments[0]["postTitle"], any("Compost"))
		equal(t, "reactions", len(p.Reactions), 2)
		equal(t, "another's comment", strings.Contains(body, "Bob was here."), false)
	})
	t.Run("bad input", func(t *testing.T) {
		status, _, _ := download(t, u, "")
		equal(t, "export without a token", status, http.StatusUnauthorized)
		status, _, _ = download(t, u, r.token(auth.RoleAdmin))
		equal(t, "export with a staff token", status, http.StatusForbidden)
		a := r.gql(t, "", deleteMine, map[string]any{"e": "ann@example.com"}, "", nil)
		equal(t, "delete without a token", a.code(), "UNAUTHENTICATED")
		a = r.gql(t, r.token(auth.RoleAdmin), deleteMine, map[string]any{"e": "ann@example.com"}, "", nil)
		equal(t, "delete with a staff token", a.code(), "FORBIDDEN")
		a = r.gql(t, ann.AccessToken, deleteMine, map[string]any{"e": "bob@example.com"}, "", nil)
		equal(t, "delete confirmed with another address", a.code(), "BAD_USER_INPUT")
	})

	var del struct {
		AccountID string `json:"accountId"`
	}
	if a := r.gql(t, ann.AccessToken, deleteMine, map[string]any{"e": "ann@example.com"}, "deleteMyAccount", &del); a.code() != "" {
		t.Fatalf("deleteMyAccount = %s", a.body)
	}
	equal(t, "deleted account", del.AccountID, ann.Account.ID)
	t.Logf("deleteMyAccount of 1 comment, 3 reactions, 1 membership: %d DynamoDB requests %v", total(r.requests()), r.requests())

	t.Run("after: tokens refused, data gone, counts down", func(t *testing.T) {
		if a := r.gql(t, ann.AccessToken, deleteMine, map[string]any{"e": "ann@example.com"}, "deleteMyAccount", &del); a.code() != "" {
			t.Fatalf("deleteMyAccount again = %s", a.body)
		}
		status, _, _ := download(t, u, ann.AccessToken)
		equal(t, "export with the old token", status, http.StatusUnauthorized)
		a := r.gql(t, ann.AccessToken, `{ account { id } }`, nil, "", nil)
		equal(t, "account with the old token", a.code(), "UNAUTHENTICATED")
		a = r.gql(t, ann.AccessToken, `mutation($p: ID!) { addComment(input: {postId: $p, body: "Back from the dead."}) { comment { id } } }`,
			map[string]any{"p": post}, "", nil)
		equal(t, "addComment with the old token", a.code(), "UNAUTHENTICATED")
		a = reactAs(ann.AccessToken, post, "LOVE")
		equal(t, "react with the old token", a.code(), "UNAUTHENTICATED")
		a = r.gql(t, "", refreshQuery, map[string]any{"t": ann.RefreshToken}, "", nil)
		equal(t, "the old refresh token", a.code(), "UNAUTHENTICATED")

		a = r.gql(t, "", `query($p: ID!) { post(id: $p) { commentCount reactions { kind count }
			comments(first: 10) { edges { node { body reactions { kind count } } } } } }`, map[string]any{"p": post}, "", nil)
		equal(t, "their comment is gone", strings.Contains(a.body, "Ann's secret"), false)
		equal(t, "Bob's stays", strings.Contains(a.body, "Bob was here."), true)
		equal(t, "post reactions: Bob's LIKE only", strings.Contains(a.body, `{"kind":"LIKE","count":1}`) && !strings.Contains(a.body, `{"kind":"CLAP","count":1}`), true)
		equal(t, "comment reactions: Ann's LOVE gone", strings.Contains(a.body, `{"kind":"LOVE","count":1}`), false)

		again := r.signInAs(t, "ann@example.com")
		equal(t, "a fresh account", again.Account.ID != ann.Account.ID, true)
		status, _, body := download(t, u, again.AccessToken)
		equal(t, "the fresh account's export", status, http.StatusOK)
		equal(t, "holds nothing of the old one", strings.Contains(body, "Ann's secret"), false)
		r.consistent()
	})
}

// TestPrivacyDeleteTakesBackEmailsNotYetSent: a reader asks for another
// sign-in link and has a newsletter waiting in the outbox when they
// delete their account: neither is sent after it, and the checker finds
// nothing of the account left.
func TestPrivacyDeleteTakesBackEmailsNotYetSent(t *testing.T) {
	r := newSignInRig(t, 50)
	ctx := context.Background()
	ann := r.signInAs(t, "ann@example.com")
	r.signInAs(t, "bob@example.com")
	for _, email := range []string{"ann@example.com", "bob@example.com"} {
		if a := r.request(t, email, "https://blog.test/"); a.code() != "" {
			t.Fatalf("requestSignInLink = %s", a.body)
		}
	}
	for _, to := range []string{"ann@example.com", "bob@example.com"} {
		if _, err := r.store.EnqueueMail(ctx, storage.Email{ID: "news-" + to, To: to, Subject: "News", Text: "News.", HTML: "<p>News.</p>",
			Kind: "newsletter", CreatedAt: r.store.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if a := r.gql(t, ann.AccessToken, deleteMine, map[string]any{"e": "ann@example.com"}, "", nil); a.code() != "" {
		t.Fatalf("deleteMyAccount = %s", a.body)
	}
	t.Logf("deleteMyAccount with 2 emails waiting: %d DynamoDB requests %v", total(r.requests()), r.requests())
	for _, m := range r.deliverN(t, 2) {
		if !strings.Contains(m.header.Get("To"), "bob@example.com") {
			t.Errorf("an email to %q went after the account's deletion, want Bob's 2 only", m.header.Get("To"))
		}
	}
	r.consistent()
}
