package githubtest

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// PR is a pull request as the fake stores it. AddPR takes one to script a
// PR; Server.PR returns a copy of the current state.
type PR struct {
	Number  int
	Title   string
	Body    string
	Author  string // login; "octocat" when empty
	Branch  string // head ref
	HeadSHA string
	Base    string // base ref; the repository's default branch when empty
	// State is open, closed or merged (GraphQL spells them in capitals, the
	// REST API as open/closed plus merged=true).
	State string
	Draft bool
	// Mergeable is MERGEABLE, CONFLICTING or UNKNOWN (GraphQL's enum);
	// MERGEABLE when empty. SetMergeable scripts "UNKNOWN for N reads".
	Mergeable string
	// ReviewDecision is APPROVED, CHANGES_REQUESTED, REVIEW_REQUIRED or "".
	ReviewDecision string
	Labels         []string
	Comments       []string
	MergeMethod    string // how it was merged, once merged
	// Reviews are the submitted reviews, oldest first (see AddReview).
	Reviews []Review
}

// Review is one submitted review of a PR.
type Review struct {
	Author string
	// State is APPROVED, CHANGES_REQUESTED, COMMENTED or DISMISSED.
	State string
	// NoWriteAccess marks a reviewer who cannot push to the repository:
	// anyone may review a public repository's PRs, and such reviews are
	// left out of latestOpinionatedReviews(writersOnly: true).
	NoWriteAccess bool
	// CommitID is the head the review was given on (GitHub's commit_id);
	// empty means the PR's head when the review was added.
	CommitID string
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
}

type prState struct {
	PR
	id        int64
	created   time.Time
	updated   time.Time
	closedAt  time.Time
	mergedAt  time.Time
	mergeSHA  string
	labelIDs  map[string]int64
	unknownN  int // reads left that answer UNKNOWN
	commentID []int64
	commentAt []time.Time
}

func (r *Repo) fullName() string { return r.Owner + "/" + r.Name }

// AddPR adds a pull request and returns its number (pr.Number, or the next
// free number when 0). The head branch ref is created (or moved) to
// pr.HeadSHA.
func (r *Repo) AddPR(pr PR) int {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.addPRLocked(pr)
}

func (r *Repo) addPRLocked(pr PR) int {
	if pr.Number == 0 {
		pr.Number = r.nextNumber
	}
	if pr.Number >= r.nextNumber {
		r.nextNumber = pr.Number + 1
	}
	if pr.Author == "" {
		pr.Author = "octocat"
	}
	if pr.Base == "" {
		pr.Base = r.DefaultBranch
	}
	if pr.State == "" {
		pr.State = "open"
	}
	if pr.Mergeable == "" {
		pr.Mergeable = "MERGEABLE"
	}
	if pr.Title == "" {
		pr.Title = fmt.Sprintf("PR %d", pr.Number)
	}
	if pr.HeadSHA == "" {
		pr.HeadSHA = r.s.fakeSHA()
	}
	if pr.Branch == "" {
		pr.Branch = fmt.Sprintf("branch-%d", pr.Number)
	}
	pr.Labels = slices.Clone(pr.Labels)
	pr.Comments = slices.Clone(pr.Comments)
	pr.Reviews = slices.Clone(pr.Reviews)
	now := r.s.now()
	st := &prState{PR: pr, id: r.s.nextID(), created: now, updated: now, labelIDs: map[string]int64{}}
	for _, l := range pr.Labels {
		st.labelIDs[l] = r.s.nextID()
	}
	for range pr.Comments {
		st.commentID = append(st.commentID, r.s.nextID())
		st.commentAt = append(st.commentAt, now)
	}
	if pr.State == "merged" {
		st.mergedAt, st.closedAt, st.mergeSHA = now, now, r.s.fakeSHA()
	}
	if pr.State == "closed" {
		st.closedAt = now
	}
	r.prs[pr.Number] = st
	if pr.State == "open" {
		r.refs[pr.Branch] = pr.HeadSHA
	}
	return pr.Number
}

