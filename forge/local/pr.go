package local

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local/records"
	"github.com/agenttree/agenttree/internal/gitx"
)

// Record is a pull request as stored in forge/prs/N.yaml.
type Record struct {
	Number int      `yaml:"number"`
	Title  string   `yaml:"title"`
	Body   string   `yaml:"body,omitempty"`
	Branch string   `yaml:"branch"`
	Base   string   `yaml:"base"`
	Draft  bool     `yaml:"draft,omitempty"`
	Labels []string `yaml:"labels,omitempty"`
	State  string   `yaml:"state"`
	// HeadSHA is the branch head when the record was last written. An open
	// PR's head is read live from the bare repository instead; a merged or
	// closed PR keeps this one.
	HeadSHA     string     `yaml:"head_sha"`
	CreatedAt   time.Time  `yaml:"created_at"`
	UpdatedAt   time.Time  `yaml:"updated_at"`
	MergedAt    time.Time  `yaml:"merged_at,omitempty"`
	MergeMethod string     `yaml:"merge_method,omitempty"`
	MergeCommit string     `yaml:"merge_commit,omitempty"`
	ClosedAt    time.Time  `yaml:"closed_at,omitempty"`
	Approvals   []Approval `yaml:"approvals,omitempty"`
	// Comments is the conversation, oldest first.
	Comments []Comment `yaml:"comments,omitempty"`
	// Threads are the review threads on lines of the PR's files, oldest
	// first.
	Threads []Thread `yaml:"threads,omitempty"`
}

// Approval is a person's approval of a PR at a head commit.
type Approval struct {
	By  string    `yaml:"by"`
	SHA string    `yaml:"sha"`
	At  time.Time `yaml:"at"`
}

func (f *Forge) prPath(n int) string {
	return filepath.Join(f.dir, "prs", prName(n))
}

func prName(n int) string { return strconv.Itoa(n) + ".yaml" }

// prRecords are the PR records, each logged in a hash chain beside it
// (prs/N.chain.jsonl), so a record changed by hand (an approval added, a
// state changed) is not taken for one agenttree wrote. Records from
// before logs got theirs when their state directory was migrated
// (statedir.Layout.Migrate).
func (f *Forge) prRecords() records.Kind { return prKind(f.dir) }

// prKind is the PR records of the forge whose records are in dir.
func prKind(dir string) records.Kind {
	return records.Kind{Records: chain.Records{Dir: filepath.Join(dir, "prs")},
		Name: func(file string) string {
			if n, err := strconv.Atoi(strings.TrimSuffix(file, ".yaml")); err == nil {
				return fmt.Sprintf("local PR #%d", n)
			}
			return "local PR record " + file
		},
		Unlogged: "with its log gone nothing holds what agenttree wrote, so a person removes the record (create_pr then opens the PR again, " +
			"to be reviewed again)",
		Changed: "a person puts back the version agenttree last wrote (the content of the last line of %s)",
	}
}

// Record returns PR number's stored record (comments, review threads and
// approvals included); its HeadSHA may be older than the live one PR
// reports.
func (f *Forge) Record(ctx context.Context, number int) (*Record, error) {
	return f.read(number)
}

// read reads PR n's record. One changed outside agenttree is a
// *forge.TamperedError.
func (f *Forge) read(n int) (*Record, error) {
	data, err := f.prRecords().Read(prName(n))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("local PR #%d: %w (PRs are in %s)", n, forge.ErrNotFound, filepath.Join(f.dir, "prs"))
	case err != nil:
		return nil, err
	}
	var rec Record
	if err := yaml.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", f.prPath(n), err)
	}
	rec.upgrade()
	return &rec, nil
}

func (f *Forge) write(rec *Record) error {
	data, err := yaml.Marshal(rec)
	if err != nil {
		return fmt.Errorf("local PR #%d: %w", rec.Number, err)
	}
	return f.prRecords().Write(prName(rec.Number), data)
}

// update changes PR n under its lock.
func (f *Forge) update(ctx context.Context, n int, change func(*Record) error) error {
	unlock, err := f.lock(ctx, "pr-"+strconv.Itoa(n), fmt.Sprintf("local PR #%d", n))
	if err != nil {
		return err
	}
	defer unlock()
	rec, err := f.read(n)
	if err != nil {
		return err
	}
	if err := change(rec); err != nil {
		return err
	}
	rec.UpdatedAt = now()
	return f.write(rec)
}

