// Package ratelimit keeps the forge's rate limit that holds the
// controller's requests back, as the controller last saw it, for
// `agenttree status` and the board, which do not ask the forge
// (docs/ARCHITECTURE.md §8, host/ratelimit.json).
package ratelimit

import (
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/statedir"
)

// reporter is a forge that knows, from the answers it had, whether its
// rate limits hold requests back now (the GitHub forge).
type reporter interface {
	LimitedUntil(now time.Time) (until time.Time, resource string)
}

// Limit is the forge's rate limit that held its requests back when the
// controller last looked.
type Limit struct {
	Until    time.Time `json:"until"`
	Resource string    `json:"resource"`
}

// path is where the controller keeps the forge's rate limit.
func path(stateDir string) string { return statedir.Layout{Root: stateDir}.RateLimit() }

// Read is the forge's rate limit the controller recorded, when it still
// holds at now.
func Read(stateDir string, now time.Time) (Limit, bool) {
	data, err := os.ReadFile(path(stateDir))
	if err != nil {
		return Limit{}, false
	}
	var rl Limit
	if json.Unmarshal(data, &rl) != nil || !now.Before(rl.Until) {
		return Limit{}, false
	}
	return rl, true
}

// Recorder writes the record, once per change.
type Recorder struct {
	mu   sync.Mutex
	last Limit
	seen bool
}

// Record writes f's rate limit after a tick when one holds, and removes
// the record when none does; written only when it changed.
func (r *Recorder) Record(f forge.Forge, stateDir string, now time.Time, log *slog.Logger) {
	var rl Limit
	if lr, ok := forge.As[reporter](f); ok {
		rl.Until, rl.Resource = lr.LimitedUntil(now)
	}
	r.mu.Lock()
	// The first look writes (or removes) whatever an earlier process left.
	same := r.seen && r.last == rl
	r.last, r.seen = rl, true
	r.mu.Unlock()
	if same {
		return
	}
	file := path(stateDir)
	if rl.Until.IsZero() {
		if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			log.Warn("removing the forge's rate-limit record", "file", file, "err", err)
		}
		return
	}
	log.Warn("the forge's rate limit holds requests back", "until", rl.Until.Format(time.RFC3339), "resource", rl.Resource)
	data, _ := json.Marshal(rl)
	if err := atomicfile.Write(file, data, 0o644); err != nil {
		log.Warn("recording the forge's rate limit for status", "file", file, "err", err)
	}
}
