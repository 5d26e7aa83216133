package githubtest

import (
	"fmt"
	"strings"

	"github.com/agenttree/agenttree/forge/github/githubtest/internal/gql"
	"github.com/agenttree/agenttree/forge/github/githubtest/internal/prquery"
	"github.com/agenttree/agenttree/forge/github/githubtest/internal/rest"
)

// prNode is a PullRequest as the query forge/github/ghapi sends selects it.
func prNode(repo *Repo, p *prState, q prquery.Query) map[string]any {
	var review any
	if p.ReviewDecision != "" {
		review = p.ReviewDecision
	}
	reviews := []any{}
	for _, rv := range p.latestOpinionatedReviews(q.Reviews, q.WritersOnly) {
		reviews = append(reviews, map[string]any{"state": rv.State, "author": map[string]any{"login": rv.Author}, "commit": map[string]any{"oid": rv.CommitID}})
	}
	return map[string]any{
		"number":                   p.Number,
		"url":                      fmt.Sprintf("%s/%s/pull/%d", webURL, repo.fullName(), p.Number),
		"title":                    p.Title,
		"headRefName":              p.Branch,
		"headRefOid":               p.HeadSHA,
		"baseRefName":              p.Base,
		"state":                    strings.ToUpper(p.State),
		"isDraft":                  p.Draft,
		"mergeable":                p.readMergeable(),
		"reviewDecision":           review,
		"latestOpinionatedReviews": map[string]any{"nodes": reviews},
		"comments":                 map[string]any{"totalCount": len(p.comments)},
		"reviews":                  map[string]any{"totalCount": len(p.Reviews)},
		"reviewThreads":            reviewThreads(repo, p, q),
		"commits": map[string]any{"nodes": []any{map[string]any{"commit": map[string]any{
			"oid":               p.HeadSHA,
			"statusCheckRollup": rollup(repo, p.HeadSHA, q.Contexts),
		}}}},
	}
}

// rollupRank orders the rollup states: the rollup is its worst context's.
var rollupRank = map[string]int{"SUCCESS": 0, "PENDING": 1, "FAILURE": 2, "ERROR": 3}

// rollup is the head commit's statusCheckRollup: the latest check runs and
// statuses, or null when the commit has neither.
func rollup(repo *Repo, sha string, first int) any {
	var nodes []any
	state := "SUCCESS"
	worse := func(st string) {
		if rollupRank[st] > rollupRank[state] {
			state = st
		}
	}
	for _, c := range repo.latestCheckRuns(sha) {
		worse(checkRunState(c))
		nodes = append(nodes, checkRunNode(c))
	}
	for _, st := range repo.latestStatuses(sha) {
		worse(strings.ToUpper(st.State))
		nodes = append(nodes, map[string]any{
			"__typename": "StatusContext",
			"context":    st.Context,
			"state":      strings.ToUpper(st.State),
			"targetUrl":  st.TargetURL,
			"createdAt":  rest.Time(st.CreatedAt),
		})
	}
	if len(nodes) == 0 {
		return nil
	}
	return map[string]any{
		"state":    state,
		"contexts": gql.Connection(nodes, "", first, func(n any) any { return n }),
	}
}

// checkRunState is what a check run adds to the rollup's state.
func checkRunState(c *CheckRun) string {
	switch {
	case c.Status != "completed":
		return "PENDING"
	case c.Conclusion == "success", c.Conclusion == "neutral", c.Conclusion == "skipped":
		return "SUCCESS"
	}
	return "FAILURE"
}

func checkRunNode(c *CheckRun) map[string]any {
	var conclusion any
	if c.Status == "completed" {
		// GraphQL spells REST's conclusions in capitals: timed_out, TIMED_OUT.
		conclusion = strings.ToUpper(c.Conclusion)
	}
	return map[string]any{
		"__typename":  "CheckRun",
		"name":        c.Name,
		"status":      strings.ToUpper(c.Status),
		"conclusion":  conclusion,
		"detailsUrl":  c.DetailsURL,
		"databaseId":  c.ID,
		"startedAt":   rest.Time(c.StartedAt),
		"completedAt": rest.Time(c.CompletedAt),
		"checkSuite":  map[string]any{"app": map[string]any{"slug": c.App}},
	}
}
