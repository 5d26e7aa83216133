package edge

import (
	"net/http"
	"time"
)

// WithLatency holds every request for d before the edge handles it, as a
// network and GitHub's front would (see SetLatency).
func WithLatency(d time.Duration) Option {
	return func(e *Edge) { e.SetLatency(d) }
}

// SetLatency holds every request from now on for d before the edge
// handles it; 0 answers at once. Requests wait concurrently, so many
// clients, or one client's concurrent requests, see the latency
// overlapped as they would on a network.
func (e *Edge) SetLatency(d time.Duration) { e.latency.Store(int64(max(d, 0))) }

// delay holds r for the latency; false when the client gave up meanwhile,
// so that the request is neither counted nor answered.
func (e *Edge) delay(r *http.Request) bool {
	d := time.Duration(e.latency.Load())
	if d == 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}
