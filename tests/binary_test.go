package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBinaryServesTheDemoBlog starts the compiled server as a user would,
// waits until it is ready, reads the seeded demo blog and stops it with
// SIGTERM.
func TestBinaryServesTheDemoBlog(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server binary")
	}
	bin := filepath.Join(t.TempDir(), "blog")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", fmt.Sprint(port), "-data", t.TempDir())
	cmd.Env = []string{"PATH=/usr/bin:/bin"} // embedded engine, whatever the test's environment says
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := make(chan string, 1000)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			logs <- s.Text()
		}
		close(logs)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("server not ready in 30 s")
		case err := <-exited:
			t.Fatalf("server exited: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}

	resp, err := http.Post(base+"/graphql", "application/json",
		strings.NewReader(`{"query":"{ posts(first: 5) { totalCount edges { node { title author { name } } } } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var got struct {
		Data struct {
			Posts struct {
				TotalCount int
				Edges      []struct{ Node struct{ Title string } }
			}
		}
		Errors []any
	}
	if err := json.Unmarshal(body, &got); err != nil || len(got.Errors) > 0 {
		t.Fatalf("response %s: %v", body, err)
	}
	equal(t, "demo posts on the first page", len(got.Data.Posts.Edges), 5)
	if got.Data.Posts.TotalCount < 40 {
		t.Errorf("demo blog has %d published posts, want about 50", got.Data.Posts.TotalCount)
	}
	page, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	equal(t, "playground status", page.StatusCode, http.StatusOK)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("server still running 15 s after SIGTERM")
	}
	var all []string
	for l := range logs {
		all = append(all, l)
	}
	if !strings.Contains(strings.Join(all, "\n"), "playground at") {
		t.Errorf("no log line tells where the playground is:\n%s", strings.Join(all, "\n"))
	}
}
