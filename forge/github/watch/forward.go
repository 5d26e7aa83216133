package watch

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/ghapi"
	"github.com/agenttree/agenttree/forge/github/webhook"
	"github.com/agenttree/agenttree/internal/proc"
)

// The bounds of the wait before a forwarder that died is started again.
const forwardRetryMin, forwardRetryMax = time.Second, time.Minute

// runForward runs and supervises the forwarder, one for the repository,
// delivering to url; each run has a fresh secret.
func (w *Watching) runForward(ctx context.Context, url string, changed func(forge.Change)) error {
	retry := forwardRetryMin
	var died time.Time
	var ours int64 // the hook this watch's last forwarder made, when known
	for {
		started := time.Now()
		out, hook, err := w.forwardOnce(ctx, url, changed)
		// A forwarder that met GitHub's 422 made no hook: a new one is
		// another forwarder's, started meanwhile.
		if hook != 0 && !strings.Contains(out, "already exists") {
			ours = hook
		}
		if ctx.Err() != nil {
			// gh removes its hook when asked to stop; remove one it could
			// not, without waiting on an outage for long. A hook no delivery
			// signed with this run's secret named is left: it may be a
			// person's own forwarder's, and ours, left by gh, is found stale
			// at the next start (dropStaleHooks).
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.limits.cleanup)
			if ours != 0 {
				w.removeOwnHook(dctx, ours)
			}
			cancel()
			return nil
		}
		w.unhealthy()
		if died.IsZero() || time.Since(started) > 5*time.Second {
			died = started
		}
		if strings.Contains(out, "already exists") {
			// A forwarder killed before it could remove its hook leaves it,
			// and GitHub allows one per repository: read what it failed to
			// deliver, and remove it.
			w.log.Warn("a gh webhook forward hook holds the repository; removing it if it is stale", "output", lastLine(out))
			dropped, err := w.dropStaleHooks(ctx, ours, died, changed)
			switch {
			case errors.Is(err, errOtherForwarder):
				return err
			case err != nil:
				w.log.Warn("removing the stale forwarder's hook failed", "err", err)
			case dropped:
				ours = 0
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
// returns what it printed and the hook it made, once GitHub listed it.
func (w *Watching) forwardOnce(ctx context.Context, url string, changed func(forge.Change)) (string, int64, error) {
	// The forwarder's hook is a "cli" hook GitHub lists that was not
	// there before it started, never merely the one a delivery names: the
	// forwarder's secret is on its command line, and a local process that
	// reads it may sign a delivery naming any hook (docs/SECURITY.md). Nor
	// merely the new one listed: a person's own forwarder may make its
	// hook first. It is ours once a delivery naming it is signed with this
	// run's secret (Watching.delivered).
	before, err := w.cliHooks(ctx)
	if err != nil {
		return "", 0, fmt.Errorf("github events: %w", err)
	}
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
	// The forwarder is also stopped when its hook is gone: gh makes no
	// other, and relays nothing more (lookAtForwarder).
	cctx, stopForwarder := context.WithCancel(ctx)
	defer stopForwarder()
	cmd := exec.CommandContext(cctx, w.ev.ForwardCommand[0], args...)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// gh runs the gh-webhook extension as a child, which holds the
	// websocket and the hook: the forwarder is a process group, asked to
	// stop first (gh removes its hook then), killed after a grace.
	proc.GroupGraceful(cmd)
	ended := make(chan struct{})
	term := cmd.Cancel
	cmd.Cancel = func() error {
		go func() {
			select {
			case <-ended:
			case <-time.After(w.limits.grace):
				_ = proc.KillGroup(cmd)
			}
		}()
		return term()
	}
	cmd.WaitDelay = 5 * time.Second
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return "", 0, fmt.Errorf("github events: starting %s (events.forward_command; gh needs `gh extension install cli/gh-webhook`): %w", w.ev.ForwardCommand[0], err)
	}
	w.mu.Lock()
	w.fwdPID, w.fwdHook, w.fwdNew, w.gap = cmd.Process.Pid, 0, nil, false
	w.mu.Unlock()
	fctx, stopFollowing := context.WithCancel(ctx)
	followed := make(chan struct{})
	go func() { defer close(followed); w.follow(fctx, before, started, stopForwarder, changed) }()
	err = cmd.Wait()
	close(ended)
	stopFollowing()
	<-followed
	// What of the group outlived gh (the extension, had gh died alone)
	// would keep forwarding with a secret no longer taken.
	_ = proc.KillGroup(cmd)
	w.mu.Lock()
	hook := w.fwdHook
	w.fwdPID, w.fwdHook, w.fwdNew = 0, 0, nil
	w.mu.Unlock()
	return out.String(), hook, err
}

// follow learns the hook the forwarder makes: it lists the "cli" hooks
// GitHub did not list before the forwarder started, and pings each once
// it is active (gh activates its hook when its websocket is up). The
// ping's delivery that comes back signed with this run's secret names the
// forwarder's hook, and makes the watch healthy (Watching.delivered); a
// person's forwarder signs its ping with its own secret, refused. Then it
// looks at the hook's deliveries since the forwarder started every
// CheckEvery, as webhook mode does at its hook: a forwarder that is up
// but relays nothing is no longer taken for a healthy watch.
func (w *Watching) follow(ctx context.Context, before []ghapi.Hook, started time.Time, stopForwarder func(), changed func(forge.Change)) {
	wait := 250 * time.Millisecond
	pinged := map[int64]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, forwardRetryMax)
		w.mu.Lock()
		hook := w.fwdHook
		w.mu.Unlock()
		if hook != 0 {
			w.lookAtForwarder(ctx, hook, started, stopForwarder, changed)
			return
		}
		hs, err := w.newCLIHooks(ctx, before)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			w.log.Warn("could not list the repository's hooks for the forwarder's", "err", err)
			continue
		}
		w.mu.Lock()
		w.fwdNew = w.fwdNew[:0]
		for _, h := range hs {
			w.fwdNew = append(w.fwdNew, h.ID)
		}
		w.mu.Unlock()
		for _, h := range hs {
			if !h.Active || pinged[h.ID] {
				continue
			}
			pinged[h.ID] = true
			if err := w.api.PingHook(ctx, h.ID); err != nil && ctx.Err() == nil {
				w.log.Warn("could not ping a new gh webhook forward hook; the forwarder's is known once a delivery arrives through it", "hook", h.ID, "err", err)
			}
			wait = 250 * time.Millisecond
		}
	}
}

