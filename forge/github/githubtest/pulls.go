package githubtest

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agenttree/agenttree/forge/github/githubtest/internal/rest"
)

func (s *Server) getRepo(r *http.Request, repo *Repo) rest.Reply {
	return rest.JSON(http.StatusOK, map[string]any{
		"id":             1,
		"name":           repo.Name,
		"full_name":      repo.fullName(),
		"owner":          map[string]any{"login": repo.Owner},
		"html_url":       webURL + "/" + repo.fullName(),
		"default_branch": repo.DefaultBranch,
		"private":        false,
	})

}

// A pullHandler answers an endpoint about one PR.
type pullHandler func(r *http.Request, repo *Repo, p *prState) rest.Reply

// onPull finds the PR whose number the path's key holds, or answers 404.
func onPull(key string, h pullHandler) repoHandler {
	return func(r *http.Request, repo *Repo) rest.Reply {
		n, err := strconv.Atoi(r.PathValue(key))
		p, ok := repo.prs[n]
		if err != nil || !ok {
			return rest.NotFound()
		}
		return h(r, repo, p)
	}
}

// pullJSON follows GET /repos/{owner}/{repo}/pulls/{pull_number}; the list
// endpoint leaves out the merge fields, as GitHub's does.
func pullJSON(r *http.Request, repo *Repo, p *prState, full bool) map[string]any {
	state := p.State
	if state == "merged" {
		state = "closed"
	}
	ref := func(name, sha string) map[string]any {
		return map[string]any{
			"label": repo.Owner + ":" + name, "ref": name, "sha": sha,
			"user": map[string]any{"login": repo.Owner},
			"repo": map[string]any{"full_name": repo.fullName(), "name": repo.Name, "owner": map[string]any{"login": repo.Owner}},
		}
	}
	out := map[string]any{
		"url":              fmt.Sprintf("%s/repos/%s/pulls/%d", rest.Base(r), repo.fullName(), p.Number),
		"id":               p.id,
		"html_url":         fmt.Sprintf("%s/%s/pull/%d", webURL, repo.fullName(), p.Number),
		"number":           p.Number,
		"state":            state,
		"locked":           false,
		"title":            p.Title,
		"body":             p.Body,
		"user":             map[string]any{"login": p.Author},
		"labels":           labelsJSON(p),
		"draft":            p.Draft,
		"created_at":       rest.Time(p.created),
		"updated_at":       rest.Time(p.updated),
		"closed_at":        rest.Time(p.closedAt),
		"merged_at":        rest.Time(p.mergedAt),
		"merge_commit_sha": p.mergeSHA,
		"head":             ref(p.Branch, p.HeadSHA),
		"base":             ref(p.Base, repo.refs[p.Base]),
	}
	if full {
		out["merged"] = p.State == "merged"
		out["mergeable"], out["mergeable_state"] = restMergeable(p.readMergeable())
		out["comments"] = len(p.Comments)
	}
	return out
}

// restMergeable spells GraphQL's mergeable enum the REST way; a closed
// PR reads UNKNOWN, so it gets null too.
func restMergeable(m string) (mergeable any, state string) {
	switch m {
	case "MERGEABLE":
		return true, "clean"
	case "CONFLICTING":
		return false, "dirty"
	}
	return nil, "unknown"
}

func labelsJSON(p *prState) []map[string]any {
	out := make([]map[string]any, 0, len(p.Labels))
	for _, l := range p.Labels {
		out = append(out, map[string]any{"id": p.labelIDs[l], "name": l, "color": "ededed"})
	}
	return out
}

func (s *Server) listPulls(r *http.Request, repo *Repo) rest.Reply {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	head, base := q.Get("head"), q.Get("base")
	var nums []int
	for n, p := range repo.prs {
		switch {
		case state == "open" && p.State != "open",
			state == "closed" && p.State == "open":
			continue
		}
		if head != "" {
			owner, branch, ok := strings.Cut(head, ":")
			if !ok || !strings.EqualFold(owner, repo.Owner) || branch != p.Branch {
				continue
			}
		}
		if base != "" && base != p.Base {
			continue
		}
		nums = append(nums, n)
	}
	// Newest first, GitHub's default sort.
	sort.Sort(sort.Reverse(sort.IntSlice(nums)))
	return rest.JSON(http.StatusOK, rest.Page(r, nums, func(n int) map[string]any { return pullJSON(r, repo, repo.prs[n], false) }))
}

func (s *Server) getPull(r *http.Request, repo *Repo, p *prState) rest.Reply {
	return rest.JSON(http.StatusOK, pullJSON(r, repo, p, true))
}

