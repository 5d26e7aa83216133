package githubtest

import (
	"strings"

	"github.com/agenttree/agenttree/forge/github/githubtest/internal/webhook"
)

// Repo is one repository's state. Its methods are safe to call while the
// server answers requests.
type Repo struct {
	s             *Server
	Owner, Name   string
	DefaultBranch string

	prs        map[int]*prState
	nextNumber int
	refs       map[string]string // branch → sha
	checkRuns  []*CheckRun
	statuses   []*Status
	// Indexes by sha keep the fake linear when a benchmark fills it with
	// thousands of PRs.
	runsBySHA     map[string][]*CheckRun
	statusesBySHA map[string][]*Status
	reruns        []int64
	hooks         *webhook.Hooks
}

func (r *Repo) fullName() string { return r.Owner + "/" + r.Name }

// SetBranch creates or moves a branch.
func (r *Repo) SetBranch(name, sha string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.refs[name] = sha
}

// Branch reports a branch's sha, and whether it exists.
func (r *Repo) Branch(name string) (string, bool) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	sha, ok := r.refs[name]
	return sha, ok
}

// resolveRef finds the commit a branch name or an abbreviated sha names,
// as GitHub's commits/{ref} endpoints do.
func (r *Repo) resolveRef(ref string) string {
	if sha, ok := r.refs[ref]; ok {
		return sha
	}
	if len(ref) >= 4 && len(ref) < 40 {
		for _, c := range r.checkRuns {
			if strings.HasPrefix(c.SHA, ref) {
				return c.SHA
			}
		}
		for _, st := range r.statuses {
			if strings.HasPrefix(st.SHA, ref) {
				return st.SHA
			}
		}
	}
	return ref
}

// latestBy keeps the last of items for each key, in the order the keys
// first appear: GitHub's view of things that supersede each other (a
// reviewer's reviews, a context's statuses, a check's reruns).
func latestBy[T any, K comparable](items []T, key func(T) K) []T {
	at := map[K]int{}
	var out []T
	for _, it := range items {
		k := key(it)
		if i, seen := at[k]; seen {
			out[i] = it
			continue
		}
		at[k] = len(out)
		out = append(out, it)
	}
	return out
}
