// Package live tells the board's event streams that what they show
// changed (docs/ARCHITECTURE.md §11).
package live

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues/eventlog"
	"github.com/agenttree/agenttree/sessions/waiton"
)

// Hub tells the board's event streams that what they show changed. While
// a stream is open it looks by stat (each issue's event log, watch.yaml,
// outbox and CI log, the agents' session records, the forge's rate
// limit), reads the session records and asks tmux once which agents'
// sessions run. While none is open it looks at nothing and runs nothing:
// `controller --http` serves for days with no page open
// (docs/ARCHITECTURE.md §11).
type Hub struct {
	mu      sync.Mutex
	streams map[*Stream]struct{}
	// opened has a value once a stream opens, to wake a hub that had none.
	opened chan struct{}
}

// Stream is one event stream's place at the hub.
type Stream struct {
	h *Hub
	// issue is the issue whose page the stream shows; 0 is the board's.
	issue   int
	changed chan struct{}
}

// New is a hub with no stream open.
func New() *Hub { return &Hub{streams: map[*Stream]struct{}{}, opened: make(chan struct{}, 1)} }

// Open puts a stream of issue's page (0: the board's) at the hub until
// its Close.
func (h *Hub) Open(issue int) *Stream {
	s := &Stream{h: h, issue: issue, changed: make(chan struct{}, 1)}
	h.mu.Lock()
	h.streams[s] = struct{}{}
	h.mu.Unlock()
	select {
	case h.opened <- struct{}{}:
	default:
	}
	return s
}

// Changed has a value when what the stream shows may have changed since
// it last took one: changes meanwhile are one value.
func (s *Stream) Changed() <-chan struct{} { return s.changed }

// Close takes the stream off the hub.
func (s *Stream) Close() {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	delete(s.h.streams, s)
}

func (h *Hub) idle() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.streams) == 0
}

// tell tells each stream that shows something of c.
func (h *Hub) tell(c changes) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.streams {
		if c.shown(s.issue) {
			select {
			case s.changed <- struct{}{}:
			default:
			}
		}
	}
}

