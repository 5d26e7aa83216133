// Package github is agenttree's GitHub forge: a forge.Forge over the
// GitHub API client in forge/github/ghapi. The client knows GitHub's REST and
// GraphQL API, its limits and its errors; this package knows what the
// engine asks of a forge, and answers it in forge terms: PR and check
// states, idempotent opening, merging and closing, what reviewers said
// (forge.ReviewFeed), and GitHub's errors as forge errors
// (forge.ErrRateLimit, forge.ErrAuth, forge.ErrNotFound), never as a CI
// result.
package github

import (
	"context"
	"errors"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/ghapi"
)

// Options configures New: where the repository is, how to reach it, and
// how patiently (see forge/github/ghapi.Options).
type Options = ghapi.Options

// RetryPolicy bounds how the client waits out server errors and rate
// limits (see forge/github/ghapi.RetryPolicy).
type RetryPolicy = ghapi.RetryPolicy

// Client is the forge of one GitHub repository. It is safe for concurrent
// use.
type Client struct {
	api *ghapi.Client
}

var (
	_ forge.Forge           = (*Client)(nil)
	_ forge.MergeableWaiter = (*Client)(nil)
	_ forge.ReviewFeed      = (*Client)(nil)
)

// New finds the repository (Options.Repo, else the git remote), resolves
// a token for its host, and returns its forge. It makes no request.
func New(ctx context.Context, opts Options) (*Client, error) {
	api, err := ghapi.New(ctx, opts)
	if err != nil {
		return nil, forgeError(err)
	}
	return &Client{api: api}, nil
}

// kindError is an error of the GitHub client as the forge reports it: the
// client's message, and a forge error for errors.Is and errors.As.
type kindError struct {
	err  error
	kind error
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.err, e.kind} }

// forgeKinds are the forge errors the client's errors are.
var forgeKinds = []struct{ client, forge error }{
	{ghapi.ErrAuth, forge.ErrAuth},
	{ghapi.ErrNotFound, forge.ErrNotFound},
	{ghapi.ErrServer, forge.ErrServer},
}

// forgeError adds to an error of the client the forge error it is, so
// that callers test it against the forge's sentinels: a rate limit is a
// *forge.RateLimitError, a rejected token forge.ErrAuth.
func forgeError(err error) error {
	var rl *ghapi.RateLimitError
	var done *kindError
	switch {
	case errors.As(err, &done):
		return err
	case errors.As(err, &rl):
		return &kindError{err: err, kind: &forge.RateLimitError{Forge: "GitHub", Reset: rl.Reset, RetryAfter: rl.Wait, Secondary: rl.Secondary}}
	}
	for _, k := range forgeKinds {
		if errors.Is(err, k.client) {
			return &kindError{err: err, kind: k.forge}
		}
	}
	return err
}

// asForgeError rewrites *err with forgeError, for a deferred call at the
// top of each forge method.
func asForgeError(err *error) {
	if *err != nil {
		*err = forgeError(*err)
	}
}

// API is the forge's GitHub client, for what the forge does not ask of it:
// the events watch of forge/github/watch keeps its hooks and reads their
// deliveries with it, counted and rate-limited with the rest.
func (c *Client) API() *ghapi.Client { return c.api }

// Stats, RateLimits and LimitedUntil tell what the forge counted and
// heard from GitHub (see ghapi.Client); they send nothing.
func (c *Client) Stats() ghapi.Stats                             { return c.api.Stats() }
func (c *Client) RateLimits() []ghapi.RateLimit                  { return c.api.RateLimits() }
func (c *Client) LimitedUntil(now time.Time) (time.Time, string) { return c.api.LimitedUntil(now) }
