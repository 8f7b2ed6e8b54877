package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blogql/blog/playground"
)

// TestPlaygroundFoundFromElsewhere starts the server in a working
// directory without the playground's files, as an installed binary is:
// left at its default, -playground-assets is also looked for beside the
// data directory, the executable and the source, and the page then loads
// nothing from the CDN.
func TestPlaygroundFoundFromElsewhere(t *testing.T) {
	installed, err := filepath.Abs(filepath.Join(".cache", "playground"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(installed); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI installs the playground assets before the tests: %v", err)
		}
		t.Skipf("no playground assets in %s: run scripts/playground-assets.sh", installed)
	}
	oldExecutable, oldSource := executable, sourceFile
	t.Cleanup(func() { executable, sourceFile = oldExecutable, oldSource })

	for _, where := range []string{"data directory", "executable", "source"} {
		t.Run("beside the "+where, func(t *testing.T) {
			root := t.TempDir()
			data, exe, src := filepath.Join(root, "data"), filepath.Join(root, "bin", "blog"), filepath.Join(root, "src", "config.go")
			executable = func() (string, error) { return exe, nil }
			sourceFile = src
			assets := map[string]string{
				"data directory": filepath.Join(data, "playground"),
				"executable":     filepath.Join(root, "bin", ".cache", "playground"),
				"source":         filepath.Join(root, "src", ".cache", "playground"),
			}[where]
			if err := os.MkdirAll(filepath.Dir(assets), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(installed, assets); err != nil {
				t.Fatal(err)
			}
			elsewhere := filepath.Join(root, "elsewhere")
			if err := os.Mkdir(elsewhere, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Chdir(elsewhere)

			base, logs, stop := startServer(t, []string{"-port", "0", "-log-format", "json", "-data", data}, nil)
			defer stop()
			resp, err := http.Get(base + "/?query=x")
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(page), playground.CDN) || !strings.Contains(string(page), `"/playground/graphiql@`) {
				t.Errorf("the page does not load GraphiQL from the server:\n%s", page)
			}
			if log := logs.String(); !strings.Contains(log, "playground assets served by this server") || !strings.Contains(log, assets) {
				t.Errorf("the log does not say the assets in %s are served:\n%s", assets, log)
			}
		})
	}
}
