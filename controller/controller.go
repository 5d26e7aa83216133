package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agenttree/agenttree/controller/dueset"
	"github.com/agenttree/agenttree/controller/metrics"
	"github.com/agenttree/agenttree/controller/nodes"
	"github.com/agenttree/agenttree/controller/prbatch"
	"github.com/agenttree/agenttree/controller/ratelimit"
	"github.com/agenttree/agenttree/controller/wake"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/sessions/tmux"
)

// Controller is the host's reconcile loop (docs/ARCHITECTURE.md §6). Each tick it finds
// the issues that are due, fetches their PRs in batches, and lets the
// engine continue each one's work from what is on disk; it keeps no state
// of its own, so it can be killed at any moment and started again.
type Controller struct {
	// Load loads the config and opens the engine over the state directory.
	// It is called again when the config file changes: a config that does
	// not load is reported, and the last good one kept.
	Load func() (*engine.Engine, error)
	// Interval is the tick; 0 means the config's controller.interval_s.
	Interval time.Duration
	// Issue limits the controller to one issue; 0 means all.
	Issue int
	// Eager looks at every issue on every tick, whatever its polling state
	// says (a person's pass in the foreground).
	Eager bool
	Log   *slog.Logger
	// Tmux delivers messages to sessions; nil: the config's tmux settings.
	Tmux *tmux.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NoWatch keeps Run from watching the forge for changes even when it
	// can tell of them (forge.Watcher): it polls only.
	NoWatch bool
	// Settle is how long Run gathers the forge's changes after the first
	// before it ticks; 0: the watcher's (wake.Settler), else 300 ms.
	Settle time.Duration
	// Metrics counts what the controller does (ticks, step backs,
	// escalations, deliveries); nil counts nothing.
	Metrics *metrics.Metrics
	// Fence, when set, says whether this controller may still act: its
	// term as the one elected among controllers sharing an etcd cluster
	// (controller/leader). A tick asks it first, each issue's pass asks
	// it before it starts, each delivery before it types; once it says
	// no, nothing more starts (docs/ARCHITECTURE.md §8).
	Fence func(context.Context) error
	// Homes, when set (state.nodes), says at each tick where each
	// issue's agent is: this process keeps and carries messages to its
	// own; a node stops its agents of issues given to another; the
	// elected controller's Homes also gives the issues that need a node
	// one (controller/nodes, docs/ARCHITECTURE.md §8, "Nodes"). When it
	// cannot say, no agent is started or stopped, nor typed to. Unset,
	// every issue's agent is this process's.
	Homes func(ctx context.Context, e *engine.Engine, known func(ids []int) []*issues.Issue) (nodes.Homes, error)
	// Node: this process is a node, not the elected controller: it keeps
	// its issues' agents and carries their messages, and makes no pass
	// of the engine's and tells no person.
	Node bool
	// BoundMemory: at each tick, the process's soft memory limit is set
	// from the heap still live and the number of issues (memlimit.Bound),
	// as `agenttree controller` does; a library caller leaves its
	// process's alone.
	BoundMemory bool

	mu       sync.Mutex
	eng      *engine.Engine
	cfgStamp time.Time
	// queued remembers the message keys this process has put in outboxes,
	// so a tick does not read every outbox to learn it again.
	queued map[string]bool
	// mailErrs is each issue's last delivery error, to log it once.
	mailErrs map[int]string
	// wake is the forge's watch while Run runs, and what it told.
	wake wake.Watch
	// here is which issues' agents are this process's, as the last
	// tick's Homes said; nil: all.
	here func(id int) bool
	// dues is what the ticks learned of each issue, for the next.
	dues *dueset.Set
	// wall is the clock of the files' change times; nil: time.Now
	// (Now is the polling's, which may be another).
	wall func() time.Time
	// limit records the forge's rate limit for status.
	limit ratelimit.Recorder
	// disk stops the passes while the state's disk takes no writes.
	disk diskWatch
}

// ErrRunning is returned when another controller holds the state directory.
var ErrRunning = errors.New("another controller is running")

// Lock takes the state directory's controller lock without waiting; the
// lock file names the process that holds it, so a second controller says
// which one runs.
func Lock(stateDir string) (unlock func(), err error) {
	path := statedir.Layout{Root: stateDir}.ControllerLock()
	if err := os.MkdirAll(filepath.Dir(path), statedir.HostMode); err != nil {
		return nil, err
	}
	// A second's wait: someone only looking (`agenttree status`) lets go.
	unlock, err = atomicfile.Lock(context.Background(), path, time.Second, "the controller of "+stateDir)
	if errors.Is(err, atomicfile.ErrLocked) {
		holder := atomicfile.HeldBy(path)
		if holder == "" {
			holder = "its pid is not recorded"
		}
		return nil, fmt.Errorf("%w for %s (%s); stop it first, or see what it does with `agenttree status`", ErrRunning, stateDir, holder)
	}
	return unlock, err
}

