package githubtest

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/agenttree/agenttree/forge/github/githubtest/internal/gql"
	"github.com/agenttree/agenttree/forge/github/githubtest/internal/prquery"
	"github.com/agenttree/agenttree/forge/github/githubtest/internal/rest"
)

// graphql answers a query the way GitHub does: 200 even for what it cannot
// find, with a NOT_FOUND error per missing repository or PR.
func (s *Server) graphql(r *http.Request) rest.Reply {
	var req gql.Request
	if rep := rest.Decode(r, &req); rep != nil {
		return *rep
	}
	q, ok, err := prquery.Read(req)
	if err != nil {
		return rest.JSON(http.StatusOK, map[string]any{"errors": []any{gql.Error("", "Parse error: "+err.Error())}})
	}
	if !ok {
		return rest.JSON(http.StatusOK, map[string]any{"errors": []any{
			gql.Error("", "the fake GitHub server only answers repository { pullRequest(number: N) } queries"),
		}})

	}
	repo := s.repos[repoKey(q.Owner+"/"+q.Name)]
	if repo == nil {
		return rest.JSON(http.StatusOK, map[string]any{
			"data": map[string]any{"repository": nil},
			"errors": []any{gql.Error("NOT_FOUND",
				fmt.Sprintf("Could not resolve to a Repository with the name '%s/%s'.", q.Owner, q.Name), "repository")},
		})

	}
	data := map[string]any{}
	var errs []any
	for _, sel := range q.PRs {
		n, err := strconv.Atoi(sel.Number)
		p, ok := repo.prs[n]
		if err != nil || !ok {
			data[sel.Alias] = nil
			errs = append(errs, gql.Error("NOT_FOUND",
				fmt.Sprintf("Could not resolve to a PullRequest with the number of %s.", sel.Number), "repository", sel.Alias))
			continue
		}
		data[sel.Alias] = prNode(repo, p, q)
	}
	out := map[string]any{"data": map[string]any{"repository": data}}
	if len(errs) > 0 {
		out["errors"] = errs
	}
	return rest.JSON(http.StatusOK, out)
}