// all reads every PR record, in number order: each record file, and each
// log whose record is gone. A record changed outside agenttree is not
// among them: it is in tampered, by number, with its error, so that it
// holds up only the issue whose PR it is.
func (f *Forge) all() (recs []*Record, tampered map[int]error, err error) {
	var numbers []int
	for _, ext := range []string{".yaml", ".chain.jsonl"} {
		names, err := filepath.Glob(filepath.Join(f.dir, "prs", "*"+ext))
		if err != nil {
			return nil, nil, err
		}
		for _, name := range names {
			if n, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(name), ext)); err == nil {
				numbers = append(numbers, n)
			}
		}
	}
	slices.Sort(numbers)
	for _, n := range slices.Compact(numbers) {
		rec, err := f.read(n)
		switch {
		case errors.Is(err, forge.ErrTampered):
			if tampered == nil {
				tampered = map[int]error{}
			}
			tampered[n] = err
			continue
		case errors.Is(err, forge.ErrNotFound):
			// A log with nothing in it and no record: a create a kill cut
			// short before it recorded anything. Nothing holds the number.
			continue
		case err != nil:
			return nil, nil, err
		}
		recs = append(recs, rec)
	}
	return recs, tampered, nil
}

// branchOf is the branch a PR record changed outside agenttree is for:
// the one the version its log holds last names, else the one it names
// now; "" when neither says.
func branchOf(err error) string {
	var changed *chain.ChangedError
	if !errors.As(err, &changed) {
		return ""
	}
	for _, data := range [][]byte{changed.Logged, changed.Found} {
		var rec Record
		if data != nil && yaml.Unmarshal(data, &rec) == nil && rec.Branch != "" {
			return rec.Branch
		}
	}
	return ""
}

// branchHead is the bare repository's head of branch, "" if it has none.
func (f *Forge) branchHead(ctx context.Context, branch string) (string, error) {
	sha, err := f.bare.RevParse(ctx, "refs/heads/"+branch)
	if errors.Is(err, gitx.ErrNoRef) {
		return "", nil
	}
	return sha, err
}

func checkBranch(b string) error {
	if b == "" || strings.HasPrefix(b, "-") || strings.HasPrefix(b, "refs/") || strings.ContainsAny(b, " ~^:?*[\\") || strings.Contains(b, "..") {
		return fmt.Errorf("bad branch name %q", b)
	}
	return nil
}

// EnsurePR opens a PR for req.Branch, which must already be pushed to the
// bare repository, or returns the open PR for that branch.
func (f *Forge) EnsurePR(ctx context.Context, req forge.NewPR) (*forge.PR, bool, error) {
	f.requests.Add(1)
	req.Base = cmp.Or(req.Base, f.opts.DefaultBranch)
	if err := checkNewPR(req); err != nil {
		return nil, false, fmt.Errorf("open local PR: %w", err)
	}
	head, err := f.pushedHead(ctx, req)
	if err != nil {
		return nil, false, err
	}
	rec, created, err := f.openOrFind(ctx, req, head)
	if err != nil {
		return nil, false, err
	}
	pr, err := f.view(ctx, rec, true)
	return pr, created, err
}

// checkNewPR refuses branch names a PR cannot have, and a PR onto its own
// branch.
func checkNewPR(req forge.NewPR) error {
	if err := checkBranch(req.Branch); err != nil {
		return err
	}
	if err := checkBranch(req.Base); err != nil {
		return fmt.Errorf("base: %w", err)
	}
	if req.Branch == req.Base {
		return fmt.Errorf("branch %s is the base branch; work on another branch", req.Branch)
	}
	return nil
}

// pushedHead is the head of req.Branch in the bare repository, where
// req.Base must be too.
func (f *Forge) pushedHead(ctx context.Context, req forge.NewPR) (string, error) {
	head, err := f.branchHead(ctx, req.Branch)
	if err != nil {
		return "", fmt.Errorf("open local PR for %s: %w", req.Branch, err)
	}
	if head == "" {
		return "", fmt.Errorf("open local PR: branch %s is not in %s (%w); push it first: git push %s %s",
			req.Branch, f.bareDir, forge.ErrNotFound, f.opts.Remote, req.Branch)
	}
	if base, err := f.branchHead(ctx, req.Base); err != nil || base == "" {
		return "", fmt.Errorf("open local PR: base branch %s is not in %s (%w); push it: git push %s %s",
			req.Base, f.bareDir, forge.ErrNotFound, f.opts.Remote, req.Base)
	}
	return head, nil
}

