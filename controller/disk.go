package controller

import (
	"log/slog"
	"sync"
	"time"

	"github.com/agenttree/agenttree/internal/atomicfile"
)

// remindEvery is how often the log says again that the state directory
// takes no writes.
const remindEvery = time.Minute

// diskWatch is what the controller knows of its state directory's disk.
// Once a pass's write is refused for a full or read-only disk, each tick
// first writes a file of its own (atomicfile.Probe) and makes no pass
// until that succeeds: a pass could record nothing of what it did, and a
// warning from each pass at each tick would only fill the disk's log
// further (docs/RELIABILITY.md, "A disk that takes no writes").
type diskWatch struct {
	mu sync.Mutex
	// refused is the write refused first; nil while the disk takes
	// writes.
	refused     error
	since, told time.Time
	// said is what the log said last: said again when it changes (the
	// disk full, then read-only).
	said string
}

// refusedBy notes err when it is a write refused by the disk, and says
// whether it was.
func (w *diskWatch) refusedBy(err error) bool {
	if !atomicfile.DiskTrouble(err) {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.refused == nil {
		w.refused, w.since = err, time.Now()
	}
	return true
}

// blocked reports whether the tick is to make no pass: a write was
// refused and the disk it was refused on (else root's) still takes none.
// It logs when that begins, when the reason changes, each remindEvery
// while it lasts, and when it ends.
func (w *diskWatch) blocked(root string, log *slog.Logger) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.refused == nil {
		return false
	}
	now := time.Now()
	dir := atomicfile.RefusedIn(w.refused)
	if dir == "" {
		dir = root
	}
	err := atomicfile.Probe(dir)
	if !atomicfile.DiskTrouble(err) {
		// Taken, or refused for another reason (the directory removed to
		// make room): the passes find out which.
		log.Info("the disk takes writes again: the controller goes on", "dir", dir, "after", now.Sub(w.since).Round(time.Second))
		w.refused, w.told, w.said = nil, time.Time{}, ""
		return false
	}
	said := atomicfile.DiskSays(err)
	if said != w.said || now.Sub(w.told) >= remindEvery {
		log.Error("a disk the state is on takes no writes: no issue is worked on until it does, and then the controller goes on by itself", "disk", said)
		w.told, w.said = now, said
	}
	return true
}
