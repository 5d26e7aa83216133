package issues

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/engine/issues/eventlog"
	"github.com/agenttree/agenttree/engine/issues/filestore"
	"github.com/agenttree/agenttree/engine/issues/parsememo"
	"github.com/agenttree/agenttree/engine/issues/scancache"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/statedir"
)

// ErrNotFound is returned for an issue id with no issue.yaml
// (eventlog.ErrNotFound).
var ErrNotFound = eventlog.ErrNotFound

// ConflictError says an update lost a compare-and-swap on the version.
type ConflictError struct {
	ID              int
	Expected, Found int
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("issue %d changed while this command ran (version %d, now %d); look at `agenttree issue show %d` and run the command again if it still applies", e.ID, e.Expected, e.Found, e.ID)
}

// Store keeps issues under a state directory (`_agenttree/`). Every write
// is atomic (temp file, fsync, rename), made under the issue's file lock,
// and logged first in the issue's hash-chained events.jsonl.
type Store struct {
	root   string
	layout statedir.Layout
	// b keeps the issues' bytes; the store keeps every rule
	// (docs/ARCHITECTURE.md §2).
	b backend.Backend
	// LockTimeout bounds how long a writer waits for a lock.
	LockTimeout time.Duration
	now         func() time.Time
	// settle is how long before a Scan an issue's files must have last
	// changed for the scan cache to keep what it read (scancache.SettleTime).
	settle time.Duration
	// cached is whether Scan keeps the scan cache: only over files, whose
	// stamps it is keyed by. Over another backend the files a migration
	// left behind would be stamps of another state.
	cached bool

	warnMu   sync.Mutex
	warnings []string // Warnings

	// shared are the parses a long-lived reader shares (Share, ShareWatch).
	shared      parsememo.Memo[*Issue]
	sharedWatch parsememo.Memo[*WatchFile]
}

// Open opens the state directory root, moving a first-layout directory's
// host files under host/ (statedir.Layout.Migrate); while that migration
// is under way, the issues from before hash-chained logs get theirs
// (adoptPreChains). Nothing is created until the first issue is. What the
// migration did not take as the host's is in Warnings.
func Open(root string) (*Store, error) { return OpenWith(root, filestore.Open(root)) }

// OpenWith is Open with the issues kept in b (docs/ARCHITECTURE.md §2,
// the store backend); the state directory root keeps the rest: the
// stage documents, the sessions', the controller's and the forge's files.
func OpenWith(root string, b backend.Backend) (*Store, error) {
	layout := statedir.Layout{Root: root}
	// The migration holds its locks for a few writes, once per state
	// directory: a bounded wait needs no caller's context.
	ctx := context.Background()
	s := &Store{root: root, layout: layout, b: b, LockTimeout: 30 * time.Second, now: time.Now, settle: scancache.SettleTime}
	s.cached = inFiles(b)
	if err := hostIsTheHosts(layout); err != nil {
		return nil, err
	}
	adopt, err := s.migrate(ctx)
	if err != nil {
		return nil, err
	}
	if !adopt {
		return s, nil
	}
	// A process that may not write the host's files (an agent of another
	// OS user) leaves the adoption to the host's next command.
	if err := s.adoptPreChains(ctx); err != nil && !errors.Is(err, fs.ErrPermission) {
		return nil, err
	}
	return s, nil
}

// Root is the state directory.
func (s *Store) Root() string { return s.root }

// Layout is the state directory's layout.
func (s *Store) Layout() statedir.Layout { return s.layout }

// InFiles says whether the issues' state is kept in the state directory's
// files, whose changes and stamps say what changed (Stamps).
func (s *Store) InFiles() bool { return s.cached }

// Watcher is the store's backend that tells of changes as they are made
// (backend.Watcher, found through wrappers as inFiles finds files); false
// when it does not.
func (s *Store) Watcher() (backend.Watcher, bool) { return backend.As[backend.Watcher](s.b) }

// As is the store's backend, or one it wraps, as a T: an optional
// capability of the backend (backend.As), such as keeping the outboxes
// (outbox.Keeper, engine.Engine.Outbox).
func As[T any](s *Store) (T, bool) { return backend.As[T](s.b) }

// Dir is the directory of issue id's stage documents, which agents write.
func (s *Store) Dir(id int) string { return s.layout.Docs(id) }

// MkdirDocs makes issue id's stage documents' directory, when another
// host made the issue (docs/ARCHITECTURE.md §8, "Nodes").
func (s *Store) MkdirDocs(id int) error { return s.layout.MkdirDocs(id) }

// HostDir is the directory of issue id's own files (issue.yaml,
// events.jsonl, watch.yaml, outbox/), which only the host writes.
func (s *Store) HostDir(id int) string { return s.layout.Issue(id) }

func (s *Store) path(id int) string { return filepath.Join(s.HostDir(id), "issue.yaml") }

// lock takes an exclusive file lock, waiting up to LockTimeout.
func (s *Store) lock(ctx context.Context, path, what string) (func(), error) {
	return atomicfile.Lock(ctx, path, s.LockTimeout, what)
}

// Get reads issue id, checked against the last line of its log as every
// Lock checks it (see eventlog.Log.CheckHead): an issue changed outside agenttree is a
// *TamperedError, never shown or acted on as if agenttree had written it.
// A write logged but not yet in issue.yaml reads as made: the log is the
// truth. The check reads one line from the end of the log, so a display
// of many issues stays about as fast as without it.
func (s *Store) Get(id int) (*Issue, error) {
	iss, err := s.read(id)
	if err != nil {
		return nil, err
	}
	return s.checked(id, iss)
}

