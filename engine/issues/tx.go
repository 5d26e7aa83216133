package issues

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/engine/issues/record"
	"github.com/agenttree/agenttree/internal/atomicfile"
)

// Tx holds one issue's lock (the backend's: a file lock in files): what is
// read and written through it is one step no other agenttree process can
// interleave with.
type Tx struct {
	s     *Store
	id    int
	held  backend.Held
	watch *WatchFile         // read on first use
	wrote *[sha256.Size]byte // the hash of the watch.yaml written last
	// data is issue.yaml as checked by Lock or written since, and head
	// the hash of the log line that holds it: under the lock nobody else
	// writes them, so they are not read again.
	data []byte
	head string
	// spare is data parsed and held by nobody else: the next Get takes
	// it rather than parse data again.
	spare *Issue
}

// Lock takes issue id's lock, waiting up to LockTimeout, and checks the
// issue against its log (see eventlog.Log.CheckHead): an issue changed outside
// agenttree is a *TamperedError, and a write a crash interrupted is
// finished first.
func (s *Store) Lock(ctx context.Context, id int) (*Tx, error) {
	tx, iss, err := s.Begin(ctx, id)
	if err != nil {
		return nil, err
	}
	tx.spare = iss
	return tx, nil
}

// Begin takes issue id's lock and reads the issue under it, checked as
// Lock checks it: the start of every change. The caller unlocks the Tx.
func (s *Store) Begin(ctx context.Context, id int) (*Tx, *Issue, error) {
	tx, err := s.lockRaw(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	iss, err := tx.load()
	if err != nil {
		tx.Unlock()
		return nil, nil, err
	}
	return tx, iss, nil
}

// TryBegin is Begin when nobody holds issue id's lock now: it takes the
// lock without waiting and reads the issue under it, once, for a command
// to decide with and then change. When another process holds the lock,
// or this one may not take it (an agent of another OS user may read the
// state, not lock it), it returns a nil Tx and no error: the caller reads
// the issue without the lock (Get) and takes the lock with Begin only
// for a change it will make.
func (s *Store) TryBegin(id int) (*Tx, *Issue, error) {
	h, err := s.b.TryLock(context.Background(), id)
	switch {
	case errors.Is(err, backend.ErrBusy):
		return nil, nil, nil
	case errors.Is(err, backend.ErrNotStored):
		return nil, nil, s.notFound(id)
	case err != nil:
		return nil, nil, err
	}
	tx := &Tx{s: s, id: id, held: h}
	iss, err := tx.load()
	if err != nil {
		tx.Unlock()
		return nil, nil, err
	}
	return tx, iss, nil
}

// lockRaw takes issue id's lock without reading the issue: for Repair,
// which works on an issue Lock refuses.
func (s *Store) lockRaw(ctx context.Context, id int) (*Tx, error) {
	h, err := s.b.Lock(ctx, id, s.LockTimeout)
	if errors.Is(err, backend.ErrNotStored) {
		return nil, s.notFound(id)
	}
	if err != nil {
		return nil, err
	}
	return &Tx{s: s, id: id, held: h}, nil
}

// Unlock releases the lock; further use of the Tx is a bug.
func (t *Tx) Unlock() {
	if t.held != nil {
		t.held.Unlock()
		t.held = nil
	}
}

// Get returns the issue as Lock checked it, or as the Tx last wrote it.
func (t *Tx) Get() (*Issue, error) {
	if t.data == nil {
		return nil, fmt.Errorf("issue %d: a write through this lock failed; lock the issue again", t.id)
	}
	if iss := t.spare; iss != nil {
		t.spare = nil
		return iss, nil
	}
	return t.s.decode(t.id, t.data)
}

// Update applies fn if the issue's version is still expected, bumps the
// version, logs the change in events.jsonl (fn's new history entries
// with it) and then writes issue.yaml atomically. History is append-only:
// fn may add entries, never change or remove one.
func (t *Tx) Update(expected int, fn func(*Issue) error) (*Issue, error) {
	cur, err := t.Get()
	if err != nil {
		return nil, err
	}
	if cur.Version != expected {
		return nil, &ConflictError{ID: t.id, Expected: expected, Found: cur.Version}
	}
	prior := slices.Clone(cur.History)
	before := len(prior)
	if err := fn(cur); err != nil {
		return nil, err
	}
	if len(cur.History) < before || !slices.Equal(prior, cur.History[:before]) {
		return nil, fmt.Errorf("issue %d: a change may add history entries, never change or remove one (the log keeps each write's entries)", t.id)
	}
	cur.Version = expected + 1
	cur.Updated = t.s.now().UTC().Truncate(time.Second)
	data, err := t.commit(t.head, cur, OpUpdate, cur.History[before:], nil)
	// Logged is made, even when issue.yaml was not written (the next Lock
	// finishes it); nothing logged leaves the log's end unknown, so the
	// Tx writes no more.
	t.data, t.spare = data, nil
	if data != nil {
		t.head = cur.Chain
	}
	if err != nil {
		return nil, err
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

func (s *Store) watchPath(id int) string { return filepath.Join(s.HostDir(id), "watch.yaml") }

// readWatch reads issue id's watch.yaml (empty if none). The first
// layout, a flat map of the hooks' keys, is read as the hooks' part.
func (s *Store) readWatch(id int) (*WatchFile, error) {
	w, _, err := s.watchOf(id)
	return w, err
}

// watchOf is readWatch, with the bytes read (nil: none).
func (s *Store) watchOf(id int) (*WatchFile, []byte, error) {
	data, err := s.b.ReadWatch(context.Background(), id)
	if err != nil {
		return nil, nil, err
	}
	if data == nil {
		return &WatchFile{Hooks: map[string]string{}}, nil, nil
	}
	if w, ok := s.sharedWatch.Take(id, data); ok {
		return w, data, nil
	}
	w, err := record.ParseWatch(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.watchPath(id), err)
	}
	return w, data, nil
}

// ReadWatch reads issue id's watch state without its lock: for display.
func (s *Store) ReadWatch(id int) (*WatchFile, error) { return s.readWatch(id) }

// ShareWatch is ReadWatch for a reader that keeps the watch state and
// never changes it, as Share is Get.
func (s *Store) ShareWatch(id int) (*WatchFile, error) {
	w, data, err := s.watchOf(id)
	if data != nil {
		s.sharedWatch.Keep(id, data, w)
	}
	return w, err
}

func (t *Tx) watchFile() (*WatchFile, error) {
	if t.watch == nil {
		w, err := t.s.readWatch(t.id)
		if err != nil {
			return nil, err
		}
		t.watch = w
	}
	return t.watch, nil
}

// Watch is the hooks' polling state of the issue. It is read once per Tx:
// nobody else writes it while the lock is held.
func (t *Tx) Watch() (map[string]string, error) {
	w, err := t.watchFile()
	if err != nil {
		return nil, err
	}
	return w.Hooks, nil
}

// UpdateWatch merges changes into the hooks' watch state; an empty value
// deletes the key. The watch state is not part of the issue's version.
func (t *Tx) UpdateWatch(changes map[string]string) error {
	if len(changes) == 0 {
		return nil
	}
	cur, err := t.watchFile()
	if err != nil {
		return err
	}
	next := *cur
	next.Hooks = maps.Clone(cur.Hooks)
	for k, v := range changes {
		if v == "" {
			delete(next.Hooks, k)
		} else {
			next.Hooks[k] = v
		}
	}
	return t.writeWatch(&next)
}

// Poll is the controller's polling state of the issue's PR (nil: none yet).
func (t *Tx) Poll() (*Poll, error) {
	w, err := t.watchFile()
	if err != nil {
		return nil, err
	}
	return w.Poll, nil
}

// SetPoll replaces the controller's polling state. p is kept as written
// (the next read of these bytes copies it, Store.ShareWatch): the caller
// does not change it afterwards.
func (t *Tx) SetPoll(p *Poll) error {
	cur, err := t.watchFile()
	if err != nil {
		return err
	}
	next := *cur
	next.Poll = p
	return t.writeWatch(&next)
}

// writeWatch replaces watch.yaml. It is polling state, written on every
// poll: atomic, not fsynced (a power loss costs at most a poll again);
// encoded as yaml.v3 encodes it, without its cost (record.EncodeWatch).
func (t *Tx) writeWatch(w *WatchFile) error {
	data, err := record.EncodeWatch(w)
	if err != nil {
		return err
	}
	if err := t.s.b.WriteWatch(context.Background(), t.held, t.id, data); err != nil {
		return err
	}
	// Nobody changes w from now on (UpdateWatch and SetPoll copy it): the
	// next read of these bytes takes a copy of it (Share).
	sum := t.s.sharedWatch.Keep(t.id, data, w)
	t.watch, t.wrote = w, &sum
	return nil
}

// WroteWatch is the hash of the watch.yaml the Tx wrote last (false:
// none): with WatchSum, whether the file is still it, without parsing it.
func (t *Tx) WroteWatch() (sum [sha256.Size]byte, ok bool) {
	if t.wrote != nil {
		sum, ok = *t.wrote, true
	}
	return sum, ok
}

// WatchSum is the hash of issue id's watch.yaml now (false: none).
func (s *Store) WatchSum(id int) ([sha256.Size]byte, bool, error) {
	data, err := s.b.ReadWatch(context.Background(), id)
	return sha256.Sum256(data), err == nil && data != nil, err
}

// WriteDoc writes a stage document into the issue's directory atomically;
// empty content removes it. name must be a plain file name.
func (t *Tx) WriteDoc(name string, content []byte) error {
	if !plainDocName(name) {
		return fmt.Errorf("stage document %q must be a plain file name inside the issue directory, not one of agenttree's own files", name)
	}
	path := filepath.Join(t.s.Dir(t.id), name)
	if len(content) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return atomicfile.Write(path, content, 0o644)
}

// ownFiles are the files of an issue's directory that only agenttree
// writes.
var ownFiles = []string{"issue.yaml", "watch.yaml", "events.jsonl", "outbox"}

// plainDocName reports whether name is a file directly in the issue
// directory that is not agenttree's own: no directories, no dot files
// (locks, temporary files), and none of ownFiles in any letter case or
// with trailing dots or spaces (on macOS and Windows `Issue.yaml` is
// issue.yaml; on Windows so is `issue.yaml.`).
func plainDocName(name string) bool {
	if !filepath.IsLocal(name) || filepath.Base(name) != name || strings.HasPrefix(name, ".") {
		return false
	}
	bare := strings.TrimRight(name, ". ")
	for _, own := range ownFiles {
		if strings.EqualFold(bare, own) {
			return false
		}
	}
	return true
}
