//go:build unix

package rlimit

import "syscall"

// OpenFiles returns the process's limit on open files (Go raises
// the soft limit to the hard one at start), and false when it is
// unknown or unlimited.
func OpenFiles() (uint64, bool) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, false
	}
	// RLIM_INFINITY is all ones, or the largest int64, by platform.
	cur := uint64(l.Cur)
	return cur, cur < 1<<32
}
