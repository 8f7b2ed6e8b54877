//go:build !unix

package rlimit

// OpenFiles returns false: there is no open-file limit to read here.
func OpenFiles() (uint64, bool) { return 0, false }
