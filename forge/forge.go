// Package forge is the engine's view of where pull requests live: GitHub
// (forge/github), or the local forge (forge/local: a bare git repository
// and records under _agenttree/forge). Hooks talk to a Forge, and find
// what only some forges can do (Approver, MergeableWaiter, ConflictLister,
// ReviewFeed) with As.
package forge

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/agenttree/agenttree/internal/gitx"
)

// PR states.
const (
	StateOpen   = "open"
	StateMerged = "merged"
	StateClosed = "closed"
)

// Mergeability. Unknown is normal on GitHub while it computes the answer in
// the background.
const (
	Mergeable   = "mergeable"
	Conflicting = "conflicting"
	Unknown     = "unknown"
)

// Review decisions.
const (
	ReviewApproved         = "approved"
	ReviewChangesRequested = "changes_requested"
	ReviewRequired         = "review_required"
	ReviewNone             = ""
)

// PR is a pull request's state at one moment.
type PR struct {
	Number    int    `json:"number"`
	URL       string `json:"url"`
	Title     string `json:"title"`
	Branch    string `json:"branch"`
	Base      string `json:"base"`
	HeadSHA   string `json:"head_sha"`
	State     string `json:"state"`
	Draft     bool   `json:"draft"`
	Mergeable string `json:"mergeable"`
	// ReviewDecision is approved, changes_requested, review_required or "".
	ReviewDecision string `json:"review_decision"`
	// ApprovedSHA is the head commit the latest approval was given on, when
	// the forge knows it: an approval of an older head does not cover
	// commits pushed since.
	ApprovedSHA string `json:"approved_sha,omitempty"`
	// Checks is the CI state of HeadSHA when the forge reports it with the
	// PR (the batched query does): nil means not fetched (call Checks), an
	// empty slice means there are none.
	Checks []Check `json:"checks,omitempty"`
	// FeedbackMark changes when someone says something new on the PR (a
	// comment, a review, a review thread), when the forge reports it with
	// the PR: a caller that remembers it lists the PR's Feedback (see
	// ReviewFeed) only when it moved. A reply in a thread, or a thread
	// resolved or reopened, does not move it. "" means not reported.
	FeedbackMark string `json:"feedback_mark,omitempty"`
}

// CheckState classifies one check run or commit status.
type CheckState string

const (
	CheckPending        CheckState = "pending" // queued, in progress, waiting, requested
	CheckSuccess        CheckState = "success"
	CheckNeutral        CheckState = "neutral" // passing
	CheckSkipped        CheckState = "skipped" // passing
	CheckFailure        CheckState = "failure"
	CheckCancelled      CheckState = "cancelled"
	CheckTimedOut       CheckState = "timed_out"
	CheckActionRequired CheckState = "action_required"
	CheckStale          CheckState = "stale"
)

// Passing reports whether the state lets a PR through.
func (s CheckState) Passing() bool {
	return s == CheckSuccess || s == CheckNeutral || s == CheckSkipped
}

// Done reports whether the check has finished. An unset state is not a
// result, so it counts as pending rather than as a failure.
func (s CheckState) Done() bool { return s != CheckPending && s != "" }

// Check is one CI result bound to a commit.
type Check struct {
	// ID identifies the check for reruns and logs (a check run id on GitHub).
	ID    int64      `json:"id,omitempty"`
	Name  string     `json:"name"`
	SHA   string     `json:"sha"`
	State CheckState `json:"state"`
	URL   string     `json:"url,omitempty"`
	// Kind is "check_run" or "status" on GitHub, "local" on the local forge.
	Kind string `json:"kind"`
	// JobID names a GitHub Actions job whose log can be fetched.
	JobID int64 `json:"job_id,omitempty"`
	// Queued: the check waits to start (for a runner, an approval, the
	// checks before it; on the local forge, a free run slot under
	// ci.max_parallel). Pending and not queued is running.
	Queued      bool      `json:"queued,omitempty"`
	StartedAt   time.Time `json:"started_at,omitempty"`
	CompletedAt time.Time `json:"completed_at,omitempty"`
	// Environment says why a failed check failed for its environment rather
	// than its code, when the forge itself knows: GitHub's
	// startup_failure, or a local runner that could not start the command,
	// was lost, or saw it killed by a signal it did not send. "" otherwise.
	Environment string `json:"environment,omitempty"`
}

// NewPR asks for a pull request.
type NewPR struct {
	Branch string
	Base   string
	Title  string
	Body   string
	Draft  bool
	Labels []string
}

// MergeMethod is squash, merge or rebase.
type MergeMethod string

const (
	MergeSquash MergeMethod = "squash"
	MergeMerge  MergeMethod = "merge"
	MergeRebase MergeMethod = "rebase"
)

