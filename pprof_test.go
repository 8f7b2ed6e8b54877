package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func TestPprof(t *testing.T) {
	t.Run("off unless an address is given", func(t *testing.T) {
		c, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if c.pprofAddr != "" {
			t.Errorf("pprof address %q by default, want none", c.pprofAddr)
		}
	})

	t.Run("only on loopback", func(t *testing.T) {
		for _, addr := range []string{"0.0.0.0:6060", ":6060", "192.0.2.1:6060", "example.com:6060", "6060"} {
			_, err := parseConfig([]string{"-pprof-addr", addr}, func(string) string { return "" }, io.Discard)
			if err == nil || !strings.Contains(err.Error(), "pprof address") {
				t.Errorf("-pprof-addr %s: err = %v, want a pprof address error", addr, err)
			}
		}
		for _, addr := range []string{"127.0.0.1:6060", "localhost:6060", "[::1]:6060"} {
			c, err := parseConfig(nil, func(k string) string { return map[string]string{"PPROF_ADDR": addr}[k] }, io.Discard)
			if err != nil || c.pprofAddr != addr {
				t.Errorf("PPROF_ADDR=%s: %v", addr, err)
			}
		}
	})

	t.Run("serves profiles", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		addr, err := servePprof(ctx, "127.0.0.1:0", nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		// The goroutines' profile: a heap profile, in text, symbolizes
		// every allocation site of the tests run before this one, which
		// takes a minute with the race detector.
		resp, err := http.Get("http://" + addr.String() + "/debug/pprof/goroutine?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine profile: total") {
			t.Errorf("goroutine profile: %d %.200s", resp.StatusCode, body)
		}
		checkSecurityHeaders(t, "goroutine profile", resp.Header)
		for _, path := range []string{"/debug/pprof/", "/nowhere"} {
			resp, err := http.Get("http://" + addr.String() + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			checkSecurityHeaders(t, "pprof "+path, resp.Header)
		}
	})
}
