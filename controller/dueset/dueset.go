// Package dueset is what the controller's ticks learned of each issue,
// kept in memory so that a tick reads again only the issues whose files
// changed since (docs/ARCHITECTURE.md §6): one stat per file of each
// issue (issues.Store.Stamps), not its YAML, its log's head and its
// outbox. What is kept is only what the files say; what is due is
// decided afresh at every tick from it (the clock, the forge's watch, the
// mail the controller queued).
//
// An entry is kept only while every stamp is the one its files had when
// they were read, and only when they were settled then
// (issues.Store.Settled: a change within the file system's time
// granularity is a change of stamp). Another process's write (a person's
// `approve`, a rewritten watch.yaml, a message put in the outbox) is seen
// at the next tick; an issue created is read, one removed forgotten; an
// engine of another config starts afresh, as the node facts are its
// config's.
package dueset

import (
	"crypto/sha256"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/parallel"
	"github.com/agenttree/agenttree/stages"
)

// Entry is what a tick read of one issue.
type Entry struct {
	Issue *issues.Issue
	Node  *stages.Node
	// Poll and Resumed are its watch state's, read when the controller
	// acts on the issue (Set.Active).
	Poll    *issues.Poll
	Resumed time.Time
	// Pending: its outbox held messages not delivered.
	Pending bool
	// Told: every message its state calls for was queued (Set.Told).
	// Queued keys are never forgotten, so it stays told until the issue
	// changes.
	Told bool

	stamps issues.Stamps
	gen    uint64
}

// Set is the entries of one controller. Its methods are safe to call
// from several goroutines; Active, Told and Log are set before the first.
type Set struct {
	// Active says whether the controller acts on iss at node: only those
	// issues have a schedule (their watch.yaml is read).
	Active func(iss *issues.Issue, node *stages.Node) bool
	// Told says whether every message iss's state calls for has been
	// queued by the controller.
	Told func(e *engine.Engine, iss *issues.Issue) bool
	Log  *slog.Logger
	// Feed, when set, names the issues whose files changed: the others'
	// entries are used without a stat, but for once every Recheck (a
	// minute when zero), when every issue's files are stat'ed again in
	// case a change went untold.
	Feed    Feed
	Recheck time.Duration
	// StateWatched: the feed also names each issue whose state changed
	// in a store that is not files (backend.Watcher), whose stamps say
	// nothing: what is read of an issue is then kept until the feed
	// names it, where it would be read at every tick.
	StateWatched bool

	mu      sync.Mutex
	eng     *engine.Engine
	entries map[int]*Entry
	// own are the entries of the issues whose watch.yaml this controller
	// wrote since they were read (Wrote), kept apart from entries until
	// a stat finds the files settled: an issue is in one map or neither.
	own map[int]*ownWrite
	// dirty are the issues the feed named that no tick has stat'ed since.
	dirty map[int]bool
	// gen counts the times every entry had to be stat'ed again (another
	// engine, a feed that lost changes, the Recheck); an entry stat'ed
	// or read at an older one is stat'ed before it is used.
	gen        uint64
	checkedAll time.Time
	saidBroken bool
}

// DefaultRecheck is Set.Recheck's default.
const DefaultRecheck = time.Minute

// Facts is what the controller knows of each of ids at a tick: the entry
// kept when the issue's stamps are the same, else the issue read again
// (on every CPU); nil for one that cannot be read or is at a stage the
// config does not declare (logged). at is the wall clock, taken before
// the call: what the files' change times are compared with.
func (s *Set) Facts(e *engine.Engine, ids []int, at time.Time) []*Entry {
	return s.facts(e, ids, at, s.log())
}

// Issues are the issues of ids as Facts knows them (nil for one it does
// not), for a step of the tick before it (the agents kept alive): an
// issue that cannot be read is logged by Facts, once a tick, not here.
func (s *Set) Issues(e *engine.Engine, ids []int, at time.Time) []*issues.Issue {
	out := make([]*issues.Issue, len(ids))
	for i, ent := range s.facts(e, ids, at, slog.New(slog.DiscardHandler)) {
		if ent != nil {
			out[i] = ent.Issue
		}
	}
	return out
}

