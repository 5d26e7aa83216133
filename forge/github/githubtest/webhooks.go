package githubtest

import (
	"maps"
	"net/http"
	"slices"

	"github.com/agenttree/agenttree/forge/github/githubtest/internal/rest"
	"github.com/agenttree/agenttree/forge/github/githubtest/internal/webhook"
)

// onHooks answers an endpoint of the hooks API with the repository's
// webhooks (internal/webhook).
func onHooks(h func(*webhook.Hooks, *http.Request) rest.Reply) repoHandler {
	return func(r *http.Request, repo *Repo) rest.Reply { return h(repo.hooks, r) }
}

// prRef is a PR as webhook payloads name it.
func prRef(p *prState) webhook.PR {
	return webhook.PR{Number: p.Number, State: p.State, HeadSHA: p.HeadSHA, Branch: p.Branch}
}

// emitCheckRun sends check_run, and check_suite completed once every
// latest run on the commit has completed.
func (r *Repo) emitCheckRun(c *CheckRun, action string) {
	var prs []webhook.PR
	for _, n := range slices.Sorted(maps.Keys(r.prs)) {
		if p := r.prs[n]; p.State == "open" && p.HeadSHA == c.SHA {
			prs = append(prs, prRef(p))
		}
	}
	suiteDone := action == "completed"
	for _, other := range r.latestCheckRuns(c.SHA) {
		suiteDone = suiteDone && other.Status == "completed"
	}
	r.hooks.CheckRun(webhook.CheckRun{ID: c.ID, Name: c.Name, SHA: c.SHA, Status: c.Status, Conclusion: c.Conclusion}, action, prs, suiteDone)
}

// Deliveries is how many deliveries the fake has attempted to the
// repository's hooks, and how many of those were answered 2xx.
func (r *Repo) Deliveries() (made, ok int) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.hooks.Deliveries()
}

// HookIDs lists the ids of the repository's hooks.
func (r *Repo) HookIDs() []int64 {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.hooks.IDs()
}

// DeleteHook deletes a hook out of band, as a person would in the
// repository's settings.
func (r *Repo) DeleteHook(id int64) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.hooks.Delete(id)
}
