package edge

import (
	"cmp"
	"slices"
)

// countKey is what a request is counted under: its endpoint, and its kind
// when its Route names one.
type countKey struct{ endpoint, kind string }

// Count is how many requests of one endpoint and kind reached the edge.
type Count struct {
	Endpoint string
	// Kind is what Route.Kind named the requests; "" for a route without.
	Kind string
	// Requests counts them all, faults, refusals and 304s included.
	Requests int
	// NotModified is how many of them were answered 304.
	NotModified int
}

// Requests is how many requests reached an endpoint, of every kind,
// faults and 304s included.
func (e *Edge) Requests(endpoint string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return sumOf(e.counts, func(k countKey) bool { return k.endpoint == endpoint })
}

// RequestsOfKind is how many requests of one kind reached an endpoint
// (see Route.Kind).
func (e *Edge) RequestsOfKind(endpoint, kind string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.counts[countKey{endpoint, kind}]
}

// TotalRequests is how many requests reached any endpoint.
func (e *Edge) TotalRequests() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return sumOf(e.counts, func(countKey) bool { return true })
}

// NotModified is how many 304 answers the edge gave; with endpoints, how
// many those endpoints gave.
func (e *Edge) NotModified(endpoint ...string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return sumOf(e.notModified, func(k countKey) bool { return len(endpoint) == 0 || slices.Contains(endpoint, k.endpoint) })
}

// Counts is every endpoint and kind that had requests, with their counts,
// in endpoint and kind order: what a benchmark prints.
func (e *Edge) Counts() []Count {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Count, 0, len(e.counts))
	for k, n := range e.counts {
		out = append(out, Count{Endpoint: k.endpoint, Kind: k.kind, Requests: n, NotModified: e.notModified[k]})
	}
	slices.SortFunc(out, func(a, b Count) int { return cmp.Or(cmp.Compare(a.Endpoint, b.Endpoint), cmp.Compare(a.Kind, b.Kind)) })
	return out
}

// ResetCounts zeroes the request and 304 counts.
func (e *Edge) ResetCounts() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.counts = map[countKey]int{}
	e.notModified = map[countKey]int{}
}

func sumOf(m map[countKey]int, match func(countKey) bool) int {
	n := 0
	for k, v := range m {
		if match(k) {
			n += v
		}
	}
	return n
}
