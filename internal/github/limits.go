package github

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RateLimit is the last primary rate-limit state GitHub reported for one
// resource ("core", "graphql", ...).
type RateLimit struct {
	Resource  string
	Limit     int
	Remaining int
	Used      int
	Reset     time.Time
}

// limiter remembers the rate limits GitHub reported, so that the retrier
// can hold back a request GitHub would refuse.
type limiter struct {
	now func() time.Time

	mu     sync.Mutex
	limits map[string]RateLimit
	// secondaryUntil holds back every request after a secondary limit:
	// GitHub counts them per user, not per resource.
	secondaryUntil time.Time
}

func newLimiter(now func() time.Time) *limiter {
	return &limiter{now: now, limits: map[string]RateLimit{}}
}

// record keeps the rate-limit headers of an answer; resource names the
// limit when the answer does not.
func (l *limiter) record(resource string, h http.Header) {
	remaining, err := strconv.Atoi(h.Get("X-RateLimit-Remaining"))
	if err != nil {
		return
	}
	rl := RateLimit{Resource: h.Get("X-RateLimit-Resource"), Remaining: remaining}
	if rl.Resource == "" {
		rl.Resource = resource
	}
	rl.Limit, _ = strconv.Atoi(h.Get("X-RateLimit-Limit"))
	rl.Used, _ = strconv.Atoi(h.Get("X-RateLimit-Used"))
	if reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
		rl.Reset = time.Unix(reset, 0)
	}
	l.mu.Lock()
	l.limits[rl.Resource] = rl
	l.mu.Unlock()
}

// holdAll holds back every request until the time given.
func (l *limiter) holdAll(until time.Time) {
	l.mu.Lock()
	l.secondaryUntil = until
	l.mu.Unlock()
}

// heldBack returns the limit that keeps a request for resource from being
// sent now, or nil.
func (l *limiter) heldBack(resource string) *RateLimitError {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Before(l.secondaryUntil) {
		return &RateLimitError{Reset: l.secondaryUntil, Wait: l.secondaryUntil.Sub(now), Secondary: true}
	}
	if rl, ok := l.limits[resource]; ok && rl.Remaining == 0 && now.Before(rl.Reset) {
		return &RateLimitError{Resource: resource, Reset: rl.Reset, Wait: rl.Reset.Sub(now) + time.Second}
	}
	return nil
}

// exhausted is the error for resource's primary limit, reported in an
// answer's body: lifting at the reset GitHub last reported, or in a
// minute if it reported none.
func (l *limiter) exhausted(resource string) *RateLimitError {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	rl := &RateLimitError{Resource: resource, Wait: time.Minute}
	if last, ok := l.limits[resource]; ok && !last.Reset.IsZero() {
		rl.Wait = max(last.Reset.Sub(now), 0) + time.Second
	}
	rl.Reset = now.Add(rl.Wait)
	return rl
}

func (l *limiter) all() []RateLimit {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]RateLimit, 0, len(l.limits))
	for _, rl := range l.limits {
		out = append(out, rl)
	}
	return out
}

// resourceOf is the rate-limit resource a request to path counts against,
// for answers that do not name it.
func resourceOf(path string) string {
	if strings.HasSuffix(path, "/graphql") {
		return "graphql"
	}
	return "core"
}
