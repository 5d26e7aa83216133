// Package tmuxtest starts tmux servers of their own for tests and
// benchmarks: on a private socket, with an empty configuration (not the
// developer's), kept running by a session of its own until stopped.
package tmuxtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agenttree/agenttree/internal/proc"
)

// Private is a tmux server started by Start.
type Private struct {
	// Dir holds the socket and the empty configuration; short, as a
	// socket's path is limited to about 100 bytes.
	Dir    string
	Socket string
}

// Start starts a tmux server in a new directory under the system's
// temporary one, named after prefix (not a test's TempDir: its paths are
// too long for a socket).
func Start(ctx context.Context, prefix string) (*Private, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	p := &Private{Dir: dir, Socket: filepath.Join(dir, "sock")}
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, nil, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "tmux", "-S", p.Socket, "-f", conf, "new-session", "-d", "-s", "idle")
	proc.Group(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start a tmux server on %s: %w: %s", p.Socket, err, out)
	}
	return p, nil
}

// Stop ends the server and removes its directory.
func (p *Private) Stop() {
	cmd := exec.Command("tmux", "-S", p.Socket, "kill-server")
	proc.Group(cmd)
	_ = cmd.Run()
	_ = os.RemoveAll(p.Dir)
}

// Server starts a tmux server that lives until t ends and returns its
// socket; t is skipped where tmux is not installed.
func Server(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	p, err := Start(context.Background(), "agenttree-tmux-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p.Socket
}
