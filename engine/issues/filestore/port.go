package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/engine/issues/eventlog"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/statedir"
)

var _ backend.Porter = (*Store)(nil)

// asideGlob matches the records beside events.jsonl (eventlog's
// PreChainFile, SetAsideFile).
const asideGlob = "events.*.jsonl"

// Export reads issue id's files.
func (s *Store) Export(_ context.Context, id int) (backend.Whole, error) {
	f := s.issue(id)
	w := backend.Whole{ID: id}
	var err error
	if w.State, err = readIfThere(f.state); err != nil {
		return w, err
	}
	if w.Log, err = readIfThere(f.log.Path); err != nil {
		return w, err
	}
	if w.Watch, err = readIfThere(f.watch); err != nil {
		return w, err
	}
	names, err := filepath.Glob(filepath.Join(s.layout.Issue(id), asideGlob))
	if err != nil {
		return w, err
	}
	for _, path := range names {
		name := filepath.Base(path)
		if name == eventlog.File || strings.HasPrefix(name, ".") {
			continue
		}
		data, err := readIfThere(path)
		if err != nil {
			return w, err
		}
		if data != nil {
			if w.Aside == nil {
				w.Aside = map[string][]byte{}
			}
			w.Aside[name] = data
		}
	}
	return w, nil
}

func readIfThere(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// Import writes w's files in its directory, made if missing, under its
// lock: events.jsonl first, then issue.yaml, watch.yaml and the records
// set aside; a file w has none of is removed.
func (s *Store) Import(ctx context.Context, w backend.Whole, timeout time.Duration) error {
	if err := os.MkdirAll(s.layout.Issue(w.ID), statedir.HostMode); err != nil {
		return err
	}
	unlock, err := atomicfile.Lock(ctx, s.lockPath(w.ID), timeout, fmt.Sprintf("issue %d", w.ID))
	if err != nil {
		return err
	}
	defer unlock()
	f := s.issue(w.ID)
	files := []struct {
		path string
		data []byte
	}{{f.log.Path, w.Log}, {f.state, w.State}, {f.watch, w.Watch}}
	for name, data := range w.Aside {
		if filepath.Base(name) != name || name == eventlog.File || !strings.HasPrefix(name, "events.") {
			return fmt.Errorf("issue %d: a record set aside named %q, which is no file's name here", w.ID, name)
		}
		files = append(files, struct {
			path string
			data []byte
		}{filepath.Join(s.layout.Issue(w.ID), name), data})
	}
	// The records set aside that w has not go: the issue is w's alone.
	old, err := filepath.Glob(filepath.Join(s.layout.Issue(w.ID), asideGlob))
	if err != nil {
		return err
	}
	for _, path := range old {
		if name := filepath.Base(path); name != eventlog.File && w.Aside[name] == nil {
			files = append(files, struct {
				path string
				data []byte
			}{path, nil})
		}
	}
	for _, file := range files {
		if file.data == nil {
			if err := os.Remove(file.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			continue
		}
		if err := atomicfile.Write(file.path, file.data, 0o644); err != nil {
			return fmt.Errorf("issue %d: %w", w.ID, err)
		}
	}
	return nil
}

// KeepLastID writes .last-id under the issue list's lock, unless it holds
// n or more.
func (s *Store) KeepLastID(ctx context.Context, n int) error {
	if err := os.MkdirAll(s.layout.HostIssues(), statedir.HostMode); err != nil {
		return err
	}
	unlock, err := atomicfile.Lock(ctx, s.listLock(), 30*time.Second, "the issue list")
	if err != nil {
		return err
	}
	defer unlock()
	if last, _ := s.LastID(ctx); last >= n {
		return nil
	}
	return s.setLastID(n)
}
