package githubtest

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/agenttree/agenttree/forge/github/githubtest/internal/checks"
	"github.com/agenttree/agenttree/forge/github/githubtest/internal/rest"
)

func (s *Server) listCheckRuns(r *http.Request, repo *Repo) rest.Reply {
	sha := repo.resolveRef(r.PathValue("ref"))
	runs := repo.latestCheckRuns(sha)
	if r.URL.Query().Get("filter") == "all" {
		runs = repo.runsBySHA[sha]
	}
	out := rest.Page(r, runs, func(c *CheckRun) map[string]any { return checks.RunJSON(rest.Base(r), repo.fullName(), c) })
	return rest.JSON(http.StatusOK, map[string]any{"total_count": len(runs), "check_runs": out})
}

func (s *Server) combinedStatus(r *http.Request, repo *Repo) rest.Reply {
	sha := repo.resolveRef(r.PathValue("ref"))
	all := repo.latestStatuses(sha)
	combined, out := checks.Combined(all), rest.Page(r, all, checks.StatusJSON)
	return rest.JSON(http.StatusOK, map[string]any{
		"state": combined, "sha": sha, "total_count": len(all), "statuses": out,
		"repository": map[string]any{"full_name": repo.fullName()},
	})

}

// actionsJob finds the GitHub Actions check run of job id.
func (r *Repo) actionsJob(id int64) *CheckRun {
	return r.findCheckRun(func(c *CheckRun) bool { return c.JobID == id && c.App == "github-actions" })
}

func (s *Server) rerequestCheckRun(r *http.Request, repo *Repo) rest.Reply {
	id := rest.PathID(r, "check_run_id")
	c := repo.findCheckRun(func(c *CheckRun) bool { return c.ID == id })
	if c == nil {
		return rest.NotFound()
	}
	repo.rerun(c, id)
	return rest.JSON(http.StatusCreated, map[string]any{})
}

func (s *Server) rerunJob(r *http.Request, repo *Repo) rest.Reply {
	id := rest.PathID(r, "job_id")
	c := repo.actionsJob(id)
	switch {
	case c == nil:
		return rest.NotFound()
	case c.Status != "completed":
		return rest.Error(http.StatusForbidden, "This job is already running")
	}
	repo.rerun(c, id)
	return rest.JSON(http.StatusCreated, map[string]any{})
}

func (s *Server) jobLogs(r *http.Request, repo *Repo) rest.Reply {
	id := rest.PathID(r, "job_id")
	if repo.actionsJob(id) == nil {
		return rest.NotFound()
	}
	return rest.Reply{Status: http.StatusFound,
		Location: fmt.Sprintf("%s/_blobs/jobs/%d/logs?sig=%s&repo=%s", rest.Base(r), id, "fake", url.QueryEscape(repo.fullName()))}
}

func (s *Server) logBlob(r *http.Request) rest.Reply {
	id := rest.PathID(r, "job_id")
	if repo := s.repos[repoKey(r.URL.Query().Get("repo"))]; repo != nil {
		if c := repo.findCheckRun(func(c *CheckRun) bool { return c.JobID == id }); c != nil {
			return rest.Reply{Status: http.StatusOK, Raw: []byte(c.Log), ContentType: "text/plain"}
		}
	}
	return rest.Reply{Status: http.StatusNotFound, Raw: []byte("BlobNotFound"), ContentType: "application/xml"}
}