// Watch looks at the state directory every interval while a stream is
// open, until ctx is done.
func (h *Hub) Watch(ctx context.Context, load func() (*engine.Engine, error), every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	var last *look
	failed := ""
	var store *storeFeed // the store's own watch, over a store not in files
	for {
		if h.idle() {
			// The first look once a stream opens tells every stream: what
			// changed while none was, or since the new one read its page
			// and before this look, reaches it.
			last = nil
			select {
			case <-ctx.Done():
				return
			case <-h.opened:
			}
		}
		if e, err := load(); err != nil {
			// Pages stay as they were until the engine opens (a config
			// being edited, say): a Warn once per error, not four a second.
			if err.Error() != failed {
				log.Warn("the board could not open the engine; its pages are not updated until it can", "err", err)
			}
			failed = err.Error()
		} else {
			failed = ""
			if store == nil {
				store = watchStore(ctx, e, log)
			}
			now := lookAt(ctx, e)
			store.addTo(&now)
			if last == nil {
				h.tell(changes{all: true})
			} else if c := last.since(now); c.any() {
				h.tell(c)
			}
			last = &now
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// look is the size and modification time of every file the board shows
// something of, and whether each agent's session runs, by which pages
// show it: every page (all), the board's and an issue's (issues), or an
// issue's alone (ci, the CI log an agent may write without pause).
type look struct {
	all        string
	issues, ci map[int]string
}

// changes are what changed between two looks.
type changes struct {
	all        bool
	issues, ci map[int]bool
}

func (c changes) any() bool { return c.all || len(c.issues) > 0 || len(c.ci) > 0 }

// shown reports whether the page of issue (0: the board's) shows
// something of c.
func (c changes) shown(issue int) bool {
	if issue == 0 {
		return c.all || len(c.issues) > 0
	}
	return c.all || c.issues[issue] || c.ci[issue]
}

// since is what changed from l to now.
func (l *look) since(now look) changes {
	return changes{all: l.all != now.all, issues: differ(l.issues, now.issues), ci: differ(l.ci, now.ci)}
}

// differ is the ids whose value is not the same in a and b.
func differ(a, b map[int]string) map[int]bool {
	out := map[int]bool{}
	for id, v := range b {
		if w, ok := a[id]; !ok || w != v {
			out[id] = true
		}
	}
	for id := range a {
		if _, ok := b[id]; !ok {
			out[id] = true
		}
	}
	return out
}

// lookAt is what the hub sees of e's state directory now.
func lookAt(ctx context.Context, e *engine.Engine) look {
	l := look{issues: map[int]string{}, ci: map[int]string{}}
	var all strings.Builder
	lay := e.Store.Layout()
	stat := func(path string) string {
		// Lstat: an agent may make its CI log a symlink to anywhere.
		if fi, err := os.Lstat(path); err == nil {
			return fmt.Sprintf("%s %d %d\n", path, fi.Size(), fi.ModTime().UnixNano())
		}
		return ""
	}
	dirs, _ := os.ReadDir(lay.HostIssues())
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(lay.HostIssues(), d.Name())
		files := "issue\n" + stat(filepath.Join(dir, eventlog.File)) + stat(filepath.Join(dir, "watch.yaml")) +
			stat(filepath.Join(dir, "outbox")) + stat(filepath.Join(dir, "outbox", "sent"))
		id, err := strconv.Atoi(d.Name())
		if err != nil {
			all.WriteString(files)
			continue
		}
		l.issues[id] += files
		l.ci[id] = stat(filepath.Join(e.Store.Dir(id), "ci_feedback.md"))
	}
	all.WriteString(stat(lay.RateLimit())) // the controller's (docs/ARCHITECTURE.md §8)
	all.WriteString(stat(lay.AgentSessions()))
	agents, _ := os.ReadDir(lay.AgentSessions())
	sessions := waiton.LookAtAgents(ctx, e)
	for _, a := range agents {
		rec := stat(filepath.Join(lay.AgentSessions(), a.Name()))
		id, err := strconv.Atoi(strings.TrimSuffix(a.Name(), ".yaml"))
		if err != nil {
			all.WriteString(rec)
			continue
		}
		_, alive, known := sessions.Agent(id)
		l.issues[id] += rec + fmt.Sprintf("agent alive %t known %t\n", alive, known)
	}
	l.all = all.String()
	return l
}

// storeFeed counts the changes the store's own watch told of each issue
// (backend.Watcher): the issues' state kept elsewhere than in files (etcd)
// changes no file the hub stats.
type storeFeed struct {
	mu     sync.Mutex
	counts map[int]int64
	lost   int64
}

// watchStore starts the store's watch when e's issues are not in files
// and the store can tell its changes, for as long as ctx; a feed that
// tells nothing otherwise.
func watchStore(ctx context.Context, e *engine.Engine, log *slog.Logger) *storeFeed {
	f := &storeFeed{counts: map[int]int64{}}
	w, ok := e.Store.Watcher()
	if e.Store.InFiles() || !ok {
		return f
	}
	// The first look tells every stream, so the watch begins before it:
	// a change made between the two is not missed.
	ready := make(chan struct{})
	var late atomic.Bool // the first look was made before the watch began
	begun := sync.OnceFunc(func() {
		if late.Load() {
			f.mu.Lock()
			f.lost++ // what changed between the first look and now: all
			f.mu.Unlock()
		}
		close(ready)
	})
	go func() {
		defer begun() // a watch that failed to begin is waited for no more
		err := w.Watch(ctx, begun, func(id int) {
			f.mu.Lock()
			f.counts[id]++
			f.mu.Unlock()
		}, func() {
			f.mu.Lock()
			f.lost++
			f.mu.Unlock()
		})
		if err != nil && ctx.Err() == nil {
			log.Warn("the board could not watch the issues' state; its pages show the state's changes no more", "err", err)
		}
	}()
	select {
	case <-ready:
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		late.Store(true)
		log.Warn("the board's watch of the issues' state has not begun; its pages are told of every change once it does")
	}
	return f
}

// addTo adds what the store told to a look: an issue it named has
// changed since the last look, and all have when it lost changes.
func (f *storeFeed) addTo(l *look) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, n := range f.counts {
		l.issues[id] += fmt.Sprintf("store %d\n", n)
	}
	l.all += fmt.Sprintf("store lost %d\n", f.lost)
}