func (s *Server) createPull(r *http.Request, repo *Repo) rest.Reply {
	var in struct {
		Title string `json:"title"`
		Head  string `json:"head"`
		Base  string `json:"base"`
		Body  string `json:"body"`
		Draft bool   `json:"draft"`
	}
	if rep := rest.Decode(r, &in); rep != nil {
		return *rep
	}
	owner, branch, cut := strings.Cut(in.Head, ":")
	if !cut {
		owner, branch = repo.Owner, in.Head
	}
	sha, ok := repo.refs[branch]
	switch {
	case !strings.EqualFold(owner, repo.Owner):
		return rest.Validation("PullRequest", "head", "invalid")
	case in.Title == "":
		return rest.Validation("PullRequest", "title", "missing_field")
	case !ok:
		return rest.Validation("PullRequest", "head", "invalid")
	}
	if _, ok := repo.refs[in.Base]; !ok || in.Base == "" {
		return rest.Validation("PullRequest", "base", "invalid")
	}
	for _, p := range repo.prs {
		if p.State == "open" && p.Branch == branch && p.Base == in.Base {
			return rest.JSON(http.StatusUnprocessableEntity, map[string]any{
				"message": "Validation Failed",
				"errors": []map[string]any{{"resource": "PullRequest", "code": "custom",
					"message": fmt.Sprintf("A pull request already exists for %s:%s.", repo.Owner, branch)}},
			})

		}
	}
	n := repo.addPRLocked(PR{Title: in.Title, Body: in.Body, Branch: branch, HeadSHA: sha, Base: in.Base, Draft: in.Draft})
	p := repo.prs[n]
	// A new PR's mergeability is computed in the background.
	p.unknownN = 1
	return rest.JSON(http.StatusCreated, pullJSON(r, repo, p, true))
}

func (s *Server) updatePull(r *http.Request, repo *Repo, p *prState) rest.Reply {
	var in struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
		State *string `json:"state"`
		Base  *string `json:"base"`
	}
	if rep := rest.Decode(r, &in); rep != nil {
		return *rep
	}
	if in.State != nil {
		switch {
		case p.State == "merged", *in.State != "open" && *in.State != "closed":
			return rest.Validation("PullRequest", "state", "invalid")
		case *in.State != p.State:
			repo.setState(p, *in.State)
			repo.hooks.PullRequest(prRef(p), stateAction(*in.State))
		}
	}
	p.Title = deref(in.Title, p.Title)
	p.Body = deref(in.Body, p.Body)
	p.Base = deref(in.Base, p.Base)
	p.updated = s.now()
	return rest.JSON(http.StatusOK, pullJSON(r, repo, p, true))
}

// deref is *v, or def when v is nil: a field a PATCH may leave out.
func deref[T any](v *T, def T) T {
	if v == nil {
		return def
	}
	return *v
}

func (s *Server) mergePull(r *http.Request, repo *Repo, p *prState) rest.Reply {
	var in struct {
		MergeMethod string `json:"merge_method"`
		SHA         string `json:"sha"`
	}
	if rep := rest.Decode(r, &in); rep != nil {
		return *rep
	}
	if in.MergeMethod == "" {
		in.MergeMethod = "merge"
	}
	switch {
	case !slices.Contains([]string{"merge", "squash", "rebase"}, in.MergeMethod):
		return rest.Validation("PullRequest", "merge_method", "invalid")
	case p.State == "merged":
		return rest.Error(http.StatusMethodNotAllowed, "Pull Request is already merged")
	case p.State == "closed", p.Draft, p.Mergeable != "MERGEABLE":
		return rest.Error(http.StatusMethodNotAllowed, "Pull Request is not mergeable")
	case in.SHA != "" && in.SHA != p.HeadSHA:
		return rest.Error(http.StatusConflict, "Head branch was modified. Review and try the merge again.")
	}
	repo.setState(p, "merged")
	p.MergeMethod = in.MergeMethod
	repo.refs[p.Base] = p.mergeSHA
	repo.hooks.PullRequest(prRef(p), "closed")
	return rest.JSON(http.StatusOK, map[string]any{"sha": p.mergeSHA, "merged": true, "message": "Pull Request successfully merged"})
}

func (s *Server) addLabels(r *http.Request, repo *Repo, p *prState) rest.Reply {
	var in struct {
		Labels []string `json:"labels"`
	}
	if rep := rest.Decode(r, &in); rep != nil {
		return *rep
	}
	for _, l := range in.Labels {
		if !slices.Contains(p.Labels, l) {
			p.Labels = append(p.Labels, l)
			p.labelIDs[l] = s.nextID()
		}
	}
	return rest.JSON(http.StatusOK, labelsJSON(p))
}

func (s *Server) deleteRef(r *http.Request, repo *Repo) rest.Reply {
	branch, ok := strings.CutPrefix(r.PathValue("ref"), "heads/")
	if _, exists := repo.refs[branch]; !ok || !exists {
		return rest.JSON(http.StatusUnprocessableEntity, map[string]any{"message": "Reference does not exist"})
	}
	delete(repo.refs, branch)
	return rest.Reply{Status: http.StatusNoContent}
}
