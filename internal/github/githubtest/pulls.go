package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

func (s *Server) getRepo(r *http.Request, repo *Repo) reply {
	return jsonReply(http.StatusOK, map[string]any{
		"id":             1,
		"name":           repo.Name,
		"full_name":      repo.fullName(),
		"owner":          map[string]any{"login": repo.Owner},
		"html_url":       webURL + "/" + repo.fullName(),
		"default_branch": repo.DefaultBranch,
		"private":        false,
	})
}

// pullJSON follows GET /repos/{owner}/{repo}/pulls/{pull_number}; the list
// endpoint leaves out the merge fields, as GitHub's does.
func (s *Server) pullJSON(r *http.Request, repo *Repo, p *prState, full bool) map[string]any {
	state := p.State
	if state == "merged" {
		state = "closed"
	}
	labels := make([]map[string]any, 0, len(p.Labels))
	for _, l := range p.Labels {
		labels = append(labels, map[string]any{"id": p.labelIDs[l], "name": l, "color": "ededed"})
	}
	ref := func(name, sha string) map[string]any {
		return map[string]any{
			"label": repo.Owner + ":" + name, "ref": name, "sha": sha,
			"user": map[string]any{"login": repo.Owner},
			"repo": map[string]any{"full_name": repo.fullName(), "name": repo.Name, "owner": map[string]any{"login": repo.Owner}},
		}
	}
	out := map[string]any{
		"url":              fmt.Sprintf("%s/repos/%s/pulls/%d", s.apiBase(r), repo.fullName(), p.Number),
		"id":               p.id,
		"html_url":         fmt.Sprintf("%s/%s/pull/%d", webURL, repo.fullName(), p.Number),
		"number":           p.Number,
		"state":            state,
		"locked":           false,
		"title":            p.Title,
		"body":             p.Body,
		"user":             map[string]any{"login": p.Author},
		"labels":           labels,
		"draft":            p.Draft,
		"created_at":       ts(p.created),
		"updated_at":       ts(p.updated),
		"closed_at":        ts(p.closedAt),
		"merged_at":        ts(p.mergedAt),
		"merge_commit_sha": p.mergeSHA,
		"head":             ref(p.Branch, p.HeadSHA),
		"base":             ref(p.Base, repo.refs[p.Base]),
	}
	if full {
		m := p.readMergeable()
		var mergeable any
		mstate := "unknown"
		switch m {
		case "MERGEABLE":
			mergeable, mstate = true, "clean"
		case "CONFLICTING":
			mergeable, mstate = false, "dirty"
		}
		if p.State != "open" {
			mergeable, mstate = nil, "unknown"
		}
		out["merged"] = p.State == "merged"
		out["mergeable"] = mergeable
		out["mergeable_state"] = mstate
		out["comments"] = len(p.Comments)
	}
	return out
}

func pageParams(r *http.Request, def int) (page, perPage int) {
	page, _ = strconv.Atoi(r.URL.Query().Get("page"))
	perPage, _ = strconv.Atoi(r.URL.Query().Get("per_page"))
	if page < 1 {
		page = 1
	}
	if perPage < 1 {
		perPage = def
	}
	return page, min(perPage, 100)
}

func paginate[T any](items []T, page, perPage int) []T {
	start := (page - 1) * perPage
	if start >= len(items) {
		return []T{}
	}
	return items[start:min(start+perPage, len(items))]
}

func (s *Server) listPulls(r *http.Request, repo *Repo) reply {
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
	page, perPage := pageParams(r, 30)
	out := []map[string]any{}
	for _, n := range paginate(nums, page, perPage) {
		out = append(out, s.pullJSON(r, repo, repo.prs[n], false))
	}
	return jsonReply(http.StatusOK, out)
}

