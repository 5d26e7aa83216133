// Package github is agenttree's client for the GitHub API of one
// repository: REST and GraphQL over go-gh, with the token found the way gh
// finds it and the repository read from the configuration or a git remote.
//
// Under go-gh sits a transport stack that makes GETs conditional (ETag;
// 304s cost no rate limit) and records the rate limits GitHub reports.
// Above it, every call waits out rate limits and retries server and
// network errors where that is safe (package retry), so that a GitHub
// problem reaches callers as an error wrapping ErrRateLimit, ErrAuth,
// ErrNotFound or ErrServer.
//
// The client speaks GitHub's API and nothing else: forge/github maps it
// to agenttree's forge.
package ghapi

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/cli/go-gh/v2/pkg/api"
	"github.com/cli/go-gh/v2/pkg/auth"

	"github.com/agenttree/agenttree/forge/github/ghapi/etag"
	"github.com/agenttree/agenttree/forge/github/ghapi/ghrepo"
	"github.com/agenttree/agenttree/forge/github/ghapi/retry"
)

// RetryPolicy bounds how the client waits out server errors and rate
// limits. Zero fields take the defaults.
type RetryPolicy = retry.Policy

// RateLimit is the last primary rate-limit state GitHub reported for one
// resource ("core", "graphql", ...).
type RateLimit = retry.RateLimit