// Running says whether a controller holds stateDir's lock, and which
// process the lock file names. It only looks: it writes nothing.
func Running(stateDir string) (holder string, running bool) {
	path := statedir.Layout{Root: stateDir}.ControllerLock()
	if _, err := os.Stat(path); err != nil || !atomicfile.Held(path) {
		return "", false
	}
	return atomicfile.HeldBy(path), true
}

// Run ticks until ctx is done. Stopping finishes the pass in flight:
// hooks run on a context that the stop does not cancel, so nothing is left
// half done. It returns nil when stopped.
//
// While it runs it watches the forge for changes when the forge can tell
// of them (forge.Watcher, unless NoWatch): a change cuts the wait short,
// and after Settle the tick looks at the issues it names whatever their
// polling state says (docs/ARCHITECTURE.md §6).
func (c *Controller) Run(ctx context.Context) error {
	w := &c.wake
	w.Log, w.Settle = c.log(), c.Settle
	defer w.Stop()
	defer c.WatchIssues(ctx)()
	for {
		sum, err := c.Tick(ctx)
		if err != nil {
			return err
		}
		if e := c.engine(); e != nil && !c.NoWatch {
			w.Follow(ctx, e.Forge)
		}
		wait := c.interval()
		if sum.Soonest > 0 && sum.Soonest < wait {
			wait = sum.Soonest
		}
		if !w.Wait(ctx, wait) {
			return nil
		}
	}
}

// WatchIssues starts the watches that let a tick skip the issues that did
// not change (dueset.WatchFor: the issues' files and their outboxes, on
// Linux, unless the store keeps the outboxes; and the store's own watch
// when the state is not in files, backend.Watcher), and returns what
// stops them. Run calls it before its first tick; without it each tick
// stats every issue's files (over etcd, reads every issue), as `--once`
// does.
func (c *Controller) WatchIssues(ctx context.Context) (stop func()) {
	e, err := c.reload()
	if err != nil {
		return func() {}
	}
	w, err := dueset.WatchFor(e)
	if err != nil {
		c.log().Warn("not watching the issues' files: each tick looks at every issue", "err", err)
	}
	if w == nil {
		return func() {}
	}
	if e.Store.InFiles() {
		c.dueSet().Feed = w
		return func() { _ = w.Close() }
	}
	sw, ok := e.Store.Watcher()
	if !ok {
		_ = w.Close()
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- sw.Watch(ctx, func() { close(ready) }, w.Name, w.Lose) }()
	var why error
	select {
	case <-ready:
	case why = <-done:
	case <-time.After(storeWatchWait):
		// A cluster out of reach at the start: the ticks read every
		// issue, and say the cluster cannot be read, meanwhile.
		why = fmt.Errorf("the store's watch did not begin within %s", storeWatchWait)
	case <-ctx.Done():
		why = ctx.Err()
	}
	if why != nil {
		cancel()
		_ = w.Close()
		c.log().Warn("not watching the issues' state: each tick reads every issue", "err", why)
		return func() {}
	}
	set := c.dueSet()
	set.Feed, set.StateWatched = w, true
	return func() {
		cancel()
		<-done
		_ = w.Close()
	}
}

// storeWatchWait bounds the wait for the store's watch to begin.
const storeWatchWait = 5 * time.Second

// fenced is Fence's answer, nil without one.
func (c *Controller) fenced(ctx context.Context) error {
	if c.Fence == nil {
		return nil
	}
	return c.Fence(ctx)
}

func (c *Controller) interval() time.Duration {
	if c.Interval > 0 {
		return c.Interval
	}
	if e := c.engine(); e != nil && e.Config.Controller.Interval > 0 {
		return e.Config.Controller.Interval
	}
	return 10 * time.Second
}

func (c *Controller) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Controller) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

func (c *Controller) engine() *engine.Engine {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.eng
}

// Engine is the engine with the current config: the one the controller
// holds agents' requests to (reloaded when the file changed, the last
// good one kept when the new one does not load).
func (c *Controller) Engine() (*engine.Engine, error) { return c.reload() }

// reload opens the engine on first use, and again when the config file
// changed since; a config that does not load keeps the last good one.
func (c *Controller) reload() (*engine.Engine, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.eng != nil {
		fi, err := os.Stat(c.eng.Config.File)
		if err != nil || fi.ModTime().Equal(c.cfgStamp) {
			return c.eng, nil
		}
	}
	e, err := c.Load()
	if err != nil {
		if c.eng == nil {
			return nil, err
		}
		c.log().Error("config not reloaded; keeping the last good one", "file", c.eng.Config.File, "err", err)
		if fi, serr := os.Stat(c.eng.Config.File); serr == nil {
			c.cfgStamp = fi.ModTime() // report it once, not every tick
		}
		return c.eng, nil
	}
	if fi, err := os.Stat(e.Config.File); err == nil {
		c.cfgStamp = fi.ModTime()
	}
	if c.eng != nil {
		c.log().Info("config reloaded", "file", e.Config.File)
	}
	if e.Forge != nil {
		e.Forge = &prbatch.Forge{Inner: e.Forge}
	}
	c.eng = e
	return e, nil
}
