//go:build etcd

package main

// buildTags are the tags the test binary was built with, for the
// agenttree it builds and runs as a process.
const buildTags = "etcd"