// Forge is where pull requests live. Every method but Comment is safe to
// call again after a failure or a crash: EnsurePR finds the PR a previous
// call opened, Merge of a merged PR succeeds, Close of a closed PR does
// nothing and does not repeat its comment. Comment called again comments
// again.
type Forge interface {
	// EnsurePR opens a PR for req.Branch, or returns the open one that
	// exists; created says which.
	EnsurePR(ctx context.Context, req NewPR) (pr *PR, created bool, err error)
	// PR returns a PR's current state.
	PR(ctx context.Context, number int) (*PR, error)
	// PRs returns many PRs' state, checks included, in as few requests as
	// the forge allows. Numbers it cannot find are absent from the map.
	PRs(ctx context.Context, numbers []int) (map[int]*PR, error)
	// Checks lists the checks for one commit. On the local forge the first
	// call for a commit starts CI in the background and returns it pending;
	// later calls report its progress and result. ctx bounds only the call.
	// A forge without CI reports one skipped (passing) check rather than
	// none, so "no checks" always means "CI has not started yet".
	Checks(ctx context.Context, sha string) ([]Check, error)
	// Rerun starts the given failed checks again.
	Rerun(ctx context.Context, checks []Check) error
	// Log returns the tail (at most lines lines) of a failed check's log,
	// or "" when the forge has none.
	Log(ctx context.Context, c Check, lines int) (string, error)
	// Merge merges a PR (an empty method means merge); merging a merged PR
	// succeeds. With expectHead set it merges only that commit, the one CI
	// verified, and fails with ErrHeadChanged if the head has moved.
	Merge(ctx context.Context, number int, method MergeMethod, deleteBranch bool, expectHead string) error
	// Close closes a PR, leaving comment if not empty.
	Close(ctx context.Context, number int, comment string) error
	// Comment adds a comment to a PR.
	Comment(ctx context.Context, number int, body string) error
}

// Wrapper is a Forge that stands in for another (LazyForge opens it on
// first use). A wrapper forwards the Forge methods and claims no optional
// capability: As and Unwrap look past it, the way errors.As looks through
// wrapped errors and net/http's ResponseController through wrapped
// ResponseWriters.
type Wrapper interface {
	Forge
	// Unwrap returns the forge this one stands for, or why it cannot be had.
	Unwrap() (Forge, error)
}

// Unwrap follows f's chain of wrappers to the forge that does the work, or
// to the error that keeps it from being had (a forge that could not be
// opened).
func Unwrap(f Forge) (Forge, error) {
	for {
		w, ok := f.(Wrapper)
		if !ok {
			return f, nil
		}
		inner, err := w.Unwrap()
		if err != nil {
			return nil, err
		}
		f = inner
	}
}

// As finds the first forge in f's chain of wrappers that implements T, an
// optional capability such as Approver. It reports false when none does, or
// when the chain cannot be followed (the calls of the capability would fail
// the same way).
func As[T any](f Forge) (T, bool) {
	for f != nil {
		if t, ok := f.(T); ok {
			return t, true
		}
		w, ok := f.(Wrapper)
		if !ok {
			break
		}
		inner, err := w.Unwrap()
		if err != nil {
			break
		}
		f = inner
	}
	var zero T
	return zero, false
}

// ConflictLister is a forge that can name the files a PR conflicts in.
type ConflictLister interface {
	ConflictFiles(ctx context.Context, number int) ([]string, error)
}

// MergeableWaiter is a forge that computes mergeability in the background
// and can be polled for it, giving up if the head moves (GitHub).
type MergeableWaiter interface {
	WaitMergeable(ctx context.Context, number int, expectHead string) (*PR, error)
}

// Cache is a forge that answers from what it read before (the
// controller's batch of a tick). Forget drops what it holds of PR number,
// which changed where the forge cannot see it (git pushed a new head).
type Cache interface {
	Forget(number int)
}

// Approver is a forge on which a person's `agenttree approve` is the PR
// review (the local forge).
type Approver interface {
	Approve(ctx context.Context, number int, by string) error
}

// RequestCounter is a forge that counts what it was asked as GitHub would
// count requests: the local forge, so that what a run would cost on GitHub
// can be told without GitHub.
type RequestCounter interface {
	Requests() int64
}

// Errors a Forge reports. An API error is never a CI failure: callers tell
// them apart with errors.Is.
var (
	ErrNotFound  = errors.New("not found")
	ErrAuth      = errors.New("authentication failed")
	ErrRateLimit = errors.New("rate limited")
	// ErrConflict is gitx's: a conflict git reports on the host is the
	// forge's conflict too.
	ErrConflict = gitx.ErrConflict
	// ErrHeadChanged: the PR's head moved while agenttree was acting on it.
	ErrHeadChanged = errors.New("PR head changed")
	// ErrNotRerunnable: a check cannot be started again through the forge
	// (a commit status posted by an outside CI service).
	ErrNotRerunnable = errors.New("check cannot be rerun through the forge")
	// ErrTampered: a record the forge keeps was changed outside agenttree
	// (the local forge's PR and CI records): a person puts it right.
	ErrTampered = errors.New("record changed outside agenttree")
	// ErrServer: the forge failed to answer (a 5xx, a dropped connection
	// or no answer in time, that outlasted the retries): it says the
	// forge is unwell, nothing about the request,
	// so what asked waits it out rather than blaming the change.
	ErrServer = errors.New("the forge failed to answer")
)

// RateLimitError carries when a rate limit resets. Forge names the forge
// whose limit it was ("GitHub"), for people reading the error.
type RateLimitError struct {
	Forge      string
	Reset      time.Time
	RetryAfter time.Duration
	Secondary  bool
}

func (e *RateLimitError) Error() string {
	kind := "primary"
	if e.Secondary {
		kind = "secondary"
	}
	return cmp.Or(e.Forge, "the forge's") + " " + kind + " rate limit; retry after " + e.RetryAfter.String()
}

func (e *RateLimitError) Unwrap() error { return ErrRateLimit }

// Summary counts a commit's checks by state.
type Summary struct {
	Total, Pending, Passing, Failing int
	// Queued counts the pending checks that wait to start.
	Queued int
	Failed []Check
}

// Summarize counts checks by state.
func Summarize(checks []Check) Summary {
	var s Summary
	for _, c := range checks {
		s.Total++
		switch {
		case !c.State.Done():
			s.Pending++
			if c.Queued {
				s.Queued++
			}
		case c.State.Passing():
			s.Passing++
		default:
			s.Failing++
			s.Failed = append(s.Failed, c)
		}
	}
	return s
}