// lookAtForwarder looks at the forwarder's hook's deliveries every
// CheckEvery until ctx is done.
//
// A look GitHub does not answer leaves the watch unhealthy until the next
// that does, no longer: healthy means that a change would be heard of,
// and the next look reads back from where the last good one began, so
// that a delivery that failed or was lost meanwhile makes the watch
// unhealthy until deliveries arrive again (look), and none found means
// the forwarder relayed all there was. Taking health away until a
// delivery arrived would keep the plain poll interval on a quiet
// repository for hours after one failed read.
//
// A hook GitHub no longer has (404) is one gh will not make again: the
// forwarder is stopped, so that runForward starts another, which makes a
// hook and pings it; the watch is unhealthy meanwhile.
func (w *Watching) lookAtForwarder(ctx context.Context, hook int64, started time.Time, stopForwarder func(), changed func(forge.Change)) {
	l := &hookLook{hook: hook, seen: started, failing: "GitHub's deliveries through the webhook forwarder fail or do not reach the receiver; polling as without events until one arrives",
		args: []any{"hook", hook, "forward_command", w.ev.ForwardCommand[0]}}
	err := w.lookEvery(ctx, func() error {
		err := w.look(ctx, l, changed)
		if err == nil || errors.Is(err, ghapi.ErrNotFound) || ctx.Err() != nil {
			return err
		}
		w.log.Warn("could not read the forwarder's deliveries; polling as without events until the next look", "hook", hook, "err", err)
		w.mu.Lock()
		w.gap = true
		w.mu.Unlock()
		return nil
	})
	if err != nil {
		w.log.Warn("the forwarder's hook is gone; starting the forwarder again", "hook", hook, "err", err)
		w.unhealthy()
		stopForwarder()
	}
}

// cliHooks lists the repository's gh webhook forward hooks (named "cli").
func (w *Watching) cliHooks(ctx context.Context) ([]ghapi.Hook, error) {
	hs, err := w.api.Hooks(ctx)
	return slices.DeleteFunc(hs, func(h ghapi.Hook) bool { return h.Name != "cli" }), err
}

