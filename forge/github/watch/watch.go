// Package watch is the GitHub forge with its events on: a forge.Watcher
// and forge.WatchHealth (forge/watch.go) over the forge of forge/github,
// hearing of PR changes from a webhook receiver fed by a repository hook
// (webhook mode) or by gh webhook forward (gh-forward mode), and filling
// gaps from GitHub's Webhook Deliveries API (docs/CONFIG.md, `events:`).
package watch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/forge/github/ghapi"
	"github.com/agenttree/agenttree/forge/github/webhook"
	"github.com/agenttree/agenttree/internal/loopback"
)

// The modes of Events.Mode, as the config spells them (docs/CONFIG.md,
// `events.mode`).
const (
	ModePoll    = "poll"
	ModeForward = "gh-forward"
	ModeWebhook = "webhook"
)

// Events says how the forge hears of PR changes (docs/CONFIG.md,
// `events:`).
type Events struct {
	// Mode is ModePoll (or ""), ModeForward or ModeWebhook.
	Mode string
	// URL is the public URL GitHub delivers to (webhook mode).
	URL string
	// Listen is the receiver's address (default 127.0.0.1:0).
	Listen string
	// SecretFile holds webhook mode's secret; "" makes one in StateDir.
	SecretFile string
	// ForwardCommand is gh-forward mode's forwarder and its leading
	// arguments (default gh webhook forward).
	ForwardCommand []string
	// StateDir keeps the hook's id and the made secret.
	StateDir string
	// CheckEvery is how often the watch reads its hook's recent
	// deliveries, the webhook's or the running forwarder's, for ones that
	// failed or never arrived (default 5 minutes).
	CheckEvery time.Duration
	Logger     *slog.Logger
}

// settle is how long the controller should gather GitHub's changes
// before it acts: a push brings a pull_request, a push and a check_run
// per job within a second or two.
const settle = 2 * time.Second

// Open is github.New, and when events say so, the forge that also tells of
// changes (forge.Watcher, forge.WatchHealth).
func Open(ctx context.Context, opts github.Options, ev Events) (forge.Forge, error) {
	c, err := github.New(ctx, opts)
	if err != nil || ev.Mode == "" || ev.Mode == ModePoll {
		return c, err
	}
	if ev.Mode != ModeForward && ev.Mode != ModeWebhook {
		return nil, fmt.Errorf("github: unknown events mode %q: write poll, gh-forward or webhook", ev.Mode)
	}
	ev.Listen = cmpOr(ev.Listen, "127.0.0.1:0")
	if ev.Mode == ModeForward && !loopback.Addr(ev.Listen) {
		// The config refuses it too (docs/CONFIG.md, events.listen): a
		// caller that builds Events itself must not open the receiver of
		// a forwarder on this machine to the network.
		return nil, fmt.Errorf("github: events.listen %q: gh-forward's receiver listens on loopback only (127.0.0.1:PORT or [::1]:PORT); use webhook mode for a public address", ev.Listen)
	}
	if len(ev.ForwardCommand) == 0 {
		ev.ForwardCommand = []string{"gh", "webhook", "forward"}
	}
	if ev.CheckEvery <= 0 {
		ev.CheckEvery = 5 * time.Minute
	}
	if ev.Logger == nil {
		ev.Logger = cmpOr(opts.Logger, slog.New(slog.DiscardHandler))
	}
	return &Watching{Client: c, api: c.API(), ev: ev, log: ev.Logger, limits: defaultLimits}, nil
}

// watchLimits bound what the watch waits for.
type watchLimits struct {
	// read bounds a delivery's request, body included; idle a kept-alive
	// connection between deliveries; conns the connections open at once.
	read, idle time.Duration
	conns      int
	// shutdown is how long a stopping receiver waits for the deliveries
	// it is reading before it closes their connections.
	shutdown time.Duration
	// cleanup bounds removing a forwarder's hook as the watch stops: a
	// stop during a network outage must not hang on it.
	cleanup time.Duration
	// grace is how long a forwarder asked to stop has before its process
	// group is killed: gh removes its hook on SIGTERM.
	grace time.Duration
}

var defaultLimits = watchLimits{read: 30 * time.Second, idle: 60 * time.Second, conns: 32,
	shutdown: 5 * time.Second, cleanup: 10 * time.Second, grace: 2 * time.Second}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Watching is the GitHub forge with its events on: it runs a webhook
// receiver, and keeps a hook (webhook mode) or a forwarder (gh-forward
// mode) delivering to it.
type Watching struct {
	*github.Client
	api    *ghapi.Client
	ev     Events
	log    *slog.Logger
	limits watchLimits

	gapsFilled atomic.Int64
	recovered  atomic.Int64

	mu      sync.Mutex
	started time.Time // when the receiver began to listen
	since   time.Time // first delivery since the watch (re)started, or since deliveries last failed
	gap     bool      // deliveries may have been lost and are not yet found
	secrets [][]byte  // the hook's, or the running forwarder's
	fwdPID  int
	fwdHook int64   // the hook the running forwarder made, once confirmed
	fwdNew  []int64 // the cli hooks GitHub lists that were not there before the forwarder started
	recv    *webhook.Receiver
	webHook int64 // webhook mode's hook, once ensured
	// heardAt holds the deliveries the receiver took since heardFrom, by
	// X-GitHub-Delivery, to tell those GitHub made that never came (lost).
	heardAt   map[string]heardDelivery
	heardFrom time.Time
}

var (
	_ forge.Watcher     = (*Watching)(nil)
	_ forge.WatchHealth = (*Watching)(nil)
)

// Settle is how long to gather changes before acting on them.
func (w *Watching) Settle() time.Duration { return settle }

