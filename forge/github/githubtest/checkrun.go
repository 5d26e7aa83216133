package githubtest

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/agenttree/agenttree/forge/github/githubtest/internal/checks"
)

// CheckRun is one check run on a commit.
type CheckRun = checks.CheckRun

// Status is one commit status (the older statuses API).
type Status = checks.Status

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
	cr.Status = cmp.Or(cr.Status, "queued")
	cr.App = cmp.Or(cr.App, "github-actions")
	if cr.App == "github-actions" {
		cr.JobID = cmp.Or(cr.JobID, cr.ID)
		if cr.RunID == 0 {
			cr.RunID = r.s.nextID()
		}
		cr.HTMLURL = cmp.Or(cr.HTMLURL, fmt.Sprintf("%s/%s/actions/runs/%d/job/%d", webURL, r.fullName(), cr.RunID, cr.JobID))
	}
	cr.HTMLURL = cmp.Or(cr.HTMLURL, fmt.Sprintf("%s/%s/runs/%d", webURL, r.fullName(), cr.ID))
	cr.DetailsURL = cmp.Or(cr.DetailsURL, cr.HTMLURL)
	if cr.Status != "queued" && cr.StartedAt.IsZero() {
		cr.StartedAt = r.s.now()
	}
	if cr.Status == "completed" && cr.CompletedAt.IsZero() {
		cr.CompletedAt = r.s.now()
	}
	c := &cr
	r.checkRuns = append(r.checkRuns, c)
	r.runsBySHA[sha] = append(r.runsBySHA[sha], c)
	r.emitCheckRun(c, "created")
	if c.Status == "completed" {
		r.emitCheckRun(c, "completed")
	}
	return c.ID
}

// findCheckRun is the first check run that match accepts, or nil.
func (r *Repo) findCheckRun(match func(*CheckRun) bool) *CheckRun {
	if i := slices.IndexFunc(r.checkRuns, match); i >= 0 {
		return r.checkRuns[i]
	}
	return nil
}

// mustCheckRun finds a check run for a test that scripts it, or panics
// naming what is missing.
func (r *Repo) mustCheckRun(what string, match func(*CheckRun) bool) *CheckRun {
	c := r.findCheckRun(match)
	if c == nil {
		panic(fmt.Sprintf("githubtest: no %s in %s", what, r.fullName()))
	}
	return c
}

func (r *Repo) checkRunByID(id int64) *CheckRun {
	return r.mustCheckRun(fmt.Sprintf("check run %d", id), func(c *CheckRun) bool { return c.ID == id })
}

// SetCheckRunStatus moves a check run to queued, in_progress, ...
func (r *Repo) SetCheckRunStatus(id int64, status string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	c := r.checkRunByID(id)
	c.Status = status
	if status != "queued" && c.StartedAt.IsZero() {
		c.StartedAt = r.s.now()
	}
}

// CompleteCheckRun finishes a check run with a conclusion.
func (r *Repo) CompleteCheckRun(id int64, conclusion string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	c := r.checkRunByID(id)
	c.Status, c.Conclusion = "completed", conclusion
	if c.StartedAt.IsZero() {
		c.StartedAt = r.s.now()
	}
	c.CompletedAt = r.s.now()
	r.emitCheckRun(c, "completed")
}

// SetJobLog sets the log text of the Actions job jobID.
func (r *Repo) SetJobLog(jobID int64, log string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.mustCheckRun(fmt.Sprintf("job %d", jobID), func(c *CheckRun) bool { return c.JobID == jobID }).Log = log
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

// rerun records a rerun asked for by id (a check run's or a job's) and
// adds a fresh queued run with the same name, which filter=latest then
// shows in place of the old one — what a rerun looks like from the API.
func (r *Repo) rerun(old *CheckRun, id int64) {
	r.reruns = append(r.reruns, id)
	r.addCheckRunLocked(old.SHA, CheckRun{Name: old.Name, App: old.App, RunID: old.RunID})
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
	r.hooks.Status(st.ID, sha, context, state, targetURL)
	return st.ID
}

// latestCheckRuns is what filter=latest (the default) returns: the newest
// run per app and name.
func (r *Repo) latestCheckRuns(sha string) []*CheckRun {
	type key struct{ app, name string }
	return latestBy(r.runsBySHA[sha], func(c *CheckRun) key { return key{c.App, c.Name} })
}

// latestStatuses is the combined status's view: the newest per context.
func (r *Repo) latestStatuses(sha string) []*Status {
	return latestBy(r.statusesBySHA[sha], func(s *Status) string { return s.Context })
}
