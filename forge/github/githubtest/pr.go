package githubtest

import (
	"cmp"
	"fmt"
	"slices"
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
	// Comments are the conversation's comments, oldest first: AddPR adds
	// them as the token's user's; AddComment adds one by anyone.
	Comments    []string
	MergeMethod string // how it was merged, once merged
	// Reviews are the submitted reviews, oldest first (see AddReview).
	Reviews []Review
}

// Review is one submitted review of a PR.
type Review struct {
	// ID is set by AddReview.
	ID     int64
	Author string
	// State is APPROVED, CHANGES_REQUESTED, COMMENTED or DISMISSED.
	State string
	// Body is the review's summary comment; often empty.
	Body string
	// NoWriteAccess marks a reviewer who cannot push to the repository:
	// anyone may review a public repository's PRs, and such reviews are
	// left out of latestOpinionatedReviews(writersOnly: true).
	NoWriteAccess bool
	// CommitID is the head the review was given on (GitHub's commit_id);
	// empty means the PR's head when the review was added.
	CommitID string
	// SubmittedAt is when it was added (the server's clock) unless set.
	SubmittedAt time.Time
}

// clone is a copy of pr that shares no slice with it.
func (pr PR) clone() PR {
	pr.Labels = slices.Clone(pr.Labels)
	pr.Comments = slices.Clone(pr.Comments)
	pr.Reviews = slices.Clone(pr.Reviews)
	return pr
}

type prState struct {
	PR
	id       int64
	created  time.Time
	updated  time.Time
	closedAt time.Time
	mergedAt time.Time
	mergeSHA string
	labelIDs map[string]int64
	unknownN int // reads left that answer UNKNOWN
	// comments are the conversation's comments; PR.Comments holds their
	// bodies.
	comments []*comment
	threads  []*thread
}

// AddPR adds a pull request and returns its number (pr.Number, or the next
// free number when 0). The head branch ref is created (or moved) to
// pr.HeadSHA.
func (r *Repo) AddPR(pr PR) int {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.addPRLocked(pr)
}

func (r *Repo) addPRLocked(pr PR) int {
	pr.Number = cmp.Or(pr.Number, r.nextNumber)
	r.nextNumber = max(r.nextNumber, pr.Number+1)
	pr.Author = cmp.Or(pr.Author, viewer)
	pr.Base = cmp.Or(pr.Base, r.DefaultBranch)
	pr.State = cmp.Or(pr.State, "open")
	pr.Mergeable = cmp.Or(pr.Mergeable, "MERGEABLE")
	pr.Title = cmp.Or(pr.Title, fmt.Sprintf("PR %d", pr.Number))
	if pr.HeadSHA == "" {
		pr.HeadSHA = r.s.fakeSHA()
	}
	pr.Branch = cmp.Or(pr.Branch, fmt.Sprintf("branch-%d", pr.Number))
	now := r.s.now()
	st := &prState{PR: pr.clone(), id: r.s.nextID(), created: now, updated: now, labelIDs: map[string]int64{}}
	for _, l := range pr.Labels {
		st.labelIDs[l] = r.s.nextID()
	}
	st.Comments, st.Reviews = nil, nil
	for _, body := range pr.Comments {
		r.addComment(st, Comment{Body: body})
	}
	for _, rv := range pr.Reviews {
		r.addReview(st, rv)
	}
	r.setState(st, pr.State)
	r.prs[pr.Number] = st
	if pr.State == "open" {
		r.refs[pr.Branch] = pr.HeadSHA
	}
	r.hooks.PullRequest(prRef(st), "opened")
	return pr.Number
}

// setState moves a PR to open, closed or merged, with the times and
// merge commit that go with it.
func (r *Repo) setState(p *prState, state string) {
	p.State = state
	now := r.s.now()
	switch state {
	case "open":
		p.closedAt = time.Time{}
	case "closed":
		p.closedAt = now
	case "merged":
		p.mergedAt, p.closedAt, p.mergeSHA = now, now, r.s.fakeSHA()
	}
}

// PR returns a copy of a PR's current state.
func (r *Repo) PR(number int) (PR, bool) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	p, ok := r.prs[number]
	if !ok {
		return PR{}, false
	}
	return p.PR.clone(), true
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
	before := p.HeadSHA
	p.HeadSHA = sha
	p.updated = r.s.now()
	r.refs[p.Branch] = sha
	r.hooks.Push(p.Branch, before, sha)
	r.hooks.PullRequest(prRef(p), "synchronize")
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

// AddReview submits a review and returns its id. It does not change the
// review decision, which GitHub computes only when branch protection
// requires reviews; set that with SetReviewDecision.
func (r *Repo) AddReview(number int, rv Review) int64 {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.addReview(r.mustPR(number), rv)
}

func (r *Repo) addReview(p *prState, rv Review) int64 {
	rv.ID = r.s.nextID()
	rv.Author = cmp.Or(rv.Author, viewer)
	rv.CommitID = cmp.Or(rv.CommitID, p.HeadSHA)
	if rv.SubmittedAt.IsZero() {
		rv.SubmittedAt = r.s.now()
	}
	p.Reviews = append(p.Reviews, rv)
	r.hooks.Review(prRef(p), rv.ID, rv.State, rv.CommitID, rv.Author)
	return rv.ID
}

// latestOpinionatedReviews is GitHub's field of that name: each reviewer's
// latest review that approved or requested changes (or was one that got
// dismissed), optionally only writers', at most first.
func (p *prState) latestOpinionatedReviews(first int, writersOnly bool) []Review {
	var opinions []Review
	for _, rv := range p.Reviews {
		switch {
		case rv.State != "APPROVED" && rv.State != "CHANGES_REQUESTED" && rv.State != "DISMISSED":
		case writersOnly && rv.NoWriteAccess:
		default:
			opinions = append(opinions, rv)
		}
	}
	latest := latestBy(opinions, func(rv Review) string { return rv.Author })
	return latest[:min(first, len(latest))]
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
	r.setState(p, state)
	r.hooks.PullRequest(prRef(p), stateAction(state))
}

// stateAction is the pull_request action of a move to state.
func stateAction(state string) string {
	if state == "open" {
		return "reopened"
	}
	return "closed"
}
