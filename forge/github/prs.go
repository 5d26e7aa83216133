package github

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/ghapi"
	"github.com/agenttree/agenttree/internal/gitx"
)

// PRs returns many PRs' state, the checks of their head commits included,
// with one GraphQL request per ghapi.PRBatchSize PRs; a PR with more checks
// than the batched query reads has them topped up from REST. Numbers not
// found are absent from the map.
func (c *Client) PRs(ctx context.Context, numbers []int) (_ map[int]*forge.PR, err error) {
	defer asForgeError(&err)
	found, err := c.api.PullRequests(ctx, numbers)
	if err != nil {
		return nil, err
	}
	out := make(map[int]*forge.PR, len(found))
	for n, g := range found {
		pr := fromPullRequest(g)
		if g.ChecksTruncated && pr.Checks != nil {
			if pr.Checks, err = c.Checks(ctx, pr.HeadSHA); err != nil {
				return nil, err
			}
		}
		out[n] = pr
	}
	return out, nil
}

// PR returns one PR's state, with the checks of its head commit.
func (c *Client) PR(ctx context.Context, number int) (*forge.PR, error) {
	prs, err := c.PRs(ctx, []int{number})
	if err != nil {
		return nil, err
	}
	pr, ok := prs[number]
	if !ok {
		return nil, fmt.Errorf("github: PR #%d in %s: %w", number, c.api.Repo().FullName(), forge.ErrNotFound)
	}
	return pr, nil
}

// fromPullRequest maps a PR of the batched query. Its checks are those of the
// head commit, or nil (not fetched) when GitHub's newest commit is not the
// head yet: checks of any other commit are not this PR's CI state.
func fromPullRequest(g *ghapi.PullRequest) *forge.PR {
	pr := &forge.PR{
		Number: g.Number, URL: g.URL, Title: g.Title,
		Branch: g.HeadRefName, Base: g.BaseRefName, HeadSHA: g.HeadRefOid,
		State: strings.ToLower(g.State), Draft: g.IsDraft,
		Mergeable:      mergeableState(g.Mergeable),
		ReviewDecision: reviewDecision(g),
		ApprovedSHA:    approvedSHA(g),
		FeedbackMark:   feedbackMark(g),
	}
	if g.LastCommit == "" || g.LastCommit != g.HeadRefOid {
		return pr
	}
	pr.Checks = []forge.Check{}
	for _, r := range g.CheckRuns {
		pr.Checks = append(pr.Checks, checkRun(r, g.LastCommit))
	}
	pr.Checks = appendStatuses(pr.Checks, g.Statuses, g.LastCommit)
	return pr
}

// reviewDecision is GitHub's, or, where GitHub leaves it null because
// branch protection requires no review, the one its reviews make: any
// writer's request for changes outweighs approvals, as it would if reviews
// were required. Without either it is ReviewNone, which pr_approved does
// not take for an approval.
func reviewDecision(g *ghapi.PullRequest) string {
	if g.ReviewDecision != "" {
		return strings.ToLower(g.ReviewDecision)
	}
	decision := forge.ReviewNone
	for _, r := range g.Reviews {
		switch r.State {
		case "CHANGES_REQUESTED":
			return forge.ReviewChangesRequested
		case "APPROVED":
			decision = forge.ReviewApproved
		}
	}
	return decision
}

// approvedSHA is the commit a writer's approval covers: the head if any
// approval was given on it, else the commit of an older approval.
func approvedSHA(g *ghapi.PullRequest) string {
	sha := ""
	for _, r := range g.Reviews {
		if r.State != "APPROVED" || r.Commit == "" {
			continue
		}
		if r.Commit == g.HeadRefOid {
			return r.Commit
		}
		sha = r.Commit
	}
	return sha
}

func mergeableState(s string) string {
	switch s {
	case "MERGEABLE":
		return forge.Mergeable
	case "CONFLICTING":
		return forge.Conflicting
	}
	return forge.Unknown
}

// How WaitMergeable polls while GitHub answers UNKNOWN: this many times
// more, first after mergeableDelay, doubling up to mergeableMaxDelay.
const (
	mergeablePolls    = 5
	mergeableDelay    = time.Second
	mergeableMaxDelay = 30 * time.Second
)

// WaitMergeable returns the PR once GitHub knows whether it merges
// cleanly. GitHub computes that in the background after a push, answering
// UNKNOWN meanwhile, so it asks again a few times with backoff; if still
// unknown it returns the PR with Mergeable Unknown and no error, for the
// caller to try later. A PR no longer open is returned at once. If the
// head is not expectHead (empty: the head first seen), the answer would
// be about another commit: it returns the PR and an error wrapping
// forge.ErrHeadChanged.
func (c *Client) WaitMergeable(ctx context.Context, number int, expectHead string) (*forge.PR, error) {
	delay := mergeableDelay
	for poll := 0; ; poll++ {
		pr, err := c.PR(ctx, number)
		if err != nil {
			return nil, err
		}
		if expectHead == "" {
			expectHead = pr.HeadSHA
		}
		if pr.HeadSHA != expectHead {
			return pr, fmt.Errorf("github: waiting for PR #%d to be mergeable: %w: head moved from %s to %s; aborted",
				number, forge.ErrHeadChanged, gitx.ShortSHA(expectHead), gitx.ShortSHA(pr.HeadSHA))
		}
		if pr.Mergeable != forge.Unknown || pr.State != forge.StateOpen || poll >= mergeablePolls {
			return pr, nil
		}
		if err := c.api.Sleep(ctx, delay); err != nil {
			return nil, err
		}
		delay = min(delay*2, mergeableMaxDelay)
	}
}
