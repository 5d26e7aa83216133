package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fsnotify/fsnotify"

	"github.com/agenttree/agenttree/forge"
)

var _ forge.Watcher = (*Forge)(nil)

// What the local forge's changes say happened.
const (
	// ChangeCIFinished: a CI runner published an attempt's result
	// (checks/SHA.N.result).
	ChangeCIFinished = "ci_finished"
	// ChangePR: a PR's record was written (opened, approved, commented
	// on, closed, merged).
	ChangePR = "pull_request"
	// ChangePush: an open PR's branch moved in the bare repository.
	ChangePush = "push"
)

// Watch tells of CI runs finishing and PR records written, as the files
// that say so appear under forge/, and of pushes to open PRs' branches,
// as their refs change in the bare repository (forge.Watcher). The runner
// publishes an attempt's result by renaming it into checks/, and git a
// ref by renaming its lock, so one event is one whole result or push.
//
// A result published before the watch was set up is not lost: once the
// directories are watched, the results already there (published, not yet
// taken into a record) are reported too. Writes of the forge's own
// records (SHA.yaml, the logs, the hash chains) are not changes.
func (f *Forge) Watch(ctx context.Context, changed func(forge.Change)) error {
	if err := f.makeDirs(); err != nil {
		return err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("forge: local: watching %s for CI results: %w", f.dir, err)
	}
	defer w.Close()
	checks, prs := filepath.Join(f.dir, "checks"), filepath.Join(f.dir, "prs")
	for _, d := range []string{checks, prs} {
		if err := w.Add(d); err != nil {
			return fmt.Errorf("forge: local: watching %s: %w", d, err)
		}
	}
	refs := filepath.Join(f.bareDir, "refs", "heads")
	if err := watchTree(w, refs); err != nil {
		return fmt.Errorf("forge: local: watching %s for pushes: %w", refs, err)
	}
	if err := scanResults(checks, changed); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("forge: local: the file watch closed")
			}
			// An overflow loses events: the caller's poll finds what they
			// said, and a new watch starts from a fresh scan.
			return fmt.Errorf("forge: local: watching %s: %w", f.dir, err)
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New("forge: local: the file watch closed")
			}
			if (ev.Name == checks || ev.Name == prs) && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				return fmt.Errorf("forge: local: %s was removed while watched", ev.Name)
			}
			if !ev.Has(fsnotify.Create | fsnotify.Write) {
				continue
			}
			if strings.HasPrefix(ev.Name, refs+string(filepath.Separator)) {
				if err := f.pushed(w, refs, ev.Name, changed); err != nil {
					return err
				}
				continue
			}
			if c, ok := changeOf(filepath.Dir(ev.Name) == checks, filepath.Base(ev.Name)); ok {
				changed(c)
			}
		}
	}
}

// watchTree adds dir and the directories under it to w: a branch named
// a/b is the file b in the directory a.
func watchTree(w *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return w.Add(path)
	})
}

// pushed tells of a push to the branch whose ref is path under refs: each
// open PR of the branch changed. A new directory of refs is watched, and
// the branches already in it told of: they were pushed before its watch.
func (f *Forge) pushed(w *fsnotify.Watcher, refs, path string, changed func(forge.Change)) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if err := watchTree(w, path); err != nil {
			return fmt.Errorf("forge: local: watching %s for pushes: %w", path, err)
		}
		return filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			return f.pushed(w, refs, p, changed)
		})
	}
	rel, err := filepath.Rel(refs, path)
	if err != nil || strings.HasSuffix(rel, ".lock") {
		return nil // a lock is git writing the ref; its rename follows
	}
	branch := filepath.ToSlash(rel)
	recs, _, err := f.all()
	if err != nil {
		return fmt.Errorf("forge: local: reading the PRs of a push to %s: %w", branch, err)
	}
	for _, rec := range recs {
		if rec.Branch == branch && rec.State == forge.StateOpen {
			changed(forge.Change{PR: rec.Number, What: ChangePush})
		}
	}
	return nil
}

// scanResults reports the results published in dir.
func scanResults(dir string, changed func(forge.Change)) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("forge: local: reading %s: %w", dir, err)
	}
	for _, e := range entries {
		if c, ok := changeOf(true, e.Name()); ok {
			changed(c)
		}
	}
	return nil
}

// changeOf is the change a file named name says: in checks/ (inChecks) a
// published result SHA.N.result, in prs/ a record N.yaml.
func changeOf(inChecks bool, name string) (forge.Change, bool) {
	if !inChecks {
		n, err := strconv.Atoi(strings.TrimSuffix(name, ".yaml"))
		if err != nil || n <= 0 || !strings.HasSuffix(name, ".yaml") {
			return forge.Change{}, false
		}
		return forge.Change{PR: n, What: ChangePR}, true
	}
	base, ok := strings.CutSuffix(name, ".result")
	if !ok {
		return forge.Change{}, false
	}
	sha, attempt, ok := strings.Cut(base, ".")
	if _, err := strconv.Atoi(attempt); !ok || err != nil || !isHex(sha) {
		return forge.Change{}, false
	}
	return forge.Change{SHA: sha, What: ChangeCIFinished}, true
}

// isHex reports a full commit name: 40 hex digits (SHA-1) or 64 (SHA-256).
func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}
