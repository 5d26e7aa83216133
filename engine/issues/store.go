package issues

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/statedir"
)

// ErrNotFound is returned for an issue id with no issue.yaml.
var ErrNotFound = errors.New("issue not found")

// ConflictError says an update lost a compare-and-swap on the version.
type ConflictError struct {
	ID              int
	Expected, Found int
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("issue %d changed while this command ran (version %d, now %d); look at `agenttree issue show %d` and run the command again if it still applies", e.ID, e.Expected, e.Found, e.ID)
}

// Store keeps issues under a state directory (`_agenttree/`). Every write
// is atomic (temp file, fsync, rename) and made under the issue's file lock.
type Store struct {
	root   string
	layout statedir.Layout
	// LockTimeout bounds how long a writer waits for a lock.
	LockTimeout time.Duration
	now         func() time.Time
}

// Open opens the state directory root, moving a first-layout directory's
// host files under host/ (statedir.Layout.Migrate). Nothing is created
// until the first issue is.
func Open(root string) (*Store, error) {
	layout := statedir.Layout{Root: root}
	// The migration's lock is held for a few renames, once per state
	// directory: a bounded wait needs no caller's context.
	if err := layout.Migrate(context.Background()); err != nil {
		return nil, err
	}
	return &Store{root: root, layout: layout, LockTimeout: 30 * time.Second, now: time.Now}, nil
}

// Root is the state directory.
func (s *Store) Root() string { return s.root }

// Layout is the state directory's layout.
func (s *Store) Layout() statedir.Layout { return s.layout }

// Dir is the directory of issue id's stage documents, which agents write.
func (s *Store) Dir(id int) string { return s.layout.Docs(id) }

// HostDir is the directory of issue id's own files (issue.yaml,
// events.jsonl, watch.yaml, outbox/), which only the host writes.
func (s *Store) HostDir(id int) string { return s.layout.Issue(id) }

func (s *Store) path(id int) string { return filepath.Join(s.HostDir(id), "issue.yaml") }

// lock takes an exclusive file lock, waiting up to LockTimeout.
func (s *Store) lock(ctx context.Context, path, what string) (func(), error) {
	return atomicfile.Lock(ctx, path, s.LockTimeout, what)
}

// Get reads issue id.
func (s *Store) Get(id int) (*Issue, error) {
	var iss Issue
	err := atomicfile.ReadYAML(s.path(id), &iss)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("issue %d: %w (list issues with `agenttree issue list`)", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return &iss, nil
}

// List reads every issue, in id order. An issue that cannot be read does
// not hide the others: they are all returned, with an error that joins
// what was wrong with each unreadable one.
func (s *Store) List() ([]*Issue, error) {
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	out := make([]*Issue, 0, len(ids))
	var unreadable []error
	for _, id := range ids {
		iss, err := s.Get(id)
		switch {
		case errors.Is(err, ErrNotFound):
			continue // a directory being created
		case err != nil:
			unreadable = append(unreadable, fmt.Errorf("issue %d: %w", id, err))
			continue
		}
		out = append(out, iss)
	}
	return out, errors.Join(unreadable...)
}

// IDs lists the ids of the issues on disk, in order, without reading
// them: one unreadable issue does not hide the others.
func (s *Store) IDs() ([]int, error) { return s.ids() }

func (s *Store) ids() ([]int, error) {
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

// Create allocates the next id under the store lock and writes iss with it,
// recording actor as its creator.
func (s *Store) Create(ctx context.Context, iss *Issue, actor string) (*Issue, error) {
	if err := os.MkdirAll(s.layout.HostIssues(), statedir.HostMode); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	unlock, err := s.lock(ctx, filepath.Join(s.layout.HostIssues(), ".lock"), "the issue list")
	if err != nil {
		return nil, err
	}
	defer unlock()
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	next := s.lastID() + 1
	if len(ids) > 0 {
		next = max(next, ids[len(ids)-1]+1)
	}
	created := *iss
	created.ID = next
	created.Version = 1
	now := s.now().UTC().Truncate(time.Second)
	created.Created, created.Updated = now, now
	created.History = []HistoryEntry{{To: created.Stage, Kind: KindCreate, Actor: actor, At: now}}
	if created.Branch == "" {
		created.Branch = BranchName(next, created.Slug)
	}
	dir := s.HostDir(next)
	if err := os.MkdirAll(dir, statedir.HostMode); err != nil {
		return nil, err
	}
	if err := s.layout.MkdirDocs(next); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// Remembered apart from the directories, so the id of an issue
	// deleted later is never given to another: its history, branch and
	// PR stay its own.
	if err := atomicfile.Write(s.lastIDPath(), []byte(strconv.Itoa(next)+"\n"), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.write(&created); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.appendEvents(&created, created.History); err != nil {
		return &created, fmt.Errorf("issue %d was created, but its event log was not: %w", next, err)
	}
	return &created, nil
}

func (s *Store) lastIDPath() string { return filepath.Join(s.layout.HostIssues(), ".last-id") }

// lastID is the last id Create gave, 0 when none is recorded.
func (s *Store) lastID() int {
	data, err := os.ReadFile(s.lastIDPath())
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
}

func (s *Store) write(iss *Issue) error {
	return atomicfile.WriteYAML(s.path(iss.ID), iss, 0o644)
}

type event struct {
	Issue   int `json:"issue"`
	Version int `json:"version"`
	HistoryEntry
}

// appendEvents adds lines to events.jsonl. The log follows issue.yaml,
// which is the truth: a crash between the two loses a log line, never state.
func (s *Store) appendEvents(iss *Issue, entries []HistoryEntry) error {
	f, err := os.OpenFile(filepath.Join(s.HostDir(iss.ID), "events.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	var buf []byte
	for _, h := range entries {
		line, err := json.Marshal(event{Issue: iss.ID, Version: iss.Version, HistoryEntry: h})
		if err != nil {
			continue
		}
		buf = append(append(buf, line...), '\n')
	}
	if _, err := f.Write(buf); err != nil {
		return err
	}
	return f.Close()
}
