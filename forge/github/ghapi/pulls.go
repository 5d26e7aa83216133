package ghapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Pull is a pull request as the REST API returns it.
type Pull struct {
	Number  int    `json:"number"`
	HTMLURL string `json:"html_url"`
	Title   string `json:"title"`
	// State is open or closed; a merged PR is closed, with Merged set.
	State    string  `json:"state"`
	Draft    bool    `json:"draft"`
	Merged   bool    `json:"merged"`
	MergedAt *string `json:"merged_at"`
	// Mergeable is nil while GitHub computes it, and in lists.
	Mergeable *bool   `json:"mergeable"`
	Head      Ref     `json:"head"`
	Base      Ref     `json:"base"`
	Labels    []Label `json:"labels"`
	// Comments counts the conversation's comments (single PR only).
	Comments int `json:"comments"`
}

// IsMerged reports whether the PR was merged. Lists leave Merged unset,
// so merged_at counts too.
func (p *Pull) IsMerged() bool { return p.Merged || p.MergedAt != nil }

// Ref is one side of a PR: a branch at a commit, in a repository.
type Ref struct {
	Ref  string `json:"ref"`
	SHA  string `json:"sha"`
	Repo *struct {
		FullName string `json:"full_name"`
	} `json:"repo"`
}

// Label is a label on an issue or PR.
type Label struct {
	Name string `json:"name"`
}

// NewPull asks for a pull request from Head, a branch of the repository
// itself, into Base.
type NewPull struct {
	Title string `json:"title"`
	Head  string `json:"head"`
	Base  string `json:"base"`
	Body  string `json:"body"`
	Draft bool   `json:"draft"`
}

// DefaultBranch is the repository's default branch.
func (c *Client) DefaultBranch(ctx context.Context) (string, error) {
	var r struct {
		DefaultBranch string `json:"default_branch"`
	}
	if err := c.get(ctx, "github: repository "+c.repo.FullName(), c.repoPath(), &r); err != nil {
		return "", err
	}
	if r.DefaultBranch == "" {
		return "", fmt.Errorf("github: %s has no default branch; set the PR base", c.repo.FullName())
	}
	return r.DefaultBranch, nil
}

// Pull reads PR number.
func (c *Client) Pull(ctx context.Context, number int) (*Pull, error) {
	var p Pull
	if err := c.get(ctx, fmt.Sprintf("github: PR #%d", number), c.path("pulls/%d", number), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// OpenPull finds the open PR from branch (of the repository itself) into
// base (any base when empty), or returns nil.
func (c *Client) OpenPull(ctx context.Context, branch, base string) (*Pull, error) {
	q := url.Values{"head": {c.repo.Owner + ":" + branch}, "state": {"open"}, "per_page": {"100"}}
	if base != "" {
		q.Set("base", base)
	}
	var prs []Pull
	op := fmt.Sprintf("github: looking for an open PR for %s", branch)
	if err := c.get(ctx, op, c.path("pulls?%s", q.Encode()), &prs); err != nil {
		return nil, err
	}
	for i := range prs {
		if prs[i].Head.Ref == branch && (base == "" || prs[i].Base.Ref == base) {
			return &prs[i], nil
		}
	}
	return nil, nil
}

// CreatePull opens a PR. It is not retried after a 5xx: GitHub may have
// opened it.
func (c *Client) CreatePull(ctx context.Context, req NewPull) (*Pull, error) {
	var created Pull
	op := fmt.Sprintf("github: opening a PR for %s into %s", req.Head, req.Base)
	req.Head = c.repo.Owner + ":" + req.Head
	if err := c.do(ctx, request{op: op, method: http.MethodPost, path: c.path("pulls"), body: req}, &created); err != nil {
		return nil, err
	}
	return &created, nil
}

// AddLabels adds labels to PR number. Adding a label twice leaves one, so
// a 5xx is retried.
func (c *Client) AddLabels(ctx context.Context, number int, labels []string) error {
	return c.do(ctx, request{op: fmt.Sprintf("github: labelling PR #%d", number), method: http.MethodPost,
		path: c.path("issues/%d/labels", number), body: map[string]any{"labels": labels}, idempotent: true}, nil)
}

// MergePull merges PR number by method (merge, squash or rebase) if its
// head is still sha.
func (c *Client) MergePull(ctx context.Context, number int, method, sha string) error {
	return c.do(ctx, request{op: fmt.Sprintf("github: merge PR #%d", number), method: http.MethodPut,
		path: c.path("pulls/%d/merge", number), body: map[string]any{"merge_method": method, "sha": sha}}, nil)
}

// ClosePull closes PR number. Closing twice leaves it closed, so a 5xx is
// retried.
func (c *Client) ClosePull(ctx context.Context, number int) error {
	return c.do(ctx, request{op: fmt.Sprintf("github: close PR #%d", number), method: http.MethodPatch,
		path: c.path("pulls/%d", number), body: map[string]any{"state": "closed"}, idempotent: true}, nil)
}

// DeleteBranch deletes a branch of the repository.
func (c *Client) DeleteBranch(ctx context.Context, branch string) error {
	segs := strings.Split(branch, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return c.do(ctx, request{op: fmt.Sprintf("github: deleting branch %s", branch), method: http.MethodDelete,
		path: c.path("git/refs/heads/%s", strings.Join(segs, "/"))}, nil)
}

// CommentPage reads one page of PR number's comments, oldest first.
func (c *Client) CommentPage(ctx context.Context, number, page, perPage int) ([]Comment, error) {
	var comments []Comment
	op := fmt.Sprintf("github: reading the comments of PR #%d", number)
	if err := c.get(ctx, op, c.path("issues/%d/comments?per_page=%d&page=%d", number, perPage, page), &comments); err != nil {
		return nil, err
	}
	return comments, nil
}

// CreateComment adds a comment to PR number. It is not retried after a
// 5xx: GitHub may have posted it, and a duplicate in front of a reviewer
// is worse than an error the caller can retry.
func (c *Client) CreateComment(ctx context.Context, number int, body string) error {
	return c.do(ctx, request{op: fmt.Sprintf("github: comment on PR #%d", number), method: http.MethodPost,
		path: c.path("issues/%d/comments", number), body: map[string]string{"body": body}}, nil)
}
