package retry

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// ErrRateLimit: a rate limit refused the request; errors.As finds the
// *RateLimitError with when to try again.
var ErrRateLimit = errors.New("rate limited")

// RateLimitError says a rate limit refused a request, or would have: the
// retrier holds requests back itself while a limit it hit is in force.
type RateLimitError struct {
	// Resource is the limited resource: "core", "graphql", or "" for a
	// secondary limit, which GitHub counts per user.
	Resource string
	// Reset is when the limit lifts; Wait is how long that is from when
	// the error was made.
	Reset     time.Time
	Wait      time.Duration
	Secondary bool
}

func (e *RateLimitError) Error() string {
	if e.Secondary {
		return fmt.Sprintf("GitHub secondary rate limit; retry after %s", e.Wait)
	}
	return fmt.Sprintf("GitHub rate limit for %s exhausted; retry after %s", e.Resource, e.Wait)
}

func (e *RateLimitError) Unwrap() error { return ErrRateLimit }

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

// Record keeps the rate-limit headers of an answer to a request that
// counted against resource (which the answer may name otherwise), so that
// requests a limit would refuse are held back.
func (r *Retrier) Record(resource string, h http.Header) { r.limits.record(resource, h) }

// Limits is the last rate-limit state GitHub reported, per resource.
func (r *Retrier) Limits() []RateLimit { return r.limits.all() }

// HeldUntil is when the secondary limit last answered lifts; zero: none.
func (r *Retrier) HeldUntil() time.Time {
	r.limits.mu.Lock()
	defer r.limits.mu.Unlock()
	return r.limits.secondaryUntil
}

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
