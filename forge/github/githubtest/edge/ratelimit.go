package edge

import (
	"net/http"
	"strconv"
	"time"
)

type rateLimit struct {
	limit, remaining, used int
	reset                  time.Time
}

// SetRateLimit sets the primary rate limit of a resource. With remaining
// 0 requests get GitHub's limit-exceeded answer until reset.
func (e *Edge) SetRateLimit(resource Resource, limit, remaining int, reset time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.limits[resource] = &rateLimit{limit: limit, remaining: remaining, used: limit - remaining, reset: reset}
}

// limit is the resource's current window: a fresh one, as large as the
// last, once the last has reset.
func (e *Edge) limit(resource Resource) *rateLimit {
	rl := e.limits[resource]
	now := time.Now()
	if rl == nil || !now.Before(rl.reset) {
		limit := 5000
		if rl != nil {
			limit = rl.limit
		}
		rl = &rateLimit{limit: limit, remaining: limit, reset: now.Add(time.Hour).Truncate(time.Second)}
		e.limits[resource] = rl
	}
	return rl
}

func (rl *rateLimit) charge() {
	rl.remaining--
	rl.used++
}

func (rl *rateLimit) setHeaders(h http.Header, resource Resource) {
	h.Set("X-RateLimit-Limit", strconv.Itoa(rl.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(rl.remaining, 0)))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(rl.reset.Unix(), 10))
	h.Set("X-RateLimit-Used", strconv.Itoa(rl.used))
	h.Set("X-RateLimit-Resource", string(resource))
}

func writeExhausted(w http.ResponseWriter, resource Resource) {
	msg := "API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID."
	if resource == GraphQL {
		// GraphQL reports an exhausted primary limit in the body of a 200.
		writeJSON(w, http.StatusOK, map[string]any{
			"errors": []map[string]any{{"type": "RATE_LIMITED", "message": msg}},
		})
		return
	}
	WriteError(w, http.StatusForbidden, msg)
}
