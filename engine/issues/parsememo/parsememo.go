// Package parsememo keeps, per issue, one parse a long-lived reader
// shares (the controller's due set), keyed by the hash of the bytes it
// came from: a read that finds the same bytes again takes a copy of it
// rather than parse them again (docs/ARCHITECTURE.md §6, the
// controller's passes).
package parsememo

import (
	"crypto/sha256"
	"sync"
)

// Cloner is a parse that can copy itself, sharing nothing with the copy.
type Cloner[T any] interface {
	Clone() T
}

// Memo is the parses kept, one per issue. Its zero value is empty and
// ready; its methods are safe to call from several goroutines. What it
// keeps must never be changed, by the memo's caller nor by the reader
// that shares it: Take hands out clones.
type Memo[T Cloner[T]] struct {
	mu   sync.Mutex
	kept map[int]entry[T]
}

type entry[T any] struct {
	sum [sha256.Size]byte
	v   T
}

// Keep keeps v as the parse of issue id's data, replacing any other, and
// returns data's hash (SHA-256), for a caller that needs it too.
func (m *Memo[T]) Keep(id int, data []byte, v T) [sha256.Size]byte {
	sum := sha256.Sum256(data)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.kept == nil {
		m.kept = map[int]entry[T]{}
	}
	m.kept[id] = entry[T]{sum: sum, v: v}
	return sum
}

// Take is a clone of the parse kept of issue id, when it was kept of
// these very bytes.
func (m *Memo[T]) Take(id int, data []byte) (v T, ok bool) {
	m.mu.Lock()
	e, found := m.kept[id]
	m.mu.Unlock()
	// Only an issue kept pays for the hash: a command's reads keep none.
	if !found || sha256.Sum256(data) != e.sum {
		return v, false
	}
	return e.v.Clone(), true
}

// Forget drops what is kept of issue id.
func (m *Memo[T]) Forget(id int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.kept, id)
}
