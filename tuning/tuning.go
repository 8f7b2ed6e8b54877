// Package tuning sets the Go runtime's garbage collector for a server
// that runs under a container's memory limit, when its environment leaves
// the collector to the program: a soft memory limit under the container's,
// and a higher GOGC than Go's default.
//
// The server's live heap is small (about 10 to 50 MB serving thousands of
// requests a second) and every request allocates a few hundred kilobytes
// that die with it. Go's default GOGC=100 then collects every few dozen
// requests, and the collector takes a fifth to a quarter of the CPU.
// ContainerGOGC lets the heap grow to a few times the live heap before a
// collection, which costs one to two hundred megabytes and returns most of
// that CPU to requests (see BENCHMARKS.md). It is set only where a memory
// limit is known: there the soft limit (GOMEMLIMIT) at MemoryLimitShare of
// it makes the collector work harder before the container would be killed.
// A process with no limit (the single binary of a small blog) keeps Go's
// default and its small footprint.
package tuning

import (
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// ContainerGOGC is the collector's target under a container's memory limit
// when GOGC is not set: a collection when the heap has grown by this
// percentage of what the last one left.
const ContainerGOGC = 400

// MemoryLimitShare is the part of the container's memory limit that the
// soft memory limit is set to when GOMEMLIMIT is not set.
const MemoryLimitShare = 0.9

// GC is the collector's setting as Apply left it.
type GC struct {
	// Percent is GOGC: from the environment, ContainerGOGC under a
	// container's memory limit, or Go's default.
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

// Apply sets the soft memory limit to MemoryLimitShare of the cgroup's
// memory limit unless getenv("GOMEMLIMIT") is set, and GOGC to
// ContainerGOGC unless getenv("GOGC") is set; it changes nothing where the
// process has no memory limit. It returns the setting in force.
func Apply(getenv func(string) string) GC {
	var gc GC
	limit, limited := containerLimit()
	if getenv("GOGC") != "" {
		gc.FromEnvironment = append(gc.FromEnvironment, "GOGC")
	} else if limited {
		debug.SetGCPercent(ContainerGOGC)
	}
	if getenv("GOMEMLIMIT") != "" {
		gc.FromEnvironment = append(gc.FromEnvironment, "GOMEMLIMIT")
	} else if limited {
		debug.SetMemoryLimit(int64(float64(limit) * MemoryLimitShare))
	}
	gc.Percent = debug.SetGCPercent(-1)
	debug.SetGCPercent(gc.Percent)
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
