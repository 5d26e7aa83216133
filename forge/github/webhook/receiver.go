package webhook

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenttree/agenttree/forge"
)

// DefaultMaxBody bounds a delivery's body. GitHub caps payloads at 25 MB,
// but the events a PR's watch subscribes to are a few KB; a larger body
// is refused before it is read whole.
const DefaultMaxBody = 1 << 20

// Options configures a Receiver.
type Options struct {
	// Secrets returns the secrets a delivery may be signed with (the
	// hook's, a forwarder's); called for each delivery, so a secret may
	// change while the receiver runs.
	Secrets func() [][]byte
	// Repo is the repository's OWNER/NAME: deliveries about another are
	// ignored. "" takes any.
	Repo string
	// Changed is called with each change a delivery tells of.
	Changed func(forge.Change)
	// Delivered is called after each signed delivery, ping included, with
	// its X-GitHub-Event, X-GitHub-Delivery and X-GitHub-Hook-ID: the hook
	// is working. A forwarder passes GitHub's headers on, so the hook id
	// names the hook a forwarder made.
	Delivered func(event, id, hookID string)
	// MaxBody bounds a delivery's body (default DefaultMaxBody).
	MaxBody int64
	Logger  *slog.Logger
	// Now is the clock of Stats.Last (default time.Now).
	Now func() time.Time
}

// Stats counts the deliveries a Receiver answered.
type Stats struct {
	// Accepted deliveries were signed with a secret the receiver holds,
	// whatever their event.
	Accepted int64
	// Refused deliveries were unsigned, badly signed, too large or not a
	// POST.
	Refused int64
	// Changes is how many changes the accepted deliveries told of.
	Changes int64
	// Last is when the last delivery was accepted.
	Last time.Time
}

// Receiver is the http.Handler GitHub (or a forwarder) delivers to.
type Receiver struct {
	opts     Options
	accepted atomic.Int64
	refused  atomic.Int64
	changes  atomic.Int64
	mu       sync.Mutex // serialises Changed and guards last
	last     time.Time
}

// New returns a receiver.
func New(opts Options) *Receiver {
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Receiver{opts: opts}
}

// Stats reports what the receiver has answered so far.
func (rc *Receiver) Stats() Stats {
	rc.mu.Lock()
	last := rc.last
	rc.mu.Unlock()
	return Stats{Accepted: rc.accepted.Load(), Refused: rc.refused.Load(), Changes: rc.changes.Load(), Last: last}
}

func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	event, id := r.Header.Get("X-GitHub-Event"), r.Header.Get("X-GitHub-Delivery")
	refuse := func(code int, why string, err error) {
		rc.refused.Add(1)
		rc.opts.Logger.Warn("refused a webhook delivery", "why", why, "event", event, "delivery", id, "remote", r.RemoteAddr, "err", err)
		http.Error(w, why, code)
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		refuse(http.StatusMethodNotAllowed, "only POST", nil)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, rc.opts.MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			refuse(http.StatusRequestEntityTooLarge, "body too large", err)
			return
		}
		refuse(http.StatusBadRequest, "body unreadable", err)
		return
	}
	switch err := Verify(rc.opts.Secrets(), body, r.Header.Get("X-Hub-Signature-256")); {
	case errors.Is(err, ErrUnsigned):
		refuse(http.StatusUnauthorized, "unsigned: X-Hub-Signature-256 missing", err)
		return
	case err != nil:
		refuse(http.StatusForbidden, "bad signature", err)
		return
	}
	rc.accepted.Add(1)
	changes, err := Parse(event, body, rc.opts.Repo)
	if err != nil {
		// Signed by GitHub but unreadable: say so, and let the poll find
		// what it meant.
		rc.opts.Logger.Warn("a signed webhook delivery could not be read", "event", event, "delivery", id, "err", err)
	}
	rc.mu.Lock()
	rc.last = rc.opts.Now()
	if rc.opts.Delivered != nil {
		rc.opts.Delivered(event, id, r.Header.Get("X-GitHub-Hook-ID"))
	}
	for _, c := range changes {
		rc.changes.Add(1)
		if rc.opts.Changed != nil {
			rc.opts.Changed(c)
		}
	}
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}