// openOrFind returns the open PR for req.Branch if there is one, else
// records a new PR at head under the next free number; created says
// which. The numbering lock makes two callers for one branch agree on one
// PR.
func (f *Forge) openOrFind(ctx context.Context, req forge.NewPR, head string) (rec *Record, created bool, err error) {
	unlock, err := f.lock(ctx, "prs", "local PR numbering")
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	recs, tampered, err := f.all()
	if err != nil {
		return nil, false, err
	}
	next := 1
	for n, err := range tampered {
		// Its number stays its own; and were it this branch's PR, a new
		// one would hide what was done to it.
		if branchOf(err) == req.Branch {
			return nil, false, err
		}
		next = max(next, n+1)
	}
	for _, rec := range recs {
		if rec.State == forge.StateOpen && rec.Branch == req.Branch {
			return rec, false, nil
		}
		next = max(next, rec.Number+1)
	}
	rec = newRecord(next, req, head)
	if err := f.write(rec); err != nil {
		return nil, false, fmt.Errorf("open local PR: %w", err)
	}
	return rec, true, nil
}

// newRecord is PR number n for req, open at head; its title defaults to
// the branch name.
func newRecord(n int, req forge.NewPR, head string) *Record {
	t := now()
	return &Record{
		Number: n, Title: cmp.Or(req.Title, req.Branch), Body: req.Body, Branch: req.Branch, Base: req.Base,
		Draft: req.Draft, Labels: req.Labels, State: forge.StateOpen, HeadSHA: head,
		CreatedAt: t, UpdatedAt: t,
	}
}

// URL is how PR n is named in messages.
func (f *Forge) URL(n int) string { return fmt.Sprintf("local:%s#%d", f.opts.Project, n) }

// view is rec as the engine sees it: live head, mergeability, review
// decision and, with withChecks, the CI result already recorded for the
// head (never a new run).
func (f *Forge) view(ctx context.Context, rec *Record, withChecks bool) (*forge.PR, error) {
	pr := &forge.PR{
		Number: rec.Number, URL: f.URL(rec.Number), Title: rec.Title, Branch: rec.Branch,
		Base: rec.Base, HeadSHA: rec.HeadSHA, State: rec.State, Draft: rec.Draft,
		Mergeable: forge.Unknown,
	}
	if rec.State == forge.StateOpen {
		head, err := f.branchHead(ctx, rec.Branch)
		if err != nil {
			return nil, fmt.Errorf("local PR #%d: %w", rec.Number, err)
		}
		if head != "" {
			pr.HeadSHA = head
			files, err := f.conflicts(ctx, rec.Base, head)
			switch {
			case errors.Is(err, gitx.ErrNoRef):
				// Base branch gone: nothing to compute against.
			case err != nil:
				return nil, fmt.Errorf("local PR #%d: %w", rec.Number, err)
			case files == nil:
				pr.Mergeable = forge.Mergeable
			default:
				pr.Mergeable = forge.Conflicting
			}
		}
	}
	pr.ReviewDecision = f.reviewDecision(rec, pr.HeadSHA)
	pr.ApprovedSHA = approvedSHA(rec, pr.HeadSHA)
	pr.FeedbackMark = feedbackMark(rec)
	if withChecks && pr.HeadSHA != "" {
		checks, err := f.ci.Recorded(ctx, pr.HeadSHA)
		if err != nil {
			return nil, fmt.Errorf("local PR #%d: %w", rec.Number, err)
		}
		pr.Checks = checks
	}
	return pr, nil
}

func (f *Forge) conflicts(ctx context.Context, base, head string) ([]string, error) {
	baseSHA, err := f.bare.RevParse(ctx, "refs/heads/"+base)
	if err != nil {
		return nil, err
	}
	return f.bare.ConflictFiles(ctx, baseSHA, head)
}

