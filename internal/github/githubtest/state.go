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
