// Package tuning sets the Go runtime's garbage collector for a server
// when its environment leaves it to the program: a higher GOGC than Go's
// default, and a soft memory limit under the container's.
//
// The server's live heap is small (about 10 MB serving thousands of
// requests a second) and every request allocates a few hundred kilobytes
// that die with it. Go's default GOGC=100 then collects every few dozen
// requests, and the collector takes a fifth to a quarter of the CPU.
// DefaultGOGC lets the heap grow to a few times the live heap before a
// collection, which costs tens of megabytes and returns most of that CPU
// to requests (see BENCHMARKS.md). Where the process runs under a memory
// limit (a container's cgroup), a soft limit (GOMEMLIMIT) at
// MemoryLimitShare of it makes the collector work harder before the
// container would be killed, so the higher GOGC is never what runs it out
// of memory.
package tuning

import (
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// DefaultGOGC is the collector's target when GOGC is not set: a collection
// when the heap has grown by this percentage of what the last one left.
const DefaultGOGC = 400

// MemoryLimitShare is the part of the container's memory limit that the
// soft memory limit is set to when GOMEMLIMIT is not set.
const MemoryLimitShare = 0.9

// GC is the collector's setting as Apply left it.
type GC struct {
	// Percent is GOGC: from the environment, or DefaultGOGC.
	Percent int
	// MemoryLimit is the soft memory limit in bytes, math.MaxInt64 for
	// none.
	MemoryLimit int64
	// FromEnvironment names the variables the environment set, which
	// Apply left as they were.
	FromEnvironment []string
}

// cgroupFiles hold the memory limit of the process's cgroup: v2, then v1.
var cgroupFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// Apply sets GOGC to DefaultGOGC unless getenv("GOGC") is set, and the
// soft memory limit to MemoryLimitShare of the cgroup's memory limit
// unless getenv("GOMEMLIMIT") is set or there is no limit. It returns
// the setting in force.
func Apply(getenv func(string) string) GC {
	var gc GC
	if getenv("GOGC") == "" {
		debug.SetGCPercent(DefaultGOGC)
	} else {
		gc.FromEnvironment = append(gc.FromEnvironment, "GOGC")
	}
	gc.Percent = debug.SetGCPercent(-1)
	debug.SetGCPercent(gc.Percent)
	if getenv("GOMEMLIMIT") == "" {
		if limit, ok := containerLimit(); ok {
			debug.SetMemoryLimit(int64(float64(limit) * MemoryLimitShare))
		}
	} else {
		gc.FromEnvironment = append(gc.FromEnvironment, "GOMEMLIMIT")
	}
	gc.MemoryLimit = debug.SetMemoryLimit(-1)
	return gc
}

// containerLimit returns the memory limit of the process's cgroup, and
// false when it has none or it cannot be read.
func containerLimit() (int64, bool) {
	for _, f := range cgroupFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		return parseLimit(string(b))
	}
	return 0, false
}

// parseLimit reads a cgroup memory limit: a number of bytes, or "max" (v2)
// or a number near the largest int64 (v1) for none.
func parseLimit(s string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 || n >= math.MaxInt64/2 {
		return 0, false
	}
	return n, true
}
