package main

import (
	"io"
	"strings"
	"testing"
)

// TestMediaWorkers checks -media-workers and MEDIA_WORKERS: the flag
// over the variable, 0 by default (one fewer than the cores), and a
// negative count refused.
func TestMediaWorkers(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string { return map[string]string{"MEDIA_WORKERS": v}[k] }
	}
	for _, tt := range []struct {
		args []string
		env  string
		want int
	}{
		{nil, "", 0},
		{nil, "3", 3},
		{[]string{"-media-workers", "2"}, "3", 2},
	} {
		c, err := parseConfig(tt.args, env(tt.env), io.Discard)
		if err != nil {
			t.Fatalf("%v, MEDIA_WORKERS=%q: %v", tt.args, tt.env, err)
		}
		if c.media.workers != tt.want {
			t.Errorf("%v, MEDIA_WORKERS=%q: %d workers, want %d", tt.args, tt.env, c.media.workers, tt.want)
		}
	}
	if _, err := parseConfig([]string{"-media-workers", "-1"}, env(""), io.Discard); err == nil || !strings.Contains(err.Error(), "media workers") {
		t.Errorf("-media-workers -1: %v, want an error naming media workers", err)
	}
}
