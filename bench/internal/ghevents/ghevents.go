// Package ghevents opens the GitHub forge of each events.mode (poll,
// webhook, gh-forward) against the fake GitHub (forge/github/githubtest),
// as `agenttree controller` opens it from the config, so that the
// benchmarks run every mode offline (docs/CONFIG.md, `events:`).
//
// For gh-forward, the forwarder is the benchmark's own program started
// again (Main), the stand-in for `gh webhook forward` that the
// forge/github tests use too (forge/github/githubtest/ghforward). It
// receives the fake's POSTs on a loopback port of its own, one more hop
// on loopback than gh's websocket from GitHub.
package ghevents

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/forge/github/githubtest/ghforward"
	"github.com/agenttree/agenttree/forge/github/watch"
)

// forwardEnv, when set, makes the program the forwarder; its value is the
// fake GitHub's URL and token, a space between.
const forwardEnv = "AGENTTREE_BENCH_FAKE_GH_FORWARD"

// Main runs the forwarder and exits when the program was started as one
// (events.mode gh-forward); otherwise it returns at once. A program calls
// it first thing in main.
func Main() { ghforward.Main(forwardEnv) }

// Mode is the config's events.mode.
type Mode string

// ParseModes reads modes, comma-separated; an empty s is none.
func ParseModes(s string) ([]Mode, error) {
	var out []Mode
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, m := range strings.Split(s, ",") {
		m = strings.TrimSpace(m)
		switch m {
		case watch.ModePoll, watch.ModeWebhook, watch.ModeForward:
			out = append(out, Mode(m))
		default:
			return nil, fmt.Errorf("%q is not an events.mode: write poll, webhook or gh-forward", m)
		}
	}
	return out, nil
}

// Forge is the GitHub forge of one events mode.
type Forge struct {
	forge.Forge
	// Watching is the forge with events on; nil in poll mode.
	Watching *watch.Watching
}

// Open opens the forge of mode m on the fake srv's default repository,
// its state (the hook's id, the made secret) under dir. Webhook mode's
// public URL is its loopback receiver, where the fake delivers;
// gh-forward's forwarder is this program (Main). checkEvery is how often
// either mode reads its hook's deliveries for failures
// (watch.Events.CheckEvery; 0: the default).
func Open(ctx context.Context, m Mode, srv *githubtest.Server, dir string, checkEvery time.Duration) (Forge, error) {
	ev := watch.Events{Mode: string(m), StateDir: filepath.Join(dir, "events"), CheckEvery: checkEvery}
	switch m {
	case watch.ModeWebhook:
		addr, err := freePort()
		if err != nil {
			return Forge{}, err
		}
		ev.URL, ev.Listen = "http://"+addr+"/github", addr
	case watch.ModeForward:
		cmd, err := ghforward.Command(forwardEnv, srv.URL, srv.Token)
		if err != nil {
			return Forge{}, err
		}
		ev.ForwardCommand = cmd
	}
	f, err := watch.Open(ctx, github.Options{Repo: srv.Owner + "/" + srv.Name, Host: "github.com", Token: srv.Token, BaseURL: srv.URL}, ev)
	if err != nil {
		return Forge{}, err
	}
	w, _ := f.(*watch.Watching)
	return Forge{Forge: f, Watching: w}, nil
}

// WaitHealthy waits for the watch, which the controller's Run starts, to
// be healthy: its hook pinged or its forwarder's hook made. Poll mode has
// nothing to wait for.
func (f Forge) WaitHealthy(ctx context.Context, within time.Duration) error {
	if f.Watching == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	look := time.NewTicker(20 * time.Millisecond)
	defer look.Stop()
	for f.Watching.Healthy().IsZero() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("the GitHub events watch was not healthy within %s: %w", within, ctx.Err())
		case <-look.C:
		}
	}
	return nil
}

// DropHooks removes the fake repository's hooks, so that a mode's hook
// left behind (webhook mode keeps its hook between runs, as it should)
// sends nothing to the next mode's figures.
func DropHooks(srv *githubtest.Server) {
	for _, id := range srv.HookIDs() {
		srv.DeleteHook(id)
	}
}

// freePort is a loopback address nothing listens on now.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
