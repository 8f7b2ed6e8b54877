package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/blogql/blog/demo"
	"github.com/blogql/blog/newsletter"
	"github.com/blogql/blog/storage"
)

// The readers and media of a publication other than the default, on its
// own hosts (pubsite.go), tried on the demo platform: the demo blog (A,
// at localhost) and Field Notes (B, at notes.localhost).

// pubsiteTokens are the tokens of the demo platform's tests: A's admin
// (a token bound to no publication) and B's owner (bound to B).
type pubsiteTokens struct{ adminA, ownerB string }

func newPubsiteTokens(t *testing.T) pubsiteTokens {
	t.Helper()
	owner := func() string {
		var out, errs bytes.Buffer
		if err := runToken(context.Background(), []string{"-role", "owner", "-sub", demo.NotesOwner, "-publication", demo.NotesSlug}, func(k string) string {
			return map[string]string{"JWT_SECRET": platformSecret}[k]
		}, &out, &errs); err != nil {
			t.Fatalf("token: %v %s", err, errs.String())
		}
		return "Authorization: Bearer " + strings.TrimSpace(out.String())
	}
	return pubsiteTokens{adminA: platformToken(t, "admin", "alan-turing"), ownerB: owner()}
}

// gqlVars posts query with vars to base's /graphql addressed to host and
// returns the status and body.
func gqlVars(t *testing.T, base, host, query string, vars map[string]any, headers ...string) (int, string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	code, _, body := request{method: http.MethodPost, url: base + "/graphql", host: host, body: string(b), headers: headers}.do(t)
	return code, body
}

// dataOf decodes the data of a GraphQL answer into out, failing the test
// on an error.
func dataOf(t *testing.T, what, body string, out any) {
	t.Helper()
	var resp struct {
		Data   json.RawMessage
		Errors []any
	}
	if json.Unmarshal([]byte(body), &resp) != nil || len(resp.Errors) > 0 || json.Unmarshal(resp.Data, out) != nil {
		t.Fatalf("%s: %.600s", what, body)
	}
}

// at returns the request of method to the URL u sent to base, the
// server's listener, with u's host as its Host: the names of *.localhost
// need not resolve on the machine.
func at(t *testing.T, base, method, u, body string, headers ...string) request {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		t.Fatalf("not an absolute URL: %q", u)
	}
	return request{method: method, url: base + p.RequestURI(), host: p.Host, body: body, headers: headers}
}

