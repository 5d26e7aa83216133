package githubtest

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/agenttree/agenttree/forge/github/githubtest/internal/gql"
)

// prQuery is what the fake reads from a query: the repository, each
// pullRequest selection, and the pages of the connections it answers.
// It answers every pullRequest with the same field set, the union of what
// forge/github/ghapi asks for.
type prQuery struct {
	owner, name string
	prs         []prSelection
	contexts    int // contexts(first:) of the status check rollup
	reviews     int // latestOpinionatedReviews(first:)
	writersOnly bool
	// threads and threadsAfter are reviewThreads(first:, after:);
	// threadComments is first: of a thread's comments.
	threads        int
	threadsAfter   string
	threadComments int
}

// prSelection is `alias: pullRequest(number: N)`, N as the query has it.
type prSelection struct{ alias, number string }

// readPRQuery reads req's query with its variables filled in; ok is false
// when it asks for no repository(owner:, name:).
func readPRQuery(req gql.Request) (q prQuery, ok bool, err error) {
	q = prQuery{contexts: 100, reviews: 100, threads: 100, threadComments: 100}
	err = req.Walk(func(f gql.Field) {
		switch f.Name {
		case "repository":
			q.owner, _ = f.Arg("owner")
			q.name, ok = f.Arg("name")
		case "pullRequest":
			n, _ := f.Arg("number")
			q.prs = append(q.prs, prSelection{cmp.Or(f.Alias, f.Name), n})
		case "contexts":
			q.contexts = f.First(q.contexts)
		case "latestOpinionatedReviews":
			q.reviews = f.First(q.reviews)
			w, _ := f.Arg("writersOnly")
			q.writersOnly = w == "true"
		case "reviewThreads":
			q.threads = f.First(q.threads)
			q.threadsAfter, _ = f.Arg("after")
		case "comments":
			if slices.Contains(f.Parents, "reviewThreads") {
				q.threadComments = f.First(q.threadComments)
			}
		}
	})
	return q, ok && q.owner != "", err
}

// graphql answers a query the way GitHub does: 200 even for what it cannot
// find, with a NOT_FOUND error per missing repository or PR.
func (s *Server) graphql(r *http.Request) reply {
	var req gql.Request
	if rep := decode(r, &req); rep != nil {
		return *rep
	}
	q, ok, err := readPRQuery(req)
	if err != nil {
		return jsonReply(http.StatusOK, map[string]any{"errors": []any{gql.Error("", "Parse error: "+err.Error())}})
	}
	if !ok {
		return jsonReply(http.StatusOK, map[string]any{"errors": []any{
			gql.Error("", "the fake GitHub server only answers repository { pullRequest(number: N) } queries"),
		}})
	}
	repo := s.repos[repoKey(q.owner+"/"+q.name)]
	if repo == nil {
		return jsonReply(http.StatusOK, map[string]any{
			"data": map[string]any{"repository": nil},
			"errors": []any{gql.Error("NOT_FOUND",
				fmt.Sprintf("Could not resolve to a Repository with the name '%s/%s'.", q.owner, q.name), "repository")},
		})
	}
	data := map[string]any{}
	var errs []any
	for _, sel := range q.prs {
		n, err := strconv.Atoi(sel.number)
		p, ok := repo.prs[n]
		if err != nil || !ok {
			data[sel.alias] = nil
			errs = append(errs, gql.Error("NOT_FOUND",
				fmt.Sprintf("Could not resolve to a PullRequest with the number of %s.", sel.number), "repository", sel.alias))
			continue
		}
		data[sel.alias] = prNode(repo, p, q)
	}
	out := map[string]any{"data": map[string]any{"repository": data}}
	if len(errs) > 0 {
		out["errors"] = errs
	}
	return jsonReply(http.StatusOK, out)
}
