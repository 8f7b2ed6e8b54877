package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestBinaryServesTheDemoBlog starts the compiled server as a user would,
// waits until it is ready, reads the seeded demo blog and stops it with
// SIGTERM.
func TestBinaryServesTheDemoBlog(t *testing.T) {
	srv := startBinary(t, t.TempDir())
	var got struct {
		Posts struct {
			TotalCount int
			Edges      []struct{ Node struct{ Title string } }
		}
	}
	srv.graphql(t, "", `{ posts(first: 5) { totalCount edges { node { title author { name } } } } }`, &got)
	equal(t, "demo posts on the first page", len(got.Posts.Edges), 5)
	if got.Posts.TotalCount < 40 {
		t.Errorf("demo blog has %d published posts, want about 50", got.Posts.TotalCount)
	}
	page, err := http.Get(srv.base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	equal(t, "playground status", page.StatusCode, http.StatusOK)

	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-srv.exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("server still running 15 s after SIGTERM")
	}
	logs := strings.Join(srv.logs, "\n")
	if !strings.Contains(logs, "playground at") {
		t.Errorf("no log line tells where the playground is:\n%s", logs)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// serverBinary builds the server binary once for every test of the
// package that starts it.
func serverBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and starts the server binary")
	}
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "blog-bin-")
		if built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "blog")
		build := exec.Command("go", "build", "-o", built.bin, ".")
		build.Dir = ".."
		if out, err := build.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// binaryServer is the server binary running on loopback.
type binaryServer struct {
	cmd    *exec.Cmd
	base   string
	exited chan error
	mu     sync.Mutex
	logs   []string
}

// startBinary starts the server binary on a free port with its data in
// dir and the given extra flags, and waits until it is ready.
func startBinary(t testing.TB, dir string, flags ...string) *binaryServer {
	t.Helper()
	return startBinaryEnv(t, dir, nil, flags...)
}

// startBinaryEnv is startBinary with the environment variables env (by
// default the server sees none but PATH: the embedded engine, whatever
// the test's environment says).
func startBinaryEnv(t testing.TB, dir string, env []string, flags ...string) *binaryServer {
	t.Helper()
	bin := serverBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	// The longest request timeout the server takes, not its 10 s: a write
	// on DynamoDB Local beside the race detector on a loaded machine can
	// pass 10 s. A test's own -request-timeout, later, wins.
	cmd := exec.Command(bin, append([]string{"-host", "127.0.0.1", "-port", fmt.Sprint(port), "-data", dir, "-request-timeout", "29s"}, flags...)...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &binaryServer{cmd: cmd, base: fmt.Sprintf("http://127.0.0.1:%d", port), exited: make(chan error, 1)}
	lines := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.logs = append(s.logs, sc.Text())
			s.mu.Unlock()
		}
		close(lines)
	}()
	go func() {
		<-lines
		s.exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	deadline := time.After(60 * time.Second)
	for {
		resp, err := http.Get(s.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-deadline:
			t.Fatal("server not ready in 60 s")
		case err := <-s.exited:
			t.Fatalf("server exited: %v\n%s", err, strings.Join(s.logs, "\n"))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// devHeader returns the development Authorization header the server
// logged for an author. The server logs it before it is ready, but the
// line may still be on its way through the pipe: devHeader waits for it
// for up to 10 s.
func (s *binaryServer) devHeader(t *testing.T, author string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if h, ok := s.loggedHeader(author); ok {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("no development token of %s in the log", author)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// loggedHeader returns the development Authorization header of author
// among the lines logged so far.
func (s *binaryServer) loggedHeader(author string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, line := range s.logs {
		var rec struct{ Msg, Author, Header string }
		if json.Unmarshal([]byte(line), &rec) == nil && strings.HasPrefix(rec.Msg, "DEVELOPMENT ONLY") && rec.Author == author {
			_, value, _ := strings.Cut(rec.Header, ": ")
			return value, true
		}
	}
	return "", false
}

// try sends a GraphQL document and decodes its data into out; it fails on
// any transport error, HTTP status or GraphQL error.
func (s *binaryServer) try(authorization, query string, out any) error {
	b, _ := json.Marshal(map[string]string{"query": query})
	req, _ := http.NewRequest(http.MethodPost, s.base+"/graphql", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var r struct {
		Data   json.RawMessage
		Errors []any
	}
	if err := json.Unmarshal(body, &r); err != nil || resp.StatusCode != http.StatusOK || len(r.Errors) > 0 {
		return fmt.Errorf("%d %s: %v", resp.StatusCode, body, err)
	}
	return json.Unmarshal(r.Data, out)
}

func (s *binaryServer) graphql(t testing.TB, authorization, query string, out any) {
	t.Helper()
	if err := s.try(authorization, query, out); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}
