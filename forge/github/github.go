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

// Stats counts the requests the forge sent to GitHub, and those answered
// from the ETag cache, since it was made (for metrics; it sends nothing).
func (c *Client) Stats() ghapi.Stats { return c.api.Stats() }

// RateLimits is the quota GitHub last reported, per resource; it sends
// nothing.
func (c *Client) RateLimits() []ghapi.RateLimit { return c.api.RateLimits() }

// HeldUntil is when the secondary rate limit GitHub last answered with
// lifts; zero: none holds.
func (c *Client) HeldUntil() time.Time { return c.api.HeldUntil() }

// LimitedUntil says whether GitHub's limits hold requests back at now, by
// what the forge last heard (it sends nothing): until when, and the
// resource ("core", "graphql"; "secondary" for the secondary limit,
// which holds every request). Zero: nothing holds.
func (c *Client) LimitedUntil(now time.Time) (until time.Time, resource string) {
	if held := c.HeldUntil(); now.Before(held) {
		until, resource = held, "secondary"
	}
	for _, rl := range c.RateLimits() {
		if rl.Remaining == 0 && now.Before(rl.Reset) && rl.Reset.After(until) {
			until, resource = rl.Reset, rl.Resource
		}
	}
	return until, resource
}
