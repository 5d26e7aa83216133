package issues

import (
	"path/filepath"
	"time"

	"github.com/agenttree/agenttree/engine/issues/scancache"
	"github.com/agenttree/agenttree/internal/parallel"
)

// Stamps are an issue's files as a caller that keeps what it read of
// the issue in memory compares them, to learn whether it changed since:
// its issue.yaml, events.jsonl and watch.yaml (scancache.Stamps, as Scan
// compares them) and its outbox directory, which every message put,
// tried or delivered rewrites (a file renamed in or out).
type Stamps struct {
	Files  scancache.Stamps
	Outbox scancache.Stamp
}

// Stamps stats the files of issues ids, on every CPU. A write made after
// the call began changes a stamp: the time given to Settled is taken
// before the call. Where the issues are not files, or the system has no
// change times, a stamp is unknown and never Settled: the caller reads
// the issue again.
func (s *Store) Stamps(ids []int) []Stamps {
	stamps := make([]Stamps, len(ids))
	if !s.cached {
		// Files under the state directory say nothing of an issue kept
		// elsewhere (and one a migration left behind would look settled).
		return stamps
	}
	st := scancache.OpenStamper(s.layout.HostIssues())
	defer st.Close()
	parallel.For(len(ids), func(i int) {
		files := st.Stamps(ids[i])
		if !files.Known() {
			return
		}
		// The outbox as engine.Outbox opens it, beside the issue's files.
		box, ok := st.Of(filepath.Join(filepath.Base(s.layout.Issue(ids[i])), "outbox"))
		if !ok {
			return
		}
		stamps[i] = Stamps{Files: files, Outbox: box}
	})
	return stamps
}

// Settled reports whether what was read of an issue after its stamps st
// were taken at at may be kept, to be reused while the stamps stay the
// same: every file was last changed long enough before at
// (scancache.SettleTime) that a change made since has another stamp,
// whatever the file system's time granularity.
func (s *Store) Settled(st Stamps, at time.Time) bool {
	limit := at.Add(-s.settle).UnixNano()
	return st.Files.Settled(at, s.settle) && st.Outbox.Ctime < limit && st.Outbox.Mtime < limit
}
