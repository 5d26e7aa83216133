// Package githubtest is a fake GitHub API server for tests: the REST and
// GraphQL subset internal/github uses, with scriptable repository state,
// injectable faults, rate-limit headers, ETags and request counts; and
// what a GitHub client's tests need beside it (RunIsolated, Sleeper).
// Nothing in it talks to the internet.
package githubtest

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// webURL is the base of html_url fields.
const webURL = "https://github.com"

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

// Option configures New.
type Option func(*Server)

// WithSeed seeds the random faults of FailRate, so a run can be repeated.
func WithSeed(seed uint64) Option {
	return func(s *Server) { s.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }
}

// WithClock sets the clock behind every timestamp the server makes (check
// runs, statuses, PRs, comments); default time.Now. It is read with the
// server's lock held, so it must not call the server.
func WithClock(now func() time.Time) Option { return func(s *Server) { s.clock = now } }

// Server is the fake. The embedded *Repo is the default repository, so
// srv.AddPR(...) scripts it directly.
type Server struct {
	*Repo
	// URL is the server's base URL (http://127.0.0.1:port). It answers
	// both github.com paths (/repos/..., /graphql) and GitHub Enterprise
	// paths (/api/v3/repos/..., /api/graphql).
	URL   string
	Token string

	ts    *httptest.Server
	clock func() time.Time

	mu          sync.Mutex
	repos       map[string]*Repo
	id          int64
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
		Token:       "test-token",
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
	s.Repo = s.addRepo("octo", "app", "main")
	s.ts = httptest.NewServer(s.routes())
	s.URL = s.ts.URL
	tb.Cleanup(s.ts.Close)
	return s
}

// addRepo adds a repository and returns it.
func (s *Server) addRepo(owner, name, defaultBranch string) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &Repo{s: s, Owner: owner, Name: name, DefaultBranch: defaultBranch,
		prs: map[int]*prState{}, nextNumber: 1,
		runsBySHA: map[string][]*CheckRun{}, statusesBySHA: map[string][]*Status{}, refs: map[string]string{defaultBranch: "0000000000000000000000000000000000000000"}}
	s.repos[strings.ToLower(owner+"/"+name)] = r
	return r
}

// Requests is how many requests reached an endpoint (see the Endpoint
// constants), faults and 304s included.
func (s *Server) Requests(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[endpoint]
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
