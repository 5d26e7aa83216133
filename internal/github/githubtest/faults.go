package githubtest

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Fault is an error answer the server gives instead of handling a request.
type Fault struct {
	Status     int
	RetryAfter int // seconds; no Retry-After header when 0
	Message    string
	// HTML answers with an HTML body, as GitHub's load balancers do on 502.
	HTML bool
	// Hangup closes the connection without an answer: a network error.
	Hangup bool
	// Endpoint limits the fault to one endpoint; any when empty.
	Endpoint string
	// AfterHandling does the request's work first and then answers with
	// the fault: the timeout that hides a success, which is why a client
	// must not blindly retry a create.
	AfterHandling bool
}

// Common faults.
var (
	Fault500 = Fault{Status: http.StatusInternalServerError, Message: "Server Error"}
	Fault502 = Fault{Status: http.StatusBadGateway, HTML: true, Message: "We couldn't respond to your request in time."}
	// FaultSecondary is GitHub's secondary rate limit answer.
	FaultSecondary = Fault{Status: http.StatusForbidden, RetryAfter: 1,
		Message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}
	Fault429 = Fault{Status: http.StatusTooManyRequests, RetryAfter: 1,
		Message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}
	FaultHangup = Fault{Hangup: true}
)

// On returns the fault limited to one endpoint.
func (f Fault) On(endpoint string) Fault { f.Endpoint = endpoint; return f }

type faultRule struct {
	Fault
	left int     // for FailNext
	rate float64 // for FailRate
}

// FailNext answers the next n matching requests with f.
func (s *Server) FailNext(n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &faultRule{Fault: f, left: n})
}

// FailRate answers a fraction (0..1) of matching requests with f, chosen
// by the server's seeded random source (see WithSeed).
func (s *Server) FailRate(rate float64, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &faultRule{Fault: f, rate: rate})
}

// ClearFaults removes every injected fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// FaultsSent is how many injected faults have been answered.
func (s *Server) FaultsSent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faultsSent
}

func (s *Server) nextFault(endpoint string) *Fault {
	for i, f := range s.faults {
		if f.Endpoint != "" && f.Endpoint != endpoint {
			continue
		}
		if f.left > 0 {
			f.left--
			if f.left == 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
			return &f.Fault
		}
		if f.rate > 0 && s.rng.Float64() < f.rate {
			return &f.Fault
		}
	}
	return nil
}

func writeFault(w http.ResponseWriter, f Fault) {
	if f.Hangup {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
		}
		return
	}
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
	}
	if f.HTML {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(f.Status)
		fmt.Fprintf(w, "<html><body><h1>%d</h1><p>%s</p></body></html>", f.Status, f.Message)
		return
	}
	writeJSON(w, f.Status, errReply(f.Status, f.Message).body)
}

type rateLimit struct {
	limit, remaining, used int
	reset                  time.Time
}

// SetRateLimit sets the primary rate limit of a resource ("core" or
// "graphql"). With remaining 0 requests get GitHub's limit-exceeded answer
// until reset.
func (s *Server) SetRateLimit(resource string, limit, remaining int, reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits[resource] = &rateLimit{limit: limit, remaining: remaining, used: limit - remaining, reset: reset}
}

func (s *Server) limit(resource string) *rateLimit {
	rl := s.limits[resource]
	now := time.Now()
	if rl == nil || !now.Before(rl.reset) {
		limit := 5000
		if rl != nil {
			limit = rl.limit
		}
		rl = &rateLimit{limit: limit, remaining: limit, reset: now.Add(time.Hour).Truncate(time.Second)}
		s.limits[resource] = rl
	}
	return rl
}

func setRateHeaders(h http.Header, resource string, rl *rateLimit) {
	h.Set("X-RateLimit-Limit", strconv.Itoa(rl.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(rl.remaining, 0)))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(rl.reset.Unix(), 10))
	h.Set("X-RateLimit-Used", strconv.Itoa(rl.used))
	h.Set("X-RateLimit-Resource", resource)
}

func (s *Server) writeExhausted(w http.ResponseWriter, resource string, rl *rateLimit) {
	msg := "API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID."
	if resource == "graphql" {
		// GraphQL reports an exhausted primary limit in the body of a 200.
		writeJSON(w, http.StatusOK, map[string]any{
			"errors": []map[string]any{{"type": "RATE_LIMITED", "message": msg}},
		})
		return
	}
	writeJSON(w, http.StatusForbidden, errReply(http.StatusForbidden, msg).body)
}
