package board

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
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

// hub tells the board's event streams that what they show changed. It
// looks by stat (each issue's event log, watch.yaml, outbox and CI log,
// the agents' session records, the forge's rate limit) and asks tmux once
// which agents' sessions run: no file is read unless one changed.
type hub struct {
	mu      sync.Mutex
	changed chan struct{}
}

// wait is a channel closed at the next change.
func (h *hub) wait() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

func (h *hub) tell() {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.changed)
	h.changed = make(chan struct{})
}

// watch looks at the state directory every interval until ctx is done.
func (h *hub) watch(ctx context.Context, load func() (*engine.Engine, error), every time.Duration, log *slog.Logger) {
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

// keepAlive is how often an idle stream sends a comment, so proxies and
// browsers keep it open.
const keepAlive = 15 * time.Second

// stream sends server-sent events of kind until the client leaves: what
// read renders now, numbered with its id, and again at each change of the
// state directory that changes it. A client that reconnects gets the
// fragment at once whatever its Last-Event-ID: the id counts the issues'
// writes, not the rest a fragment shows (watch.yaml, the outbox, agents,
// panes, the rate limit), which may have changed meanwhile.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, kind string, read func() (id int, html string, err error)) {
	select {
	case s.streams <- struct{}{}:
		defer func() { <-s.streams }()
	default:
		w.Header().Set("Retry-After", "10")
		http.Error(w, fmt.Sprintf("the board has %d live pages open, as many as it serves; close some tabs", cap(s.streams)), http.StatusServiceUnavailable)
		return
	}
	rc := http.NewResponseController(w)
	// A stream outlives the server's read and write timeouts: it reads
	// nothing more, and each write has writeTimeout of its own, so a
	// client that stops reading is let go.
	_ = rc.SetReadDeadline(time.Time{})
	send := func(text string) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(s.limits.write))
		_, err := io.WriteString(w, text)
		return err == nil && rc.Flush() == nil
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if !send("") {
		return
	}
	sent := ""
	for {
		changed := s.hub.wait()
		id, html, err := read()
		switch {
		case err != nil:
			s.Log.Debug("the board could not read for an event", "err", err)
		case html != sent:
			if !send(fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", id, kind, sseData(html))) {
				return
			}
			sent = html
		}
		select {
		case <-r.Context().Done():
			return
		case <-changed:
		case <-time.After(keepAlive):
			if !send(": still here\n\n") {
				return
			}
		}
	}
}

// sseData is html as an event's data lines. A CR ends a line in an event
// stream as LF does, so each is one: a CR in an agent's text (escaped
// as markup, not as a line end) would otherwise start a field of its own
// (id:, event:, retry:) and cut the fragment.
func sseData(html string) string {
	html = strings.ReplaceAll(html, "\r\n", "\n")
	html = strings.ReplaceAll(html, "\r", "\n")
	return strings.ReplaceAll(html, "\n", "\ndata: ")
}

// boardEvents streams the board's columns, numbered by the sum of the
// issues' versions (boardView.Gen).
func (s *Server) boardEvents(w http.ResponseWriter, r *http.Request) {
	s.stream(w, r, "board", func() (int, string, error) {
		v, err := s.readBoard(r)
		if err != nil {
			return 0, "", err
		}
		html, err := s.fragment("columns", v)
		return v.Gen, html, err
	})
}

// issueEvents streams an issue's page, numbered by its version: its event
// log's sequence.
func (s *Server) issueEvents(w http.ResponseWriter, r *http.Request) {
	if _, err := pathID(r); err != nil {
		s.failed(w, err)
		return
	}
	s.stream(w, r, "issue", func() (int, string, error) {
		v, err := s.readIssue(r)
		if err != nil {
			return 0, "", err
		}
		html, err := s.fragment("issuebody", v)
		return v.Version, html, err
	})
}

// errUnknownAction says which actions there are.
func errUnknownAction(name string) error {
	return errors.New("there is no action " + strconv.Quote(name) + ": the board's are approve, reject, resume, skip, abort and move")
}

func itoa(n int) string { return strconv.Itoa(n) }