func (s *Set) facts(e *engine.Engine, ids []int, at time.Time, log *slog.Logger) []*Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eng != e {
		s.eng, s.entries, s.dirty, s.own = e, map[int]*Entry{}, map[int]bool{}, map[int]*ownWrite{}
		s.gen++
	}
	trust := s.takeFeed(at)
	out := make([]*Entry, len(ids))
	var check []int // indexes in ids of the issues stat'ed
	for i, id := range ids {
		if ent := s.entries[id]; trust && ent != nil && ent.gen == s.gen && !s.dirty[id] {
			out[i] = ent
			continue
		}
		check = append(check, i)
	}
	checked := make([]int, len(check))
	for j, i := range check {
		checked[j] = ids[i]
		delete(s.dirty, ids[i])
	}
	stamps := e.Store.Stamps(checked)
	var stale []int // indexes in check of the issues read again
	mine := make([]*ownWrite, len(check))
	for j, i := range check {
		if ent := s.entries[ids[i]]; ent != nil && ent.stamps == stamps[j] && stamps[j].Files.Known() {
			ent.gen = s.gen
			out[i] = ent
			continue
		}
		delete(s.entries, ids[i])
		if o := s.own[ids[i]]; o != nil && o.holds(stamps[j]) {
			mine[j] = o
		}
		delete(s.own, ids[i])
		stale = append(stale, j)
	}
	parallel.For(len(stale), func(k int) {
		j := stale[k]
		if o := mine[j]; o != nil && o.still(e, checked[j]) {
			out[check[j]] = o.ent
			return
		}
		mine[j] = nil
		out[check[j]] = s.read(e, checked[j], log)
	})
	for _, j := range stale {
		ent := out[check[j]]
		switch {
		case ent != nil && s.keep(e, stamps[j], at):
			if mine[j] != nil {
				ent = mine[j].settled()
				out[check[j]] = ent
			}
			ent.stamps, ent.gen = stamps[j], s.gen
			s.entries[checked[j]] = ent
		case mine[j] != nil:
			// Ours, not settled yet: compared again at the next tick.
			s.own[checked[j]] = mine[j]
		}
	}
	if len(s.entries)+len(s.own) > len(ids) {
		// Issues removed since: their entries go.
		for id := range s.entries {
			if _, found := slices.BinarySearch(ids, id); !found {
				delete(s.entries, id)
				delete(s.dirty, id)
			}
		}
		for id := range s.own {
			if _, found := slices.BinarySearch(ids, id); !found {
				delete(s.own, id)
			}
		}
	}
	for _, ent := range out {
		if ent != nil && !ent.Told {
			// What the controller queued since is told now.
			ent.Told = s.Told(e, ent.Issue)
		}
	}
	return out
}

// keep says whether what was read after stamps st were taken at at may
// be kept: the files were settled then, or the store's changes are
// watched and the files say nothing.
func (s *Set) keep(e *engine.Engine, st issues.Stamps, at time.Time) bool {
	if !st.Files.Known() {
		return s.Feed != nil && s.StateWatched
	}
	return e.Store.Settled(st, at)
}

// takeFeed takes what the feed told since the last tick, and says
// whether entries may be used without a stat: there is a feed, and the
// entry was stat'ed since it last lost changes and within Recheck.
func (s *Set) takeFeed(at time.Time) bool {
	if s.Feed == nil {
		return false
	}
	changed, all := s.Feed.Take()
	for _, id := range changed {
		s.dirty[id] = true
	}
	if b, ok := s.Feed.(interface{ Err() error }); ok && all && !s.saidBroken {
		if err := b.Err(); err != nil {
			// Said once: from now on every tick looks at every issue.
			s.saidBroken = true
			s.log().Warn("the watch of the issues' files broke: each tick looks at every issue until the controller starts again", "err", err)
		}
	}
	recheck := s.Recheck
	if recheck <= 0 {
		recheck = DefaultRecheck
	}
	if all || at.Sub(s.checkedAll) >= recheck || at.Before(s.checkedAll) {
		s.gen++
		s.checkedAll = at
	}
	return true
}