// reviewDecision: approved once someone approved (for the current head
// only with DismissStaleApprovals); otherwise review_required, since the
// local forge's answer to "who approves" is always a person running
// `agenttree approve`.
func (f *Forge) reviewDecision(rec *Record, head string) string {
	for _, a := range rec.Approvals {
		if !f.opts.DismissStaleApprovals || a.SHA == head {
			return forge.ReviewApproved
		}
	}
	return forge.ReviewRequired
}

// approvedSHA is the commit an approval covers: the head if someone
// approved it, else the latest approved commit.
func approvedSHA(rec *Record, head string) string {
	sha := ""
	for _, a := range rec.Approvals {
		if a.SHA == head {
			return head
		}
		sha = a.SHA
	}
	return sha
}

// PR returns PR number's current state, with the CI result recorded for
// its head if there is one.
func (f *Forge) PR(ctx context.Context, number int) (*forge.PR, error) {
	f.requests.Add(1)
	rec, err := f.read(number)
	if err != nil {
		return nil, err
	}
	return f.view(ctx, rec, true)
}

// PRs returns the state of many PRs. Checks holds recorded CI results only:
// nil when the head's CI has not been started (call Checks to start it),
// one skipped check when no CI is configured. A PR whose record (or its
// head's CI result) was changed outside agenttree is left out, as one
// not found: whoever asks for it alone (the hooks, the
// controller's watch of it) meets the error and stops that issue for a
// person, and the other PRs are not held up by it.
func (f *Forge) PRs(ctx context.Context, numbers []int) (map[int]*forge.PR, error) {
	f.requests.Add(int64(len(numbers)+49) / 50)
	out := make(map[int]*forge.PR, len(numbers))
	for _, n := range numbers {
		pr, err := f.PR(ctx, n)
		if errors.Is(err, forge.ErrNotFound) || errors.Is(err, forge.ErrTampered) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[n] = pr
	}
	return out, nil
}

// ConflictFiles lists the files that conflict between PR number's head and
// its base; nil when they merge cleanly.
func (f *Forge) ConflictFiles(ctx context.Context, number int) ([]string, error) {
	f.requests.Add(1)
	rec, err := f.read(number)
	if err != nil {
		return nil, err
	}
	head, err := f.branchHead(ctx, rec.Branch)
	if err != nil {
		return nil, err
	}
	if head == "" {
		return nil, fmt.Errorf("local PR #%d: branch %s is not in %s (%w)", number, rec.Branch, f.bareDir, forge.ErrNotFound)
	}
	return f.conflicts(ctx, rec.Base, head)
}

// Approve records by's approval of PR number at its current head. Approving
// again replaces by's earlier approval. An empty by is the person running
// this.
func (f *Forge) Approve(ctx context.Context, number int, by string) error {
	f.requests.Add(1)
	by = person(by)
	return f.update(ctx, number, func(rec *Record) error {
		if rec.State != forge.StateOpen {
			return fmt.Errorf("local PR #%d is %s; only open PRs can be approved", number, rec.State)
		}
		head, err := f.branchHead(ctx, rec.Branch)
		if err != nil {
			return err
		}
		if head == "" {
			head = rec.HeadSHA
		}
		kept := rec.Approvals[:0]
		for _, a := range rec.Approvals {
			if a.By != by {
				kept = append(kept, a)
			}
		}
		rec.Approvals = append(kept, Approval{By: by, SHA: head, At: now()})
		return nil
	})
}

// Close closes PR number with an optional comment. Closing a closed PR
// does nothing (the comment too, so a retry does not repeat it); a merged
// PR cannot be closed.
func (f *Forge) Close(ctx context.Context, number int, comment string) error {
	f.requests.Add(1)
	err := f.update(ctx, number, func(rec *Record) error {
		switch rec.State {
		case forge.StateClosed:
			return errUnchanged
		case forge.StateMerged:
			return fmt.Errorf("local PR #%d is already merged; it cannot be closed", number)
		}
		if head, err := f.branchHead(ctx, rec.Branch); err == nil && head != "" {
			rec.HeadSHA = head
		}
		if comment != "" {
			rec.addComment(botName, comment)
		}
		rec.State = forge.StateClosed
		rec.ClosedAt = now()
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}

// errUnchanged stops an update without writing.
var errUnchanged = errors.New("unchanged")
