package github

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/ghapi"
	"github.com/agenttree/agenttree/forge/github/webhook"
)

// secret reads webhook mode's secret: from events.secret_file, else from
// the file it made under the state directory. A file is chosen over an
// environment variable because every program the controller starts
// (hooks, CI, agents' sessions) inherits its environment, and none of
// them reads its files unless told (docs/SECURITY.md).
func (w *Watching) secret() ([]byte, error) {
	path := w.ev.SecretFile
	if path == "" {
		path = filepath.Join(w.ev.StateDir, "github-webhook-secret")
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(w.ev.StateDir, 0o700); err != nil {
				return nil, err
			}
			if err := os.WriteFile(path, randomSecret(), 0o600); err != nil {
				return nil, fmt.Errorf("github events: making the webhook secret %s: %w", path, err)
			}
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("github events: the webhook secret (events.secret_file): %w: write the secret into it, readable by its owner only", err)
	}
	if runtime.GOOS != "windows" && info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("github events: the webhook secret %s may be read by others (mode %v): run `chmod 600 %s`", path, info.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	s := bytes.TrimSpace(b)
	if err == nil && len(s) == 0 {
		err = errors.New("it is empty")
	}
	if err != nil {
		return nil, fmt.Errorf("github events: reading the webhook secret %s: %w", path, err)
	}
	return s, nil
}

// runWebhook keeps the repository's hook delivering to events.url, fills
// the gap since the last run, and checks its deliveries every
// CheckEvery.
func (w *Watching) runWebhook(ctx context.Context, changed func(forge.Change)) error {
	secret, err := w.secret()
	if err != nil {
		return err
	}
	w.setSecrets(secret)
	sum := sha256.Sum256(secret)
	st, err := w.ensureHook(ctx, secret, hex.EncodeToString(sum[:]))
	if err != nil {
		return err
	}
	if !st.Seen.IsZero() {
		if err := w.fillGap(ctx, st.ID, st.Seen, changed); err != nil {
			return err
		}
	} else {
		w.mu.Lock()
		w.gap = false
		w.mu.Unlock()
	}
	save := func() {
		st.Seen = time.Now()
		if err := w.writeState(st); err != nil {
			w.log.Warn("could not keep the webhook's state", "path", w.statePath(), "err", err)
		}
	}
	save()
	defer save()
	tick := time.NewTicker(w.ev.CheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		// A delivery that failed since the last look is a gap: its change
		// is read from the deliveries API.
		if err := w.fillGap(ctx, st.ID, st.Seen, changed); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		save()
	}
}

// ensureHook finds the hook the state directory names, fixes it if it
// changed, or creates one, and pings it.
func (w *Watching) ensureHook(ctx context.Context, secret []byte, secretSum string) (hookState, error) {
	st := w.readState()
	want := ghapi.HookConfig{URL: w.ev.URL, Secret: string(secret), Events: webhook.Events}
	repo := w.api.Repo().FullName()
	if st.Repo != repo {
		st = hookState{Repo: repo}
	}
	if st.ID != 0 {
		h, err := w.api.Hook(ctx, st.ID)
		switch {
		case errors.Is(err, ghapi.ErrNotFound):
			w.log.Warn("the webhook agenttree made is gone; making another", "hook", st.ID)
			st.ID = 0
		case err != nil:
			return st, fmt.Errorf("github events: %w", err)
		case !h.Active || h.Config.URL != w.ev.URL || !sameSet(h.Events, webhook.Events) || st.Secret != secretSum:
			if err := w.api.UpdateHook(ctx, st.ID, want); err != nil {
				return st, fmt.Errorf("github events: %w", err)
			}
		}
		if st.ID != 0 {
			st.URL, st.Secret = w.ev.URL, secretSum
			if err := w.api.PingHook(ctx, st.ID); err != nil {
				return st, fmt.Errorf("github events: %w", err)
			}
			return st, w.writeState(st)
		}
	}
	h, err := w.api.CreateHook(ctx, want)
	if errHookExists(err) {
		// Made by an earlier run whose state was lost: take it over.
		if h, err = w.findHook(ctx, func(h ghapi.Hook) bool { return h.Config.URL == w.ev.URL }); err == nil {
			err = w.api.UpdateHook(ctx, h.ID, want)
		}
	}
	if err != nil {
		return st, fmt.Errorf("github events: making the webhook on %s (the token needs admin on the repository): %w", repo, err)
	}
	st.ID, st.URL, st.Secret = h.ID, w.ev.URL, secretSum
	return st, w.writeState(st)
}

func (w *Watching) findHook(ctx context.Context, match func(ghapi.Hook) bool) (*ghapi.Hook, error) {
	hs, err := w.api.Hooks(ctx)
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(hs, match); i >= 0 {
		return &hs[i], nil
	}
	return nil, errNoHook
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// The bounds of the wait before a forwarder that died is started again.
const forwardRetryMin, forwardRetryMax = time.Second, time.Minute

// runForward runs and supervises the forwarder, one for the repository,
// delivering to url; each run has a fresh secret.
func (w *Watching) runForward(ctx context.Context, url string, changed func(forge.Change)) error {
	retry := forwardRetryMin
	var died time.Time
	for {
		started := time.Now()
		out, err := w.forwardOnce(ctx, url)
		if ctx.Err() != nil {
			w.dropForwarderHooks(context.WithoutCancel(ctx), time.Time{}, nil)
			return nil
		}
		w.unhealthy()
		if died.IsZero() || time.Since(started) > 5*time.Second {
			died = started
		}
		if strings.Contains(out, "already exists") {
			// A forwarder killed before it could remove its hook leaves it,
			// and GitHub allows one per repository: read what it failed to
			// deliver, remove it, and start again at once.
			w.log.Warn("a stale gh webhook forward hook holds the repository; removing it", "output", lastLine(out))
			if err := w.dropForwarderHooks(ctx, died, changed); err != nil {
				w.log.Warn("removing the stale forwarder's hook failed", "err", err)
			} else {
				continue
			}
		}
		if time.Since(started) >= forwardRetryMax {
			retry = forwardRetryMin
		}
		w.log.Warn("the webhook forwarder ended; starting it again", "retry_in", retry, "err", err, "output", lastLine(out))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(retry):
		}
		retry = min(2*retry, forwardRetryMax)
	}
}

// forwardOnce runs the forwarder until it ends or ctx is done, and
// returns what it printed.
func (w *Watching) forwardOnce(ctx context.Context, url string) (string, error) {
	secret := randomSecret()
	w.setSecrets(secret)
	r := w.api.Repo()
	args := append(slices.Clone(w.ev.ForwardCommand[1:]), "--repo="+r.Owner+"/"+r.Name,
		"--events="+strings.Join(webhook.Events, ","), "--url="+url,
		// gh takes the secret on its command line only: a fresh one per run,
		// whose leak lets a local process forge a "look again", no more.
		"--secret="+string(secret))
	if r.Host != "github.com" {
		args = append(args, "--github-host="+r.Host)
	}
	cmd := exec.CommandContext(ctx, w.ev.ForwardCommand[0], args...)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("github events: starting %s (events.forward_command; gh needs `gh extension install cli/gh-webhook`): %w", w.ev.ForwardCommand[0], err)
	}
	w.mu.Lock()
	w.fwdPID, w.gap = cmd.Process.Pid, false
	w.mu.Unlock()
	err := cmd.Wait()
	w.mu.Lock()
	w.fwdPID = 0
	w.mu.Unlock()
	return out.String(), err
}

// dropForwarderHooks removes the forwarders' hooks (named "cli"), first
// filling the gap since died from their failed deliveries when changed is
// set.
func (w *Watching) dropForwarderHooks(ctx context.Context, died time.Time, changed func(forge.Change)) error {
	hs, err := w.api.Hooks(ctx)
	if err != nil {
		return err
	}
	for _, h := range hs {
		if h.Name != "cli" {
			continue
		}
		if changed != nil {
			if err := w.fillGap(ctx, h.ID, died, changed); err != nil {
				return err
			}
		}
		if err := w.api.DeleteHook(ctx, h.ID); err != nil && !errors.Is(err, ghapi.ErrNotFound) {
			return err
		}
	}
	return nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// lockedBuffer is the forwarder's output, written by two pipes, the last
// 64 KiB kept.
type lockedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - 64<<10; over > 0 {
		b.buf = b.buf[over:]
	}
	return len(p), nil
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
