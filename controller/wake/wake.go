// Package wake is the controller's watch of a forge that tells of changes
// (forge.Watcher): it runs the watch, starts it again when it fails,
// gathers the changes it tells for the next tick, cuts the tick's wait
// short on one, and says whether the watch is healthy, which lets the
// controller poll less (docs/ARCHITECTURE.md §6). What it holds is in
// memory only: a restarted controller polls everything anyway.
package wake

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge"
)

const (
	// DefaultSettle is how long Wait gathers changes after the first
	// before it returns: the local forge's files arrive together.
	DefaultSettle = 300 * time.Millisecond
	// HealthyPoll is what a PR's poll interval stretches to while the
	// watch is healthy: the watch tells of changes, and a watch that
	// breaks off brings the interval without it back at once (Due), so
	// the poll is only the net under a change lost while the watch looked
	// healthy. Half an hour keeps a watched PR at 0.04 requests an hour
	// on GitHub (one batched query for 50 PRs, twice an hour), a sixth of
	// polling's steady state (bench/README.md).
	HealthyPoll = 30 * time.Minute
	// The bounds of the wait before a failed watch is started again.
	retryMin, retryMax = time.Second, time.Minute
)

// Settler is a forge.Watcher that says how long to gather its changes
// before acting on them: a forge whose changes come in bursts over a few
// seconds (a webhook per check run) wants a longer window than one whose
// come at once.
type Settler interface {
	Settle() time.Duration
}

// Woken is what the watch told since it was last taken: the PRs and the
// commits named.
type Woken struct {
	PRs  map[int]bool
	SHAs map[string]bool
}

// Names says whether a change named iss's PR, or the head that iss or
// its last poll p (nil: none) knows.
func (w Woken) Names(iss *issues.Issue, p *issues.Poll) bool {
	switch {
	case iss.PRNumber > 0 && w.PRs[iss.PRNumber]:
		return true
	case iss.HeadSHA != "" && w.SHAs[iss.HeadSHA]:
		return true
	}
	return p != nil && p.Head != "" && w.SHAs[p.Head]
}

// Watch is one controller's watch of its forge. The zero Watch is ready
// to use; Log may be set before the first Follow.
type Watch struct {
	Log *slog.Logger
	// Settle overrides the watcher's settle window (Settler) when > 0.
	Settle time.Duration

	mu    sync.Mutex
	woken Woken
	kick  chan struct{}
	// The watch running now: its watcher, its stop, closed when it ends.
	watcher forge.Watcher
	stop    context.CancelFunc
	done    chan struct{}
	// since is when the running Watch was called; zero while none runs
	// (failed, waiting to be started again).
	since time.Time
}

func (w *Watch) kicks() chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.kick == nil {
		w.kick = make(chan struct{}, 1)
	}
	return w.kick
}

// Changed is the watch's callback: the change marks its PR or commit,
// and cuts Wait short.
func (w *Watch) Changed(ch forge.Change) {
	w.mu.Lock()
	if ch.PR > 0 {
		if w.woken.PRs == nil {
			w.woken.PRs = map[int]bool{}
		}
		w.woken.PRs[ch.PR] = true
	}
	if ch.SHA != "" {
		if w.woken.SHAs == nil {
			w.woken.SHAs = map[string]bool{}
		}
		w.woken.SHAs[ch.SHA] = true
	}
	w.mu.Unlock()
	w.log().Debug("forge change", "pr", ch.PR, "sha", ch.SHA, "what", ch.What)
	select {
	case w.kicks() <- struct{}{}:
	default:
	}
}

// Take empties what the watch told, for the tick that acts on it. A
// change that comes during the tick is kept for the next one.
func (w *Watch) Take() Woken {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.woken
	w.woken = Woken{}
	return out
}

