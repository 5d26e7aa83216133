//go:build !unix

package api

// openFileLimit: Windows has no per-process limit of open files to read;
// this is the usual Unix soft limit, which keeps the socket's limits low.
func openFileLimit() int { return 1024 }