// pubsiteJPEG returns a 700×400 JPEG.
func pubsiteJPEG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 700, 400))
	for y := range 400 {
		for x := range 700 {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 90, 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// uploadAt uploads a JPEG to the media library of host with the
// Authorization header auth, as a frontend does: createUpload, the PUT
// to its URL, completeUpload. It returns the media item's id, the URL of
// its widest rendition, and the upload's URL.
func uploadAt(t *testing.T, base, host, auth string) (id, rendition, uploadURL string) {
	t.Helper()
	data := pubsiteJPEG(t)
	_, body := gqlVars(t, base, host, `mutation($in: CreateUploadInput!) { createUpload(input: $in) { upload { id url headers { name value } } } }`,
		map[string]any{"in": map[string]any{"filename": "ridge.jpg", "contentType": "image/jpeg", "byteSize": len(data)}}, auth)
	var created struct {
		CreateUpload struct {
			Upload struct {
				ID, URL string
				Headers []struct{ Name, Value string }
			}
		}
	}
	dataOf(t, host+": createUpload", body, &created)
	up := created.CreateUpload.Upload
	var headers []string
	for _, h := range up.Headers {
		if !strings.EqualFold(h.Name, "Host") {
			headers = append(headers, h.Name+": "+h.Value)
		}
	}
	put := at(t, base, http.MethodPut, up.URL, string(data), headers...)
	if code, _, b := put.do(t); code != http.StatusOK {
		t.Fatalf("%s: PUT %s = %d %s", host, up.URL, code, b)
	}
	_, body = gqlVars(t, base, host, `mutation($id: ID!) { completeUpload(input: {id: $id}) { media { id image { url } } } }`, map[string]any{"id": up.ID}, auth)
	var done struct {
		CompleteUpload struct {
			Media struct {
				ID    string
				Image struct{ URL string }
			}
		}
	}
	dataOf(t, host+": completeUpload", body, &done)
	return done.CompleteUpload.Media.ID, done.CompleteUpload.Media.Image.URL, up.URL
}

// firstPost returns the global id of the newest post host serves.
func firstPost(t *testing.T, base, host string) string {
	t.Helper()
	_, body := graphQLAt(t, base, host, `{ posts(first: 1) { edges { node { id } } } }`)
	var resp struct {
		Posts struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	dataOf(t, host+": posts", body, &resp)
	if len(resp.Posts.Edges) == 0 {
		t.Fatalf("%s serves no post", host)
	}
	return resp.Posts.Edges[0].Node.ID
}

// postVersion returns the version of the post gid on host.
func postVersion(t *testing.T, base, host, gid string) int {
	t.Helper()
	_, body := gqlVars(t, base, host, `query($id: ID!) { post(id: $id) { version } }`, map[string]any{"id": gid})
	var resp struct{ Post struct{ Version int } }
	dataOf(t, host+": version", body, &resp)
	return resp.Post.Version
}

// rawPostID returns the id inside a post's global id.
func rawPostID(t *testing.T, gid string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(gid)
	id, ok := strings.CutPrefix(string(b), "Post:")
	if err != nil || !ok {
		t.Fatalf("%q is not a post's id", gid)
	}
	return id
}

// viewCount returns the views host counts for the post gid.
func viewCount(t *testing.T, base, host, gid string) int {
	t.Helper()
	_, body := gqlVars(t, base, host, `query($id: ID!) { post(id: $id) { viewCount } }`, map[string]any{"id": gid})
	var resp struct {
		Post *struct{ ViewCount int }
	}
	dataOf(t, host+": viewCount", body, &resp)
	if resp.Post == nil {
		return -1
	}
	return resp.Post.ViewCount
}

// memberEmails returns the addresses of the members host lists to auth.
func memberEmails(t *testing.T, base, host, auth string) []string {
	t.Helper()
	_, body := graphQLAt(t, base, host, `{ members(first: 100) { edges { node { email } } } }`, auth)
	var resp struct {
		Members struct {
			Edges []struct{ Node struct{ Email string } }
		}
	}
	dataOf(t, host+": members", body, &resp)
	var out []string
	for _, e := range resp.Members.Edges {
		out = append(out, e.Node.Email)
	}
	return out
}

var signInCode = regexp.MustCompile(`enter this code: (\S+)`)

// signInAt signs email in on host by the emailed code, which the
// default publication's admin reads in the local outbox, and returns the
// session's access token (an Authorization header) and refresh token.
func signInAt(t *testing.T, base, host, redirect, email string, tok pubsiteTokens) (access, refresh string) {
	t.Helper()
	code, body := gqlVars(t, base, host, `mutation($in: RequestSignInLinkInput!) { requestSignInLink(input: $in) { sent } }`,
		map[string]any{"in": map[string]any{"email": email, "redirectTo": redirect}})
	if code != http.StatusOK || errorCode(body) != "" {
		t.Fatalf("%s: requestSignInLink = %d %.400s", host, code, body)
	}
	_, body = graphQLAt(t, base, "localhost", `{ outboxEmails(first: 20) { to text } }`, tok.adminA)
	var mails struct {
		OutboxEmails []struct{ To, Text string }
	}
	dataOf(t, "outboxEmails", body, &mails)
	var emailCode string
	for _, m := range mails.OutboxEmails {
		if m.To == email && strings.Contains(m.Text, redirect) {
			if m := signInCode.FindStringSubmatch(m.Text); m != nil {
				emailCode = m[1]
				break
			}
		}
	}
	if emailCode == "" {
		t.Fatalf("no sign-in email to %s leading to %s in %s", email, redirect, body)
	}
	_, body = gqlVars(t, base, host, `mutation($in: CompleteSignInInput!) { completeSignIn(input: $in) { accessToken refreshToken } }`,
		map[string]any{"in": map[string]any{"email": email, "code": emailCode}})
	var done struct {
		CompleteSignIn struct{ AccessToken, RefreshToken string }
	}
	dataOf(t, host+": completeSignIn", body, &done)
	return "Authorization: Bearer " + done.CompleteSignIn.AccessToken, done.CompleteSignIn.RefreshToken
}

// TestPublicationReadersAndMedia: on the hosts of a publication other
// than the default (B), its media library takes uploads and serves their
// renditions, and refuses a media item of the default publication (A);
// its view beacon counts on B's posts, never on A's; a reader signs in on
// B and becomes B's member only, and the session is refused on A; the
// members' and reader's exports answer B's; and the newsletter's
// unsubscribe link of B's member works on B's host and not on A's.
func TestPublicationReadersAndMedia(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"JWT_SECRET": platformSecret, "DATA_DIR": dir}
	base, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json"}, env)
	defer func() { stop() }()
	p := port(t, base)
	a, b := "localhost:"+p, "notes.localhost:"+p
	tok := newPubsiteTokens(t)

	postA, postB := firstPost(t, base, a), firstPost(t, base, b)
	aMedia, _, _ := uploadAt(t, base, a, tok.adminA)
	t.Run("a media item of A on B", func(t *testing.T) {
		versionB := postVersion(t, base, b, postB)
		for _, c := range []struct{ what, query string }{
			{"updatePost with A's cover", `mutation($post: ID!, $media: ID!, $v: Int!) { updatePost(input: {id: $post, expectedVersion: $v, coverMediaId: $media}) { post { id } } }`},
			{"deleteMedia of A's", `mutation($media: ID!) { deleteMedia(input: {id: $media, force: true}) { deletedId } }`},
		} {
			vars := map[string]any{"post": postB, "media": aMedia}
			if strings.Contains(c.query, "$v") {
				vars["v"] = postVersion(t, base, b, postB)
			}
			_, body := gqlVars(t, base, b, c.query, vars, tok.ownerB)
			if got := errorCode(body); got != "BAD_USER_INPUT" && got != "NOT_FOUND" {
				t.Errorf("B: %s = %.300s, want BAD_USER_INPUT or NOT_FOUND", c.what, body)
			}
		}
		if v := postVersion(t, base, b, postB); v != versionB {
			t.Errorf("B's post is at version %d after the refused requests, want %d", v, versionB)
		}
		if _, body := graphQLAt(t, base, a, `{ media(first: 100) { edges { node { id } } } }`, tok.adminA); !strings.Contains(body, aMedia) {
			t.Errorf("A's library after B's deleteMedia: %.400s, want A's item", body)
		}
	})
	t.Run("media", func(t *testing.T) {
		bMedia, rendition, uploadURL := uploadAt(t, base, b, tok.ownerB)
		if u, _ := url.Parse(uploadURL); u.Host != b {
			t.Errorf("B's upload URL %s, want one on B's host", uploadURL)
		}
		if u, _ := url.Parse(rendition); u.Host != b {
			t.Errorf("B's rendition %s, want one on B's host", rendition)
		}
		if code, h, _ := at(t, base, http.MethodGet, rendition, "").do(t); code != http.StatusOK || h.Get("Content-Type") != "image/jpeg" {
			t.Errorf("B's rendition on B's host = %d %s, want the JPEG", code, h.Get("Content-Type"))
		}
		ru, _ := url.Parse(rendition)
		if code, _, _ := (request{url: base + ru.Path, host: a}).do(t); code != http.StatusNotFound {
			t.Errorf("B's rendition on A's host = %d, want 404", code)
		}
		_, body := graphQLAt(t, base, a, `{ media(first: 100) { edges { node { id } } } }`, tok.adminA)
		if !strings.Contains(body, aMedia) || strings.Contains(body, bMedia) {
			t.Errorf("A's library after B's requests: %.400s, want A's item and not B's", body)
		}
		_, body = graphQLAt(t, base, b, `{ media(first: 100) { edges { node { id } } } }`, tok.ownerB)
		if !strings.Contains(body, bMedia) || strings.Contains(body, aMedia) {
			t.Errorf("B's library: %.400s, want B's item only", body)
		}

	})

	// Views: beacons of a reader on B, for B's post and for A's.
	for _, post := range []string{postB, postA} {
		req := request{method: http.MethodPost, url: base + "/v/" + rawPostID(t, post), host: b, headers: []string{"User-Agent: Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0"}}
		if code, _, _ := req.do(t); code != http.StatusNoContent {
			t.Errorf("B's beacon = %d, want 204", code)
		}
	}

	var session, accountID string
	t.Run("sign-in", func(t *testing.T) {
		// Sign-in: a reader signs in on B.
		const email = "reader@example.com"
		if code, body := gqlVars(t, base, b, `mutation($in: RequestSignInLinkInput!) { requestSignInLink(input: $in) { sent } }`,
			map[string]any{"in": map[string]any{"email": email, "redirectTo": "https://elsewhere.example/welcome"}}); errorCode(body) != "BAD_USER_INPUT" {
			t.Errorf("B: a link to a foreign origin = %d %.300s, want BAD_USER_INPUT", code, body)
		}
		var refresh string
		session, refresh = signInAt(t, base, b, "http://"+b+"/welcome", email, tok)
		const refreshMutation = `mutation($t: String!) { refreshSession(input: {refreshToken: $t}) { accessToken refreshToken } }`
		if code, body := gqlVars(t, base, a, refreshMutation, map[string]any{"t": refresh}); errorCode(body) != "FORBIDDEN" {
			t.Errorf("A: refreshSession of B's session = %d %.300s, want FORBIDDEN", code, body)
		}
		if _, body := gqlVars(t, base, b, refreshMutation, map[string]any{"t": refresh}); errorCode(body) != "" {
			t.Errorf("B: refreshSession of B's session after A's refusal = %.300s, want a new token", body)
		}
		if got := memberEmails(t, base, b, tok.ownerB); !strings.Contains(strings.Join(got, " "), email) {
			t.Errorf("B's members = %q, want the reader", got)
		}
		if got := memberEmails(t, base, a, tok.adminA); strings.Contains(strings.Join(got, " "), email) {
			t.Errorf("A's members = %q, want no reader of B", got)
		}
		if code, body := graphQLAt(t, base, b, `{ outboxEmails(first: 20) { to text } }`, tok.ownerB); errorCode(body) != "FORBIDDEN" {
			t.Errorf("B: outboxEmails for B's owner = %d %.300s, want FORBIDDEN: it holds every publication's emails", code, body)
		}
		if _, body := graphQLAt(t, base, b, `{ account { email } }`, session); !strings.Contains(body, email) {
			t.Errorf("B: account with B's session = %.300s", body)
		}
		if code, body := graphQLAt(t, base, a, `{ account { email } }`, session); errorCode(body) != "FORBIDDEN" {
			t.Errorf("A: account with B's session = %d %.300s, want FORBIDDEN", code, body)
		}
		var acct struct{ Account struct{ ID string } }
		_, body := graphQLAt(t, base, b, `{ account { id } }`, session)
		dataOf(t, "account", body, &acct)
		accountID = acct.Account.ID

		// The exports.
		if code, _, csv := (request{url: base + "/members.csv", host: b, headers: []string{tok.ownerB}}).do(t); code != http.StatusOK || !strings.Contains(csv, email) {
			t.Errorf("B's /members.csv for its owner = %d %.300s, want the reader", code, csv)
		}
		if code, _, _ := (request{url: base + "/members.csv", host: b, headers: []string{tok.adminA}}).do(t); code != http.StatusForbidden {
			t.Errorf("B's /members.csv for A's admin = %d, want 403", code)
		}
		if code, _, doc := (request{url: base + "/me/export", host: b, headers: []string{session}}).do(t); code != http.StatusOK || !strings.Contains(doc, email) {
			t.Errorf("B's /me/export for B's session = %d %.300s", code, doc)
		}
		if code, _, _ := (request{url: base + "/me/export", host: a, headers: []string{session}}).do(t); code != http.StatusForbidden {
			t.Errorf("A's /me/export for B's session = %d, want 403", code)
		}

	})

	// A clean stop flushes the views; the server starts again on the
	// same data.
	stop()
	key := newsletterKey(t, dir)
	base, _, stop = startServer(t, []string{"-port", "0", "-log-format", "json"}, env)
	p = port(t, base)
	a, b = "localhost:"+p, "notes.localhost:"+p
	if got := viewCount(t, base, b, postB); got != 1 {
		t.Errorf("B's post counts %d views, want 1", got)
	}
	if got := viewCount(t, base, a, postA); got != 0 {
		t.Errorf("A's post counts %d views, want 0: the beacon was B's", got)
	}

	t.Run("unsubscribe", func(t *testing.T) {
		if accountID == "" {
			t.Skip("no reader signed in")
		}
		// The unsubscribe link of B's newsletter, as the server makes it.
		link := pubsiteUnsubscribeLink(t, base, key, accountID)
		if u, _ := url.Parse(link); u.Host != b {
			t.Fatalf("B's unsubscribe link %s, want one on B's host", link)
		}
		onA := at(t, base, http.MethodPost, link, "List-Unsubscribe=One-Click")
		onA.host = a
		if code, _, _ := onA.do(t); code != http.StatusBadRequest {
			t.Errorf("B's unsubscribe link on A's host = %d, want 400", code)
		}
		if code, _, page := at(t, base, http.MethodPost, link, "List-Unsubscribe=One-Click", "Content-Type: application/x-www-form-urlencoded").do(t); code != http.StatusOK {
			t.Errorf("B's one-click unsubscribe = %d %.200s, want 200", code, page)
		}
		_, body := graphQLAt(t, base, b, `{ members(first: 10) { edges { node { email newsletters } } } }`, tok.ownerB)
		if !strings.Contains(body, `"newsletters":[]`) {
			t.Errorf("B's member after unsubscribing: %.300s, want no newsletter", body)
		}
	})
}

// newsletterKey returns the table's key of the newsletter's links, read
// from the embedded engine's data in dir while no server runs on it.
func newsletterKey(t *testing.T, dir string) []byte {
	t.Helper()
	ctx := context.Background()
	cfg, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	engine, err := openEngine(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	client, err := storage.NewClient(ctx, storage.ClientConfig{Embedded: true, HTTPClient: &http.Client{Transport: engine}})
	if err != nil {
		t.Fatal(err)
	}
	key, err := storage.New(client, cfg.table).Secret(ctx, newsletter.KeyName)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// pubsiteUnsubscribeLink returns the newsletter's unsubscribe link of
// B's member accountID as the server at base makes it
// (publicationNewsletter), with key, the table's.
func pubsiteUnsubscribeLink(t *testing.T, base string, key []byte, accountID string) string {
	t.Helper()
	cfg, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.siteURL = base
	// A store of no table: the link is computed, never read.
	root := storage.New(nil, cfg.table)
	_, body := graphQLAt(t, base, "localhost", fmt.Sprintf(`{ publication(slug: %q) { id title hosts } }`, demo.NotesSlug))
	var resp struct {
		Publication storage.Publication
	}
	dataOf(t, "publication", body, &resp)
	pub := &resp.Publication
	store, err := root.In(pub.ID)
	if err != nil {
		t.Fatal(err)
	}
	letters := publicationNewsletter(cfg, newsletter.New(root, newsletter.Options{Key: key, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}), pub, store)
	return letters.UnsubscribeURL(accountID)
}
