package main

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenttree/agenttree/bench/internal/ghforward"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/forge/github/githubtest"
)

// eventsMode is the config's events.mode: how the GitHub forge hears of
// PR changes (docs/CONFIG.md).
type eventsMode string

// parseModes reads -events: modes, comma-separated.
func parseModes(s string) ([]eventsMode, error) {
	var out []eventsMode
	for _, m := range strings.Split(s, ",") {
		m = strings.TrimSpace(m)
		switch eventsMode(m) {
		case github.ModePoll, github.ModeWebhook, github.ModeForward:
			out = append(out, eventsMode(m))
		default:
			return nil, fmt.Errorf("-events: %q is not poll, webhook or gh-forward", m)
		}
	}
	return out, nil
}

// modeForge is the GitHub forge of one events mode, as `agenttree
// controller` opens it from the config (github.Open), on the fake.
type modeForge struct {
	forge.Forge
	// watching is the forge with events on; nil in poll mode.
	watching *github.Watching
}

// openModeForge opens the forge of mode m, its state (the hook's id, the
// made secret) under dir. Webhook mode's public URL is its loopback
// receiver, where the fake delivers; gh-forward's forwarder is this
// program (ghforward). checkEvery is how often webhook mode reads its
// hook's deliveries for failures (github.Events.CheckEvery).
func openModeForge(ctx context.Context, m eventsMode, srv *githubtest.Server, dir string, checkEvery time.Duration) (modeForge, error) {
	ev := github.Events{Mode: string(m), StateDir: filepath.Join(dir, "events"), CheckEvery: checkEvery}
	switch m {
	case github.ModeWebhook:
		addr, err := freePort()
		if err != nil {
			return modeForge{}, err
		}
		ev.URL, ev.Listen = "http://"+addr+"/github", addr
	case github.ModeForward:
		cmd, err := ghforward.Command(srv.URL, srv.Token)
		if err != nil {
			return modeForge{}, err
		}
		ev.ForwardCommand = cmd
	}
	f, err := github.Open(ctx, github.Options{Repo: fakeRepo(srv), Host: "github.com", Token: srv.Token, BaseURL: srv.URL}, ev)
	if err != nil {
		return modeForge{}, err
	}
	w, _ := f.(*github.Watching)
	return modeForge{Forge: f, watching: w}, nil
}

// waitHealthy waits for the watch, which the controller's Run starts, to
// be healthy: its hook pinged or its forwarder's hook made. Poll mode has
// nothing to wait for.
func (m modeForge) waitHealthy(ctx context.Context, within time.Duration) error {
	if m.watching == nil {
		return nil
	}
	err := waitUntil(ctx, within, func() (bool, error) { return !m.watching.Healthy().IsZero(), nil })
	if err != nil {
		return fmt.Errorf("the GitHub events watch never became healthy: %w", err)
	}
	return nil
}

// dropHooks removes the fake repository's hooks, so that a mode's hook
// left behind (webhook mode keeps its hook between runs, as it should)
// sends nothing to the next mode's figures.
func dropHooks(srv *githubtest.Server) {
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
