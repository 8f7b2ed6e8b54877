package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blogql/blog/embedded"
	"github.com/blogql/blog/storage"
)

// TestCrashKeepsAcknowledgedWrites kills the server with SIGKILL in the
// middle of a concurrent write load and starts it again on the same data
// directory: every write it acknowledged is there, and the invariant
// checker finds the table consistent.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary and kills it")
	}
	bin := filepath.Join(t.TempDir(), "blog")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data := t.TempDir()

	srv := startBinary(t, bin, data)
	admin := srv.devHeader(t, "ada-lovelace")
	var posts struct {
		Posts struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	srv.graphql(t, admin, `{ posts(first: 4) { edges { node { id } } } }`, &posts)
	if len(posts.Posts.Edges) < 4 {
		t.Fatalf("demo posts: %+v", posts)
	}

	// Writers add comments and create posts until the server dies; each
	// write it answered is recorded.
	var mu sync.Mutex
	var acked []string // global ids of what was acknowledged
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				var id string
				if w%4 == 3 {
					var out struct {
						CreatePost struct{ Post struct{ ID string } }
					}
					q := fmt.Sprintf(`mutation { createPost(input: {title: "Crash %d-%d", slug: "crash-%d-%d", categories: ["dynamodb"]}) { post { id } } }`, w, i, w, i)
					if srv.try(admin, q, &out) != nil {
						return
					}
					id = out.CreatePost.Post.ID
				} else {
					var out struct {
						AddComment struct{ Comment struct{ ID string } }
					}
					q := fmt.Sprintf(`mutation { addComment(input: {postId: %q, body: "comment %d-%d"}) { comment { id } } }`, posts.Posts.Edges[w%4].Node.ID, w, i)
					if srv.try(admin, q, &out) != nil {
						return
					}
					id = out.AddComment.Comment.ID
				}
				if id == "" {
					return
				}
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
			}
		}()
	}
	// Kill it once enough writes were acknowledged, while the writers go on.
	deadline := time.After(60 * time.Second)
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 150 {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("only %d writes acknowledged in 60 s", n)
		case err := <-srv.exited:
			t.Fatalf("the server exited under load: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-srv.exited
	cancel()
	wg.Wait()
	mu.Lock()
	ids := append([]string(nil), acked...)
	mu.Unlock()
	t.Logf("%d writes acknowledged before SIGKILL", len(ids))

	// Restarted on the same directory, it has every acknowledged write.
	srv = startBinary(t, bin, data)
	for chunk := range chunks(ids, 20) { // 20 root fields a request at most
		var q strings.Builder
		q.WriteString("{")
		for i, id := range chunk {
			fmt.Fprintf(&q, " n%d: node(id: %q) { id }", i, id)
		}
		q.WriteString(" }")
		var out map[string]*struct{ ID string }
		srv.graphql(t, admin, q.String(), &out)
		for i, id := range chunk {
			if n := out[fmt.Sprintf("n%d", i)]; n == nil || n.ID != id {
				t.Errorf("acknowledged write %s is gone after the crash", id)
			}
		}
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-srv.exited; err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}

	// And every copy and counter agrees.
	e, err := embedded.Open(embedded.Options{Path: filepath.Join(data, "blog.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db, err := storage.NewClient(context.Background(), storage.ClientConfig{Embedded: true, HTTPClient: &http.Client{Transport: e}})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := storage.New(db, "blog").Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error("invariant: " + b)
	}
}

func chunks[T any](s []T, n int) func(func([]T) bool) {
	return func(yield func([]T) bool) {
		for len(s) > 0 {
			k := min(n, len(s))
			if !yield(s[:k]) {
				return
			}
			s = s[k:]
		}
	}
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
// dir and waits until it is ready.
func startBinary(t *testing.T, bin, dir string) *binaryServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", fmt.Sprint(port), "-data", dir, "-log-format", "json", "-log-level", "warn")
	cmd.Env = []string{"PATH=/usr/bin:/bin"} // embedded engine, whatever the test's environment says
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
// logged for an author.
func (s *binaryServer) devHeader(t *testing.T, author string) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, line := range s.logs {
		var rec struct{ Msg, Author, Header string }
		if json.Unmarshal([]byte(line), &rec) == nil && strings.HasPrefix(rec.Msg, "DEVELOPMENT ONLY") && rec.Author == author {
			_, value, _ := strings.Cut(rec.Header, ": ")
			return value
		}
	}
	t.Fatalf("no development token of %s in the log", author)
	return ""
}

// try sends a GraphQL document and decodes its data into out; it fails on
// any transport error, HTTP status or GraphQL error.
func (s *binaryServer) try(authorization, query string, out any) error {
	b, _ := json.Marshal(map[string]string{"query": query})
	req, _ := http.NewRequest(http.MethodPost, s.base+"/graphql", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", authorization)
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

func (s *binaryServer) graphql(t *testing.T, authorization, query string, out any) {
	t.Helper()
	if err := s.try(authorization, query, out); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}
