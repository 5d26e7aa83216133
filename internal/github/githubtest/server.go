// Package githubtest is a fake GitHub API server for tests: the REST and
// GraphQL subset internal/github uses, with scriptable repository state,
// injectable faults and latency, rate-limit headers, ETags and request
// counts. Nothing in it talks to the internet.
package githubtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Endpoints, named as Requests counts them: method and route template.
const (
	EndpointRepo          = "GET /repos/{owner}/{repo}"
	EndpointListPulls     = "GET /repos/{owner}/{repo}/pulls"
	EndpointCreatePull    = "POST /repos/{owner}/{repo}/pulls"
	EndpointGetPull       = "GET /repos/{owner}/{repo}/pulls/{pull_number}"
	EndpointUpdatePull    = "PATCH /repos/{owner}/{repo}/pulls/{pull_number}"
	EndpointMergePull     = "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge"
	EndpointCheckRuns     = "GET /repos/{owner}/{repo}/commits/{ref}/check-runs"
	EndpointStatus        = "GET /repos/{owner}/{repo}/commits/{ref}/status"
	EndpointRerequest     = "POST /repos/{owner}/{repo}/check-runs/{check_run_id}/rerequest"
	EndpointRerunJob      = "POST /repos/{owner}/{repo}/actions/jobs/{job_id}/rerun"
	EndpointJobLogs       = "GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs"
	EndpointAddLabels     = "POST /repos/{owner}/{repo}/issues/{issue_number}/labels"
	EndpointCreateComment = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
	EndpointListComments  = "GET /repos/{owner}/{repo}/issues/{issue_number}/comments"
	EndpointDeleteRef     = "DELETE /repos/{owner}/{repo}/git/refs/{ref...}"
	EndpointGraphQL       = "POST /graphql"
	EndpointLogBlob       = "GET /_blobs/jobs/{job_id}/logs"
)

// Fault is an error answer the server gives instead of handling a request.
type Fault struct {
	Status     int
	RetryAfter int // seconds; no Retry-After header when 0
	Message    string
	// HTML answers with an HTML body, as GitHub's load balancers do on 502.
	HTML bool
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
)

// On returns the fault limited to one endpoint.
func (f Fault) On(endpoint string) Fault { f.Endpoint = endpoint; return f }

type faultRule struct {
	Fault
	left int     // for FailNext
	rate float64 // for FailRate
}

type rateLimit struct {
	limit, remaining, used int
	reset                  time.Time
}

// Option configures New.
type Option func(*Server)

// WithToken sets the token requests must carry (default "test-token").
func WithToken(token string) Option { return func(s *Server) { s.Token = token } }

// WithRepo sets the default repository (default "octo/app" on main).
func WithRepo(owner, name, defaultBranch string) Option {
	return func(s *Server) { s.defOwner, s.defName, s.defBranch = owner, name, defaultBranch }
}

// WithSeed seeds the random faults of FailRate, so a run can be repeated.
func WithSeed(seed uint64) Option {
	return func(s *Server) { s.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }
}

// WithClock sets the clock behind every timestamp the server makes (check
// runs, statuses, PRs, comments); default time.Now. It is read with the
// server's lock held, so it must not call the server.
func WithClock(now func() time.Time) Option { return func(s *Server) { s.clock = now } }

// WithWebURL sets the base of html_url fields (default https://github.com).
func WithWebURL(u string) Option { return func(s *Server) { s.web = strings.TrimSuffix(u, "/") } }

// Server is the fake. The embedded *Repo is the default repository, so
// srv.AddPR(...) scripts it directly.
type Server struct {
	*Repo
	// URL is the server's base URL (http://127.0.0.1:port). It answers
	// both github.com paths (/repos/..., /graphql) and GitHub Enterprise
	// paths (/api/v3/repos/..., /api/graphql).
	URL   string
	Token string

	ts                           *httptest.Server
	defOwner, defName, defBranch string
	web                          string
	clock                        func() time.Time

	mu          sync.Mutex
	repos       map[string]*Repo
	id          int64
	latency     time.Duration
	faults      []*faultRule
	rng         *rand.Rand
	limits      map[string]*rateLimit
	counts      map[string]int
	notModified map[string]int
	faultsSent  int
}

