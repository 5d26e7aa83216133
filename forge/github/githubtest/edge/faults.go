package edge

import (
	"fmt"
	"net/http"
	"strconv"
)

// Fault is an error answer the edge gives instead of the endpoint's.
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
func (e *Edge) FailNext(n int, f Fault) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = append(e.faults, &faultRule{Fault: f, left: n})
}

// FailRate answers a fraction (0..1) of matching requests with f, chosen
// by the edge's seeded random source (see WithSeed).
func (e *Edge) FailRate(rate float64, f Fault) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = append(e.faults, &faultRule{Fault: f, rate: rate})
}

// ClearFaults removes every injected fault.
func (e *Edge) ClearFaults() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = nil
}

// FaultsSent is how many injected faults have been answered.
func (e *Edge) FaultsSent() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.faultsSent
}

// nextFault is the fault a request to endpoint gets, if any: the first
// rule that matches, in the order they were added.
func (e *Edge) nextFault(endpoint string) *Fault {
	for i, f := range e.faults {
		if f.Endpoint != "" && f.Endpoint != endpoint {
			continue
		}
		if f.left > 0 {
			f.left--
			if f.left == 0 {
				e.faults = append(e.faults[:i:i], e.faults[i+1:]...)
			}
			return &f.Fault
		}
		if f.rate > 0 && e.rng.Float64() < f.rate {
			return &f.Fault
		}
	}
	return nil
}

func (e *Edge) sendFault(w http.ResponseWriter, f *Fault) {
	e.faultsSent++
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
	WriteError(w, f.Status, f.Message)
}
