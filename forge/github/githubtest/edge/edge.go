// Package edge is what the fake GitHub does around every endpoint, the way
// GitHub's API front does: it holds each request for the network's
// latency, counts requests, checks the token, keeps the primary rate
// limits and their headers, answers with injected faults, and answers a
// repeated GET with an ETag and a 304. It wraps an endpoint's http.Handler
// and knows nothing of what the endpoint does.
package edge

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Resource is the rate limit a request counts against.
type Resource string

// GitHub's resources: REST endpoints count against core, GraphQL against
// its own limit.
const (
	Core    Resource = "core"
	GraphQL Resource = "graphql"
)

// Route says how the edge treats one endpoint.
type Route struct {
	// Endpoint names the route in Requests, NotModified and Fault.Endpoint:
	// method and pattern, "GET /repos/{owner}/{repo}".
	Endpoint string
	// Resource is the rate limit the route counts against; Core when empty.
	Resource Resource
	// Public routes need no token and have no rate limit and no ETag, like
	// the signed URLs GitHub redirects log downloads to.
	Public bool
	// Kind, when set, names what a request to the route asks for, so that
	// requests are counted by kind as well as by endpoint (GraphQL's one
	// endpoint answers many kinds of query). It must leave r's body
	// readable.
	Kind func(r *http.Request) string
}

// Option configures New.
type Option func(*Edge)

// WithSeed seeds the random faults of FailRate, so a run can be repeated.
func WithSeed(seed uint64) Option {
	return func(e *Edge) { e.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }
}

// Edge holds the state every endpoint shares. Its methods are safe to
// call while it answers requests; it answers one request at a time, so a
// test sees each request's effects whole.
type Edge struct {
	// Token is the one token requests must carry.
	Token string

	// latency is how long each request is held before it is answered, in
	// nanoseconds; atomic, so that waiting requests do not queue on mu.
	latency atomic.Int64

	mu          sync.Mutex
	rng         *rand.Rand
	faults      []*faultRule
	faultsOf    map[string]int
	limits      map[Resource]*rateLimit
	counts      map[countKey]int
	notModified map[countKey]int
}

// New returns an edge that accepts token.
func New(token string, opts ...Option) *Edge {
	e := &Edge{
		Token:       token,
		rng:         rand.New(rand.NewPCG(1, 2)),
		limits:      map[Resource]*rateLimit{},
		counts:      map[countKey]int{},
		faultsOf:    map[string]int{},
		notModified: map[countKey]int{},
	}
	for _, o := range opts {
		o(e)
	}
	return e
}

// Wrap wraps an endpoint: the request is delayed, counted, authenticated,
// rate-limited and perhaps faulted before next sees it, and next's answer
// gets an ETag, or becomes a 304, on the way out.
func (e *Edge) Wrap(rt Route, next http.Handler) http.Handler {
	if rt.Resource == "" {
		rt.Resource = Core
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !e.delay(r) {
			return
		}
		if hold := e.serve(w, r, rt, next); hold > 0 {
			e.hold(w, r, hold)
		}
	})
}

// serve is Wrap's work on r, one request at a time. It returns how long
// to hold r unanswered when its fault is a hold (Fault.Hold): the hold
// comes after the lock is let go, so the edge answers others meanwhile,
// as GitHub does while one request hangs.
func (e *Edge) serve(w http.ResponseWriter, r *http.Request, rt Route, next http.Handler) time.Duration {
	key := countKey{endpoint: rt.Endpoint}
	if rt.Kind != nil {
		key.kind = rt.Kind(r)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.counts[key]++
	rl, ok := e.admit(w, r, rt)
	if !ok {
		return 0
	}
	fault := e.nextFault(rt.Endpoint)
	if fault != nil && !fault.AfterHandling {
		return e.sendFault(w, fault)
	}
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	if fault != nil {
		return e.sendFault(w, fault)
	}
	e.send(w, r, rt, key, rec, rl)
	return 0
}

// admit checks the token and the rate limit of a route that has them, and
// answers the request itself when it may not go on.
func (e *Edge) admit(w http.ResponseWriter, r *http.Request, rt Route) (*rateLimit, bool) {
	if rt.Public {
		return nil, true
	}
	if !e.authorized(r) {
		WriteError(w, http.StatusUnauthorized, "Bad credentials")
		return nil, false
	}
	rl := e.limit(rt.Resource)
	rl.setHeaders(w.Header(), rt.Resource)
	if rl.remaining <= 0 {
		writeExhausted(w, rt.Resource)
		return nil, false
	}
	return rl, true
}

func (e *Edge) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	for _, prefix := range []string{"token ", "Bearer ", "bearer "} {
		if tok, ok := strings.CutPrefix(h, prefix); ok {
			return tok == e.Token && tok != ""
		}
	}
	return false
}

// ErrorBody is the document GitHub's REST API answers an error with.
func ErrorBody(status int, msg string) map[string]any {
	return map[string]any{
		"message":           msg,
		"documentation_url": "https://docs.github.com/rest",
		"status":            strconv.Itoa(status),
	}
}

// WriteError answers with status and GitHub's error document.
func WriteError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, ErrorBody(status, msg))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
