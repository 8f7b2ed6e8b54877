// Package longtest is the one place a test learns whether the long runs
// are wanted: the load, soak, crash and fleet tests, which take minutes
// where the others take seconds. BLOG_LONG=1 runs them; without it they
// are skipped with a message that says how to run them.
// scripts/test.sh -long runs them on both backends, as CI does.
package longtest

import (
	"os"
	"testing"
)

// Var, set to 1, runs the long tests.
const Var = "BLOG_LONG"

// Enabled reports whether the long tests run.
func Enabled() bool { return os.Getenv(Var) == "1" }

// Skip skips tb, a long run doing what says, unless BLOG_LONG=1. A long
// test calls it in its own body (not in a helper), where
// scripts/test.sh -long finds it.
func Skip(tb testing.TB, what string) {
	tb.Helper()
	if !Enabled() {
		tb.Skipf("a long run (%s): BLOG_LONG=1 runs it, as scripts/test.sh -long and CI do", what)
	}
}