// newCLIHooks are the "cli" hooks GitHub lists that before did not.
func (w *Watching) newCLIHooks(ctx context.Context, before []ghapi.Hook) ([]ghapi.Hook, error) {
	hs, err := w.cliHooks(ctx)
	return slices.DeleteFunc(hs, func(h ghapi.Hook) bool {
		return slices.ContainsFunc(before, func(b ghapi.Hook) bool { return b.ID == h.ID })
	}), err
}

// removeOwnHook removes the hook this watch's forwarder made, which gh
// could not, once GitHub says it is still a forwarder's: its id was
// learned from GitHub's list and confirmed by a delivery signed with the
// forwarder's secret (follow), and a hook of another name is never
// removed.
func (w *Watching) removeOwnHook(ctx context.Context, id int64) {
	h, err := w.api.Hook(ctx, id)
	switch {
	case errors.Is(err, ghapi.ErrNotFound):
		return
	case err != nil:
		w.log.Warn("could not remove the webhook forwarder's hook", "hook", id, "err", err)
		return
	case h.Name != "cli":
		w.log.Warn("the hook taken for the webhook forwarder's is not a gh webhook forward hook; leaving it", "hook", id, "name", h.Name)
		return
	}
	if err := w.api.DeleteHook(ctx, id); err != nil && !errors.Is(err, ghapi.ErrNotFound) {
		w.log.Warn("could not remove the webhook forwarder's hook", "hook", id, "err", err)
	}
}

// errOtherForwarder: a forwarder this watch did not start holds the
// repository's one forwarding hook.
var errOtherForwarder = errors.New("another gh webhook forward holds the repository")

// dropStaleHooks removes the forwarders' hooks (named "cli") that are
// stale, first filling the gap since died from their failed deliveries:
// ours, the hook this watch's forwarder made, and one whose deliveries
// fail since died (its forwarder is gone). A hook still delivering is
// another forwarder's, a person's own or another controller's, and is
// left alone: errOtherForwarder.
func (w *Watching) dropStaleHooks(ctx context.Context, ours int64, died time.Time, changed func(forge.Change)) (bool, error) {
	hs, err := w.cliHooks(ctx)
	if err != nil {
		return false, err
	}
	dropped, other := false, false
	for _, h := range hs {
		if h.ID != ours {
			stale, err := w.failingSince(ctx, h.ID, died)
			if err != nil {
				return dropped, err
			}
			if !stale {
				other = true
				continue
			}
		}
		if _, err := w.fillGap(ctx, h.ID, died, changed); err != nil {
			return dropped, err
		}
		if err := w.api.DeleteHook(ctx, h.ID); err != nil && !errors.Is(err, ghapi.ErrNotFound) {
			return dropped, err
		}
		w.log.Info("removed a stale gh webhook forward hook", "hook", h.ID)
		dropped = true
	}
	if other && !dropped {
		r := w.api.Repo()
		return false, fmt.Errorf("github events: %w %s/%s (GitHub allows one per repository, and its deliveries arrive): stop the other `gh webhook forward`, or use events.mode webhook", errOtherForwarder, r.Owner, r.Name)
	}
	return dropped, nil
}

// failingSince says whether hook's deliveries since died all failed, its
// forwarder gone. With none since then, the hook is pinged and the ping's
// delivery tells.
func (w *Watching) failingSince(ctx context.Context, hook int64, died time.Time) (bool, error) {
	verdict := func(since time.Time) (decided, stale bool, err error) {
		ds, err := w.api.Deliveries(ctx, hook)
		if err != nil {
			return false, false, err
		}
		since = since.Truncate(time.Second)
		n := 0
		for _, d := range ds {
			if d.DeliveredAt.Before(since) {
				continue
			}
			if d.OK() {
				return true, false, nil
			}
			n++
		}
		return n > 0, n > 0, nil
	}
	if decided, stale, err := verdict(died); decided || err != nil {
		return stale, err
	}
	pinged := time.Now()
	if err := w.api.PingHook(ctx, hook); err != nil {
		return false, err
	}
	for range 20 {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		if decided, stale, err := verdict(pinged); decided || err != nil {
			return stale, err
		}
	}
	return false, nil
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
