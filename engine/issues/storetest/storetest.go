// Package storetest is the conformance suite of the issue store's
// backends (package backend): every contract the Backend interface's doc
// comments state, checked on the backend alone, and the store's own rules
// (the version compare-and-swap, the hash chain, verify and repair)
// checked through issues.OpenWith on it, so that the rules mean the same
// whatever keeps the bytes (docs/ARCHITECTURE.md §2, the store backend).
// Each backend's tests run it:
//
//	storetest.Run(t, func(t *testing.T) storetest.Subject { ... })
//
// It is a package that imports testing, as net/http/httptest does, for
// the backends' tests only; nothing in the binary imports it.
package storetest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/engine/issues/backend"
)

// Subject is one backend under test, holding nothing yet, with what the
// suite needs beyond the interface: a second handle on the same bytes,
// and ways to do to them what agenttree never does.
type Subject struct {
	backend.Backend
	// Root is the state directory issues.OpenWith opens with the backend
	// (the rest of the state: stage documents, sessions, the forge's
	// files); "" is a new temporary one.
	Root string
	// Again opens another handle on the same bytes, as a second process
	// would; nil when there is none (the checks across processes are
	// skipped).
	Again func(t *testing.T) backend.Backend
	// Remove removes everything stored for issue id, as a person could
	// outside agenttree.
	Remove func(t *testing.T, id int)
	// RemoveLog removes issue id's log and nothing else.
	RemoveLog func(t *testing.T, id int)
	// Tear appends partial, an incomplete line, to issue id's log, as a
	// crash inside an append leaves it; nil for a backend whose appends
	// cannot be cut short (the torn-tail checks are skipped).
	Tear func(t *testing.T, id int, partial []byte)
}

// check is one named check of a fresh Subject.
type check struct {
	name string
	run  func(t *testing.T, s Subject)
}

// Run runs every check, each on a Subject open makes anew.
func Run(t *testing.T, open func(t *testing.T) Subject) {
	for _, checks := range [][]check{readChecks(), writeChecks(), storeChecks()} {
		for _, c := range checks {
			t.Run(c.name, func(t *testing.T) {
				s := open(t)
				require.NotNil(t, s.Backend)
				if s.Root == "" {
					s.Root = filepath.Join(t.TempDir(), "_agenttree")
				}
				c.run(t, s)
			})
		}
	}
}

// wait bounds every wait of the suite: generous, for CI's busy cores.
const wait = 20 * time.Second

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	t.Cleanup(cancel)
	return ctx
}

// logOf is the lines the suite writes to a log, with their hashes.
type logOf struct{ hashes []string }

// next is the line that follows the log's last one, n its number
// (from 1), and its hash, which the log then ends with.
func (l *logOf) next(t *testing.T, id int) ([]byte, string) {
	t.Helper()
	prev := ""
	if len(l.hashes) > 0 {
		prev = l.hashes[len(l.hashes)-1]
	}
	raw, line, err := chain.Encode(prev, map[string]int{"issue": id, "n": len(l.hashes) + 1})
	require.NoError(t, err)
	l.hashes = append(l.hashes, line.Hash)
	return raw, line.Hash
}

func (l *logOf) last() string { return l.hashes[len(l.hashes)-1] }

// state is the bytes the suite stores as issue id's state at version v.
func state(id, v int) []byte { return fmt.Appendf(nil, "id: %d\nversion: %d\n", id, v) }

// created is an issue the suite created, with its log so far.
type created struct {
	id  int
	log *logOf
}

// create creates n issues through b, each with one line and its state.
func create(t *testing.T, b backend.Backend, n int) []created {
	t.Helper()
	var out []created
	for range n {
		log := &logOf{}
		id, err := b.Create(ctxOf(t), wait, func(id int) (backend.Write, error) {
			line, _ := log.next(t, id)
			return backend.Write{ID: id, Line: line, State: state(id, 1)}, nil
		})
		require.NoError(t, err)
		out = append(out, created{id: id, log: log})
	}
	return out
}

// commit logs the next line of c and its state at version v, under c's
// lock.
func commit(t *testing.T, b backend.Backend, c created, v int) {
	t.Helper()
	h, err := b.Lock(ctxOf(t), c.id, wait)
	require.NoError(t, err)
	defer h.Unlock()
	line, _ := c.log.next(t, c.id)
	logged, err := b.Commit(ctxOf(t), h, backend.Write{ID: c.id, Line: line, State: state(c.id, v)})
	require.NoError(t, err)
	require.True(t, logged)
}

// hashes are the hashes of issue id's log's lines, which must verify.
func hashes(t *testing.T, b backend.Backend, id int) []string {
	t.Helper()
	lines, err := b.Log(id).Verify()
	require.NoError(t, err)
	out := []string{}
	for _, l := range lines {
		out = append(out, l.Hash)
	}
	return out
}
