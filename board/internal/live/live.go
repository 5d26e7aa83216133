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
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues/eventlog"
	"github.com/agenttree/agenttree/sessions/waiton"
)

// Hub tells the board's event streams that what they show changed. It
// looks by stat (each issue's event log, watch.yaml, outbox and CI log,
// the agents' session records, the forge's rate limit) and asks tmux once
// which agents' sessions run: no file is read unless one changed.
type Hub struct {
	mu      sync.Mutex
	changed chan struct{}
}

// New is a hub that has told nothing yet.
func New() *Hub { return &Hub{changed: make(chan struct{})} }

// Wait is a channel closed at the next change.
func (h *Hub) Wait() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

func (h *Hub) tell() {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.changed)
	h.changed = make(chan struct{})
}

// Watch looks at the state directory every interval until ctx is done.
func (h *Hub) Watch(ctx context.Context, load func() (*engine.Engine, error), every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	last, failed := "", ""
	for {
		if e, err := load(); err != nil {
			// Pages stay as they were until the engine opens (a config
			// being edited, say): a Warn once per error, not four a second.
			if err.Error() != failed {
				log.Warn("the board could not open the engine; its pages are not updated until it can", "err", err)
			}
			failed = err.Error()
		} else {
			failed = ""
			if now := stamp(ctx, e); now != last {
				if last != "" {
					h.tell()
				}
				last = now
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// stamp is the size and modification time of every file the board shows
// something of, and whether each agent's session runs, in one string.
func stamp(ctx context.Context, e *engine.Engine) string {
	var b strings.Builder
	l := e.Store.Layout()
	add := func(path string) {
		// Lstat: an agent may make its CI log a symlink to anywhere.
		if fi, err := os.Lstat(path); err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", path, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	dirs, _ := os.ReadDir(l.HostIssues())
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(l.HostIssues(), d.Name())
		add(filepath.Join(dir, eventlog.File))
		add(filepath.Join(dir, "watch.yaml"))
		add(filepath.Join(dir, "outbox"))
		add(filepath.Join(dir, "outbox", "sent"))
		if id, err := strconv.Atoi(d.Name()); err == nil {
			add(filepath.Join(e.Store.Dir(id), "ci_feedback.md"))
		}
	}
	add(filepath.Join(l.Host(), "ratelimit.json")) // the controller's (docs/ARCHITECTURE.md §8)
	add(l.AgentSessions())
	agents, _ := os.ReadDir(l.AgentSessions())
	look := waiton.LookAtAgents(ctx, e)
	for _, a := range agents {
		add(filepath.Join(l.AgentSessions(), a.Name()))
		if id, err := strconv.Atoi(strings.TrimSuffix(a.Name(), ".yaml")); err == nil {
			_, alive, known := look.Agent(id)
			fmt.Fprintf(&b, "agent %d alive %t known %t\n", id, alive, known)
		}
	}
	return b.String()
}