// PR returns a copy of a PR's current state.
func (r *Repo) PR(number int) (PR, bool) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	p, ok := r.prs[number]
	if !ok {
		return PR{}, false
	}
	out := p.PR
	out.Labels = slices.Clone(p.Labels)
	out.Comments = slices.Clone(p.Comments)
	out.Reviews = slices.Clone(p.Reviews)
	return out, true
}

// PRCount is how many PRs the repository has, in any state.
func (r *Repo) PRCount() int {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return len(r.prs)
}

func (r *Repo) mustPR(number int) *prState {
	p, ok := r.prs[number]
	if !ok {
		panic(fmt.Sprintf("githubtest: no PR #%d in %s", number, r.fullName()))
	}
	return p
}

// SetHead moves a PR's head (a push) to sha, moving its branch too.
func (r *Repo) SetHead(number int, sha string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	p := r.mustPR(number)
	p.HeadSHA = sha
	p.updated = r.s.now()
	r.refs[p.Branch] = sha
}

// SetMergeable makes the PR answer UNKNOWN for the next unknownReads reads
// (REST or GraphQL), then final.
func (r *Repo) SetMergeable(number int, final string, unknownReads int) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	p := r.mustPR(number)
	p.Mergeable = final
	p.unknownN = unknownReads
}

// AddReview submits a review. It does not change the review decision,
// which GitHub computes only when branch protection requires reviews; set
// that with SetReviewDecision.
func (r *Repo) AddReview(number int, rv Review) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	p := r.mustPR(number)
	if rv.CommitID == "" {
		rv.CommitID = p.HeadSHA
	}
	p.Reviews = append(p.Reviews, rv)
}

// latestOpinionatedReviews is GitHub's field of that name: each reviewer's
// latest review that approved or requested changes (or was one that got
// dismissed), optionally only writers', at most first.
func (p *prState) latestOpinionatedReviews(first int, writersOnly bool) []Review {
	latest := map[string]int{}
	var order []string
	for i, rv := range p.Reviews {
		switch {
		case rv.State != "APPROVED" && rv.State != "CHANGES_REQUESTED" && rv.State != "DISMISSED":
			continue
		case writersOnly && rv.NoWriteAccess:
			continue
		}
		if _, seen := latest[rv.Author]; !seen {
			order = append(order, rv.Author)
		}
		latest[rv.Author] = i
	}
	out := []Review{}
	for _, a := range order {
		if len(out) == first {
			break
		}
		out = append(out, p.Reviews[latest[a]])
	}
	return out
}

// SetReviewDecision sets APPROVED, CHANGES_REQUESTED, REVIEW_REQUIRED or "".
func (r *Repo) SetReviewDecision(number int, decision string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.mustPR(number).ReviewDecision = decision
}

// SetState changes a PR's state out of band (someone merged it by hand).
func (r *Repo) SetState(number int, state string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	p := r.mustPR(number)
	p.State = state
	now := r.s.now()
	switch state {
	case "merged":
		p.mergedAt, p.closedAt, p.mergeSHA = now, now, r.s.fakeSHA()
	case "closed":
		p.closedAt = now
	}
}

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
			cr.HTMLURL = fmt.Sprintf("%s/%s/actions/runs/%d/job/%d", r.s.web, r.fullName(), cr.RunID, cr.JobID)
		}
	}
	if cr.HTMLURL == "" {
		cr.HTMLURL = fmt.Sprintf("%s/%s/runs/%d", r.s.web, r.fullName(), cr.ID)
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

// readMergeable consumes one scripted UNKNOWN read.
func (p *prState) readMergeable() string {
	if p.State != "open" {
		return "UNKNOWN"
	}
	if p.unknownN > 0 {
		p.unknownN--
		return "UNKNOWN"
	}
	return p.Mergeable
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
