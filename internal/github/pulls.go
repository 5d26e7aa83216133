package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agenttree/agenttree/forge"
)

type restRef struct {
	Ref  string `json:"ref"`
	SHA  string `json:"sha"`
	Repo *struct {
		FullName string `json:"full_name"`
	} `json:"repo"`
}

type restPR struct {
	Number         int         `json:"number"`
	HTMLURL        string      `json:"html_url"`
	Title          string      `json:"title"`
	State          string      `json:"state"`
	Draft          bool        `json:"draft"`
	Merged         bool        `json:"merged"`
	MergedAt       *string     `json:"merged_at"`
	Mergeable      *bool       `json:"mergeable"`
	MergeableState string      `json:"mergeable_state"`
	Head           restRef     `json:"head"`
	Base           restRef     `json:"base"`
	Labels         []restLabel `json:"labels"`
	// Comments counts the conversation's comments (single PR only).
	Comments int `json:"comments"`
}

type restLabel struct {
	Name string `json:"name"`
}

func (p *restPR) merged() bool { return p.Merged || p.MergedAt != nil }

// toForge maps a REST PR. REST has no review decision and, in lists, no
// mergeability: those stay "" and Unknown.
func (p *restPR) toForge() *forge.PR {
	pr := &forge.PR{Number: p.Number, URL: p.HTMLURL, Title: p.Title, Branch: p.Head.Ref, Base: p.Base.Ref,
		HeadSHA: p.Head.SHA, State: p.State, Draft: p.Draft, Mergeable: forge.Unknown}
	if p.merged() {
		pr.State = forge.StateMerged
	}
	if p.Mergeable != nil {
		pr.Mergeable = forge.Conflicting
		if *p.Mergeable {
			pr.Mergeable = forge.Mergeable
		}
	}
	return pr
}

