package local

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local/cirun"
	"github.com/agenttree/agenttree/internal/gitx"
)

// ciCheckName is the one check the local forge reports per commit.
const ciCheckName = "ci"

// noCINote is what the check of a forge without a CI command says, so that
// a person wondering why nothing ran finds the reason where the log would be.
const noCINote = "no ci.command configured"

// Checks returns the CI check of commit sha, starting CI if the commit has
// no result yet. It never waits for CI: agenttree runs as short-lived
// commands, and a poll must stay quick however long CI takes.
//
// The first caller for a commit, under the commit's lock, checks it out in
// a temporary work tree of the bare repository and starts a detached
// runner (Options.Runner, agenttree itself by default, started with
// proc.Detach, so it outlives the caller and is not hit by the caller's
// Ctrl-C).
// The runner (cirun.Main) runs the CI command under CITimeout, writes its
// output to the attempt's log and its exit status to the attempt's result
// file, removes its work tree, and exits. Until then every caller gets
// the check as pending; the first one after the result appears turns it
// into the final record. A runner that vanished without a result (its
// process gone, or no result long after CITimeout) is started once more
// and then recorded as failed, with the reason in the log.
//
// ctx bounds only the work done in this call (the checkout); a cancelled
// call records nothing. With no CI command configured the commit has one
// skipped check, "ci", which passes.
func (f *Forge) Checks(ctx context.Context, sha string) ([]forge.Check, error) {
	full, err := f.resolve(ctx, sha)
	if err != nil {
		return nil, err
	}
	if f.opts.CICommand == "" {
		return []forge.Check{noCICheck(full)}, nil
	}
	if rec, err := f.readCI(full); err != nil {
		return nil, err
	} else if rec != nil && rec.State.Done() {
		return []forge.Check{f.check(rec)}, nil
	}

	unlock, err := f.lockCI(ctx, full)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, err := f.readCI(full)
	if err != nil {
		return nil, err
	}
	switch {
	case rec == nil || rec.State == "":
		attempt := 1
		if rec != nil {
			attempt = rec.Attempt + 1
		}
		rec, err = f.startCI(ctx, full, attempt, 0, "")
	case rec.State == forge.CheckPending:
		rec, err = f.settle(ctx, rec, true)
	}
	if err != nil {
		return nil, err
	}
	return []forge.Check{f.check(rec)}, nil
}

// resolve turns a commit name into the full sha the records are keyed by.
func (f *Forge) resolve(ctx context.Context, sha string) (string, error) {
	full, err := f.bare.RevParse(ctx, sha)
	if errors.Is(err, gitx.ErrNoRef) {
		return "", fmt.Errorf("commit %s is not in %s (%w); push it first", sha, f.bareDir, forge.ErrNotFound)
	}
	return full, err
}

func (f *Forge) check(rec *ciRecord) forge.Check {
	return forge.Check{
		ID: int64(rec.Attempt), Name: ciCheckName, SHA: rec.SHA, State: rec.State,
		URL: f.runPath(rec.SHA, rec.Attempt, ".log"), Kind: "local",
		StartedAt: rec.StartedAt, CompletedAt: rec.CompletedAt,
	}
}

// noCICheck stands for CI on a forge without a CI command: a passing
// check rather than none, because "no checks" reads as "CI has not
// started yet" and would have wait_for_ci wait for a run that never comes.
func noCICheck(sha string) forge.Check {
	return forge.Check{Name: ciCheckName, SHA: sha, State: forge.CheckSkipped, Kind: "local", URL: noCINote}
}

// recordedChecks is what is known about sha's CI without starting a run:
// nil when nothing is recorded. A result the runner has left since the
// last look is taken in, which is cheap and spares a PR view from showing
// a finished run as pending.
func (f *Forge) recordedChecks(ctx context.Context, sha string) ([]forge.Check, error) {
	if f.opts.CICommand == "" {
		return []forge.Check{noCICheck(sha)}, nil
	}
	rec, err := f.readCI(sha)
	if err != nil || rec == nil || rec.State == "" {
		return nil, err
	}
	if rec.State != forge.CheckPending {
		return []forge.Check{f.check(rec)}, nil
	}
	if _, done := cirun.ReadResult(f.resultFile(rec)); done {
		unlock, err := f.lockCI(ctx, sha)
		if err != nil {
			return nil, err
		}
		defer unlock()
		if rec, err = f.readCI(sha); err != nil || rec == nil || rec.State == "" {
			return nil, err
		}
		if rec.State == forge.CheckPending {
			if rec, err = f.settle(ctx, rec, false); err != nil {
				return nil, err
			}
		}
	}
	return []forge.Check{f.check(rec)}, nil
}

// Rerun forgets the results of the given commits' CI, so that the next
// Checks runs it again as a new attempt. A runner still going is left to
// finish; its result belongs to its own attempt and is ignored.
func (f *Forge) Rerun(ctx context.Context, checks []forge.Check) error {
	if f.opts.CICommand == "" {
		return nil
	}
	seen := map[string]bool{}
	for _, c := range checks {
		if c.SHA == "" || seen[c.SHA] {
			continue
		}
		seen[c.SHA] = true
		full, err := f.resolve(ctx, c.SHA)
		if err != nil {
			return err
		}
		if err := f.forget(ctx, full); err != nil {
			return err
		}
	}
	return nil
}

func (f *Forge) forget(ctx context.Context, sha string) error {
	unlock, err := f.lockCI(ctx, sha)
	if err != nil {
		return err
	}
	defer unlock()
	rec, err := f.readCI(sha)
	if err != nil || rec == nil || rec.State == "" {
		return err
	}
	if rec.State.Done() {
		_ = os.Remove(f.runPath(sha, rec.Attempt, ".log"))
	}
	*rec = ciRecord{SHA: sha, Attempt: rec.Attempt, Command: rec.Command}
	return f.writeCI(rec)
}
