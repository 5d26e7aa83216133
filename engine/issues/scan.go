package issues

import (
	"errors"
	"time"

	"github.com/agenttree/agenttree/engine/issues/scancache"
	"github.com/agenttree/agenttree/internal/parallel"
)

// Listed is one issue as Scan read it.
type Listed struct {
	ID int
	// Issue is the issue, checked as Get checks it; nil when Err is set.
	Issue *Issue
	// Watch is its watch.yaml (empty when it has none); nil when it
	// cannot be read (the controller starts its polling afresh then).
	Watch *WatchFile
	// Err says why the issue cannot be read: a *TamperedError, a file
	// that does not parse.
	Err error
}

// Scan reads every issue and its watch.yaml, in id order, for a display
// of them all: each is checked as Get checks it, and one that cannot be
// read is listed with its error, never hiding the others. An issue being
// created (no issue.yaml yet, nothing logged) is left out.
//
// An issue whose files are as an earlier Scan found them is not read
// again: the scan cache (package scancache) holds what that Scan read, keyed
// by the files' identity, size and times; over another backend than files,
// every issue is read. The issues are read on every CPU.
func (s *Store) Scan() ([]Listed, error) {
	if !s.cached {
		return s.scanUncached()
	}
	// The cache is decoded while the files are stat'ed: one is work for
	// a CPU, the other mostly for the file system.
	loaded := make(chan map[int]*scancache.Entry, 1)
	go func() { loaded <- scancache.Load(s.scanCachePath()) }()
	ids, err := s.ids()
	if err != nil {
		<-loaded
		return nil, err
	}
	at := s.now()
	stamps := make([]scancache.Stamps, len(ids))
	func() {
		st := scancache.OpenStamper(s.layout.HostIssues())
		defer st.Close()
		// Taken before the files are read: a change made after this is a
		// change of stamp, so the cache never pairs a newer content with
		// these stamps.
		parallel.For(len(ids), func(i int) { stamps[i] = st.Stamps(ids[i]) })
	}()
	cache := <-loaded
	listed := make([]Listed, len(ids))
	entries := make([]*scancache.Entry, len(ids))
	parallel.For(len(ids), func(i int) {
		listed[i], entries[i] = s.scanOne(ids[i], stamps[i], at, cache[ids[i]])
	})
	if scancache.Changed(cache, ids, entries) {
		scancache.Save(s.scanCachePath(), entries)
	}
	return found(listed), nil
}

// scanUncached is Scan reading every issue, with no cache.
func (s *Store) scanUncached() ([]Listed, error) {
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	listed := make([]Listed, len(ids))
	parallel.For(len(ids), func(i int) { listed[i], _ = s.scanOne(ids[i], scancache.Stamps{}, time.Time{}, nil) })
	return found(listed), nil
}

// found leaves out of listed the issues being created.
func found(listed []Listed) []Listed {
	out := listed[:0]
	for _, l := range listed {
		if !errors.Is(l.Err, ErrNotFound) {
			out = append(out, l)
		}
	}
	return out
}

// scanOne reads issue id, whose files had the stamps st at at, from
// cached when they are the same. It returns what the cache may hold of
// the issue now: cached itself when it was used, nil when nothing is to
// be kept.
func (s *Store) scanOne(id int, st scancache.Stamps, at time.Time, cached *scancache.Entry) (Listed, *scancache.Entry) {
	if cached != nil && st.Known() && cached.Stamps == st {
		return Listed{ID: id, Issue: cached.Issue, Watch: cached.Watch}, cached
	}
	l := Listed{ID: id}
	if l.Issue, l.Err = s.Get(id); l.Err != nil {
		l.Issue = nil
		return l, nil
	}
	w, werr := s.readWatch(id)
	if werr == nil {
		l.Watch = w
	}
	if werr != nil || !st.Settled(at, s.settle) || !scancache.Cacheable(l.Issue) {
		return l, nil
	}
	return l, &scancache.Entry{ID: id, Stamps: st, Issue: l.Issue, Watch: l.Watch}
}

func (s *Store) scanCachePath() string { return scancache.Path(s.layout.HostIssues()) }
