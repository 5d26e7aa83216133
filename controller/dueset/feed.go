package dueset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/statedir"
)

// Feed tells which issues' files changed, so that a tick need not stat
// the files of every issue to learn that none did (docs/ARCHITECTURE.md
// §6, "The due set").
type Feed interface {
	// Take returns the issues whose files changed since the last Take,
	// and all when the feed may have missed a change since then: every
	// issue is then looked at again.
	Take() (ids []int, all bool)
}

// Watch is the Feed of a state directory's host/issues/, from the file
// system's notifications (inotify, kqueue, ReadDirectoryChangesW): each
// issue's directory and its outbox/ are watched, and a change of any
// file in them names the issue. The watch is set before the first Take,
// so a change made after an issue is read is told at a later Take; one
// told late (its notification not yet read when a tick begins) is seen a
// tick later.
type Watch struct {
	// Named keeps the issues named, and whether a notification may have
	// been lost since the last Take (the kernel's queue overflowed, or a
	// directory could not be watched).
	Named
	layout statedir.Layout
	dir    string
	w      *fsnotify.Watcher

	brokenMu sync.Mutex
	// broken: the watch cannot be trusted at all any more (no watch left
	// for a directory): every Take says all.
	broken error
	done   chan struct{}
	// adding are the watches being added of directories made since the
	// watch began: added apart from run, since on Windows fsnotify's Add
	// waits on the goroutine that run reads the notifications from.
	adding sync.WaitGroup
}

var _ Feed = (*Watch)(nil)

// WatchIssues watches the state directory's host/issues/ (layout's),
// and every issue's directory in it. An error is a watch that could not
// start (no notifications on this system, or too few watches allowed:
// fs.inotify.max_user_watches); the caller then stats as before.
func WatchIssues(layout statedir.Layout) (*Watch, error) {
	hostIssues := layout.HostIssues()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching %s: %w", hostIssues, err)
	}
	x := &Watch{layout: layout, dir: hostIssues, w: w, done: make(chan struct{})}
	if err := os.MkdirAll(hostIssues, statedir.HostMode); err != nil {
		w.Close()
		return nil, err
	}
	if err := w.Add(hostIssues); err != nil {
		w.Close()
		return nil, fmt.Errorf("watching %s: %w", hostIssues, err)
	}
	entries, err := os.ReadDir(hostIssues)
	if err != nil {
		w.Close()
		return nil, err
	}
	for _, e := range entries {
		if id := idOf(e.Name()); id > 0 && e.IsDir() {
			if err := x.addIssue(id); err != nil {
				w.Close()
				return nil, fmt.Errorf("watching the issues' files (fs.inotify.max_user_watches may be too low for %d issues): %w", len(entries), err)
			}
		}
	}
	go x.run()
	return x, nil
}

// idOf is the issue id a directory's name under host/issues/ says; 0
// for any other name (the store's own files).
func idOf(name string) int {
	id, err := strconv.Atoi(name)
	if err != nil || id <= 0 {
		return 0
	}
	return id
}

// addIssue watches issue id's directory, and its outbox when there is
// one.
func (x *Watch) addIssue(id int) error {
	dir := x.layout.Issue(id)
	if err := x.w.Add(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed meanwhile: its removal is a change
		}
		return err
	}
	return x.addOutbox(dir)
}

