// Package github is agenttree's GitHub forge: a forge.Forge over the
// GitHub REST and GraphQL APIs, built on go-gh. Under go-gh sits a
// transport stack that makes GETs conditional (ETag, 304s are free), waits
// out rate limits and retries server errors, so that a GitHub error
// reaches callers as an error wrapping forge.ErrRateLimit, forge.ErrAuth,
// forge.ErrNotFound or ErrServer, and never as a CI result.
package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/cli/go-gh/v2/pkg/api"
	"github.com/cli/go-gh/v2/pkg/auth"

	"github.com/agenttree/agenttree/forge"
)

// ErrServer marks a GitHub 5xx answer that outlasted the retries. It says
// GitHub is unwell, nothing about CI.
var ErrServer = errors.New("GitHub server error")

// Options configures New. Only tests need more than Repo and RepoDir.
type Options struct {
	// Repo names the repository: "owner/name", "host/owner/name" or a
	// URL. Empty means: read the remote.
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
	// BaseURL sends every request to this server instead of the host
	// (tests: the githubtest server's URL).
	BaseURL string
	// Retry bounds retries and rate-limit waits.
	Retry RetryPolicy
	// CacheEntries bounds the ETag cache (default 1024 responses).
	CacheEntries int
	// Sleep waits between retries and polls (default: a timer that stops
	// when ctx is done). Tests make it instant.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock for rate-limit resets (default time.Now).
	Now func() time.Time
	// MergeablePolls is how many times WaitMergeable asks again while
	// GitHub answers UNKNOWN (default 5), first after MergeableDelay
	// (default 1s), doubling.
	MergeablePolls int
	MergeableDelay time.Duration
	Logger         *slog.Logger
}

// Client is a forge.Forge for one GitHub repository. It is safe for
// concurrent use, though GitHub asks that one user's requests be made
// serially, and the client's own batching does so.
type Client struct {
	repo  Repo
	rest  *api.RESTClient
	gql   *api.GraphQLClient
	retry *retryTransport
	cache *etagCache
	stats *counters
	sleep sleepFunc
	log   *slog.Logger

	mergeablePolls int
	mergeableDelay time.Duration
}

var _ forge.Forge = (*Client)(nil)

// New finds the repository (Options.Repo, else the remote), resolves a
// token for its host, and returns a client. It makes no request.
func New(ctx context.Context, opts Options) (*Client, error) {
	repo, err := resolveRepo(ctx, opts)
	if err != nil {
		return nil, err
	}
	token := opts.Token
	if token == "" {
		token, _ = auth.TokenForHost(repo.Host)
	}
	if token == "" {
		return nil, fmt.Errorf("github: %w: no GitHub token for %s: run `gh auth login --hostname %s` or set %s",
			forge.ErrAuth, repo.Host, repo.Host, tokenEnv(repo.Host))
	}

	c := &Client{repo: repo, stats: &counters{}, log: opts.Logger,
		mergeablePolls: opts.MergeablePolls, mergeableDelay: opts.MergeableDelay}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.mergeablePolls <= 0 {
		c.mergeablePolls = 5
	}
	if c.mergeableDelay <= 0 {
		c.mergeableDelay = time.Second
	}
	c.sleep = opts.Sleep
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}

	base := opts.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	if opts.BaseURL != "" {
		u, err := url.Parse(opts.BaseURL)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("github: bad BaseURL %q", opts.BaseURL)
		}
		base = rewriteTransport{base: u, next: base}
	}
	c.retry = &retryTransport{next: base, policy: opts.Retry.withDefaults(), sleep: c.sleep, now: now,
		stats: c.stats, log: c.log, limits: map[string]RateLimit{}}
	size := opts.CacheEntries
	if size <= 0 {
		size = 1024
	}
	c.cache = newETagCache(c.retry, size, c.stats)

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

func tokenEnv(host string) string {
	if auth.IsEnterprise(host) {
		return "GH_ENTERPRISE_TOKEN"
	}
	return "GH_TOKEN"
}

