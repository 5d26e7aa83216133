// Package identity says who runs a process, from what the operating system
// tells and nothing the process could set for itself (docs/ARCHITECTURE.md §10): a
// person is the OS user owning the state directory (or root), outside a
// container; anyone else is an agent.
package identity

import (
	"errors"
	"os"
	"path/filepath"
)

// Process is what the operating system tells of a process.
type Process struct {
	UID int
	// Container says the process runs in another container than the
	// state directory's host (or the host could not tell, which counts
	// the same: doubt never raises authority).
	Container bool
	// Why says how Container was found, for `doctor`.
	Why string
}

// Owner is the uid owning the state directory: the state directory itself,
// or the nearest directory above it while it does not exist yet.
func Owner(stateDir string) (int, error) {
	dir := stateDir
	for {
		uid, err := ownerOf(dir)
		if err == nil {
			return uid, nil
		}
		parent := filepath.Dir(dir)
		if !errors.Is(err, os.ErrNotExist) || parent == dir {
			return 0, err
		}
		dir = parent
	}
}

// Person reports whether p acts as a person for a state directory owned
// by owner: the owner or root, outside a container.
func (p Process) Person(owner int) bool {
	return !p.Container && (p.UID == owner || p.UID == 0)
}

// Self describes the running process. hostNS is the mount namespace of
// the state directory's host (statedir records it): a process in another
// one runs in a container the host started, an agent's. A person's whole
// setup may run in a container (CI does): only a different namespace
// counts. The environment has no say: it can lower a person's authority
// (engine.ActorFromEnv), never raise an agent's, so it is not read here.
func Self(hostNS string) Process {
	p := Process{UID: os.Getuid()}
	if ns := Namespace(); hostNS != "" && ns != "" && ns != hostNS {
		p.Container, p.Why = true, "its mount namespace "+ns+" is not the host's, "+hostNS
	}
	return p
}