// New starts a fake server, closed when the test ends.
func New(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s := &Server{
		Token: "test-token", defOwner: "octo", defName: "app", defBranch: "main",
		web:         "https://github.com",
		repos:       map[string]*Repo{},
		id:          1000,
		rng:         rand.New(rand.NewPCG(1, 2)),
		limits:      map[string]*rateLimit{},
		counts:      map[string]int{},
		notModified: map[string]int{},
	}
	for _, o := range opts {
		o(s)
	}
	s.Repo = s.AddRepo(s.defOwner+"/"+s.defName, s.defBranch)
	s.ts = httptest.NewServer(s.routes())
	s.URL = s.ts.URL
	tb.Cleanup(s.ts.Close)
	return s
}

// Close stops the server (New already arranges it at test end).
func (s *Server) Close() { s.ts.Close() }

// AddRepo adds a repository ("owner/name") and returns it.
func (s *Server) AddRepo(fullName, defaultBranch string) *Repo {
	owner, name, ok := strings.Cut(fullName, "/")
	if !ok {
		panic("githubtest: repository must be owner/name: " + fullName)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &Repo{s: s, Owner: owner, Name: name, DefaultBranch: defaultBranch,
		prs: map[int]*prState{}, nextNumber: 1,
		runsBySHA: map[string][]*CheckRun{}, statusesBySHA: map[string][]*Status{}, refs: map[string]string{defaultBranch: "0000000000000000000000000000000000000000"}}
	s.repos[strings.ToLower(fullName)] = r
	return r
}

// RepoNamed returns a repository added by AddRepo (or the default one).
func (s *Server) RepoNamed(fullName string) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repos[strings.ToLower(fullName)]
}

// SetLatency delays every answer by d.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
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

// SetRateLimit sets the primary rate limit of a resource ("core" or
// "graphql"). With remaining 0 requests get GitHub's limit-exceeded answer
// until reset.
func (s *Server) SetRateLimit(resource string, limit, remaining int, reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits[resource] = &rateLimit{limit: limit, remaining: remaining, used: limit - remaining, reset: reset}
}

// Requests is how many requests reached an endpoint (see the Endpoint
// constants), faults and 304s included.
func (s *Server) Requests(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[endpoint]
}

// RequestCounts returns the count of requests per endpoint.
func (s *Server) RequestCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.counts))
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}

// TotalRequests is how many requests reached any endpoint.
func (s *Server) TotalRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.counts {
		n += v
	}
	return n
}

// NotModified is how many 304 answers the server gave; with an endpoint,
// how many that endpoint gave.
func (s *Server) NotModified(endpoint ...string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(endpoint) == 0 {
		n := 0
		for _, v := range s.notModified {
			n += v
		}
		return n
	}
	n := 0
	for _, e := range endpoint {
		n += s.notModified[e]
	}
	return n
}

// ResetCounts zeroes the request and 304 counts.
func (s *Server) ResetCounts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts = map[string]int{}
	s.notModified = map[string]int{}
}

func (s *Server) now() time.Time {
	now := time.Now
	if s.clock != nil {
		now = s.clock
	}
	return now().UTC().Truncate(time.Second)
}

func (s *Server) nextID() int64 { s.id++; return s.id }

func (s *Server) fakeSHA() string {
	sum := sha256.Sum256([]byte(strconv.FormatInt(s.nextID(), 10)))
	return hex.EncodeToString(sum[:20])
}

// reply is what a handler answers; serve turns it into HTTP.
type reply struct {
	status      int
	body        any    // JSON-encoded unless raw is set
	raw         []byte // sent as is with contentType
	contentType string
	location    string
}

func jsonReply(status int, body any) reply { return reply{status: status, body: body} }

func errReply(status int, msg string) reply {
	return reply{status: status, body: map[string]any{
		"message":           msg,
		"documentation_url": "https://docs.github.com/rest",
		"status":            strconv.Itoa(status),
	}}
}

type handler func(r *http.Request, repo *Repo) reply

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	handle := func(endpoint string, h handler, opts ...routeOpt) {
		mux.Handle(endpoint, s.wrap(endpoint, h, opts...))
	}
	handle(EndpointRepo, s.getRepo)
	handle(EndpointListPulls, s.listPulls)
	handle(EndpointCreatePull, s.createPull)
	handle(EndpointGetPull, s.getPull)
	handle(EndpointUpdatePull, s.updatePull)
	handle(EndpointMergePull, s.mergePull)
	handle(EndpointCheckRuns, s.listCheckRuns)
	handle(EndpointStatus, s.combinedStatus)
	handle(EndpointRerequest, s.rerequestCheckRun)
	handle(EndpointRerunJob, s.rerunJob)
	handle(EndpointJobLogs, s.jobLogs)
	handle(EndpointAddLabels, s.addLabels)
	handle(EndpointCreateComment, s.createComment)
	handle(EndpointListComments, s.listComments)
	handle(EndpointDeleteRef, s.deleteRef)
	handle(EndpointGraphQL, s.graphql, noRepo, graphqlResource)
	// Log downloads redirect here, like GitHub's signed blob URLs: no
	// token needed and no rate limit.
	handle(EndpointLogBlob, s.logBlob, noRepo, noAuth)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, errReply(http.StatusNotFound, "Not Found").body)
	})
	// GitHub Enterprise serves the API under /api/v3 and /api/graphql.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/graphql":
			r.URL.Path = "/graphql"
		case strings.HasPrefix(r.URL.Path, "/api/v3/"):
			r.URL.Path = strings.TrimPrefix(r.URL.Path, "/api/v3")
		}
		r.URL.RawPath = ""
		mux.ServeHTTP(w, r)
	})
}