// Options configures New. Only tests need more than Repo and RepoDir.
type Options struct {
	// Repo names the repository: "owner/name", "host/owner/name" or a
	// URL. Empty means: read the remote (see ghrepo.Lookup).
	Repo string
	// Host overrides the host from Repo or the remote, e.g. when origin
	// uses an ssh alias. Default: the remote's host.
	Host string
	// Token overrides gh's token lookup (GH_TOKEN, GITHUB_TOKEN,
	// GH_ENTERPRISE_TOKEN, gh's config and keyring).
	Token string
	// RepoDir is the git repository whose remote names the GitHub
	// repository (default: the working directory).
	RepoDir string
	// Remote is the remote to read (default "origin").
	Remote string

	// Transport is the bottom of the transport stack (default
	// http.DefaultTransport).
	Transport http.RoundTripper
	// AnswerTimeout is how long a request waits for GitHub's answer to
	// begin before it is given up as a network error, and sent again
	// where that is safe (default DefaultAnswerTimeout).
	AnswerTimeout time.Duration
	// BaseURL sends every request to this server instead of the host
	// (tests: the githubtest server's URL).
	BaseURL string
	// Retry bounds retries and rate-limit waits.
	Retry RetryPolicy
	// CacheEntries bounds the ETag cache (default 1024 responses).
	CacheEntries int
	// Sleep waits between retries, for rate limits and for callers that
	// poll (Client.Sleep). It returns early, with ctx's error, only when
	// ctx is done. Default: a timer. Tests make it instant.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock for rate-limit resets (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Client calls the GitHub API for one repository. It is safe for
// concurrent use, though GitHub asks that one user's requests be made
// serially, and the client's own batching does so.
type Client struct {
	repo     ghrepo.Repo
	rest     *api.RESTClient
	gql      *api.GraphQLClient
	retry    *retry.Retrier
	cache    *etag.Cache
	requests *atomic.Int64 // counted by the meter
	counts   *resourceCounts
}

// Stats counts what the client did since it was made.
type Stats struct {
	// Requests is how many HTTP requests went to the network, retries
	// and redirects included; ByResource the same, per rate-limit
	// resource the request counts against ("core", "graphql").
	Requests   int64
	ByResource map[string]int64
	// CacheHits is how many GETs were answered 304 and served from the
	// ETag cache.
	CacheHits int64
	// Retries is how many requests were sent again after a 5xx, a rate
	// limit or a network error.
	Retries int64
	// RateLimited is how many rate-limit answers (primary or secondary)
	// came back.
	RateLimited int64
}

// New finds the repository (Options.Repo, else the remote), resolves a
// token for its host, and returns a client. It makes no request.
func New(ctx context.Context, opts Options) (*Client, error) {
	repo, err := ghrepo.Resolve(ctx, ghrepo.Lookup{Repo: opts.Repo, Host: opts.Host, Dir: opts.RepoDir, Remote: opts.Remote})
	if err != nil {
		return nil, fmt.Errorf("github: %w", err)
	}
	token := opts.Token
	if token == "" {
		token, _ = auth.TokenForHost(repo.Host)
	}
	if token == "" {
		return nil, fmt.Errorf("github: %w: no GitHub token for %s: run `gh auth login --hostname %s` or set %s",
			ErrAuth, repo.Host, repo.Host, tokenEnv(repo.Host))
	}
	base, err := baseTransport(opts)
	if err != nil {
		return nil, err
	}

	c := &Client{repo: repo, requests: &atomic.Int64{}, counts: &resourceCounts{},
		retry: retry.New(retry.Options{Policy: opts.Retry, Sleep: opts.Sleep, Now: opts.Now, Logger: opts.Logger})}
	wait := cmp.Or(opts.AnswerTimeout, DefaultAnswerTimeout)
	c.cache = etag.NewCache(meter{next: answerWait{next: base, d: wait}, requests: c.requests, counts: c.counts, limits: c.retry}, opts.CacheEntries)
	ghOpts := api.ClientOptions{
		Host:      repo.Host,
		AuthToken: token,
		Transport: c.cache,
		Headers:   map[string]string{"Accept": "application/vnd.github+json"},
	}
	if c.rest, err = api.NewRESTClient(ghOpts); err != nil {
		return nil, fmt.Errorf("github: %w", err)
	}
	if c.gql, err = api.NewGraphQLClient(ghOpts); err != nil {
		return nil, fmt.Errorf("github: %w", err)
	}
	return c, nil
}

// baseTransport is the bottom of the stack: the network, or the server at
// BaseURL.
func baseTransport(opts Options) (http.RoundTripper, error) {
	base := opts.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	if opts.BaseURL == "" {
		return base, nil
	}
	u, err := url.Parse(opts.BaseURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("github: bad BaseURL %q: want scheme://host[:port]", opts.BaseURL)
	}
	return rewriteTransport{base: u, next: base}, nil
}

func tokenEnv(host string) string {
	if auth.IsEnterprise(host) {
		return "GH_ENTERPRISE_TOKEN"
	}
	return "GH_TOKEN"
}

// Repo is the repository the client works on.
func (c *Client) Repo() ghrepo.Repo { return c.repo }

// Stats reports what the client has done so far.
func (c *Client) Stats() Stats {
	return Stats{
		Requests:    c.requests.Load(),
		ByResource:  c.counts.all(),
		CacheHits:   c.cache.Hits(),
		Retries:     c.retry.Retries(),
		RateLimited: c.retry.RateLimited(),
	}
}

// RateLimits is the last rate-limit state GitHub reported, per resource.
func (c *Client) RateLimits() []RateLimit { return c.retry.Limits() }

// LimitedUntil says whether GitHub's limits hold requests back at now, by
// what the client last heard (it sends nothing): until when, and the
// resource ("core", "graphql"; "secondary" for the secondary limit,
// which holds every request). Zero: nothing holds.
func (c *Client) LimitedUntil(now time.Time) (until time.Time, resource string) {
	if held := c.retry.HeldUntil(); now.Before(held) {
		until, resource = held, "secondary"
	}
	for _, rl := range c.RateLimits() {
		if rl.Remaining == 0 && now.Before(rl.Reset) && rl.Reset.After(until) {
			until, resource = rl.Reset, rl.Resource
		}
	}
	return until, resource
}

// Sleep waits d, or until ctx is done, the way the client waits between
// retries (Options.Sleep), for callers that poll GitHub.
func (c *Client) Sleep(ctx context.Context, d time.Duration) error { return c.retry.Sleep(ctx, d) }
