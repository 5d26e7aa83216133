package controller

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/statedir"
)

// limitReporter is a forge that knows, from the answers it had, whether
// its rate limits hold requests back now (the GitHub forge).
type limitReporter interface {
	LimitedUntil(now time.Time) (until time.Time, resource string)
}

// RateLimit is the forge's rate limit that held its requests back when
// the controller last looked: `agenttree status` shows it without asking
// the forge.
type RateLimit struct {
	Until    time.Time `json:"until"`
	Resource string    `json:"resource"`
}

// rateLimitPath is where the controller keeps the forge's rate limit.
func rateLimitPath(stateDir string) string {
	return statedir.Layout{Root: stateDir}.RateLimit()
}

// RateLimited is the forge's rate limit the controller recorded, when it
// still holds at now.
func RateLimited(stateDir string, now time.Time) (RateLimit, bool) {
	data, err := os.ReadFile(rateLimitPath(stateDir))
	if err != nil {
		return RateLimit{}, false
	}
	var rl RateLimit
	if json.Unmarshal(data, &rl) != nil || !now.Before(rl.Until) {
		return RateLimit{}, false
	}
	return rl, true
}

// recordLimit writes the forge's rate limit after a tick when one holds,
// and removes the record when none does; written only when it changed.
func (c *Controller) recordLimit(e *engine.Engine, now time.Time) {
	var rl RateLimit
	if lr, ok := forge.As[limitReporter](e.Forge); ok {
		rl.Until, rl.Resource = lr.LimitedUntil(now)
	}
	c.mu.Lock()
	// The first look writes (or removes) whatever an earlier process left.
	same := c.limitSeen && c.limit == rl
	c.limit, c.limitSeen = rl, true
	c.mu.Unlock()
	if same {
		return
	}
	path := rateLimitPath(e.Store.Root())
	if rl.Until.IsZero() {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.log().Warn("removing the forge's rate-limit record", "file", path, "err", err)
		}
		return
	}
	c.log().Warn("the forge's rate limit holds requests back", "until", rl.Until.Format(time.RFC3339), "resource", rl.Resource)
	data, _ := json.Marshal(rl)
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		c.log().Warn("recording the forge's rate limit for status", "file", path, "err", err)
	}
}
