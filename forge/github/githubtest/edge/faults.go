package edge

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"time"
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
	// Hold keeps the request unanswered for this long, or until the
	// client gives up on it if that is sooner, then closes the
	// connection: a GitHub that does not answer within the client's
	// timeout. The edge answers other requests meanwhile.
	Hold time.Duration
	// Name is what FaultCounts counts the fault under; unnamed, its
	// status ("hang-up" or "hold" without one).
	Name string
}

// Common faults.
var (
	Fault500 = Fault{Name: "500", Status: http.StatusInternalServerError, Message: "Server Error"}
	Fault502 = Fault{Name: "502", Status: http.StatusBadGateway, HTML: true, Message: "We couldn't respond to your request in time."}
	// FaultSecondary is GitHub's secondary rate limit answer.
	FaultSecondary = Fault{Name: "secondary rate limit", Status: http.StatusForbidden, RetryAfter: 1,
		Message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}
	Fault429 = Fault{Name: "429", Status: http.StatusTooManyRequests, RetryAfter: 1,
		Message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}
	FaultHangup = Fault{Name: "hang-up", Hangup: true}
	// FaultTimeout is a request GitHub holds without answering until the
	// client's timeout gives it up (a minute at most, then the
	// connection is closed).
	FaultTimeout = Fault{Name: "timeout", Hold: time.Minute}
)

// name is what FaultCounts counts f under.
func (f Fault) name() string {
	switch {
	case f.Name != "":
		return f.Name
	case f.Hangup:
		return "hang-up"
	case f.Hold > 0 && f.Status == 0:
		return "hold"
	}
	return strconv.Itoa(f.Status)
}

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
	n := 0
	for _, c := range e.faultsOf {
		n += c
	}
	return n
}

// FaultCounts is how many injected faults have been answered, by name
// (Fault.Name).
func (e *Edge) FaultCounts() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.faultsOf)
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

// sendFault answers with f, or returns how long to hold the request
// first (Fault.Hold: see hold).
func (e *Edge) sendFault(w http.ResponseWriter, f *Fault) time.Duration {
	e.faultsOf[f.name()]++
	switch {
	case f.Hold > 0:
		return f.Hold
	case f.Hangup:
		hangUp(w)
		return 0
	}
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
	}
	if f.HTML {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(f.Status)
		fmt.Fprintf(w, "<html><body><h1>%d</h1><p>%s</p></body></html>", f.Status, f.Message)
		return 0
	}
	WriteError(w, f.Status, f.Message)
	return 0
}

// hold keeps r unanswered for d, or until its client gives up, then
// closes the connection.
func (e *Edge) hold(w http.ResponseWriter, r *http.Request, d time.Duration) {
	// Read whole, the request's body lets the server see the client go
	// (net/http watches the connection only then).
	_, _ = io.Copy(io.Discard, r.Body)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
	hangUp(w)
}

// hangUp closes the connection without an answer: a network error.
func hangUp(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
	}
}
