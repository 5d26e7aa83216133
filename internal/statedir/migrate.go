package statedir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/internal/atomicfile"
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

// Migration is what Migrate did.
type Migration struct {
	// Adopt says the state from before hash chains is to be adopted: the
	// forge records without a log have theirs, and the caller gives the
	// issues without a chain theirs, then calls Adopted.
	Adopt bool
	// LeftAlone is what of the first layout was neither moved under
	// host/ nor adopted, as someone other than the host could have
	// written it or put it there.
	LeftAlone []LeftAlone
	// NotMigrated says why nothing was moved or adopted this time (the
	// state directory, or a directory above it, is not the host's alone);
	// the next Migrate tries again. "" when it was not so.
	NotMigrated string
}

// LeftAlone is a file or directory a migration did not take as the host's.
type LeftAlone struct {
	Path string
	// Why says who else could have written it or put it there.
	Why string
}

// Warnings are m's messages for people: what was not migrated or left
// alone, why, and what to do.
func (m Migration) Warnings() []string {
	var out []string
	if m.NotMigrated != "" {
		out = append(out, "the state directory was not migrated to the layout with host/, and nothing of it was adopted: "+
			m.NotMigrated+", so what it holds may not be yours; make it yours alone (`agenttree doctor --fix`), "+
			"check what it holds, and run the command again")
	}
	for _, l := range m.LeftAlone {
		out = append(out, l.Path+": left where it is, not adopted as the host's ("+l.Why+"), so it may not be yours: "+
			"an agent could have put it there. If it is yours, check it, make it yours alone and move it under host/ yourself "+
			"(an issue's then takes `agenttree repair ID --adopt`); else remove it")
	}
	return out
}

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
// It takes as the host's only what the host alone could have written
// (docs/SECURITY.md): nothing at all while the state directory, or a
// directory above it, is writable by others (an agent could have moved
// host/ aside and planted a first layout), and no file another user owns
// or that sits in a directory others may write; each is left where it is,
// in LeftAlone.
//
// It runs under a lock and is safe to run again: each file moves by one
// rename, one already moved is left alone. A state directory that does
// not exist yet is left alone.
func (l Layout) Migrate(ctx context.Context) (Migration, error) {
	m, found := l.readMarker()
	if found && !m.AdoptUnchained {
		return Migration{}, nil
	}
	if !found {
		if _, err := os.Stat(l.Root); errors.Is(err, fs.ErrNotExist) {
			return Migration{}, nil
		}
	}
	host, err := l.HostUID()
	if err != nil {
		return Migration{}, fmt.Errorf("migrate %s to the layout with host/: %w", l.Root, err)
	}
	// Only the host may change what this checks (the modes and owners of
	// its own directories), so it holds for the rest of the migration.
	// While it does not, no adoption starts or goes on; a host/ there
	// without its marker never starts one, so it gets its marker (and
	// the host's namespace) whatever others may write.
	exposed := l.rootExposure(host)
	if _, err := os.Lstat(l.Host()); exposed != "" && (found || errors.Is(err, fs.ErrNotExist)) {
		return Migration{NotMigrated: exposed}, nil
	}
	if !found {
		if err := l.startMigration(); err != nil {
			return Migration{}, fmt.Errorf("migrate %s to the layout with host/: %w", l.Root, err)
		}
	}
	unlock, err := l.lock(ctx)
	if err != nil {
		return Migration{}, err
	}
	defer unlock()
	m, found = l.readMarker() // as another process may have left it
	if found && !m.AdoptUnchained {
		return Migration{}, nil
	}
	if found && exposed != "" {
		return Migration{NotMigrated: exposed}, nil // host/ appeared meanwhile, with the marker
	}
	var left []LeftAlone
	if exposed == "" {
		left, err = l.moveFirstLayout(host)
		if err != nil {
			return Migration{}, fmt.Errorf("migrate %s to the layout with host/: %w", l.Root, err)
		}
	} else {
		for _, m := range l.firstLayoutMoves() {
			left = append(left, LeftAlone{Path: m[0], Why: exposed})
		}
	}
	if !found {
		// Its host/ was there without the marker: what it holds is the
		// current layout's, checked as ever, never adopted.
		return Migration{LeftAlone: left}, atomicfile.WriteYAML(l.marker(), newMarker(false), 0o644)
	}
	for _, dir := range []string{l.ForgePRs(), l.ForgeChecks()} {
		more, err := l.adoptRecords(host, dir)
		left = append(left, more...)
		if err != nil {
			return Migration{LeftAlone: left}, fmt.Errorf("migrate %s to the layout with host/: %w", l.Root, err)
		}
	}
	return Migration{Adopt: true, LeftAlone: left}, nil
}

// adoptRecords gives each record in dir without a log its log, if only
// the host could have written it.
func (l Layout) adoptRecords(host int, dir string) ([]LeftAlone, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var left []LeftAlone
	for _, name := range names {
		rec := chain.FileAt(name)
		if _, err := os.Lstat(rec.Log.Path); err == nil {
			continue // logged: nothing to adopt
		}
		if why := l.within(host, name); why != "" {
			left = append(left, LeftAlone{Path: name, Why: why})
			continue
		}
		if err := rec.Adopt(); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return left, fmt.Errorf("start the log of %s: %w", name, err)
		}
	}
	return left, nil
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

// firstLayoutMoves are the first layout's host files there are outside
// host/, each with where it goes under host/.
func (l Layout) firstLayoutMoves() [][2]string {
	docs := filepath.Join(l.Root, "issues")
	moves := [][2]string{
		{filepath.Join(docs, ".last-id"), filepath.Join(l.HostIssues(), ".last-id")},
		{filepath.Join(l.Root, "forge"), l.Forge()},
		{filepath.Join(l.Root, "controller.lock"), l.ControllerLock()},
	}
	entries, _ := os.ReadDir(docs)
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil || id <= 0 || !e.IsDir() {
			continue
		}
		for _, name := range ownFiles {
			moves = append(moves, [2]string{filepath.Join(docs, e.Name(), name), filepath.Join(l.Issue(id), name)})
		}
	}
	return slices.DeleteFunc(moves, func(m [2]string) bool {
		_, err := os.Lstat(m[0])
		return errors.Is(err, fs.ErrNotExist)
	})
}

// moveFirstLayout moves the first layout's host files under host/, each
// only if the host alone could have written it and put it there (within);
// the others are left where they are.
func (l Layout) moveFirstLayout(host int) ([]LeftAlone, error) {
	if _, err := os.ReadDir(filepath.Join(l.Root, "issues")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var left []LeftAlone
	for _, m := range l.firstLayoutMoves() {
		if _, err := os.Lstat(m[1]); err == nil {
			continue // never over what the current layout holds
		}
		why := l.within(host, m[0])
		if why == "" {
			why = l.treeExposure(host, m[0])
		}
		if why != "" {
			left = append(left, LeftAlone{Path: m[0], Why: why})
			continue
		}
		if err := move(m[0], m[1]); err != nil {
			return left, err
		}
	}
	return left, nil
}

// treeExposure is within for what a directory holds: "" when it is no
// directory, or everything in it is the host's alone (a directory of it
// may be root's).
func (l Layout) treeExposure(host int, dir string) string {
	var why string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == dir {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if w := Exposed(fi, host, fi.IsDir()); w != "" {
			why = fmt.Sprintf("it holds %s, and %s", path, w)
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil && why == "" {
		why = fmt.Sprintf("what it holds cannot be read (%v)", err)
	}
	return why
}

// move renames src to dst, making dst's directory; a src that is gone
// (moved meanwhile by another process) is no error.
func move(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), HostMode); err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
