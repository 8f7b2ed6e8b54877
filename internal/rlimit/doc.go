// Package rlimit reads the limits the operating system sets on the
// process.
package rlimit
