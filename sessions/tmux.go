package sessions

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/sessions/sandbox"
	"github.com/agenttree/agenttree/sessions/tmux"
)

// The two tmux commands sessions/tmux's Client has no method for: a
// session started with an environment of its own, and the state of every
// pane. They go through the Client's Run: one process each, with a
// timeout, failures as *tmux.Error (errors.Is(err, tmux.ErrNoSession)).

func (m *Manager) tmuxRun(ctx context.Context, args ...string) (string, error) {
	return m.Tmux.Run(ctx, args...)
}

// newSession starts session name in dir running l, with l's environment,
// and returns its pane and the pane's process. The pane stays when the agent exits
// (remain-on-exit), so that its exit status and last output can be read.
func (m *Manager) newSession(ctx context.Context, name, dir string, l *sandbox.Launch) (string, int, error) {
	args := []string{"new-session", "-d", "-s", tmux.Arg(name), "-c", tmux.Arg(dir), "-P", "-F", "#{pane_id} #{pane_pid}"}
	for _, kv := range l.Env {
		args = append(args, "-e", tmux.Arg(kv))
	}
	args = append(args, "--")
	for _, a := range l.Argv {
		args = append(args, tmux.Arg(a))
	}
	// One tmux command line: the option is set before the server reads
	// the exit of an agent that ends at once.
	args = append(args, ";", "set-option", "-w", "-t", "="+name+":", "remain-on-exit", "on")
	out, err := m.tmuxRun(ctx, args...)
	if err != nil {
		return "", 0, fmt.Errorf("start tmux session %s: %w", name, err)
	}
	pane, pidText, _ := strings.Cut(strings.TrimSpace(out), " ")
	pid, perr := strconv.Atoi(pidText)
	if !strings.HasPrefix(pane, "%") || perr != nil {
		return "", 0, fmt.Errorf("start tmux session %s: tmux did not say its pane and process (%q)", name, out)
	}
	return pane, pid, nil
}

// pane is what tmux says of an agent's pane.
type pane struct {
	id string
	// dead: the agent exited and the pane remains; status is its exit
	// status, -1 when tmux does not know it: tmux marks a pane dead when
	// its output ends and knows the status once it reaped the process,
	// which it sometimes never does (the agent stays a zombie).
	dead     bool
	status   int
	activity time.Time
}

// panes is the first pane of every session on the server, by session
// name. No server running is no sessions; a server that drops the
// question unanswered is asked again, and one that never answers is an
// error: taken for no sessions, it would have every agent restarted as
// gone.
func (m *Manager) panes(ctx context.Context) (map[string]pane, error) {
	out, err := m.Tmux.Query(ctx, "list-panes", "-a", "-F",
		"#{session_name}\t#{pane_id}\t#{pane_dead}\t#{pane_dead_status}\t#{window_activity}")
	if errors.Is(err, tmux.ErrNoSession) {
		return map[string]pane{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list tmux panes: %w", err)
	}
	all := map[string]pane{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			continue
		}
		if _, seen := all[f[0]]; seen {
			continue
		}
		p := pane{id: f[1], dead: f[2] == "1", status: -1}
		if n, err := strconv.Atoi(f[3]); err == nil {
			p.status = n
		}
		if secs, err := strconv.ParseInt(f[4], 10, 64); err == nil {
			p.activity = time.Unix(secs, 0)
		}
		all[f[0]] = p
	}
	return all, nil
}
