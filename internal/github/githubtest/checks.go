package githubtest

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

func checkRunJSON(r *http.Request, s *Server, repo *Repo, c *CheckRun) map[string]any {
	var conclusion any
	if c.Status == "completed" {
		conclusion = c.Conclusion
	}
	return map[string]any{
		"id":           c.ID,
		"head_sha":     c.SHA,
		"node_id":      "CR_" + strconv.FormatInt(c.ID, 10),
		"url":          fmt.Sprintf("%s/repos/%s/check-runs/%d", s.apiBase(r), repo.fullName(), c.ID),
		"html_url":     c.HTMLURL,
		"details_url":  c.DetailsURL,
		"status":       c.Status,
		"conclusion":   conclusion,
		"started_at":   ts(c.StartedAt),
		"completed_at": ts(c.CompletedAt),
		"name":         c.Name,
		"output":       map[string]any{"title": nil, "summary": nil},
		"check_suite":  map[string]any{"id": c.RunID},
		"app":          map[string]any{"slug": c.App, "name": c.App},
	}
}

func (s *Server) listCheckRuns(r *http.Request, repo *Repo) reply {
	sha := repo.resolveRef(r.PathValue("ref"))
	var runs []*CheckRun
	if r.URL.Query().Get("filter") == "all" {
		runs = repo.runsBySHA[sha]
	} else {
		runs = repo.latestCheckRuns(sha)
	}
	page, perPage := pageParams(r, 30)
	out := []map[string]any{}
	for _, c := range paginate(runs, page, perPage) {
		out = append(out, checkRunJSON(r, s, repo, c))
	}
	return jsonReply(http.StatusOK, map[string]any{"total_count": len(runs), "check_runs": out})
}

func (s *Server) combinedStatus(r *http.Request, repo *Repo) reply {
	sha := repo.resolveRef(r.PathValue("ref"))
	all := repo.latestStatuses(sha)
	combined := "success"
	if len(all) == 0 {
		combined = "pending"
	}
	for _, st := range all {
		switch st.State {
		case "failure", "error":
			combined = "failure"
		case "pending":
			if combined != "failure" {
				combined = "pending"
			}
		}
	}
	page, perPage := pageParams(r, 30)
	out := []map[string]any{}
	for _, st := range paginate(all, page, perPage) {
		out = append(out, map[string]any{
			"id": st.ID, "context": st.Context, "state": st.State,
			"target_url": st.TargetURL, "description": st.Description,
			"created_at": ts(st.CreatedAt), "updated_at": ts(st.UpdatedAt),
		})
	}
	return jsonReply(http.StatusOK, map[string]any{
		"state": combined, "sha": sha, "total_count": len(all), "statuses": out,
		"repository": map[string]any{"full_name": repo.fullName()},
	})
}

// rerun records a rerun asked for by id (a check run's or a job's) and
// adds a fresh queued run with the same name, which filter=latest then
// shows in place of the old one — what a rerun looks like from the API.
func (repo *Repo) rerun(old *CheckRun, id int64) {
	repo.reruns = append(repo.reruns, id)
	repo.addCheckRunLocked(old.SHA, CheckRun{Name: old.Name, App: old.App, RunID: old.RunID})
}

// findCheckRun is the first check run that match accepts, or nil.
func (repo *Repo) findCheckRun(match func(*CheckRun) bool) *CheckRun {
	for _, c := range repo.checkRuns {
		if match(c) {
			return c
		}
	}
	return nil
}

// actionsJob finds the GitHub Actions check run of job id.
func (repo *Repo) actionsJob(id int64) *CheckRun {
	return repo.findCheckRun(func(c *CheckRun) bool { return c.JobID == id && c.App == "github-actions" })
}

