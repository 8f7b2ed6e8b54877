package tuning

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestParseLimit(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"536870912\n", 536870912, true},
		{"max\n", 0, false},
		{"9223372036854771712\n", 0, false}, // cgroup v1 without a limit
		{"0", 0, false},
		{"", 0, false},
	}
	for _, c := range cases {
		got, ok := parseLimit(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("parseLimit(%q) = %d, %t, want %d, %t", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestApplyKeepsWhatTheEnvironmentSets(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))

	debug.SetGCPercent(150)
	debug.SetMemoryLimit(1 << 30)
	env := map[string]string{"GOGC": "150", "GOMEMLIMIT": "1GiB"}
	gc := Apply(func(k string) string { return env[k] })
	if gc.Percent != 150 || gc.MemoryLimit != 1<<30 || len(gc.FromEnvironment) != 2 {
		t.Errorf("with GOGC and GOMEMLIMIT set: %+v, want them kept", gc)
	}

	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	gc = Apply(func(string) string { return "" })
	if len(gc.FromEnvironment) != 0 {
		t.Errorf("with nothing set: %+v, want nothing from the environment", gc)
	}
	if limit, ok := containerLimit(); ok {
		if gc.Percent != ContainerGOGC || gc.MemoryLimit != int64(float64(limit)*MemoryLimitShare) {
			t.Errorf("under a container limit of %d: %+v, want GOGC %d and %v of the limit", limit, gc, ContainerGOGC, MemoryLimitShare)
		}
	} else if gc.Percent != 100 || gc.MemoryLimit != math.MaxInt64 {
		t.Errorf("with no memory limit: %+v, want Go's defaults", gc)
	}
}
