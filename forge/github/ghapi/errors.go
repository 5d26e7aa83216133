package ghapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/cli/go-gh/v2/pkg/api"

	"github.com/agenttree/agenttree/forge/github/ghapi/retry"
)

// Errors the client reports, for errors.Is. go-gh's *api.HTTPError or
// *api.GraphQLError stays in the chain beside them, with GitHub's status
// and message (see HTTPStatus).
var (
	// ErrAuth: GitHub refused the token, or there is none.
	ErrAuth = errors.New("authentication failed")
	// ErrNotFound: no such repository, PR, job or ref (404, 410), or a
	// GraphQL NOT_FOUND.
	ErrNotFound = errors.New("not found")
	// ErrServer marks a GitHub 5xx answer, or no answer at all (a
	// connection dropped, an answer not begun in time), that outlasted
	// the retries. It says GitHub is unwell, nothing about the request.
	ErrServer = errors.New("GitHub server error")
	// ErrRateLimit: a rate limit refused the request; errors.As finds the
	// *RateLimitError with when to try again.
	ErrRateLimit = retry.ErrRateLimit
)

// RateLimitError says a rate limit refused a request, or would have: the
// client holds requests back itself while a limit it hit is in force.
type RateLimitError = retry.RateLimitError

// HTTPStatus is the status code and message of the GitHub answer behind
// err, or 0 and "" when err is not one.
func HTTPStatus(err error) (code int, message string) {
	var he *api.HTTPError
	if errors.As(err, &he) {
		return he.StatusCode, he.Message
	}
	return 0, ""
}

// classify prefixes err with what the client was doing (op) and adds the
// sentinel callers test for.
func (c *Client) classify(op string, err error) error {
	var he *api.HTTPError
	var ge *api.GraphQLError
	switch {
	case errors.As(err, &he):
		return c.classifyHTTP(op, he)
	case errors.As(err, &ge) && hasGraphQLError(ge, "NOT_FOUND"):
		return fmt.Errorf("%s: %w: %w", op, ErrNotFound, ge)
	case errors.As(err, new(*url.Error)) && !errors.Is(err, context.Canceled):
		// No answer: GitHub's trouble or the network's, never the
		// request's (a create then looks again, and create_pr waits).
		return fmt.Errorf("%s: %w: %w", op, ErrServer, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

func (c *Client) classifyHTTP(op string, he *api.HTTPError) error {
	switch code := he.StatusCode; {
	case code == http.StatusUnauthorized:
		return fmt.Errorf("%s: %w: GitHub rejected the token for %s (%s): run `gh auth login --hostname %s` or set %s",
			op, ErrAuth, c.repo.Host, he.Message, c.repo.Host, tokenEnv(c.repo.Host))
	case code == http.StatusForbidden:
		return fmt.Errorf("%s: %w: the token may not do this on %s: %w", op, ErrAuth, c.repo.FullName(), he)
	case code == http.StatusNotFound || code == http.StatusGone:
		return fmt.Errorf("%s: %w: %w", op, ErrNotFound, he)
	case code >= http.StatusInternalServerError:
		return fmt.Errorf("%s: %w: %w", op, ErrServer, he)
	}
	return fmt.Errorf("%s: %w", op, he)
}

// hasGraphQLError reports whether any of GitHub's GraphQL errors is of type
// typ (NOT_FOUND, RATE_LIMITED, ...).
func hasGraphQLError(ge *api.GraphQLError, typ string) bool {
	for _, e := range ge.Errors {
		if e.Type == typ {
			return true
		}
	}
	return false
}