func (s *Server) pullFromPath(r *http.Request, repo *Repo, key string) (*prState, *reply) {
	n, err := strconv.Atoi(r.PathValue(key))
	if err != nil {
		rep := errReply(http.StatusNotFound, "Not Found")
		return nil, &rep
	}
	p, ok := repo.prs[n]
	if !ok {
		rep := errReply(http.StatusNotFound, "Not Found")
		return nil, &rep
	}
	return p, nil
}

func decode(r *http.Request, v any) *reply {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		rep := errReply(http.StatusBadRequest, "Problems parsing JSON")
		return &rep
	}
	return nil
}

func validation(resource, field, code string) reply {
	return jsonReply(http.StatusUnprocessableEntity, map[string]any{
		"message": "Validation Failed",
		"errors":  []map[string]any{{"resource": resource, "field": field, "code": code}},
	})
}

func (s *Server) getPull(r *http.Request, repo *Repo) reply {
	p, rep := s.pullFromPath(r, repo, "pull_number")
	if rep != nil {
		return *rep
	}
	return jsonReply(http.StatusOK, s.pullJSON(r, repo, p, true))
}

func (s *Server) createPull(r *http.Request, repo *Repo) reply {
	var in struct {
		Title string `json:"title"`
		Head  string `json:"head"`
		Base  string `json:"base"`
		Body  string `json:"body"`
		Draft bool   `json:"draft"`
	}
	if rep := decode(r, &in); rep != nil {
		return *rep
	}
	branch := in.Head
	if owner, b, ok := strings.Cut(in.Head, ":"); ok {
		if !strings.EqualFold(owner, repo.Owner) {
			return validation("PullRequest", "head", "invalid")
		}
		branch = b
	}
	if in.Title == "" {
		return validation("PullRequest", "title", "missing_field")
	}
	sha, ok := repo.refs[branch]
	if !ok {
		return validation("PullRequest", "head", "invalid")
	}
	if _, ok := repo.refs[in.Base]; !ok || in.Base == "" {
		return validation("PullRequest", "base", "invalid")
	}
	for _, p := range repo.prs {
		if p.State == "open" && p.Branch == branch && p.Base == in.Base {
			return jsonReply(http.StatusUnprocessableEntity, map[string]any{
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
	return jsonReply(http.StatusCreated, s.pullJSON(r, repo, p, true))
}

func (s *Server) updatePull(r *http.Request, repo *Repo) reply {
	p, rep := s.pullFromPath(r, repo, "pull_number")
	if rep != nil {
		return *rep
	}
	var in struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
		State *string `json:"state"`
		Base  *string `json:"base"`
	}
	if rep := decode(r, &in); rep != nil {
		return *rep
	}
	if in.State != nil {
		if p.State == "merged" {
			return validation("PullRequest", "state", "invalid")
		}
		switch *in.State {
		case "closed":
			if p.State == "open" {
				p.State, p.closedAt = "closed", s.now()
			}
		case "open":
			p.State, p.closedAt = "open", time.Time{}
		default:
			return validation("PullRequest", "state", "invalid")
		}
	}
	if in.Title != nil {
		p.Title = *in.Title
	}
	if in.Body != nil {
		p.Body = *in.Body
	}
	if in.Base != nil {
		p.Base = *in.Base
	}
	p.updated = s.now()
	return jsonReply(http.StatusOK, s.pullJSON(r, repo, p, true))
}

func (s *Server) mergePull(r *http.Request, repo *Repo) reply {
	p, rep := s.pullFromPath(r, repo, "pull_number")
	if rep != nil {
		return *rep
	}
	var in struct {
		MergeMethod string `json:"merge_method"`
		SHA         string `json:"sha"`
	}
	if rep := decode(r, &in); rep != nil {
		return *rep
	}
	if in.MergeMethod == "" {
		in.MergeMethod = "merge"
	}
	switch {
	case !slices.Contains([]string{"merge", "squash", "rebase"}, in.MergeMethod):
		return validation("PullRequest", "merge_method", "invalid")
	case p.State == "merged":
		return errReply(http.StatusMethodNotAllowed, "Pull Request is already merged")
	case p.State == "closed", p.Draft, p.Mergeable != "MERGEABLE":
		return errReply(http.StatusMethodNotAllowed, "Pull Request is not mergeable")
	case in.SHA != "" && in.SHA != p.HeadSHA:
		return errReply(http.StatusConflict, "Head branch was modified. Review and try the merge again.")
	}
	now := s.now()
	p.State, p.mergedAt, p.closedAt, p.mergeSHA, p.MergeMethod = "merged", now, now, s.fakeSHA(), in.MergeMethod
	repo.refs[p.Base] = p.mergeSHA
	return jsonReply(http.StatusOK, map[string]any{"sha": p.mergeSHA, "merged": true, "message": "Pull Request successfully merged"})
}

func (s *Server) addLabels(r *http.Request, repo *Repo) reply {
	p, rep := s.pullFromPath(r, repo, "issue_number")
	if rep != nil {
		return *rep
	}
	var in struct {
		Labels []string `json:"labels"`
	}
	if rep := decode(r, &in); rep != nil {
		return *rep
	}
	for _, l := range in.Labels {
		if !slices.Contains(p.Labels, l) {
			p.Labels = append(p.Labels, l)
			p.labelIDs[l] = s.nextID()
		}
	}
	out := []map[string]any{}
	for _, l := range p.Labels {
		out = append(out, map[string]any{"id": p.labelIDs[l], "name": l, "color": "ededed"})
	}
	return jsonReply(http.StatusOK, out)
}

func (s *Server) createComment(r *http.Request, repo *Repo) reply {
	p, rep := s.pullFromPath(r, repo, "issue_number")
	if rep != nil {
		return *rep
	}
	var in struct {
		Body string `json:"body"`
	}
	if rep := decode(r, &in); rep != nil {
		return *rep
	}
	if in.Body == "" {
		return validation("IssueComment", "body", "missing_field")
	}
	id := s.nextID()
	p.Comments = append(p.Comments, in.Body)
	p.commentID = append(p.commentID, id)
	p.commentAt = append(p.commentAt, s.now())
	return jsonReply(http.StatusCreated, s.commentJSON(repo, p, len(p.Comments)-1))
}

func (s *Server) commentJSON(repo *Repo, p *prState, i int) map[string]any {
	id, at := p.commentID[i], p.commentAt[i]
	return map[string]any{
		"id": id, "body": p.Comments[i], "user": map[string]any{"login": "octocat"},
		"html_url":   fmt.Sprintf("%s/%s/pull/%d#issuecomment-%d", webURL, repo.fullName(), p.Number, id),
		"created_at": ts(at), "updated_at": ts(at),
	}
}

// listComments answers oldest first, paginated, as GitHub does.
func (s *Server) listComments(r *http.Request, repo *Repo) reply {
	p, rep := s.pullFromPath(r, repo, "issue_number")
	if rep != nil {
		return *rep
	}
	idx := make([]int, len(p.Comments))
	for i := range idx {
		idx[i] = i
	}
	page, perPage := pageParams(r, 30)
	out := []map[string]any{}
	for _, i := range paginate(idx, page, perPage) {
		out = append(out, s.commentJSON(repo, p, i))
	}
	return jsonReply(http.StatusOK, out)
}

func (s *Server) deleteRef(r *http.Request, repo *Repo) reply {
	branch, ok := strings.CutPrefix(r.PathValue("ref"), "heads/")
	if !ok {
		return jsonReply(http.StatusUnprocessableEntity, map[string]any{"message": "Reference does not exist"})
	}
	if _, ok := repo.refs[branch]; !ok {
		return jsonReply(http.StatusUnprocessableEntity, map[string]any{"message": "Reference does not exist"})
	}
	delete(repo.refs, branch)
	return reply{status: http.StatusNoContent}
}

func (s *Server) apiBase(r *http.Request) string {
	return "http://" + r.Host
}

func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}