func resolveRepo(ctx context.Context, opts Options) (Repo, error) {
	var (
		repo   Repo
		err    error
		remote string
	)
	if opts.Repo != "" {
		host := opts.Host
		if host == "" {
			host, _ = auth.DefaultHost()
		}
		if repo, err = ParseRepo(opts.Repo, host); err != nil {
			return Repo{}, fmt.Errorf("github: %w", err)
		}
	} else {
		remote = opts.Remote
		if remote == "" {
			remote = "origin"
		}
		if repo, err = RemoteRepo(ctx, opts.RepoDir, remote); err != nil {
			return Repo{}, fmt.Errorf("github: %w", err)
		}
	}
	if opts.Host != "" {
		repo.Host = normalizeHost(opts.Host)
	}
	if err := checkHost(repo, opts.Host, remote); err != nil {
		return Repo{}, fmt.Errorf("github: %w", err)
	}
	return repo, nil
}

// Repo is the repository the client works on.
func (c *Client) Repo() Repo { return c.repo }

// Stats reports what the transport has done so far.
func (c *Client) Stats() Stats {
	return Stats{
		Requests:    c.stats.requests.Load(),
		CacheHits:   c.stats.cacheHits.Load(),
		Retries:     c.stats.retries.Load(),
		RateLimited: c.stats.rateLimited.Load(),
	}
}

// RateLimits is the last rate-limit state GitHub reported, per resource.
func (c *Client) RateLimits() []RateLimit { return c.retry.rateLimits() }

func (c *Client) repoPath() string {
	return "repos/" + url.PathEscape(c.repo.Owner) + "/" + url.PathEscape(c.repo.Name)
}

func (c *Client) path(format string, args ...any) string {
	return c.repoPath() + "/" + fmt.Sprintf(format, args...)
}

// call does one REST request; out may be nil.
func (c *Client) call(ctx context.Context, op, method, path string, in, out any) error {
	resp, err := c.request(ctx, op, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s: reading GitHub's answer: %w", op, err)
	}
	return nil
}

func (c *Client) request(ctx context.Context, op, method, path string, in any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		// A *bytes.Reader lets net/http rewind the body for a retry.
		body = bytes.NewReader(b)
	}
	resp, err := c.rest.RequestWithContext(ctx, method, path, body)
	if err != nil {
		return nil, c.wrapErr(op, err)
	}
	return resp, nil
}

// wrapErr turns go-gh and transport errors into errors callers can test
// with errors.Is against the forge sentinels, keeping the original too.
func (c *Client) wrapErr(op string, err error) error {
	var rl *forge.RateLimitError
	if errors.As(err, &rl) {
		return fmt.Errorf("%s: %w", op, rl)
	}
	var he *api.HTTPError
	if errors.As(err, &he) {
		switch {
		case he.StatusCode == http.StatusUnauthorized:
			return fmt.Errorf("%s: %w: GitHub rejected the token for %s (%s): run `gh auth login --hostname %s` or set %s",
				op, forge.ErrAuth, c.repo.Host, he.Message, c.repo.Host, tokenEnv(c.repo.Host))
		case he.StatusCode == http.StatusForbidden:
			return fmt.Errorf("%s: %w: the token may not do this on %s: %w", op, forge.ErrAuth, c.repo.FullName(), he)
		case he.StatusCode == http.StatusNotFound || he.StatusCode == http.StatusGone:
			return fmt.Errorf("%s: %w: %w", op, forge.ErrNotFound, he)
		case he.StatusCode >= 500:
			return fmt.Errorf("%s: %w: %w", op, ErrServer, he)
		}
		return fmt.Errorf("%s: %w", op, he)
	}
	var ge *api.GraphQLError
	if errors.As(err, &ge) {
		for _, e := range ge.Errors {
			switch e.Type {
			case "RATE_LIMITED":
				rl := &forge.RateLimitError{RetryAfter: time.Minute}
				if l, ok := c.retry.rateLimit("graphql"); ok && !l.Reset.IsZero() {
					rl.Reset = l.Reset
					rl.RetryAfter = max(time.Until(l.Reset), 0) + time.Second
				}
				c.stats.rateLimited.Add(1)
				return fmt.Errorf("%s: %w", op, rl)
			case "NOT_FOUND":
				return fmt.Errorf("%s: %w: %w", op, forge.ErrNotFound, ge)
			}
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

func httpStatus(err error) (int, string) {
	var he *api.HTTPError
	if errors.As(err, &he) {
		return he.StatusCode, he.Message
	}
	return 0, ""
}
