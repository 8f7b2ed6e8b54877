package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/blogql/blog/auth"
)

// What a developer meets on a first start: the log of a new table, the
// refusal of a webhook to their own machine, and a token of their own
// once they set a secret.

// TestFirstStartLogsWhatHappened starts the embedded engine on a new
// table: the log says the demo was seeded, not that a table of an
// earlier layout was migrated nor that its bodies are rendered again, and
// a webhook to a receiver on this machine is refused with the flag that
// allows it.
func TestFirstStartLogsWhatHappened(t *testing.T) {
	base, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json"}, nil)
	defer stop()
	if !logs.has("demo blog seeded") {
		t.Errorf("no line says the demo was seeded:\n%s", logs)
	}
	for _, line := range []string{"table migrated", "renderer changed"} {
		if logs.has(line) {
			t.Errorf("a new table's start logs %q:\n%s", line, logs)
		}
	}

	admin := logs.devHeaders()["ada-lovelace"]
	_, body := postAs(t, base, admin, `mutation { createWebhook(input: {url: "http://localhost:3000/api/revalidate", events: ["post.published"]}) { webhook { id } } }`)
	for _, want := range []string{`"BAD_USER_INPUT"`, "-webhooks-allow-private-unsafe"} {
		if !strings.Contains(body, want) {
			t.Errorf("createWebhook to localhost = %s, want it to say %s", body, want)
		}
	}
}

// TestTokenCommand mints tokens with the token command and sends them to
// a server started with the same secret: an author's is an author's, an
// admin's an admin's. Without a secret, or with a role that does not
// exist, the command refuses.
func TestTokenCommand(t *testing.T) {
	const secret = "a secret of at least thirty-two bytes, for tests"
	env := map[string]string{"JWT_SECRET": secret, "JWT_ISSUER": "https://auth.example.com"}
	mint := func(env map[string]string, args ...string) (string, error) {
		var out, errs bytes.Buffer
		err := runToken(context.Background(), args, func(k string) string { return env[k] }, &out, &errs)
		return strings.TrimSpace(out.String()), err
	}
	if _, err := mint(nil, "-role", "author", "-sub", "ada-lovelace"); err == nil || !strings.Contains(err.Error(), "JWT_SECRET is not set") {
		t.Errorf("without a secret: %v, want a refusal naming JWT_SECRET", err)
	}
	if _, err := mint(env, "-role", "owner", "-sub", "ada-lovelace"); err == nil || !strings.Contains(err.Error(), "admin, author, reader") {
		t.Errorf("an unknown role: %v, want a refusal naming the roles", err)
	}
	if _, err := mint(env, "-role", "author"); err == nil {
		t.Error("no subject: no error")
	}
	t.Run("with a reader secret", func(t *testing.T) {
		const readerSecret = "the reader secret a frontend holds, 32 bytes or more"
		readerOnly := map[string]string{"READER_JWT_SECRET": readerSecret}
		if _, err := mint(readerOnly, "-role", "admin", "-sub", "ada-lovelace"); err == nil || !strings.Contains(err.Error(), "reader tokens only") {
			t.Errorf("an admin with the reader secret alone: %v, want a refusal", err)
		}
		both := map[string]string{"JWT_SECRET": secret, "READER_JWT_SECRET": readerSecret}
		staffOnly := ok[*auth.Verifier](t)(auth.NewVerifier(auth.Config{Secret: []byte(secret)}))
		split := ok[*auth.Verifier](t)(auth.NewVerifier(auth.Config{Secret: []byte(secret), Reader: auth.ReaderConfig{Secret: []byte(readerSecret)}}))
		for _, env := range []map[string]string{readerOnly, both} {
			reader := ok[string](t)(mint(env, "-role", "reader", "-sub", "jamie"))
			if _, err := staffOnly.Verify(context.Background(), reader); err == nil {
				t.Error("a reader token verifies with the staff secret: it is not signed with the reader secret")
			}
			if a, err := split.Verify(context.Background(), reader); err != nil || a.IsAdmin() || !a.HasRole(auth.RoleReader) {
				t.Errorf("the reader token = %+v, %v, want a reader", a, err)
			}
		}
		admin := ok[string](t)(mint(both, "-role", "admin", "-sub", "ada-lovelace"))
		if a, err := staffOnly.Verify(context.Background(), admin); err != nil || !a.IsAdmin() {
			t.Errorf("the admin token = %+v, %v, want an admin signed with the staff secret", a, err)
		}
	})
	t.Run("bound to a publication", func(t *testing.T) {
		v := ok[*auth.Verifier](t)(auth.NewVerifier(auth.Config{Secret: []byte(secret), Issuer: env["JWT_ISSUER"]}))
		token := ok[string](t)(mint(env, "-role", "editor", "-sub", "eddie", "-publication", "mag"))
		if a, err := v.Verify(context.Background(), token); err != nil || a.Publication != "mag" || !a.HasRole(auth.PubEditor) {
			t.Errorf("the bound token = %+v, %v, want an editor's bound to mag", a, err)
		}
		if _, err := mint(env, "-role", "platform", "-sub", "ops", "-publication", "mag"); err == nil || !strings.Contains(err.Error(), "owner, admin, editor, author, contributor") {
			t.Errorf("a platform role bound to a publication: %v, want a refusal naming the roles in a publication", err)
		}
		if _, err := mint(map[string]string{"READER_JWT_SECRET": "the reader secret a frontend holds, 32 bytes or more"}, "-role", "author", "-sub", "eddie", "-publication", "mag"); err == nil || !strings.Contains(err.Error(), "JWT_SECRET is not set") {
			t.Errorf("a bound token with the reader secret alone: %v, want a refusal", err)
		}
	})
	author := ok[string](t)(mint(env, "-role", "author", "-sub", "grace-hopper"))
	admin := ok[string](t)(mint(env, "-role", "admin", "-sub", "ada-lovelace", "-ttl", "1h"))

	base, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json"}, env)
	defer stop()
	create := `mutation { createCategory(input: {slug: "minted", name: "Minted"}) { category { slug } } }`
	for _, c := range []struct{ token, want string }{
		{"", `"UNAUTHENTICATED"`},
		{author, `"FORBIDDEN"`},
		{admin, `"slug":"minted"`},
	} {
		header := ""
		if c.token != "" {
			header = "Authorization: Bearer " + c.token
		}
		if _, body := postAs(t, base, header, create); !strings.Contains(body, c.want) {
			t.Errorf("createCategory with %.30q = %s, want %s", c.token, body, c.want)
		}
	}
}

func ok[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