func (s *Server) rerequestCheckRun(r *http.Request, repo *Repo) reply {
	id, _ := strconv.ParseInt(r.PathValue("check_run_id"), 10, 64)
	c := repo.findCheckRun(func(c *CheckRun) bool { return c.ID == id })
	if c == nil {
		return errReply(http.StatusNotFound, "Not Found")
	}
	repo.rerun(c, id)
	return jsonReply(http.StatusCreated, map[string]any{})
}

func (s *Server) rerunJob(r *http.Request, repo *Repo) reply {
	id, _ := strconv.ParseInt(r.PathValue("job_id"), 10, 64)
	c := repo.actionsJob(id)
	switch {
	case c == nil:
		return errReply(http.StatusNotFound, "Not Found")
	case c.Status != "completed":
		return errReply(http.StatusForbidden, "This job is already running")
	}
	repo.rerun(c, id)
	return jsonReply(http.StatusCreated, map[string]any{})
}

func (s *Server) jobLogs(r *http.Request, repo *Repo) reply {
	id, _ := strconv.ParseInt(r.PathValue("job_id"), 10, 64)
	if repo.actionsJob(id) == nil {
		return errReply(http.StatusNotFound, "Not Found")
	}
	return reply{status: http.StatusFound,
		location: fmt.Sprintf("%s/_blobs/jobs/%d/logs?sig=%s&repo=%s", s.apiBase(r), id, "fake", url.QueryEscape(repo.fullName()))}
}

func (s *Server) logBlob(r *http.Request, _ *Repo) reply {
	id, _ := strconv.ParseInt(r.PathValue("job_id"), 10, 64)
	if repo := s.repos[strings.ToLower(r.URL.Query().Get("repo"))]; repo != nil {
		if c := repo.findCheckRun(func(c *CheckRun) bool { return c.JobID == id }); c != nil {
			return reply{status: http.StatusOK, raw: []byte(c.Log), contentType: "text/plain"}
		}
	}
	return reply{status: http.StatusNotFound, raw: []byte("BlobNotFound"), contentType: "application/xml"}
}

// CheckRun is one check run on a commit.
type CheckRun struct {
	ID   int64
	Name string
	SHA  string
	// Status is queued, in_progress, completed, waiting, requested or
	// pending; queued when empty.
	Status string
	// Conclusion is set once Status is completed: success, failure,
	// neutral, cancelled, skipped, timed_out, action_required, stale,
	// startup_failure.
	Conclusion string
	HTMLURL    string
	DetailsURL string
	// App is the GitHub App slug; "github-actions" when empty. Only Actions
	// check runs have a job (and so a log and a job rerun).
	App         string
	JobID       int64
	RunID       int64
	Log         string
	StartedAt   time.Time
	CompletedAt time.Time
}