// Wrote takes what the controller wrote in tx, issue seen's lock, after
// the pass it found seen due for: seen unchanged (the pass left the issue
// as this set gave it), and poll its new polling state in watch.yaml.
// The next tick stats the issue's files as it would, but does not read
// and parse them again when they are those of the entry seen came from
// but for watch.yaml, and watch.yaml is the very file tx wrote (its
// hash): only the controller's own write changed them. Until a stat
// finds them settled, each tick compares them so.
func (s *Set) Wrote(e *engine.Engine, tx *issues.Tx, seen *issues.Issue, poll *issues.Poll) {
	sum, ok := tx.WroteWatch()
	if !ok {
		return
	}
	w, err := tx.Watch()
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eng != e {
		return
	}
	id := seen.ID
	base := s.entries[id]
	if o := s.own[id]; base == nil && o != nil {
		base = o.ent
	}
	// Its entry goes whatever comes of it: what it says of the poll is
	// no longer so, even to a tick that does not stat the issue.
	delete(s.entries, id)
	delete(s.own, id)
	if base == nil || base.Issue != seen || !base.stamps.Files.Known() {
		return
	}
	ent := *base
	ent.Poll = poll
	ent.Resumed, _ = time.Parse(time.RFC3339Nano, w[hooks.WatchResumedAt])
	s.own[id] = &ownWrite{ent: &ent, sum: sum}
}

// ownWrite is an entry as the controller's own write of watch.yaml left
// it: its stamps are those its other files had when they were read
// (settled then), and sum the hash of the watch.yaml written.
type ownWrite struct {
	ent *Entry
	sum [sha256.Size]byte
}

// holds says whether stamps st, stat'ed now, may be of o's issue as the
// controller left it: its issue.yaml, log and outbox are the files it was
// read from (a write of either is another file, or a longer log, or a
// later change time than the settled one read).
func (o *ownWrite) holds(st issues.Stamps) bool {
	was := o.ent.stamps
	return st.Files.Known() && st.Files.Issue == was.Files.Issue && st.Files.Events == was.Files.Events && st.Outbox == was.Outbox
}

// still says whether issue id's watch.yaml is the one the controller
// wrote: the same bytes, whatever its stamps.
func (o *ownWrite) still(e *engine.Engine, id int) bool {
	sum, ok, err := e.Store.WatchSum(id)
	return err == nil && ok && sum == o.sum
}

// settled is o's entry to keep once its stamps are settled: a copy,
// its stamps set by the caller.
func (o *ownWrite) settled() *Entry {
	ent := *o.ent
	return &ent
}

// Kept is the entry kept of issue id; nil when none is.
func (s *Set) Kept(id int) *Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entries[id]
}

// read reads what a tick needs of issue id. The entry is kept and
// never changed, so the store keeps what it parsed for the pass under
// the issue's lock to copy (issues.Store.Share).
func (s *Set) read(e *engine.Engine, id int, log *slog.Logger) *Entry {
	iss, err := e.Store.Share(id)
	if err != nil {
		// One unreadable issue never stops the others.
		log.Error("reading issue", "issue", id, "err", err)
		return nil
	}
	node, ok := e.Config.Node(iss.Stage)
	if !ok {
		log.Warn("issue at a stage the config does not declare", "issue", id, "stage", iss.Stage)
		return nil
	}
	ent := &Entry{Issue: iss, Node: node}
	if s.Active(iss, node) {
		w, err := e.Store.ShareWatch(id)
		if err != nil {
			log.Warn("unreadable watch state; starting afresh", "issue", id, "err", err)
			w = &issues.WatchFile{}
		}
		ent.Poll = w.Poll
		ent.Resumed, _ = time.Parse(time.RFC3339Nano, w.Hooks[hooks.WatchResumedAt])
	}
	pending, err := e.Outbox(id).Pending()
	ent.Pending = err == nil && len(pending) > 0
	return ent
}

func (s *Set) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}
