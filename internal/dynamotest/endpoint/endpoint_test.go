package endpoint

import (
	"fmt"
	"runtime"
	"testing"
)

// fatalRecorder is a test that records its fatal message instead of
// failing the test running it.
type fatalRecorder struct {
	testing.TB
	fatal string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatal(args ...any) {
	r.fatal = fmt.Sprint(args...)
	runtime.Goexit()
}

// TestGetRequiresTheEndpointWhenAskedTo: with an endpoint every test talks
// to it; without one a test runs on the embedded engine, unless
// REQUIRE_DYNAMODB=1, which fails it with the guard's message.
func TestGetRequiresTheEndpointWhenAskedTo(t *testing.T) {
	cases := []struct {
		name, endpoint, require string
		want, fatal             string
	}{
		{"an endpoint is used", "http://127.0.0.1:8765", "1", "http://127.0.0.1:8765", ""},
		{"no endpoint means the embedded engine", "", "", "", ""},
		{"no endpoint fails when one is required", "", "1", "", Missing},
		{"only 1 requires it", "", "yes", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(Var, c.endpoint)
			t.Setenv(RequireVar, c.require)
			r := &fatalRecorder{TB: t}
			var got string
			done := make(chan struct{})
			go func() {
				defer close(done)
				got = Get(r)
			}()
			<-done
			if got != c.want || r.fatal != c.fatal {
				t.Errorf("Get = %q, fatal %q; want %q, fatal %q", got, r.fatal, c.want, c.fatal)
			}
		})
	}
}