type routeConf struct{ noRepo, noAuth, graphql bool }
type routeOpt func(*routeConf)

func noRepo(c *routeConf)          { c.noRepo = true }
func noAuth(c *routeConf)          { c.noAuth = true }
func graphqlResource(c *routeConf) { c.graphql = true }

// wrap does what every GitHub endpoint does around its own work: count,
// delay, authenticate, rate-limit, inject faults, and answer GETs with
// ETags and 304s.
func (s *Server) wrap(endpoint string, h handler, opts ...routeOpt) http.Handler {
	var conf routeConf
	for _, o := range opts {
		o(&conf)
	}
	resource := "core"
	if conf.graphql {
		resource = "graphql"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.counts[endpoint]++
		delay := s.latency
		s.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}

		s.mu.Lock()
		defer s.mu.Unlock()
		if !conf.noAuth && !s.authorized(r) {
			writeJSON(w, http.StatusUnauthorized, errReply(http.StatusUnauthorized, "Bad credentials").body)
			return
		}
		var rl *rateLimit
		if !conf.noAuth {
			rl = s.limit(resource)
			setRateHeaders(w.Header(), resource, rl)
			if rl.remaining <= 0 {
				s.writeExhausted(w, resource, rl)
				return
			}
		}
		fault := s.nextFault(endpoint)
		if fault != nil && !fault.AfterHandling {
			s.faultsSent++
			writeFault(w, *fault)
			return
		}

		var repo *Repo
		if !conf.noRepo {
			repo = s.repos[strings.ToLower(r.PathValue("owner")+"/"+r.PathValue("repo"))]
			if repo == nil {
				writeJSON(w, http.StatusNotFound, errReply(http.StatusNotFound, "Not Found").body)
				return
			}
		}
		rep := h(r, repo)
		if fault != nil {
			s.faultsSent++
			writeFault(w, *fault)
			return
		}

		if rep.location != "" {
			w.Header().Set("Location", rep.location)
			w.WriteHeader(rep.status)
			return
		}
		body := rep.raw
		ctype := rep.contentType
		if body == nil && rep.body != nil {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(rep.body)
			body, ctype = buf.Bytes(), "application/json; charset=utf-8"
		}
		if r.Method == http.MethodGet && rep.status == http.StatusOK && !conf.noAuth {
			sum := sha256.Sum256(body)
			etag := `W/"` + hex.EncodeToString(sum[:16]) + `"`
			w.Header().Set("ETag", etag)
			w.Header().Set("Cache-Control", "private, max-age=60, s-maxage=60")
			if etagMatch(r.Header.Get("If-None-Match"), etag) {
				// A 304 to an authorized request does not count against
				// the primary rate limit on GitHub.
				s.notModified[endpoint]++
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		if rl != nil {
			rl.remaining--
			rl.used++
			setRateHeaders(w.Header(), resource, rl)
		}
		if ctype != "" {
			w.Header().Set("Content-Type", ctype)
		}
		if rep.status == http.StatusNoContent {
			w.WriteHeader(rep.status)
			return
		}
		w.WriteHeader(rep.status)
		_, _ = w.Write(body)
	})
}

func (s *Server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	for _, prefix := range []string{"token ", "Bearer ", "bearer "} {
		if tok, ok := strings.CutPrefix(h, prefix); ok {
			return tok == s.Token && tok != ""
		}
	}
	return false
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

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func etagMatch(ifNoneMatch, etag string) bool {
	if ifNoneMatch == "" {
		return false
	}
	weak := func(s string) string { return strings.TrimPrefix(strings.TrimSpace(s), "W/") }
	for _, c := range strings.Split(ifNoneMatch, ",") {
		if strings.TrimSpace(c) == "*" || weak(c) == weak(etag) {
			return true
		}
	}
	return false
}