// Wait waits d, or less when a change comes: then the settle window more,
// so a burst of changes makes one tick. It reports false when ctx ended.
func (w *Watch) Wait(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	case <-w.kicks():
	}
	settle := time.NewTimer(w.settle())
	defer settle.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-settle.C:
		return true
	}
}

func (w *Watch) settle() time.Duration {
	if w.Settle > 0 {
		return w.Settle
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if s, ok := w.watcher.(Settler); ok && s.Settle() > 0 {
		return s.Settle()
	}
	return DefaultSettle
}

// Follow watches f when it can tell of changes (nil: watch nothing),
// stopping the watch of the forge before when f is another one. The watch
// runs until ctx ends or Stop.
func (w *Watch) Follow(ctx context.Context, f forge.Forge) {
	var want forge.Watcher
	if f != nil {
		want, _ = forge.As[forge.Watcher](f)
	}
	w.mu.Lock()
	same := w.watcher == want
	w.mu.Unlock()
	if same {
		return
	}
	w.Stop()
	if want == nil {
		return
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	w.mu.Lock()
	w.watcher, w.stop, w.done = want, cancel, done
	w.mu.Unlock()
	go w.supervise(wctx, want, done)
}

// Stop stops the watch, if one runs, and waits for it to end.
func (w *Watch) Stop() {
	w.mu.Lock()
	stop, done := w.stop, w.done
	w.watcher, w.stop, w.done, w.since = nil, nil, nil, time.Time{}
	w.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// supervise runs wt's Watch until ctx is done, starting it again after a
// failure with a backoff that doubles up to retryMax (and starts afresh
// after a watch that ran that long). Meanwhile the poll goes on as it
// does without a watch.
func (w *Watch) supervise(ctx context.Context, wt forge.Watcher, done chan struct{}) {
	defer close(done)
	retry := retryMin
	for {
		started := time.Now()
		w.running(started)
		err := wt.Watch(ctx, w.Changed)
		w.running(time.Time{})
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("the watch ended without a reason")
		}
		if time.Since(started) >= retryMax {
			retry = retryMin
		}
		w.log().Warn("watching the forge for changes failed; polling as without it, and watching again later", "retry_in", retry, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(retry):
		}
		retry = min(2*retry, retryMax)
	}
}

func (w *Watch) running(since time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.since = since
}

// Healthy says whether the watch tells of changes now: by the watcher's
// own word when it has one (forge.WatchHealth), else while its Watch runs
// without an error.
func (w *Watch) Healthy() bool { return !w.healthySince().IsZero() }

// healthySince is since when the watch has told of changes without a
// break: the later of its (re)start and the watcher's own word; zero when
// it does not now.
func (w *Watch) healthySince() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watcher == nil || w.since.IsZero() {
		return time.Time{}
	}
	since := w.since
	if h, ok := w.watcher.(forge.WatchHealth); ok {
		own := h.Healthy()
		if own.IsZero() {
			return time.Time{}
		}
		if own.After(since) {
			since = own
		}
	}
	return since
}

// Stretch is when a PR polled at now with interval next is looked at
// again: at least HealthyPoll later while the watch is healthy.
func (w *Watch) Stretch(now time.Time, next time.Duration) time.Time {
	if next < HealthyPoll && w.Healthy() {
		next = HealthyPoll
	}
	return now.Add(next)
}

// Due is when a PR whose last poll was at polled, with interval (without
// the watch) and next look at next, is due: next, but when the watch
// stretched it (Stretch) and is not healthy any more, or has not been
// healthy without a break since the poll, the interval's end.
func (w *Watch) Due(polled time.Time, interval time.Duration, next time.Time) time.Time {
	plain := polled.Add(interval)
	if next.Sub(plain) <= time.Second {
		return next
	}
	// A watch that broke off since the poll (and may be back) could have
	// missed a change in between: the stretch no longer holds.
	if since := w.healthySince(); since.IsZero() || since.After(polled) {
		return plain
	}
	return next
}

func (w *Watch) log() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}
