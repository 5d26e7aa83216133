// Package archtest holds the tests that keep docs/ARCHITECTURE.md §2
// true of the whole module: every import runs down the layers, from cmd
// to the leaves, and no production package or file outgrows the size the
// page sets. It has no code of its own; `go test ./internal/archtest`
// runs them.
package archtest
