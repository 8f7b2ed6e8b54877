package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/blogql/blog/storage"
	"github.com/blogql/blog/storage/legacytest"
)

// legacyDataDir returns a data directory whose table holds the blog of
// package legacytest, written in layout 1 as the previous version did.
func legacyDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	withTable(t, dir, func(ctx context.Context, client *dynamodb.Client) {
		store := storage.New(client, "blog")
		if err := store.CreateTable(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := legacytest.Write(ctx, client, "blog", time.Now()); err != nil {
			t.Fatal(err)
		}
	})
	return dir
}

// layout3DataDir returns a data directory whose table holds the blog of
// package legacytest in layout 3, as the version before posts had body
// and count items left it: migrated by this version, then turned back.
func layout3DataDir(t *testing.T) string {
	t.Helper()
	dir := legacyDataDir(t)
	withTable(t, dir, func(ctx context.Context, client *dynamodb.Client) {
		if _, err := storage.New(client, "blog").Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := legacytest.ToLayout4(ctx, client, "blog"); err != nil {
			t.Fatal(err)
		}
		if _, err := legacytest.ToLayout3(ctx, client, "blog"); err != nil {
			t.Fatal(err)
		}
	})
	return dir
}

// TestMigrationAtStartFromLayout3 starts the server on a table of layout
// 3 (bodies and comment counts on the post items, the feed in four
// partitions): it moves every post to its three items before serving,
// and the feed and a post's page answer as before.
func TestMigrationAtStartFromLayout3(t *testing.T) {
	dir := layout3DataDir(t)
	base, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json"}, map[string]string{"DATA_DIR": dir})
	defer stop()
	if !logs.has(`"msg":"table migrated"`, `"from_layout":3`, fmt.Sprintf(`"to_layout":%d`, storage.CurrentLayout), `"split":5`) {
		t.Errorf("no migration in the log:\n%s", logs)
	}
	const feed = `{ posts(first: 10) { edges { node { slug body commentCount } } } }`
	if _, body := postAs(t, base, "", feed); !strings.Contains(body, `"body":"`) || strings.Contains(body, `"errors"`) {
		t.Errorf("the feed after the migration: %s", body)
	}
}

// authorBySlug is a query of an author page from its URL, which a table of
// layout 1 cannot answer: its authors have no slugs.
const authorBySlug = `{ author(slug: "grace-hopper") { name posts(first: 5) { edges { node { slug author { slug } } } } } }`

// TestMigrationAtStart starts the server on a table written by the
// previous version: it migrates it before serving, seeds no demo into
// it, and serves author pages by slug; the next start finds nothing to do.
func TestMigrationAtStart(t *testing.T) {
	dir := legacyDataDir(t)
	env := map[string]string{"DATA_DIR": dir}
	base, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json"}, env)
	if !logs.has(`"msg":"table migrated"`, `"from_layout":1`, fmt.Sprintf(`"to_layout":%d`, storage.CurrentLayout), `"authors":3`, `"posts":5`) {
		t.Errorf("no migration in the log:\n%s", logs)
	}
	if logs.has(`"msg":"demo blog seeded"`) {
		t.Error("the demo was seeded into a blog of the previous version")
	}
	if _, body := postAs(t, base, "", authorBySlug); !strings.Contains(body, `"name":"Grace Hopper"`) || !strings.Contains(body, `"author":{"slug":"grace-hopper"}`) {
		t.Errorf("author page by slug after the migration: %s", body)
	}
	stop()

	_, logs, stop = startServer(t, []string{"-port", "0", "-log-format", "json"}, env)
	defer stop()
	if logs.has(`"msg":"table migrated"`) {
		t.Errorf("a migrated table migrated again:\n%s", logs)
	}
}

// TestMigrationOnItsOwn migrates with -migrate=only, as an operator does
// before starting servers with -migrate=off: it migrates and exits, and
// a server with -migrate=off warns about a table it did not migrate.
func TestMigrationOnItsOwn(t *testing.T) {
	dir := legacyDataDir(t)
	_, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-migrate=off"}, map[string]string{"DATA_DIR": dir})
	if !logs.has(`"level":"WARN"`, `"layout":1`, `-migrate=only`) {
		t.Errorf("-migrate=off on a table of layout 1 warns of nothing:\n%s", logs)
	}
	stop()

	logs = newLogLines()
	if err := run(context.Background(), []string{"-data", dir, "-log-format", "json", "-migrate=only"}, func(string) string { return "" }, logs); err != nil {
		t.Fatalf("-migrate=only: %v", err)
	}
	if !logs.has(`"msg":"table migrated"`) || !logs.has(`exiting (-migrate=only)`) || logs.has(`"endpoint"`) {
		t.Errorf("-migrate=only did not migrate and exit:\n%s", logs)
	}
	base, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-migrate=off"}, map[string]string{"DATA_DIR": dir})
	defer stop()
	if logs.has(`"level":"WARN"`, `"layout"`) {
		t.Errorf("-migrate=off warns about a migrated table:\n%s", logs)
	}
	if _, body := postAs(t, base, "", authorBySlug); !strings.Contains(body, `"name":"Grace Hopper"`) {
		t.Errorf("author page by slug after -migrate=only: %s", body)
	}
}

// TestMigrationAtStartFromLayout4 starts a server on a blog of layout 4,
// before publications: it moves the blog into the default publication
// and answers every query as a server answered before the blog was
// turned back.
func TestMigrationAtStartFromLayout4(t *testing.T) {
	dir := legacyDataDir(t)
	queries := []string{
		authorBySlug,
		`{ posts(first: 10) { edges { node { slug title body commentCount categories { slug name } author { name } } } } }`,
		`{ category(slug: "go") { name posts(first: 10) { totalCount edges { node { slug } } } } }`,
		`{ post(slug: "intro") { title bodyHtml comments(first: 10) { edges { node { body replies { body } } } } } }`,
	}
	answers := func(base string) []string {
		var out []string
		for _, q := range queries {
			_, body := postAs(t, base, "", q)
			if strings.Contains(body, `"errors"`) {
				t.Fatalf("%s: %s", q, body)
			}
			out = append(out, body)
		}
		return out
	}
	base, _, stop := startServer(t, []string{"-port", "0", "-log-format", "json"}, map[string]string{"DATA_DIR": dir})
	before := answers(base)
	stop()
	withTable(t, dir, func(ctx context.Context, client *dynamodb.Client) {
		if _, err := legacytest.ToLayout4(ctx, client, "blog"); err != nil {
			t.Fatal(err)
		}
	})

	base, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json"}, map[string]string{"DATA_DIR": dir})
	defer stop()
	if !logs.has(`"msg":"table migrated"`, `"from_layout":4`, fmt.Sprintf(`"to_layout":%d`, storage.CurrentLayout)) || logs.has(`"moved":0`) {
		t.Errorf("no move into the publication in the log:\n%s", logs)
	}
	after := answers(base)
	for i := range queries {
		if after[i] != before[i] {
			t.Errorf("%s\nafter the migration: %s\nbefore: %s", queries[i], after[i], before[i])
		}
	}
}
