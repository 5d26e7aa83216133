package webhook

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agenttree/agenttree/forge"
)

// Events are the webhook events that say something about a PR; a hook
// agenttree creates subscribes to these.
var Events = []string{"check_run", "check_suite", "status", "push", "pull_request", "pull_request_review", "pull_request_review_comment"}

// The fields of GitHub's webhook payloads that name a PR or a commit; the
// rest of each payload is not decoded.
type (
	prRef struct {
		Number int `json:"number"`
		Head   struct {
			SHA string `json:"sha"`
		} `json:"head"`
	}
	payload struct {
		Action     string `json:"action"`
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`

		CheckRun *struct {
			HeadSHA      string  `json:"head_sha"`
			PullRequests []prRef `json:"pull_requests"`
		} `json:"check_run"`
		CheckSuite *struct {
			HeadSHA      string  `json:"head_sha"`
			PullRequests []prRef `json:"pull_requests"`
		} `json:"check_suite"`
		// status: the commit is the top-level sha.
		SHA string `json:"sha"`
		// push: the ref and the commit it moved to.
		Ref     string `json:"ref"`
		After   string `json:"after"`
		Deleted bool   `json:"deleted"`

		PullRequest *prRef `json:"pull_request"`
		Number      int    `json:"number"`
	}
)

// Parse turns a delivery of event into the changes it tells of: none for
// an event that says nothing about a PR (ping, issues, ...) or for
// another repository than repo ("" takes any).
func Parse(event string, body []byte, repo string) ([]forge.Change, error) {
	if !slices.Contains(Events, event) {
		return nil, nil
	}
	var p payload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("reading the %s payload: %w", event, err)
	}
	if repo != "" && p.Repository.FullName != "" && !strings.EqualFold(repo, p.Repository.FullName) {
		return nil, nil
	}
	what := event
	if p.Action != "" {
		what += "." + p.Action
	}
	fromPRs := func(sha string, prs []prRef) []forge.Change {
		if len(prs) == 0 {
			return []forge.Change{{SHA: sha, What: what}}
		}
		out := make([]forge.Change, 0, len(prs))
		for _, pr := range prs {
			out = append(out, forge.Change{PR: pr.Number, SHA: sha, What: what})
		}
		return out
	}
	switch event {
	case "check_run":
		if p.CheckRun != nil {
			return fromPRs(p.CheckRun.HeadSHA, p.CheckRun.PullRequests), nil
		}
	case "check_suite":
		if p.CheckSuite != nil {
			return fromPRs(p.CheckSuite.HeadSHA, p.CheckSuite.PullRequests), nil
		}
	case "status":
		if p.SHA != "" {
			return []forge.Change{{SHA: p.SHA, What: what}}, nil
		}
	case "push":
		// A deleted branch moves no head a PR could be on.
		if !p.Deleted && strings.HasPrefix(p.Ref, "refs/heads/") && p.After != "" {
			return []forge.Change{{SHA: p.After, What: what}}, nil
		}
	default: // pull_request and its reviews and review comments
		if p.PullRequest != nil {
			return []forge.Change{{PR: max(p.PullRequest.Number, p.Number), SHA: p.PullRequest.Head.SHA, What: what}}, nil
		}
	}
	return nil, nil
}
