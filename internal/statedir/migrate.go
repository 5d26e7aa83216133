package statedir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/chain"
	"github.com/agenttree/agenttree/internal/identity"
)

// currentLayout is the layout with host/.
const currentLayout = 2

// marker is host/layout, which says the state directory has the current
// layout.
type marker struct {
	Layout             int    `yaml:"layout"`
	HostMountNamespace string `yaml:"host_mount_namespace,omitempty"`
	// AdoptUnchained says the state directory came in the first layout,
	// from before hash chains: its issues and forge records without their
	// logs are to get them. Only a migration from the first layout sets
	// it, and Adopted clears it.
	AdoptUnchained bool `yaml:"adopt_unchained,omitempty"`
}

// ownFiles are the host's files of an issue in the first layout.
var ownFiles = []string{"issue.yaml", "events.jsonl", "watch.yaml", "outbox", ".lock"}

// Migrate moves a first-layout state directory's host files under host/,
// and reports whether the state from before hash chains is to be
// adopted: then it has given the forge records without a log theirs, and
// the caller gives the issues without a chain theirs, then calls Adopted.
//
// Only a first-layout directory holds state from before chains (the
// host/ layout and the chains arrived together), and only one with no
// host/ at all is taken for one: its host/ appears whole with the marker
// that says adoption is due, so a crash at any point resumes it, and
// nothing but Adopted ends it. A host/ without its marker (removed) starts
// no adoption: deleting a file never passes state written by hand off as
// state from before chains. (Deleting host/ whole does, with every issue's
// chain and record lost: no edit that goes unseen.)
//
// It runs under a lock and is safe to run again: each file moves by one
// rename, one already moved is left alone. A state directory that does
// not exist yet is left alone.
func (l Layout) Migrate(ctx context.Context) (adopt bool, err error) {
	m, found := l.readMarker()
	if found && !m.AdoptUnchained {
		return false, nil
	}
	if !found {
		if _, err := os.Stat(l.Root); errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err := l.startMigration(); err != nil {
			return false, fmt.Errorf("migrate %s to the layout with host/: %w", l.Root, err)
		}
	}
	unlock, err := l.lock(ctx)
	if err != nil {
		return false, err
	}
	defer unlock()
	m, found = l.readMarker() // as another process may have left it
	if found && !m.AdoptUnchained {
		return false, nil
	}
	if err := l.moveFirstLayout(); err != nil {
		return false, fmt.Errorf("migrate %s to the layout with host/: %w", l.Root, err)
	}
	if !found {
		// Its host/ was there without the marker: what it holds is the
		// current layout's, checked as ever, never adopted.
		return false, atomicfile.WriteYAML(l.marker(), newMarker(false), 0o644)
	}
	for _, dir := range []string{l.ForgePRs(), l.ForgeChecks()} {
		if err := (chain.Records{Dir: dir}).Adopt(); err != nil {
			return false, fmt.Errorf("migrate %s to the layout with host/: %w", l.Root, err)
		}
	}
	return true, nil
}

// Adopted records that the state from before hash chains has its logs:
// from now on Migrate reports nothing to adopt.
func (l Layout) Adopted(ctx context.Context) error {
	unlock, err := l.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	m, found := l.readMarker()
	if !found || !m.AdoptUnchained {
		return nil
	}
	m.AdoptUnchained = false
	return atomicfile.WriteYAML(l.marker(), m, 0o644)
}

// HostNamespace is the mount namespace the state directory was set up in
// ("" when not recorded).
func (l Layout) HostNamespace() string {
	m, _ := l.readMarker()
	return m.HostMountNamespace
}

// marker is the path of host/layout.
func (l Layout) marker() string { return filepath.Join(l.Host(), "layout") }

// newMarker is the current layout's marker, recording the host's mount
// namespace, so that a process in another one (an agent's container) is
// known for one.
func newMarker(adopt bool) marker {
	return marker{Layout: currentLayout, HostMountNamespace: identity.Namespace(), AdoptUnchained: adopt}
}

// readMarker reads host/layout; found is false only when there is none.
// One that cannot be read says nothing is due.
func (l Layout) readMarker() (m marker, found bool) {
	err := atomicfile.ReadYAML(l.marker(), &m)
	if errors.Is(err, fs.ErrNotExist) {
		return marker{}, false
	}
	if err != nil {
		return marker{}, true
	}
	return m, true
}

// lock serializes migrations of the state directory.
func (l Layout) lock(ctx context.Context) (func(), error) {
	return atomicfile.Lock(ctx, filepath.Join(l.Host(), ".layout.lock"), 30*time.Second, "the state directory's layout")
}

// startMigration makes host/, with the marker that says adoption is due,
// if there is no host/ yet. The two appear together (made aside, renamed
// in): a host/ without its marker is never one a migration left.
func (l Layout) startMigration() error {
	if _, err := os.Lstat(l.Host()); !errors.Is(err, fs.ErrNotExist) {
		return err // nil: there is one
	}
	tmp, err := os.MkdirTemp(l.Root, ".host-")
	if err != nil {
		return err
	}
	err = os.Chmod(tmp, HostMode)
	if err == nil {
		err = atomicfile.WriteYAML(filepath.Join(tmp, "layout"), newMarker(true), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, l.Host())
	}
	if err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Lstat(l.Host()); serr == nil {
			return nil // made meanwhile by another process
		}
	}
	return err
}

// moveFirstLayout moves the first layout's host files under host/.
func (l Layout) moveFirstLayout() error {
	docs := filepath.Join(l.Root, "issues")
	entries, err := os.ReadDir(docs)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	moves := [][2]string{
		{filepath.Join(docs, ".last-id"), filepath.Join(l.HostIssues(), ".last-id")},
		{filepath.Join(l.Root, "forge"), l.Forge()},
		{filepath.Join(l.Root, "controller.lock"), l.ControllerLock()},
	}
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil || id <= 0 || !e.IsDir() {
			continue
		}
		for _, name := range ownFiles {
			moves = append(moves, [2]string{filepath.Join(docs, e.Name(), name), filepath.Join(l.Issue(id), name)})
		}
	}
	for _, m := range moves {
		if err := move(m[0], m[1]); err != nil {
			return err
		}
	}
	return nil
}

// move renames src to dst, making dst's directory; a src that is gone
// (never there, or moved by another process) is no error.
func move(src, dst string) error {
	fi, err := os.Lstat(src)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err == nil && fi.Mode()&os.ModeSymlink != 0 {
		// agenttree never made a symlink there: host/ takes none in.
		return nil
	}
	if _, err := os.Lstat(dst); err == nil {
		return nil // never over what the current layout holds
	}
	if err := os.MkdirAll(filepath.Dir(dst), HostMode); err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
