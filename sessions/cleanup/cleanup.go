// Package cleanup removes what finished issues' agents left behind (their
// tmux sessions, tokens, worktrees or clones, local branches and session
// records), never work that exists nowhere else: `agenttree clean`.
package cleanup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/records"
	"github.com/agenttree/agenttree/sessions/workspace"
	"github.com/agenttree/agenttree/stages"
)

// Outcome is what Clean did with an issue.
type Outcome string

const (
	Removed Outcome = "removed"
	// WouldRemove: a dry run found what the issue left safe to remove.
	WouldRemove Outcome = "would_remove"
	Kept        Outcome = "kept"
)

// KeptFor says why Clean kept what an issue left.
type KeptFor string

const (
	NotFinished KeptFor = "not_finished"
	// Uncommitted and Unpushed: work exists only in the issue's worktree
	// or branch; a person saves it or throws it away.
	Uncommitted KeptFor = "uncommitted"
	Unpushed    KeptFor = "unpushed"
	// Failed: a check or a removal failed; Why says which.
	Failed KeptFor = "failed"
)

// Cleaned is what Clean did, or in a dry run would do, with one issue
// that has a session record or a worktree.
type Cleaned struct {
	Issue   int     `json:"issue"`
	Stage   string  `json:"stage,omitempty"`
	Outcome Outcome `json:"outcome"`
	KeptFor KeptFor `json:"kept_for,omitempty"`
	// Why says why the issue was kept and, for work, what to do.
	Why string `json:"why,omitempty"`
	// What the issue has: its worktree, local branch and tmux session,
	// each empty when it has none. Removed with it, unless kept.
	Worktree string `json:"worktree,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Session  string `json:"session,omitempty"`
	// BranchKept says why the branch stays when the rest goes.
	BranchKept string `json:"branch_kept,omitempty"`
}

// Refused reports whether work that exists nowhere else kept the issue.
func (c Cleaned) Refused() bool { return c.KeptFor == Uncommitted || c.KeptFor == Unpushed }

// Clean removes what finished issues (at a terminal stage) left: the tmux
// session, its token revoked; the worktree; the local branch, merged or
// pushed; the session record. It keeps, saying why, every issue not
// finished, and every issue whose worktree or branch holds work that
// exists nowhere else: uncommitted changes, or commits on no branch of
// the remote (fetched first) nor on the default branch. With dryRun it
// changes nothing and says what it would do. What is gone already is no
// error, so a second run finds nothing more to do.
//
// The error is about the issues or records that cannot be read; the
// others are cleaned all the same.
func Clean(ctx context.Context, m *sessions.Manager, dryRun bool) ([]Cleaned, error) {
	return cleaner{Manager: m, records: records.Open(m.Engine.Store.Layout())}.run(ctx, dryRun)
}

// cleaner cleans up after the issues of a Manager's pipeline.
type cleaner struct {
	*sessions.Manager
	records records.Store
}

func (m cleaner) cfg() *stages.Config { return m.Engine.Config }

func (m cleaner) run(ctx context.Context, dryRun bool) ([]Cleaned, error) {
	repo := &gitx.Repo{Dir: m.Repo}
	// Stale remote-tracking branches would call pushed what the remote
	// no longer has.
	if err := m.Fetch(ctx, repo); err != nil {
		return nil, fmt.Errorf("%w; clean checks for unpushed work against %s's branches", err, m.Remote)
	}
	saved, err := m.savedBranches(ctx, repo)
	if err != nil {
		return nil, err
	}
	left, lerr := m.leftovers(ctx, repo)
	if left == nil && lerr != nil {
		return nil, lerr
	}
	out := make([]Cleaned, 0, len(left))
	for _, l := range left {
		out = append(out, m.clean(ctx, repo, l, saved, dryRun))
	}
	if !dryRun {
		_ = os.Remove(m.cfg().WorktreesDir()) // only when left empty
	}
	return out, lerr
}

// savedBranches are the local branches, besides the remote's, whose
// commits are saved: the default branch, when it exists here.
func (m cleaner) savedBranches(ctx context.Context, repo *gitx.Repo) ([]string, error) {
	ref := "refs/heads/" + m.cfg().DefaultBranch
	ok, err := repo.RefExists(ctx, ref)
	if err != nil || !ok {
		return nil, err
	}
	return []string{ref}, nil
}

// leftover is what an issue has of an agent's session.
type leftover struct {
	id  int
	iss *issues.Issue
	// err: the issue cannot be read; nothing of it is touched.
	err error
	rec *records.Session
	wt  *gitx.Worktree
	// clone is the agent's own clone (records.Session.Clone) when it is there.
	clone string
	// branchAt is the local branch's commit; empty: no branch here.
	branchAt string
	// heldBy is a checkout other than the issue's worktree that has the
	// branch (the main one): the branch stays.
	heldBy string
}

// leftovers are the issues with a session record or a worktree on their
// branch, by id. The main checkout is never an issue's worktree.
func (m cleaner) leftovers(ctx context.Context, repo *gitx.Repo) ([]*leftover, error) {
	recs, rerr := m.records.List()
	all, ierr := m.Engine.Store.List()
	trees, err := repo.Worktrees(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the worktrees of %s: %w", repo.Dir, err)
	}
	recOf := map[int]*records.Session{}
	for _, rec := range recs {
		recOf[rec.Issue] = rec
	}
	var out []*leftover
	for _, iss := range all {
		l := &leftover{id: iss.ID, iss: iss, rec: recOf[iss.ID]}
		delete(recOf, iss.ID)
		l.match(trees)
		if l.rec != nil && l.rec.Clone {
			if _, err := os.Lstat(l.rec.Worktree); err == nil {
				l.clone = l.rec.Worktree
			}
		}
		if l.rec == nil && l.wt == nil {
			continue
		}
		l.err = l.findBranch(ctx, repo)
		out = append(out, l)
	}
	for id, rec := range recOf {
		_, err := m.Engine.Store.Get(id)
		out = append(out, &leftover{id: id, rec: rec, err: fmt.Errorf("its issue cannot be read: %w", cmp.Or(err, issues.ErrNotFound))})
	}
	slices.SortFunc(out, func(a, b *leftover) int { return cmp.Compare(a.id, b.id) })
	return out, errors.Join(rerr, ierr)
}

// match finds l's worktree among trees, by its branch or else by its
// record, and the checkout that holds its branch instead. trees[0] is
// the main checkout.
func (l *leftover) match(trees []gitx.Worktree) {
	branch := l.iss.Branch
	for i, wt := range trees {
		onBranch := branch != "" && wt.Branch == branch
		recorded := l.rec != nil && samePath(wt.Path, l.rec.Worktree)
		switch {
		case i == 0 || wt.Bare:
			if onBranch {
				l.heldBy = wt.Path
			}
		case onBranch || recorded && l.wt == nil:
			l.wt = &trees[i]
		}
	}
}

// findBranch finds the commit of l's local branch, if it has one.
func (l *leftover) findBranch(ctx context.Context, repo *gitx.Repo) error {
	if l.iss.Branch == "" {
		return nil
	}
	at, err := repo.RevParse(ctx, "refs/heads/"+l.iss.Branch)
	if errors.Is(err, gitx.ErrNoRef) {
		return nil
	}
	l.branchAt = at
	return err
}

// clean cleans up after one issue, or says why not.
func (m cleaner) clean(ctx context.Context, repo *gitx.Repo, l *leftover, saved []string, dryRun bool) Cleaned {
	c := Cleaned{Issue: l.id, Outcome: Kept}
	if l.rec != nil {
		c.Session = l.rec.Session
	}
	if l.wt != nil {
		c.Worktree = l.wt.Path
	}
	if l.clone != "" {
		c.Worktree = l.clone
	}
	if l.err != nil {
		c.KeptFor, c.Why = Failed, l.err.Error()
		return c
	}
	c.Stage = l.iss.Stage
	if l.branchAt != "" {
		c.Branch = l.iss.Branch
	}
	if node, ok := m.cfg().Node(l.iss.Stage); !ok || node.Terminal() == stages.TerminalNone {
		c.KeptFor, c.Why = NotFinished, "not finished: at stage "+l.iss.Stage
		return c
	}
	switch why, err := m.unsaved(ctx, repo, l, saved); {
	case err != nil:
		c.KeptFor, c.Why = Failed, "check for unsaved work: "+err.Error()
		return c
	case why.kind != "":
		c.KeptFor, c.Why = why.kind, why.text
		return c
	}
	if l.heldBy != "" {
		c.BranchKept = "checked out in " + l.heldBy
	}
	if dryRun {
		c.Outcome = WouldRemove
		return c
	}
	if err := m.remove(ctx, repo, l); err != nil {
		c.KeptFor, c.Why = Failed, err.Error()
		return c
	}
	c.Outcome = Removed
	return c
}

// refusal is why work keeps an issue's worktree or branch.
type refusal struct {
	kind KeptFor
	text string
}

// unsaved says what work exists only in l's worktree or branch; empty:
// none.
func (m cleaner) unsaved(ctx context.Context, repo *gitx.Repo, l *leftover, saved []string) (refusal, error) {
	elsewhere := m.Remote + "'s branches"
	if len(saved) > 0 {
		elsewhere = fmt.Sprintf("%s nor on %s", elsewhere, m.cfg().DefaultBranch)
	}
	if l.clone != "" {
		if why, err := m.unsavedInClone(ctx, repo, l, saved, elsewhere); err != nil || why.kind != "" {
			return why, err
		}
	}
	if wt := l.wt; wt != nil && !wt.Prunable {
		todo := "commit and push, or remove it yourself with `git worktree remove --force " + shellQuote(wt.Path) + "`"
		changes, err := (&gitx.Repo{Dir: wt.Path}).Changes(ctx)
		if err != nil {
			return refusal{}, err
		}
		if len(changes) > 0 {
			return refusal{Uncommitted, fmt.Sprintf("uncommitted work in %s (%s); %s", wt.Path, files(changes), todo)}, nil
		}
		if wt.Head != "" {
			n, err := repo.Unpushed(ctx, wt.Head, saved...)
			if err != nil {
				return refusal{}, err
			}
			if n > 0 {
				return refusal{Unpushed, fmt.Sprintf("%s in %s on none of %s; %s", commits(n), wt.Path, elsewhere, todo)}, nil
			}
		}
	}
	if l.branchAt == "" || l.wt != nil && l.wt.Head == l.branchAt {
		return refusal{}, nil
	}
	n, err := repo.Unpushed(ctx, l.branchAt, saved...)
	if err != nil || n == 0 {
		return refusal{}, err
	}
	b := l.iss.Branch
	return refusal{Unpushed, fmt.Sprintf("%s of branch %s on none of %s; push it (`git push %s %s`), or delete it yourself with `git branch -D %s`",
		commits(n), b, elsewhere, m.Remote, shellQuote(b), shellQuote(b))}, nil
}

// remove ends l's session, revoking its token, and removes its worktree,
// its branch (unless checked out elsewhere) and, last, its record: a
// removal that fails part way is taken up again by the next clean.
func (m cleaner) remove(ctx context.Context, repo *gitx.Repo, l *leftover) error {
	if l.rec != nil {
		if err := m.End(ctx, l.id, l.rec.Session); err != nil {
			return fmt.Errorf("end tmux session %s: %w", l.rec.Session, err)
		}
	}
	if l.clone != "" {
		// os.RemoveAll follows no symlink the agent put there; nothing
		// of the clone runs.
		if err := os.RemoveAll(l.clone); err != nil {
			return fmt.Errorf("remove clone %s: %w", l.clone, err)
		}
	}
	if wt := l.wt; wt != nil {
		rm := func() error { return repo.WorktreeRemoveIfClean(ctx, wt.Path) }
		if wt.Prunable {
			rm = func() error { return repo.WorktreePrune(ctx) }
		}
		if err := rm(); err != nil {
			return fmt.Errorf("remove worktree %s: %w", wt.Path, err)
		}
	}
	if l.branchAt != "" && l.heldBy == "" {
		// Only from the commit checked: a branch that moved since has
		// work no one looked at.
		if err := repo.DeleteRef(ctx, "refs/heads/"+l.iss.Branch, l.branchAt); err != nil {
			return fmt.Errorf("delete branch %s: %w", l.iss.Branch, err)
		}
	}
	if l.rec != nil {
		if err := m.records.Remove(l.id); err != nil {
			return fmt.Errorf("remove the session record of issue %d: %w", l.id, err)
		}
	}
	return nil
}

// files names up to three of paths.
func files(paths []string) string {
	const shown = 3
	if len(paths) == 1 {
		return paths[0]
	}
	s := fmt.Sprintf("%d files: %s", len(paths), strings.Join(paths[:min(shown, len(paths))], ", "))
	if len(paths) > shown {
		s += ", ..."
	}
	return s
}

func commits(n int) string {
	if n == 1 {
		return "1 commit"
	}
	return fmt.Sprintf("%d commits", n)
}

// shellQuote is s as a person pastes it into a shell.
func shellQuote(s string) string {
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		return s
	}
	return q
}

// samePath reports whether a and b name one directory, also when it is
// gone.
func samePath(a, b string) bool {
	return a != "" && b != "" && (filepath.Clean(a) == filepath.Clean(b) || workspace.SameDir(a, b))
}