func (x *Watch) addOutbox(dir string) error {
	err := x.w.Add(filepath.Join(dir, "outbox"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // made later: its creation is a change in dir
	}
	return err
}

// run reads the notifications until Close.
func (x *Watch) run() {
	defer close(x.done)
	for {
		select {
		case ev, ok := <-x.w.Events:
			if !ok {
				return
			}
			x.event(ev)
		case _, ok := <-x.w.Errors:
			if !ok {
				return
			}
			x.Lose() // an overflow, or a watch that failed: look at all
		}
	}
}

// event records what one notification says: the issue whose file or
// directory changed. A directory made (an issue's, or its outbox) is
// watched first, and its issue named after: what was written in it
// before the watch began is read at the Take that follows.
func (x *Watch) event(ev fsnotify.Event) {
	rel, err := filepath.Rel(x.dir, ev.Name)
	if err == nil && rel == "." && ev.Has(fsnotify.Remove|fsnotify.Rename) {
		// The issues' directory itself went: every watch is of what is
		// gone, so the watch tells nothing more.
		x.brokenMu.Lock()
		x.broken = fmt.Errorf("%s was removed or moved while watched", x.dir)
		x.brokenMu.Unlock()
		return
	}
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	id := idOf(parts[0])
	if id == 0 {
		return
	}
	if ev.Has(fsnotify.Create) && (len(parts) == 1 || (len(parts) == 2 && parts[1] == "outbox")) {
		// The issue is named once the directory is watched: what was
		// written in it before is read at the Take that follows.
		x.adding.Go(func() {
			var err error
			if len(parts) == 1 {
				err = x.addIssue(id)
			} else {
				err = x.addOutbox(x.layout.Issue(id))
			}
			if err != nil {
				x.brokenMu.Lock()
				x.broken = fmt.Errorf("watching issue %d's files: %w", id, err)
				x.brokenMu.Unlock()
			}
			x.Name(id)
		})
		return
	}
	x.Name(id)
}

// Take returns the issues named since the last Take; all once the watch
// broke.
func (x *Watch) Take() ([]int, bool) {
	ids, all := x.Named.Take()
	return ids, all || x.Err() != nil
}

// Err is why the watch cannot be trusted any more, nil while it can.
func (x *Watch) Err() error {
	x.brokenMu.Lock()
	defer x.brokenMu.Unlock()
	return x.broken
}

// Close stops the watch.
func (x *Watch) Close() error {
	err := x.w.Close()
	<-x.done
	x.adding.Wait()
	return err
}

// Named is a Feed told by others: Watch's notifications, and the
// store's own watch (backend.Watcher). Its zero value names none.
type Named struct {
	mu      sync.Mutex
	changed map[int]bool
	lost    bool
}

// Name names issue id at the next Take: a change told by another watch
// (the store's, backend.Watcher) goes with the files'.
func (n *Named) Name(id int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.changed == nil {
		n.changed = map[int]bool{}
	}
	n.changed[id] = true
}

// Lose says changes may have gone untold: the next Take says all.
func (n *Named) Lose() {
	n.mu.Lock()
	n.lost = true
	n.mu.Unlock()
}

// Take returns the issues named since the last Take.
func (n *Named) Take() ([]int, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ids := make([]int, 0, len(n.changed))
	for id := range n.changed {
		ids = append(ids, id)
	}
	clear(n.changed)
	all := n.lost
	n.lost = false
	return ids, all
}

// Close stops nothing: nothing is watched.
func (n *Named) Close() error { return nil }

// Namer is a Feed that others name issues in (Named, Watch).
type Namer interface {
	Feed
	Name(id int)
	Lose()
	Close() error
}

// WatchFor is what a controller of e watches beside the store's own
// watch, if the store has one: over a store that keeps the outboxes too
// (outbox.Keeper: etcd's), nothing, the store's watch names every
// change; else the issues' files and their outboxes (WatchIssues), on
// Linux only (docs/ARCHITECTURE.md §6): elsewhere the files' stamps are
// not kept, and kqueue would hold a descriptor per file. Nil when
// nothing can be watched.
func WatchFor(e *engine.Engine) (Namer, error) {
	if _, kept := issues.As[outbox.Keeper](e.Store); kept && !e.Store.InFiles() {
		return &Named{}, nil
	}
	if runtime.GOOS != "linux" {
		return nil, nil
	}
	w, err := WatchIssues(e.Store.Layout())
	if err != nil {
		return nil, err
	}
	return w, nil
}
