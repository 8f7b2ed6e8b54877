package endpoint

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
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
			t.Setenv(ListVar, "")
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

// named is a test of another name.
type named struct {
	testing.TB
	name string
}

func (n named) Name() string { return n.name }

// TestGetSpreadsTestsOverTheList: with DYNAMODB_ENDPOINTS each top-level
// test talks to one of its endpoints, always the same, and its subtests
// to the same one; the list wins over DYNAMODB_ENDPOINT.
func TestGetSpreadsTestsOverTheList(t *testing.T) {
	list := []string{"http://127.0.0.1:1", "http://127.0.0.1:2", "http://127.0.0.1:3", "http://127.0.0.1:4"}
	t.Setenv(Var, "http://127.0.0.1:9")
	t.Setenv(ListVar, strings.Join(list, ", "))
	used := map[string]bool{}
	for i := range 40 {
		name := fmt.Sprintf("TestNumber%d", i)
		e := Get(named{t, name})
		if !slices.Contains(list, e) {
			t.Fatalf("%s talks to %q, not one of the list", name, e)
		}
		if again, sub := Get(named{t, name}), Get(named{t, name + "/a_subtest"}); again != e || sub != e {
			t.Fatalf("%s talks to %q, then %q, its subtest to %q: want one endpoint", name, e, again, sub)
		}
		used[e] = true
	}
	if len(used) != len(list) {
		t.Errorf("40 tests talk to %d of the %d endpoints", len(used), len(list))
	}
}