// Status is one commit status (the older statuses API).
type Status struct {
	ID          int64
	SHA         string
	Context     string
	State       string // error, failure, pending, success
	TargetURL   string
	Description string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// AddCheckRun adds a check run on sha and returns its id. Empty Status
// means queued; empty App means github-actions, whose runs get a job id
// (the check run id, as on GitHub) and Actions URLs.
func (r *Repo) AddCheckRun(sha string, cr CheckRun) int64 {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.addCheckRunLocked(sha, cr)
}

func (r *Repo) addCheckRunLocked(sha string, cr CheckRun) int64 {
	cr.SHA = sha
	if cr.ID == 0 {
		cr.ID = r.s.nextID()
	}
	if cr.Status == "" {
		cr.Status = "queued"
	}
	if cr.App == "" {
		cr.App = "github-actions"
	}
	if cr.App == "github-actions" {
		if cr.JobID == 0 {
			cr.JobID = cr.ID
		}
		if cr.RunID == 0 {
			cr.RunID = r.s.nextID()
		}
		if cr.HTMLURL == "" {
			cr.HTMLURL = fmt.Sprintf("%s/%s/actions/runs/%d/job/%d", webURL, r.fullName(), cr.RunID, cr.JobID)
		}
	}
	if cr.HTMLURL == "" {
		cr.HTMLURL = fmt.Sprintf("%s/%s/runs/%d", webURL, r.fullName(), cr.ID)
	}
	if cr.DetailsURL == "" {
		cr.DetailsURL = cr.HTMLURL
	}
	if cr.Status != "queued" && cr.StartedAt.IsZero() {
		cr.StartedAt = r.s.now()
	}
	if cr.Status == "completed" && cr.CompletedAt.IsZero() {
		cr.CompletedAt = r.s.now()
	}
	c := cr
	r.checkRuns = append(r.checkRuns, &c)
	r.runsBySHA[sha] = append(r.runsBySHA[sha], &c)
	return c.ID
}

func (r *Repo) mustCheckRun(id int64) *CheckRun {
	for _, c := range r.checkRuns {
		if c.ID == id {
			return c
		}
	}
	panic(fmt.Sprintf("githubtest: no check run %d", id))
}

// SetCheckRunStatus moves a check run to queued, in_progress, ...
func (r *Repo) SetCheckRunStatus(id int64, status string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	c := r.mustCheckRun(id)
	c.Status = status
	if status != "queued" && c.StartedAt.IsZero() {
		c.StartedAt = r.s.now()
	}
}

// CompleteCheckRun finishes a check run with a conclusion.
func (r *Repo) CompleteCheckRun(id int64, conclusion string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	c := r.mustCheckRun(id)
	c.Status, c.Conclusion = "completed", conclusion
	if c.StartedAt.IsZero() {
		c.StartedAt = r.s.now()
	}
	c.CompletedAt = r.s.now()
}

// SetJobLog sets the log text of the Actions job jobID.
func (r *Repo) SetJobLog(jobID int64, log string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	for _, c := range r.checkRuns {
		if c.JobID == jobID {
			c.Log = log
			return
		}
	}
	panic(fmt.Sprintf("githubtest: no job %d", jobID))
}

// CheckRuns returns every check run on sha, superseded ones included.
func (r *Repo) CheckRuns(sha string) []CheckRun {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var out []CheckRun
	for _, c := range r.runsBySHA[sha] {
		out = append(out, *c)
	}
	return out
}

// Reruns lists the check run and job ids a rerun was requested for, in
// order.
func (r *Repo) Reruns() []int64 {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return slices.Clone(r.reruns)
}

// AddStatus adds a commit status on sha and returns its id. A later status
// with the same context supersedes earlier ones, as on GitHub.
func (r *Repo) AddStatus(sha, context, state, targetURL string) int64 {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	now := r.s.now()
	st := &Status{ID: r.s.nextID(), SHA: sha, Context: context, State: state, TargetURL: targetURL, CreatedAt: now, UpdatedAt: now}
	r.statuses = append(r.statuses, st)
	r.statusesBySHA[sha] = append(r.statusesBySHA[sha], st)
	return st.ID
}

// latestCheckRuns is what filter=latest (the default) returns: the newest
// run per app and name.
func (r *Repo) latestCheckRuns(sha string) []*CheckRun {
	type key struct{ app, name string }
	latest := map[key]*CheckRun{}
	var order []key
	for _, c := range r.runsBySHA[sha] {
		k := key{c.App, c.Name}
		if _, seen := latest[k]; !seen {
			order = append(order, k)
		}
		if cur := latest[k]; cur == nil || c.ID > cur.ID {
			latest[k] = c
		}
	}
	out := make([]*CheckRun, 0, len(order))
	for _, k := range order {
		out = append(out, latest[k])
	}
	return out
}

// latestStatuses is the combined status's view: the newest per context.
func (r *Repo) latestStatuses(sha string) []*Status {
	latest := map[string]*Status{}
	var order []string
	for _, s := range r.statusesBySHA[sha] {
		if _, seen := latest[s.Context]; !seen {
			order = append(order, s.Context)
		}
		latest[s.Context] = s
	}
	out := make([]*Status, 0, len(order))
	for _, c := range order {
		out = append(out, latest[c])
	}
	return out
}
