package engine

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

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/internal/atomicfile"
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
	root string
	// LockTimeout bounds how long a writer waits for a lock.
	LockTimeout time.Duration
	now         func() time.Time
}

// OpenStore opens the state directory root. Nothing is created until the
// first issue is: reading commands leave the disk as it is.
func OpenStore(root string) (*Store, error) {
	return &Store{root: root, LockTimeout: 30 * time.Second, now: time.Now}, nil
}

// Root is the state directory.
func (s *Store) Root() string { return s.root }

// Dir is the directory of issue id.
func (s *Store) Dir(id int) string {
	return filepath.Join(s.root, "issues", fmt.Sprintf("%03d", id))
}

func (s *Store) path(id int) string { return filepath.Join(s.Dir(id), "issue.yaml") }

// lock takes an exclusive file lock, waiting up to LockTimeout.
func (s *Store) lock(ctx context.Context, path, what string) (func(), error) {
	return atomicfile.Lock(ctx, path, s.LockTimeout, what)
}

// Get reads issue id.
func (s *Store) Get(id int) (*Issue, error) {
	data, err := os.ReadFile(s.path(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("issue %d: %w (list issues with `agenttree issue list`)", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	var iss Issue
	if err := yaml.Unmarshal(data, &iss); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path(id), err)
	}
	return &iss, nil
}

// List reads every issue, in id order.
func (s *Store) List() ([]*Issue, error) {
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	out := make([]*Issue, 0, len(ids))
	for _, id := range ids {
		iss, err := s.Get(id)
		if errors.Is(err, ErrNotFound) {
			continue // a directory being created
		}
		if err != nil {
			return nil, err
		}
		out = append(out, iss)
	}
	return out, nil
}

func (s *Store) ids() ([]int, error) {
	entries, err := os.ReadDir(filepath.Join(s.root, "issues"))
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
func (s *Store) Create(ctx context.Context, iss *Issue, actor ActorKind) (*Issue, error) {
	if err := os.MkdirAll(filepath.Join(s.root, "issues"), 0o755); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	unlock, err := s.lock(ctx, filepath.Join(s.root, "issues", ".lock"), "the issue list")
	if err != nil {
		return nil, err
	}
	defer unlock()
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	next := 1
	if len(ids) > 0 {
		next = ids[len(ids)-1] + 1
	}
	created := *iss
	created.ID = next
	created.Version = 1
	now := s.now().UTC().Truncate(time.Second)
	created.Created, created.Updated = now, now
	created.History = []HistoryEntry{{To: created.Stage, Kind: KindCreate, Actor: actor, At: now}}
	if created.Branch == "" {
		created.Branch = DefaultBranchName(next, created.Slug)
	}
	dir := s.Dir(next)
	if err := os.MkdirAll(dir, 0o755); err != nil {
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

// Tx holds one issue's file lock: what is read and written through it is
// one step no other agenttree process can interleave with.
type Tx struct {
	s      *Store
	id     int
	unlock func()
	watch  map[string]string // read on first use
}

// Lock takes issue id's lock, waiting up to LockTimeout.
func (s *Store) Lock(ctx context.Context, id int) (*Tx, error) {
	if _, err := os.Stat(s.path(id)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("issue %d: %w (list issues with `agenttree issue list`)", id, ErrNotFound)
		}
		return nil, err
	}
	unlock, err := s.lock(ctx, filepath.Join(s.Dir(id), ".lock"), fmt.Sprintf("issue %d", id))
	if err != nil {
		return nil, err
	}
	return &Tx{s: s, id: id, unlock: unlock}, nil
}

// Unlock releases the lock; further use of the Tx is a bug.
func (t *Tx) Unlock() {
	if t.unlock != nil {
		t.unlock()
		t.unlock = nil
	}
}

// Get reads the issue.
func (t *Tx) Get() (*Issue, error) { return t.s.Get(t.id) }

// Update applies fn if the issue's version is still expected, bumps the
// version and writes it atomically; fn's new history entries are appended
// to events.jsonl.
func (t *Tx) Update(expected int, fn func(*Issue) error) (*Issue, error) {
	cur, err := t.s.Get(t.id)
	if err != nil {
		return nil, err
	}
	if cur.Version != expected {
		return nil, &ConflictError{ID: t.id, Expected: expected, Found: cur.Version}
	}
	before := len(cur.History)
	if err := fn(cur); err != nil {
		return nil, err
	}
	cur.Version = expected + 1
	cur.Updated = t.s.now().UTC().Truncate(time.Second)
	if err := t.s.write(cur); err != nil {
		return nil, err
	}
	if len(cur.History) > before {
		if err := t.s.appendEvents(cur, cur.History[before:]); err != nil {
			return cur, fmt.Errorf("issue %d was saved, but its event log was not: %w", t.id, err)
		}
	}
	return cur, nil
}

// Update is Lock, Tx.Update, Unlock.
func (s *Store) Update(ctx context.Context, id, expected int, fn func(*Issue) error) (*Issue, error) {
	tx, err := s.Lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer tx.Unlock()
	return tx.Update(expected, fn)
}

func (s *Store) write(iss *Issue) error {
	data, err := yaml.Marshal(iss)
	if err != nil {
		return err
	}
	return atomicfile.Write(s.path(iss.ID), data, 0o644)
}

type event struct {
	Issue   int `json:"issue"`
	Version int `json:"version"`
	HistoryEntry
}

// appendEvents adds lines to events.jsonl. The log follows issue.yaml,
// which is the truth: a crash between the two loses a log line, never state.
func (s *Store) appendEvents(iss *Issue, entries []HistoryEntry) error {
	f, err := os.OpenFile(filepath.Join(s.Dir(iss.ID), "events.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
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

func (s *Store) watchPath(id int) string { return filepath.Join(s.Dir(id), "watch.yaml") }

// readWatch reads the hooks' polling state of issue id (empty if none).
func (s *Store) readWatch(id int) (map[string]string, error) {
	data, err := os.ReadFile(s.watchPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	w := map[string]string{}
	if err := yaml.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("%s: %w", s.watchPath(id), err)
	}
	return w, nil
}

// Watch is the hooks' polling state of the issue. It is read once per Tx:
// nobody else writes it while the lock is held.
func (t *Tx) Watch() (map[string]string, error) {
	if t.watch == nil {
		w, err := t.s.readWatch(t.id)
		if err != nil {
			return nil, err
		}
		t.watch = w
	}
	return t.watch, nil
}

// UpdateWatch merges changes into the hooks' watch state; an empty value
// deletes the key. The watch state is not part of the issue's version.
func (t *Tx) UpdateWatch(changes map[string]string) error {
	if len(changes) == 0 {
		return nil
	}
	cur, err := t.Watch()
	if err != nil {
		return err
	}
	w := make(map[string]string, len(cur)+len(changes))
	for k, v := range cur {
		w[k] = v
	}
	for k, v := range changes {
		if v == "" {
			delete(w, k)
		} else {
			w[k] = v
		}
	}
	data, err := yaml.Marshal(w)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(t.s.watchPath(t.id), data, 0o644); err != nil {
		return err
	}
	t.watch = w
	return nil
}

// WriteDoc writes a stage document into the issue's directory atomically;
// empty content removes it. name must be a plain file name.
func (t *Tx) WriteDoc(name string, content []byte) error {
	clean := filepath.Clean(name)
	if filepath.IsAbs(clean) || clean == "." || clean == ".." || strings.ContainsRune(clean, filepath.Separator) ||
		clean == "issue.yaml" || clean == "watch.yaml" || clean == "events.jsonl" || strings.HasPrefix(clean, ".") {
		return fmt.Errorf("stage document %q must be a plain file name inside the issue directory, not one of agenttree's own files", name)
	}
	path := filepath.Join(t.s.Dir(t.id), clean)
	if len(content) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return atomicfile.Write(path, content, 0o644)
}