// Share is Get for a reader that keeps the issue and never changes it
// (the controller's due set): the store keeps that parse, and a read of
// the same bytes, under the lock or not, takes a copy of it rather than
// parse them again (docs/ARCHITECTURE.md §6, the controller's passes).
func (s *Store) Share(id int) (*Issue, error) {
	iss, data, err := s.readBytes(id)
	if err != nil {
		return nil, err
	}
	got, err := s.checked(id, iss)
	if err == nil && got == iss && data != nil {
		s.shared.Keep(id, data, iss)
	}
	return got, err
}

// read reads issue.yaml, unchecked.
func (s *Store) read(id int) (*Issue, error) {
	iss, _, err := s.readBytes(id)
	return iss, err
}

// readBytes is read, with the bytes it parsed (nil: none, the issue
// taken from its log).
func (s *Store) readBytes(id int) (*Issue, []byte, error) {
	snap, err := s.b.Read(context.Background(), id)
	if err != nil {
		return nil, nil, err
	}
	if snap.State == nil {
		// Created as far as its log goes (the next locked access writes
		// its issue.yaml), or damaged: never silently absent.
		iss, err := s.missing(id)
		return iss, nil, err
	}
	iss, err := s.decode(id, snap.State)
	return iss, snap.State, err
}

// List reads every issue, in id order (as Scan does). An issue that
// cannot be read does not hide the others: they are all returned, with an
// error that joins what was wrong with each unreadable one.
func (s *Store) List() ([]*Issue, error) {
	listed, err := s.Scan()
	if err != nil {
		return nil, err
	}
	out := make([]*Issue, 0, len(listed))
	var unreadable []error
	for _, l := range listed {
		if l.Err != nil {
			unreadable = append(unreadable, fmt.Errorf("issue %d: %w", l.ID, l.Err))
			continue
		}
		out = append(out, l.Issue)
	}
	return out, errors.Join(unreadable...)
}

// IDs lists the ids of the issues on disk, in order, without reading
// them: one unreadable issue does not hide the others.
func (s *Store) IDs() ([]int, error) { return s.ids() }

func (s *Store) ids() ([]int, error) { return s.b.IDs(context.Background()) }

// Create allocates the next id under the store lock and writes iss with it,
// recording actor as its creator.
func (s *Store) Create(ctx context.Context, iss *Issue, actor string) (*Issue, error) {
	if err := os.MkdirAll(s.layout.HostIssues(), statedir.HostMode); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	// A new state directory records its layout and its host now.
	adopt, err := s.migrate(ctx)
	if err != nil {
		return nil, err
	}
	if adopt {
		if err := s.adoptPreChains(ctx); err != nil {
			return nil, err
		}
	}
	var created Issue
	id, err := s.b.Create(ctx, s.LockTimeout, func(next int) (backend.Write, error) {
		created = *iss
		created.ID = next
		created.Version = 1
		now := s.now().UTC().Truncate(time.Second)
		created.Created, created.Updated = now, now
		created.History = []HistoryEntry{{To: created.Stage, Kind: KindCreate, Actor: actor, At: now}}
		if created.Branch == "" {
			created.Branch = BranchName(next, created.Slug)
		}
		if err := s.layout.MkdirDocs(next); err != nil {
			return backend.Write{}, err
		}
		w, hash, err := s.encode("", &created, OpCreate, created.History, nil)
		created.Chain = hash
		return w, err
	})
	switch {
	case err != nil && id > 0:
		return nil, notWritten(id, err)
	case err != nil:
		return nil, err
	}
	return &created, nil
}

// listLock serializes the writers of the issue list: Create, adoptPreChains.
func (s *Store) listLock() string { return filepath.Join(s.layout.HostIssues(), ".lock") }

// lastID is the last id Create gave, 0 when none is recorded or it
// cannot be read: Create then goes by the ids listed.
func (s *Store) lastID() int {
	n, _ := s.b.LastID(context.Background())
	return n
}

// hostIsTheHosts refuses a host/ that someone other than the state
// directory's owner (or root) could have put in place: another user's,
// writable by its group or everyone, or a symbolic link. An agent that may
// write _agenttree could otherwise move the host's state aside and put
// its own in its place, chains recomputed (docs/SECURITY.md). A state
// directory without host/ yet has nothing to refuse.
func hostIsTheHosts(layout statedir.Layout) error {
	fi, err := os.Lstat(layout.Host())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	host, err := layout.HostUID()
	if err != nil {
		return err
	}
	if why := statedir.Exposed(fi, host, true); why != "" {
		return fmt.Errorf("%s is not the host's alone: %s; someone else may have put their own state in its place. "+
			"Nothing was read from it; `agenttree doctor` (run by the person who owns %s) says what to do", layout.Host(), why, layout.Root)
	}
	return nil
}

// inFiles reports whether b keeps the issues in files under the state
// directory (filestore), itself or under wrappers that say what they wrap
// (an Unwrap method, as net/http's ResponseController finds what a
// ResponseWriter wraps): only then do the files' stamps say whether an
// issue changed.
func inFiles(b backend.Backend) bool {
	_, ok := backend.As[*filestore.Store](b)
	return ok
}