// Healthy is since when deliveries have arrived with no gap known; zero
// while none has, or a gap is not filled.
func (w *Watching) Healthy() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gap {
		return time.Time{}
	}
	return w.since
}

// WatchStats counts what the watch did.
type WatchStats struct {
	webhook.Stats
	// GapsFilled is how many gaps were filled from the Webhook Deliveries
	// API; Recovered how many failed deliveries were read from it.
	GapsFilled, Recovered int64
}

// WatchStats reports the receiver's counts and the gaps filled.
func (w *Watching) WatchStats() WatchStats {
	w.mu.Lock()
	recv := w.recv
	w.mu.Unlock()
	st := WatchStats{GapsFilled: w.gapsFilled.Load(), Recovered: w.recovered.Load()}
	if recv != nil {
		st.Stats = recv.Stats()
	}
	return st
}

func (w *Watching) unhealthy() {
	w.mu.Lock()
	w.since, w.gap = time.Time{}, true
	w.mu.Unlock()
}

func (w *Watching) delivered(event, guid, hookID string) {
	w.mu.Lock()
	ours := true
	if w.ev.Mode == ModeForward {
		// The forwarder's secret is on its command line, so a signed
		// delivery may be a local process's: its hook id is compared with
		// the hooks GitHub lists as new since the forwarder started
		// (follow), never taken from it alone (docs/SECURITY.md). Of
		// those, the one a delivery signed with this run's secret names
		// is the forwarder's: another forwarder's, made meanwhile, signs
		// with its own. Until then, no delivery tells that it works.
		if w.fwdHook == 0 {
			if i := slices.IndexFunc(w.fwdNew, func(id int64) bool { return hookID == strconv.FormatInt(id, 10) }); i >= 0 {
				w.fwdHook = w.fwdNew[i]
				w.hookKnown(w.fwdHook)
			}
		}
		ours = w.fwdHook != 0 && hookID == strconv.FormatInt(w.fwdHook, 10)
	}
	w.heard(guid, hookID)
	fwdHook := w.fwdHook
	if ours && w.since.IsZero() {
		w.since = time.Now()
	}
	w.mu.Unlock()
	if !ours && fwdHook != 0 {
		w.log.Warn("a delivery signed with the forwarder's secret names another hook than the forwarder's; it makes the watch no healthier",
			"hook", hookID, "forwarder_hook", fwdHook, "event", event, "delivery", guid)
	}
}

func (w *Watching) setSecrets(s ...[]byte) {
	w.mu.Lock()
	w.secrets = s
	w.mu.Unlock()
}

// Watch receives deliveries until ctx is done, telling changed of each
// change they name.
func (w *Watching) Watch(ctx context.Context, changed func(forge.Change)) error {
	w.unhealthy()
	ln, err := net.Listen("tcp", w.ev.Listen)
	if err != nil {
		return fmt.Errorf("github events: listening on %s (events.listen): %w", w.ev.Listen, err)
	}
	recv := webhook.New(webhook.Options{Repo: w.api.Repo().Owner + "/" + w.api.Repo().Name, Changed: changed, Delivered: w.delivered, Logger: w.log,
		Secrets: func() [][]byte { w.mu.Lock(); defer w.mu.Unlock(); return w.secrets }})
	w.mu.Lock()
	w.recv, w.started = recv, time.Now()
	w.heardAt, w.heardFrom, w.webHook = map[string]heardDelivery{}, w.started, 0
	w.mu.Unlock()
	// GitHub sends a delivery of a few KB and waits 10 s for the answer:
	// a slow or idle client is cut off, and their number bounded, so that
	// the receiver cannot be made to hold connections open.
	srv := &http.Server{Handler: recv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: w.limits.read,
		WriteTimeout: w.limits.read, IdleTimeout: w.limits.idle, MaxHeaderBytes: 16 << 10}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(webhook.LimitListener(ln, w.limits.conns)) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.limits.shutdown)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
		<-served
		w.unhealthy()
	}()
	if w.ev.Mode == ModeWebhook {
		return w.runWebhook(ctx, changed)
	}
	return w.runForward(ctx, "http://"+ln.Addr().String()+"/", changed)
}

// randomSecret is a fresh 32-byte secret, hex-encoded.
func randomSecret() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return []byte(hex.EncodeToString(b))
}

// hookState is what webhook mode keeps of its hook between runs.
type hookState struct {
	Repo   string    `json:"repo"`
	ID     int64     `json:"id"`
	URL    string    `json:"url"`
	Secret string    `json:"secret_sha256"` // which secret the hook was given
	Seen   time.Time `json:"seen"`          // deliveries were arriving until then
}

func (w *Watching) statePath() string {
	r := w.api.Repo()
	return filepath.Join(w.ev.StateDir, fmt.Sprintf("github-hook-%s-%s.json", r.Owner, r.Name))
}

func (w *Watching) readState() hookState {
	var st hookState
	if b, err := os.ReadFile(w.statePath()); err == nil {
		_ = json.Unmarshal(b, &st)
	}
	return st
}

func (w *Watching) writeState(st hookState) error {
	b, _ := json.MarshalIndent(st, "", "  ")
	if err := os.MkdirAll(w.ev.StateDir, 0o700); err != nil {
		return err
	}
	tmp := w.statePath() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, w.statePath())
}

// errHookExists is GitHub's 422 for a second hook where one is allowed.
func errHookExists(err error) bool {
	code, _ := ghapi.HTTPStatus(err)
	return code == http.StatusUnprocessableEntity && strings.Contains(err.Error(), "already exists")
}

var errNoHook = errors.New("no hook")
