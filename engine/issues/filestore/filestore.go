// Package filestore is the issue store's backend (package backend) kept
// in files: each issue's issue.yaml, watch.yaml and events.jsonl in its
// directory under the state directory's host/issues/, and the last id
// given in host/issues/.last-id (docs/ARCHITECTURE.md §2, and §8 for
// the files). It keeps the bytes; what they must be is package issues'.
package filestore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/engine/issues/eventlog"
	"github.com/agenttree/agenttree/internal/statedir"
)

// Store keeps the issues of the state directory at its layout's root.
type Store struct {
	layout statedir.Layout

	mu    sync.RWMutex
	files map[int]*issueFiles // issue
}

// issueFiles are the paths of one issue's files, made once per issue and
// kept: a Get (every display, every issue of a scan) then builds no path,
// and Log hands out the same pointer rather than a chain.Log boxed anew,
// so reading through the backend costs no more than reading the files.
type issueFiles struct {
	state, watch string
	log          chain.Log
}

func (f *issueFiles) Tail() (chain.Tail, error)     { return f.log.Tail() }
func (f *issueFiles) Verify() ([]chain.Line, error) { return f.log.Verify() }

// issue is issue id's files.
func (s *Store) issue(id int) *issueFiles {
	s.mu.RLock()
	f := s.files[id]
	s.mu.RUnlock()
	if f != nil {
		return f
	}
	dir := s.layout.Issue(id)
	f = &issueFiles{state: filepath.Join(dir, "issue.yaml"), watch: filepath.Join(dir, "watch.yaml"),
		log: chain.Log{Path: filepath.Join(dir, eventlog.File)}}
	s.mu.Lock()
	defer s.mu.Unlock()
	if kept := s.files[id]; kept != nil {
		return kept
	}
	s.files[id] = f
	return f
}

var _ backend.Backend = (*Store)(nil)

// Open is the file backend of the state directory root. It reads
// nothing: the directory may not exist until the first issue is created.
func Open(root string) *Store {
	return &Store{layout: statedir.Layout{Root: root}, files: map[int]*issueFiles{}}
}

// IDs lists the issues' directories, in id order.
func (s *Store) IDs(context.Context) ([]int, error) {
	entries, err := os.ReadDir(s.layout.HostIssues())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []int
	for _, e := range entries {
		if id, err := strconv.Atoi(e.Name()); err == nil && e.IsDir() && id > 0 {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	return ids, nil
}

// LastID reads .last-id; a missing or unparsable one is 0.
func (s *Store) LastID(context.Context) (int, error) {
	data, err := os.ReadFile(s.lastIDPath())
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n, nil
}

func (s *Store) lastIDPath() string { return filepath.Join(s.layout.HostIssues(), ".last-id") }

// Gone reports whether issue id's directory is not there.
func (s *Store) Gone(_ context.Context, id int) (bool, error) {
	_, err := os.Lstat(s.layout.Issue(id))
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	return false, err
}

// Read reads issue id's issue.yaml.
func (s *Store) Read(_ context.Context, id int) (backend.Snapshot, error) {
	data, err := os.ReadFile(s.issue(id).state)
	if errors.Is(err, fs.ErrNotExist) {
		return backend.Snapshot{ID: id}, nil
	}
	if err != nil {
		return backend.Snapshot{}, err
	}
	return backend.Snapshot{ID: id, State: data}, nil
}

// Log is issue id's events.jsonl.
func (s *Store) Log(id int) eventlog.Lines { return s.issue(id) }

// ReadWatch reads issue id's watch.yaml.
func (s *Store) ReadWatch(_ context.Context, id int) ([]byte, error) {
	data, err := os.ReadFile(s.issue(id).watch)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}
