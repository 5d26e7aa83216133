package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// The fake does not parse GraphQL. It finds the repository and each
// `alias: pullRequest(number: N)` selection and answers every one with the
// same field set, the one internal/github asks for.
var (
	prSelRE    = regexp.MustCompile(`(?:(\w+)\s*:\s*)?pullRequest\s*\(\s*number\s*:\s*(\$?\w+)\s*\)`)
	repoRE     = regexp.MustCompile(`repository\s*\(\s*owner\s*:\s*("[^"]*"|\$\w+)\s*,\s*name\s*:\s*("[^"]*"|\$\w+)\s*\)`)
	contextsRE = regexp.MustCompile(`contexts\s*\(\s*first\s*:\s*(\d+)`)
	reviewsRE  = regexp.MustCompile(`latestOpinionatedReviews\s*\(([^)]*)\)`)
	firstRE    = regexp.MustCompile(`first\s*:\s*(\d+)`)
	writersRE  = regexp.MustCompile(`writersOnly\s*:\s*true`)
)

// reviewArgs reads the arguments of latestOpinionatedReviews.
func reviewArgs(query string) (first int, writersOnly bool) {
	first = 100
	m := reviewsRE.FindStringSubmatch(query)
	if m == nil {
		return first, false
	}
	if fm := firstRE.FindStringSubmatch(m[1]); fm != nil {
		first, _ = strconv.Atoi(fm[1])
	}
	return first, writersRE.MatchString(m[1])
}

type gqlRequest struct {
	Query     string         `json:"query"`
	Variables map[string]any `json:"variables"`
}

func gqlError(typ, msg string, path ...any) map[string]any {
	e := map[string]any{"message": msg, "locations": []map[string]int{{"line": 1, "column": 1}}}
	if typ != "" {
		e["type"] = typ
	}
	if len(path) > 0 {
		e["path"] = path
	}
	return e
}

func (s *Server) graphql(r *http.Request, _ *Repo) reply {
	var req gqlRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		return errReply(http.StatusBadRequest, "Problems parsing JSON")
	}
	arg := func(tok string) string {
		if name, ok := strings.CutPrefix(tok, "$"); ok {
			return fmt.Sprint(req.Variables[name])
		}
		return strings.Trim(tok, `"`)
	}
	m := repoRE.FindStringSubmatch(req.Query)
	if m == nil {
		return jsonReply(http.StatusOK, map[string]any{"errors": []any{
			gqlError("", "the fake GitHub server only answers repository { pullRequest(number: N) } queries"),
		}})
	}
	repo := s.repos[strings.ToLower(arg(m[1])+"/"+arg(m[2]))]
	if repo == nil {
		return jsonReply(http.StatusOK, map[string]any{
			"data": map[string]any{"repository": nil},
			"errors": []any{gqlError("NOT_FOUND",
				fmt.Sprintf("Could not resolve to a Repository with the name '%s/%s'.", arg(m[1]), arg(m[2])), "repository")},
		})
	}
	first := 100
	if cm := contextsRE.FindStringSubmatch(req.Query); cm != nil {
		first, _ = strconv.Atoi(cm[1])
	}
	reviewsFirst, writersOnly := reviewArgs(req.Query)

	data := map[string]any{}
	var errs []any
	for _, sel := range prSelRE.FindAllStringSubmatch(req.Query, -1) {
		alias := sel[1]
		if alias == "" {
			alias = "pullRequest"
		}
		n, err := strconv.Atoi(arg(sel[2]))
		p, ok := repo.prs[n]
		if err != nil || !ok {
			data[alias] = nil
			errs = append(errs, gqlError("NOT_FOUND",
				fmt.Sprintf("Could not resolve to a PullRequest with the number of %s.", arg(sel[2])), "repository", alias))
			continue
		}
		data[alias] = s.prNode(repo, p, first, reviewsFirst, writersOnly)
	}
	out := map[string]any{"data": map[string]any{"repository": data}}
	if len(errs) > 0 {
		out["errors"] = errs
	}
	return jsonReply(http.StatusOK, out)
}

var gqlConclusion = map[string]string{
	"success": "SUCCESS", "failure": "FAILURE", "neutral": "NEUTRAL", "cancelled": "CANCELLED",
	"skipped": "SKIPPED", "timed_out": "TIMED_OUT", "action_required": "ACTION_REQUIRED",
	"stale": "STALE", "startup_failure": "STARTUP_FAILURE",
}

func (s *Server) prNode(repo *Repo, p *prState, first, reviewsFirst int, writersOnly bool) map[string]any {
	var review any
	if p.ReviewDecision != "" {
		review = p.ReviewDecision
	}
	reviews := []any{}
	for _, rv := range p.latestOpinionatedReviews(reviewsFirst, writersOnly) {
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
		"commits": map[string]any{"nodes": []any{map[string]any{"commit": map[string]any{
			"oid":               p.HeadSHA,
			"statusCheckRollup": rollup(repo, p.HeadSHA, first),
		}}}},
	}
}

// rollup is the head commit's statusCheckRollup: the latest check runs and
// statuses, or null when the commit has neither.
func rollup(repo *Repo, sha string, first int) any {
	var nodes []any
	state := "SUCCESS"
	worse := func(st string) {
		rank := map[string]int{"SUCCESS": 0, "PENDING": 1, "FAILURE": 2, "ERROR": 3}
		if rank[st] > rank[state] {
			state = st
		}
	}
	for _, c := range repo.latestCheckRuns(sha) {
		var conclusion any
		if c.Status == "completed" {
			conclusion = gqlConclusion[c.Conclusion]
			switch c.Conclusion {
			case "success", "neutral", "skipped":
			default:
				worse("FAILURE")
			}
		} else {
			worse("PENDING")
		}
		nodes = append(nodes, map[string]any{
			"__typename":  "CheckRun",
			"name":        c.Name,
			"status":      strings.ToUpper(c.Status),
			"conclusion":  conclusion,
			"detailsUrl":  c.DetailsURL,
			"databaseId":  c.ID,
			"startedAt":   ts(c.StartedAt),
			"completedAt": ts(c.CompletedAt),
			"checkSuite":  map[string]any{"app": map[string]any{"slug": c.App}},
		})
	}
	for _, st := range repo.latestStatuses(sha) {
		worse(strings.ToUpper(st.State))
		nodes = append(nodes, map[string]any{
			"__typename": "StatusContext",
			"context":    st.Context,
			"state":      strings.ToUpper(st.State),
			"targetUrl":  st.TargetURL,
			"createdAt":  ts(st.CreatedAt),
		})
	}
	if len(nodes) == 0 {
		return nil
	}
	total := len(nodes)
	hasNext := total > first
	if hasNext {
		nodes = nodes[:first]
	}
	var cursor any
	if hasNext {
		cursor = "cursor:" + strconv.Itoa(first)
	}
	return map[string]any{
		"state": state,
		"contexts": map[string]any{
			"totalCount": total,
			"pageInfo":   map[string]any{"hasNextPage": hasNext, "endCursor": cursor},
			"nodes":      nodes,
		},
	}
}
