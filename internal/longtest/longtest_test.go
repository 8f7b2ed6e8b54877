package longtest

import "testing"

func TestSkipUnlessEnabled(t *testing.T) {
	t.Setenv(Var, "")
	ran := false
	t.Run("without BLOG_LONG", func(t *testing.T) {
		Skip(t, "a test of the switch")
		ran = true
	})
	if ran {
		t.Error("a long test ran without BLOG_LONG=1")
	}
	t.Setenv(Var, "1")
	t.Run("with BLOG_LONG=1", func(t *testing.T) {
		Skip(t, "a test of the switch")
		ran = true
	})
	if !ran {
		t.Error("a long test was skipped with BLOG_LONG=1")
	}
}
