package githubtest

import (
	"fmt"
	"strings"

	"github.com/agenttree/agenttree/forge/github/githubtest/internal/checks"
	"github.com/agenttree/agenttree/forge/github/githubtest/internal/prquery"
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
			"statusCheckRollup": checks.Rollup(repo.latestCheckRuns(p.HeadSHA), repo.latestStatuses(p.HeadSHA), q.Contexts),
		}}}},
	}
}
