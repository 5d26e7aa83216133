// Package githubtest is a fake GitHub API server for tests: the REST and
// GraphQL subset forge/github/ghapi uses, with scriptable repository state;
// its edge package wraps every endpoint with what GitHub does around it
// (token, rate limits, injected faults, ETags, request counts). Nothing
// in it talks to the internet; clienttest keeps a client's tests from
// reaching a real host.
package githubtest

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenttree/agenttree/forge/github/githubtest/edge"
	"github.com/agenttree/agenttree/forge/github/githubtest/internal/webhook"
)

// webURL is the base of html_url fields.
const webURL = "https://github.com"

// viewer is the login of the token's user: the author of what the client
// creates, and of what a test adds without naming one.
const viewer = "octocat"

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
	EndpointListReviews   = "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews"
	EndpointDeleteRef     = "DELETE /repos/{owner}/{repo}/git/refs/{ref...}"
	EndpointGraphQL       = "POST /graphql"
	EndpointLogBlob       = "GET /_blobs/jobs/{job_id}/logs"

	EndpointCreateHook     = "POST /repos/{owner}/{repo}/hooks"
	EndpointListHooks      = "GET /repos/{owner}/{repo}/hooks"
	EndpointGetHook        = "GET /repos/{owner}/{repo}/hooks/{hook_id}"
	EndpointUpdateHook     = "PATCH /repos/{owner}/{repo}/hooks/{hook_id}"
	EndpointDeleteHook     = "DELETE /repos/{owner}/{repo}/hooks/{hook_id}"
	EndpointPingHook       = "POST /repos/{owner}/{repo}/hooks/{hook_id}/pings"
	EndpointListDeliveries = "GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries"
	EndpointGetDelivery    = "GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}"
	EndpointRedeliver      = "POST /repos/{owner}/{repo}/hooks/{hook_id}/deliveries/{delivery_id}/attempts"
)

// Fault is an error answer the server gives instead of handling a request;
// Server.FailNext and Server.FailRate inject them.
type Fault = edge.Fault

// Common faults.
var (
	Fault500       = edge.Fault500
	Fault502       = edge.Fault502
	FaultSecondary = edge.FaultSecondary
	Fault429       = edge.Fault429
	FaultHangup    = edge.FaultHangup
	FaultTimeout   = edge.FaultTimeout
)

// Option configures New.
type Option func(*config)

type config struct {
	clock func() time.Time
	edge  []edge.Option
}

// WithSeed seeds the random faults of FailRate, so a run can be repeated.
func WithSeed(seed uint64) Option {
	return func(c *config) { c.edge = append(c.edge, edge.WithSeed(seed)) }
}

// WithLatency holds every request for d before answering it, as the
// network and GitHub would (Server.SetLatency changes it later).
func WithLatency(d time.Duration) Option {
	return func(c *config) { c.edge = append(c.edge, edge.WithLatency(d)) }
}

// WithClock sets the clock behind every timestamp the server makes (check
// runs, statuses, PRs, comments); default time.Now. It is read with the
// server's lock held, so it must not call the server.
func WithClock(now func() time.Time) Option { return func(c *config) { c.clock = now } }

// Server is the fake. The embedded *Repo is the default repository, so
// srv.AddPR(...) scripts it directly; the embedded *edge.Edge injects
// faults and latency, sets rate limits and counts requests by endpoint
// and, for GraphQL, by operation (srv.FailNext(...), srv.Requests(...),
// srv.Queries(...), srv.Counts()) and holds the Token requests must
// carry.
type Server struct {
	*Repo
	*edge.Edge
	// URL is the server's base URL (http://127.0.0.1:port). It answers
	// both github.com paths (/repos/..., /graphql) and GitHub Enterprise
	// paths (/api/v3/repos/..., /api/graphql).
	URL string

	clock func() time.Time

	mu    sync.Mutex // guards the repositories; handlers run with it held
	repos map[string]*Repo
	id    int64

	outbox *webhook.Outbox // webhook deliveries on their way
}

// New starts a fake server, closed when the test ends.
func New(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	c := config{clock: time.Now}
	for _, o := range opts {
		o(&c)
	}
	s := &Server{Edge: edge.New("test-token", c.edge...), clock: c.clock, repos: map[string]*Repo{}, id: 1000}
	s.outbox = webhook.NewOutbox(&s.mu, s.now, s.nextID)
	s.Repo = s.addRepo("octo", "app", "main")
	ts := httptest.NewServer(s.routes())
	s.URL = ts.URL
	tb.Cleanup(ts.Close)
	// Webhooks go out while the test runs, and stop before the server.
	go s.outbox.Run()
	tb.Cleanup(s.outbox.Stop)
	return s
}

// addRepo adds a repository and returns it.
func (s *Server) addRepo(owner, name, defaultBranch string) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &Repo{s: s, Owner: owner, Name: name, DefaultBranch: defaultBranch,
		prs: map[int]*prState{}, nextNumber: 1,
		runsBySHA: map[string][]*CheckRun{}, statusesBySHA: map[string][]*Status{}, refs: map[string]string{defaultBranch: "0000000000000000000000000000000000000000"},
		hooks: s.outbox.Hooks(owner, name, viewer)}
	s.repos[repoKey(owner+"/"+name)] = r
	return r
}

func (s *Server) now() time.Time { return s.clock().UTC().Truncate(time.Second) }

func (s *Server) nextID() int64 { s.id++; return s.id }

func (s *Server) fakeSHA() string {
	sum := sha256.Sum256([]byte(strconv.FormatInt(s.nextID(), 10)))
	return hex.EncodeToString(sum[:20])
}

// repoKey is how repositories are found: by OWNER/NAME in any letter
// case, as GitHub finds them.
func repoKey(fullName string) string { return strings.ToLower(fullName) }

// Queries is how many GraphQL requests named operation (the name after
// `query`, such as the client's PRStates) reached the server, faults
// included.
func (s *Server) Queries(operation string) int {
	return s.RequestsOfKind(EndpointGraphQL, operation)
}
