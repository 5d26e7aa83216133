package ghapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/agenttree/agenttree/forge/github/ghapi/retry"
)

// request is one REST call.
type request struct {
	// op says what the client is doing, for errors: "github: PR #3".
	op     string
	method string
	// path is relative to the API root: "repos/octo/app/pulls/3".
	path string
	// body is sent as JSON when not nil.
	body any
	// idempotent marks a POST or PATCH that does no more when sent twice
	// (a rerun, a label, a close), so that a 5xx may be retried. GET,
	// PUT and DELETE are idempotent anyway.
	idempotent bool
}

// do sends req and decodes the answer into out (nil: discard it).
func (c *Client) do(ctx context.Context, req request, out any) error {
	resp, err := c.open(ctx, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s: reading GitHub's answer: %w", req.op, err)
	}
	return nil
}

// get is do for a GET.
func (c *Client) get(ctx context.Context, op, path string, out any) error {
	return c.do(ctx, request{op: op, method: http.MethodGet, path: path}, out)
}

// open sends req, retrying as the retrier allows, and returns the answer
// of a 2xx response for the caller to read and close.
func (c *Client) open(ctx context.Context, req request) (*http.Response, error) {
	var payload []byte
	if req.body != nil {
		var err error
		if payload, err = json.Marshal(req.body); err != nil {
			return nil, fmt.Errorf("%s: %w", req.op, err)
		}
	}
	var resp *http.Response
	attempt := retry.Call{Resource: "core", Desc: req.method + " " + req.path,
		Idempotent: req.idempotent || idempotentMethod(req.method)}
	err := c.retry.Do(ctx, attempt, func() error {
		var body io.Reader
		if payload != nil {
			body = bytes.NewReader(payload)
		}
		var err error
		resp, err = c.rest.RequestWithContext(ctx, req.method, req.path, body)
		return err
	})
	if err != nil {
		return nil, c.classify(req.op, err)
	}
	return resp, nil
}

// query runs a GraphQL query, decoding its data into out. It returns
// go-gh's error as is, for the caller to judge GraphQL errors before
// classify: data may be filled in beside them.
func (c *Client) query(ctx context.Context, q string, vars map[string]any, out any) error {
	return c.retry.Do(ctx, retry.Call{Resource: "graphql", Desc: "POST graphql", Idempotent: true}, func() error {
		return c.gql.DoWithContext(ctx, q, vars, out)
	})
}

func idempotentMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

func (c *Client) repoPath() string {
	return "repos/" + url.PathEscape(c.repo.Owner) + "/" + url.PathEscape(c.repo.Name)
}

// path is a path under the repository: c.path("pulls/%d", 3).
func (c *Client) path(format string, args ...any) string {
	return c.repoPath() + "/" + fmt.Sprintf(format, args...)
}
