package watch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"

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
	w.mu.Lock()
	w.webHook = st.ID
	w.hookKnown(st.ID)
	w.mu.Unlock()
	// Deliveries that fail or never arrive while the receiver is up:
	// events.url does not reach it, or something else answers there. A
	// look GitHub does not answer ends the watch, which its supervisor
	// starts again (controller/wake); ensureHook's ping then makes it
	// healthy, with no change on the repository needed.
	l := &hookLook{hook: st.ID, seen: st.Seen, failing: "GitHub's deliveries to events.url fail or do not reach the receiver; polling as without events until one arrives",
		args: []any{"url", w.ev.URL}}
	return w.lookEvery(ctx, func() error {
		if err := w.look(ctx, l, changed); err != nil {
			return err
		}
		st.Seen = l.seen
		if err := w.writeState(st); err != nil {
			w.log.Warn("could not keep the webhook's state", "path", w.statePath(), "err", err)
		}
		return nil
	})
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
