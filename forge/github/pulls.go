package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/ghapi"
	"github.com/agenttree/agenttree/internal/gitx"
)

// fromPull maps a REST PR. REST has no review decision and, in lists, no
// mergeability: those stay "" and Unknown.
func fromPull(p *ghapi.Pull) *forge.PR {
	pr := &forge.PR{Number: p.Number, URL: p.HTMLURL, Title: p.Title, Branch: p.Head.Ref, Base: p.Base.Ref,
		HeadSHA: p.Head.SHA, State: p.State, Draft: p.Draft, Mergeable: forge.Unknown}
	if p.IsMerged() {
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

// EnsurePR returns the open PR for req.Branch, or opens one (base: the
// repository's default branch when req.Base is empty). Labels are added
// either way, so a crash between opening and labelling heals on the next
// call; when labelling fails, the PR comes back beside the error. The
// branch must already be pushed to the repository itself; PRs from forks
// are not looked for.
func (c *Client) EnsurePR(ctx context.Context, req forge.NewPR) (_ *forge.PR, created bool, err error) {
	defer asForgeError(&err)
	if req.Branch == "" {
		return nil, false, fmt.Errorf("github: ensure PR: no branch given")
	}
	base := req.Base
	if base == "" {
		if base, err = c.api.DefaultBranch(ctx); err != nil {
			return nil, false, err
		}
	}
	p, err := c.api.OpenPull(ctx, req.Branch, base)
	if err != nil {
		return nil, false, err
	}
	if p == nil {
		if p, created, err = c.openPull(ctx, req, base); err != nil {
			return nil, false, err
		}
	}
	if err := c.ensureLabels(ctx, p, req.Labels); err != nil {
		return fromPull(p), created, err
	}
	return fromPull(p), created, nil
}

// openPull opens a PR for req.Branch into base. A create is not retried
// after a 5xx, since GitHub may have done it, and a concurrent call may
// have won the race: either way it looks again before failing.
func (c *Client) openPull(ctx context.Context, req forge.NewPR, base string) (*ghapi.Pull, bool, error) {
	title := req.Title
	if title == "" {
		title = req.Branch
	}
	p, err := c.api.CreatePull(ctx, ghapi.NewPull{Title: title, Head: req.Branch, Base: base, Body: req.Body, Draft: req.Draft})
	if err == nil {
		return p, true, nil
	}
	code, msg := ghapi.HTTPStatus(err)
	raced := code == http.StatusUnprocessableEntity && strings.Contains(msg, "already exists")
	if !raced && !errors.Is(err, ghapi.ErrServer) {
		return nil, false, err
	}
	found, ferr := c.api.OpenPull(ctx, req.Branch, base)
	if ferr != nil || found == nil {
		return nil, false, err
	}
	return found, !raced, nil
}

func (c *Client) ensureLabels(ctx context.Context, p *ghapi.Pull, labels []string) error {
	var missing []string
	for _, l := range labels {
		if !slices.ContainsFunc(p.Labels, func(have ghapi.Label) bool { return strings.EqualFold(have.Name, l) }) {
			missing = append(missing, l)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return c.api.AddLabels(ctx, p.Number, missing)
}

// Merge merges a PR by method (squash when empty), at the head it just
// read, and deletes the branch when asked. A merged PR is a success, its
// branch still deleted; a PR closed unmerged is an error. A refusal
// because of conflicts wraps forge.ErrConflict; because the head moved,
// forge.ErrHeadChanged.
func (c *Client) Merge(ctx context.Context, number int, method forge.MergeMethod, deleteBranch bool, expectHead string) (err error) {
	defer asForgeError(&err)
	p, err := c.api.Pull(ctx, number)
	if err != nil {
		return err
	}
	if expectHead != "" && !p.IsMerged() && p.Head.SHA != expectHead {
		return fmt.Errorf("github: merge PR #%d: %w: expected %s, found %s",
			number, forge.ErrHeadChanged, gitx.ShortSHA(expectHead), gitx.ShortSHA(p.Head.SHA))
	}
	switch {
	case p.IsMerged():
	case p.State == forge.StateClosed:
		return fmt.Errorf("github: merge PR #%d: it was closed without being merged", number)
	default:
		if method == "" {
			method = forge.MergeSquash
		}
		if err := c.api.MergePull(ctx, number, string(method), p.Head.SHA); err != nil {
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
	code, msg := ghapi.HTTPStatus(err)
	if code == http.StatusMethodNotAllowed && strings.Contains(strings.ToLower(msg), "already merged") {
		return nil
	}
	if code != http.StatusMethodNotAllowed && code != http.StatusConflict {
		return err
	}
	now, gerr := c.api.Pull(ctx, number)
	if gerr != nil {
		return err
	}
	switch {
	case now.IsMerged():
		return nil
	case code == http.StatusConflict:
		return fmt.Errorf("%w: %w", forge.ErrHeadChanged, err)
	case now.Mergeable != nil && !*now.Mergeable:
		return fmt.Errorf("%w: %w", forge.ErrConflict, err)
	}
	return err
}

// deleteBranch deletes a merged PR's branch, unless it is the base or a
// fork's. A branch already gone is a success.
func (c *Client) deleteBranch(ctx context.Context, p *ghapi.Pull) error {
	if p.Head.Ref == "" || p.Head.Ref == p.Base.Ref {
		return nil
	}
	if p.Head.Repo != nil && !strings.EqualFold(p.Head.Repo.FullName, c.api.Repo().FullName()) {
		return nil
	}
	err := c.api.DeleteBranch(ctx, p.Head.Ref)
	if code, msg := ghapi.HTTPStatus(err); code == http.StatusUnprocessableEntity && strings.Contains(msg, "Reference does not exist") {
		return nil
	}
	if errors.Is(err, ghapi.ErrNotFound) {
		return nil
	}
	return err
}

// Close closes a PR, leaving comment first. It is safe to call again
// after any failure: a comment already among the PR's newest ones is not
// posted twice (the close can fail after the comment went up), a closed PR
// stays closed and gets no comment, and a merged PR cannot be closed.
func (c *Client) Close(ctx context.Context, number int, comment string) (err error) {
	defer asForgeError(&err)
	p, err := c.api.Pull(ctx, number)
	if err != nil {
		return err
	}
	switch {
	case p.IsMerged():
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
			if err := c.api.CreateComment(ctx, number, comment); err != nil {
				return err
			}
		}
	}
	return c.api.ClosePull(ctx, number)
}

// hasComment reports whether body is among the newest comments of PR
// number, which has count comments. One page is enough: a comment an
// earlier attempt posted is among the newest unless a hundred others came
// after it.
func (c *Client) hasComment(ctx context.Context, number, count int, body string) (bool, error) {
	const perPage = 100
	// The count may lag behind a comment just posted; page 1 is read then.
	last := max(1, (count+perPage-1)/perPage)
	comments, err := c.api.CommentPage(ctx, number, last, perPage)
	if err != nil {
		return false, err
	}
	want := strings.TrimSpace(body)
	return slices.ContainsFunc(comments, func(cm ghapi.Comment) bool { return strings.TrimSpace(cm.Body) == want }), nil
}

// Comment adds a comment to a PR. A 5xx is not retried: GitHub may have
// posted it, and a duplicate in front of a reviewer is worse than an error
// the caller can retry.
func (c *Client) Comment(ctx context.Context, number int, body string) (err error) {
	defer asForgeError(&err)
	return c.api.CreateComment(ctx, number, body)
}