func (c *Client) getPull(ctx context.Context, number int) (*restPR, error) {
	var p restPR
	op := fmt.Sprintf("github: PR #%d", number)
	if err := c.call(ctx, op, http.MethodGet, c.path("pulls/%d", number), nil, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

func (c *Client) findOpenPR(ctx context.Context, branch, base string) (*restPR, error) {
	q := url.Values{"head": {c.repo.Owner + ":" + branch}, "state": {"open"}, "per_page": {"100"}}
	if base != "" {
		q.Set("base", base)
	}
	var prs []restPR
	op := fmt.Sprintf("github: looking for an open PR for %s", branch)
	if err := c.call(ctx, op, http.MethodGet, c.path("pulls?%s", q.Encode()), nil, &prs); err != nil {
		return nil, err
	}
	for i := range prs {
		if prs[i].Head.Ref == branch && (base == "" || prs[i].Base.Ref == base) {
			return &prs[i], nil
		}
	}
	return nil, nil
}

func (c *Client) defaultBranch(ctx context.Context) (string, error) {
	var r struct {
		DefaultBranch string `json:"default_branch"`
	}
	if err := c.call(ctx, "github: repository "+c.repo.FullName(), http.MethodGet, c.repoPath(), nil, &r); err != nil {
		return "", err
	}
	if r.DefaultBranch == "" {
		return "", fmt.Errorf("github: %s has no default branch; set the PR base", c.repo.FullName())
	}
	return r.DefaultBranch, nil
}

// EnsurePR returns the open PR for req.Branch, or opens one (base: the
// repository's default branch when req.Base is empty). Labels are added
// either way, so a crash between opening and labelling heals on the next
// call. The branch must already be pushed to the repository itself; PRs
// from forks are not looked for.
func (c *Client) EnsurePR(ctx context.Context, req forge.NewPR) (*forge.PR, bool, error) {
	if req.Branch == "" {
		return nil, false, fmt.Errorf("github: ensure PR: no branch given")
	}
	base := req.Base
	if base == "" {
		var err error
		if base, err = c.defaultBranch(ctx); err != nil {
			return nil, false, err
		}
	}
	existing, err := c.findOpenPR(ctx, req.Branch, base)
	if err != nil {
		return nil, false, err
	}
	if existing != nil {
		if err := c.ensureLabels(ctx, existing, req.Labels); err != nil {
			return nil, false, err
		}
		return existing.toForge(), false, nil
	}

	title := req.Title
	if title == "" {
		title = req.Branch
	}
	in := map[string]any{"title": title, "head": c.repo.Owner + ":" + req.Branch, "base": base, "body": req.Body, "draft": req.Draft}
	var created restPR
	op := fmt.Sprintf("github: opening a PR for %s into %s", req.Branch, base)
	err = c.call(ctx, op, http.MethodPost, c.path("pulls"), in, &created)
	if err != nil {
		// Creating is not retried on a 5xx (it may have worked), and a
		// concurrent call may have won the race: look again.
		status, msg := httpStatus(err)
		raced := status == http.StatusUnprocessableEntity && strings.Contains(msg, "already exists")
		if !raced && !errors.Is(err, ErrServer) {
			return nil, false, err
		}
		found, ferr := c.findOpenPR(ctx, req.Branch, base)
		if ferr != nil || found == nil {
			return nil, false, err
		}
		if lerr := c.ensureLabels(ctx, found, req.Labels); lerr != nil {
			return nil, false, lerr
		}
		return found.toForge(), !raced, nil
	}
	if err := c.ensureLabels(ctx, &created, req.Labels); err != nil {
		return created.toForge(), true, err
	}
	return created.toForge(), true, nil
}

func (c *Client) ensureLabels(ctx context.Context, p *restPR, labels []string) error {
	var missing []string
	for _, l := range labels {
		if !slices.ContainsFunc(p.Labels, func(have restLabel) bool { return strings.EqualFold(have.Name, l) }) {
			missing = append(missing, l)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	op := fmt.Sprintf("github: labelling PR #%d", p.Number)
	// Adding a label twice leaves one label: safe to retry.
	return c.call(retryable(ctx), op, http.MethodPost, c.path("issues/%d/labels", p.Number), map[string]any{"labels": missing}, nil)
}

// Merge merges a PR by method (squash when empty), at the head it just
// read, and deletes the branch when asked. A merged PR is a success, its
// branch still deleted; a PR closed unmerged is an error. A refusal
// because of conflicts wraps forge.ErrConflict; because the head moved,
// ErrHeadChanged.
func (c *Client) Merge(ctx context.Context, number int, method forge.MergeMethod, deleteBranch bool, expectHead string) error {
	p, err := c.getPull(ctx, number)
	if err != nil {
		return err
	}
	if expectHead != "" && !p.merged() && p.Head.SHA != expectHead {
		return fmt.Errorf("github: merge PR #%d: %w: expected %s, found %s", number, forge.ErrHeadChanged, short(expectHead), short(p.Head.SHA))
	}
	switch {
	case p.merged():
	case p.State == forge.StateClosed:
		return fmt.Errorf("github: merge PR #%d: it was closed without being merged", number)
	default:
		if method == "" {
			method = forge.MergeSquash
		}
		op := fmt.Sprintf("github: merge PR #%d", number)
		in := map[string]any{"merge_method": string(method), "sha": p.Head.SHA}
		if err := c.call(ctx, op, http.MethodPut, c.path("pulls/%d/merge", number), in, nil); err != nil {
			if err := c.mergeRefused(ctx, number, err); err != nil {
				return err
			}
		}
	}
	if deleteBranch {
		return c.deleteBranch(ctx, p)
	}
	return nil
}

// mergeRefused decides what a refused merge means: nil when the PR is in
// fact merged (GitHub's 405 "already merged", or a race), else the reason.
func (c *Client) mergeRefused(ctx context.Context, number int, err error) error {
	status, msg := httpStatus(err)
	if status == http.StatusMethodNotAllowed && strings.Contains(strings.ToLower(msg), "already merged") {
		return nil
	}
	if status != http.StatusMethodNotAllowed && status != http.StatusConflict {
		return err
	}
	now, gerr := c.getPull(ctx, number)
	if gerr != nil {
		return err
	}
	switch {
	case now.merged():
		return nil
	case status == http.StatusConflict:
		return fmt.Errorf("%w: %w", ErrHeadChanged, err)
	case now.Mergeable != nil && !*now.Mergeable:
		return fmt.Errorf("%w: %w", forge.ErrConflict, err)
	}
	return err
}

func (c *Client) deleteBranch(ctx context.Context, p *restPR) error {
	if p.Head.Ref == "" || p.Head.Ref == p.Base.Ref {
		return nil
	}
	if p.Head.Repo != nil && !strings.EqualFold(p.Head.Repo.FullName, c.repo.FullName()) {
		return nil // a fork's branch is not ours to delete
	}
	segs := strings.Split(p.Head.Ref, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	op := fmt.Sprintf("github: deleting branch %s", p.Head.Ref)
	err := c.call(ctx, op, http.MethodDelete, c.path("git/refs/heads/%s", strings.Join(segs, "/")), nil, nil)
	if status, msg := httpStatus(err); status == http.StatusUnprocessableEntity && strings.Contains(msg, "Reference does not exist") {
		return nil
	}
	if errors.Is(err, forge.ErrNotFound) {
		return nil
	}
	return err
}

// Close closes a PR, leaving comment first. It is safe to call again
// after any failure: a comment already among the PR's newest ones is not
// posted twice (the close can fail after the comment went up), a closed PR
// stays closed and gets no comment, and a merged PR cannot be closed.
func (c *Client) Close(ctx context.Context, number int, comment string) error {
	p, err := c.getPull(ctx, number)
	if err != nil {
		return err
	}
	switch {
	case p.merged():
		return fmt.Errorf("github: close PR #%d: it is already merged", number)
	case p.State == forge.StateClosed:
		return nil
	}
	if comment != "" {
		posted, err := c.hasComment(ctx, number, p.Comments, comment)
		if err != nil {
			return err
		}
		if !posted {
			if err := c.Comment(ctx, number, comment); err != nil {
				return err
			}
		}
	}
	op := fmt.Sprintf("github: close PR #%d", number)
	// Closing twice leaves it closed: safe to retry.
	return c.call(retryable(ctx), op, http.MethodPatch, c.path("pulls/%d", number), map[string]any{"state": "closed"}, nil)
}

// hasComment reports whether body is among the newest comments of PR
// number, which has count comments. One page is enough: a comment an
// earlier attempt posted is among the newest unless a hundred others came
// after it.
func (c *Client) hasComment(ctx context.Context, number, count int, body string) (bool, error) {
	const perPage = 100
	// The count may lag behind a comment just posted; page 1 is read then.
	last := max(1, (count+perPage-1)/perPage)
	var comments []struct {
		Body string `json:"body"`
	}
	op := fmt.Sprintf("github: reading the comments of PR #%d", number)
	if err := c.call(ctx, op, http.MethodGet, c.path("issues/%d/comments?per_page=%d&page=%d", number, perPage, last), nil, &comments); err != nil {
		return false, err
	}
	want := strings.TrimSpace(body)
	for _, cm := range comments {
		if strings.TrimSpace(cm.Body) == want {
			return true, nil
		}
	}
	return false, nil
}

// Comment adds a comment to a PR. A 5xx is not retried: GitHub may have
// posted it, and a duplicate in front of a reviewer is worse than an error
// the caller can retry.
func (c *Client) Comment(ctx context.Context, number int, body string) error {
	op := fmt.Sprintf("github: comment on PR #%d", number)
	return c.call(ctx, op, http.MethodPost, c.path("issues/%d/comments", number), map[string]any{"body": body}, nil)
}
