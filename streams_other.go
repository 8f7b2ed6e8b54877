//go:build !unix

package main

// openFileLimit returns false: there is no open-file limit to read here.
func openFileLimit() (uint64, bool) { return 0, false }
