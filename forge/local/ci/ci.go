// Package ci is the local forge's CI: the configured command run on a
// commit the first time someone asks for its checks, in a detached runner
// (package cirun) so that no caller waits for it, and recorded as files
// in one directory:
//
//	SHA.yaml      the CI state of one commit
//	SHA.N.log     the tail of attempt N's output
//	SHA.N.result  attempt N's exit status, until recorded
package ci

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local/cirun"
	"github.com/agenttree/agenttree/internal/gitx"
)

// Options configure New. Dir, LockDir and Bare are required; the rest is
// local.Options' CI settings, with the same defaults.
type Options struct {
	// Dir holds the records; LockDir the locks that serialize their
	// writers.
	Dir, LockDir string
	// Bare is the repository whose commits CI runs on.
	Bare *gitx.Repo
	// Command runs with `sh -c` in a checkout of the commit; exit 0
	// passes. Empty: no CI, reported as one skipped (passing) check.
	Command string
	// Timeout bounds one run (default 30 minutes); Grace is how long a run
	// stopped at Timeout has between TERM and KILL (default 10 seconds).
	Timeout, Grace time.Duration
	// User is the OS user Command runs as (`sandbox: user:NAME`), in a
	// checkout handed over to it; the runner stays this process's user.
	// Empty: this process's user.
	User string
	// Env names the variables of this process's environment Command gets
	// besides those every program needs (ci.env); it gets no other
	// (codeenv.Environ), as every agent can read what it gets.
	Env []string
	// Refused, when set, is why Command may not run on this host (a
	// container sandbox): Checks reports it, wrapped in
	// forge.ErrUnavailable, and runs nothing.
	Refused error
	// Runner starts one attempt, its arguments appended (default: this
	// executable with cirun.Command).
	Runner []string
	// LockTimeout bounds waiting for another writer (default 30 seconds).
	LockTimeout time.Duration
	// MaxParallel bounds the CI runs going at once (ci.max_parallel); a
	// head pushed while that many run waits, queued, for one to end.
	// 0: no bound.
	MaxParallel int
}

// Runs is the CI of one bare repository. Every method is safe to call
// from many processes at once: each commit's record has its own lock.
type Runs struct {
	opts Options
}

// New returns the CI that opts describe, with their defaults filled in.
func New(opts Options) (*Runs, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Minute
	}
	if opts.Grace <= 0 {
		opts.Grace = defaultGrace
	}
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 30 * time.Second
	}
	if opts.Command != "" && len(opts.Runner) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("forge: local: cannot find this program to run CI with (%w); set Options.Runner", err)
		}
		opts.Runner = []string{exe, cirun.Command}
	}
	r := &Runs{opts: opts}
	return r, nil
}

func now() time.Time { return time.Now().UTC() }

// checkName is the one check the local forge reports per commit.
const checkName = "ci"

// noCommandNote is what the check of a forge without a CI command says, so
// that a person wondering why nothing ran finds the reason where the log
// would be.
const noCommandNote = "no ci.command configured"

// Checks returns the CI check of commit sha, starting CI if the commit has
// no result yet. It never waits for CI: agenttree runs as short-lived
// commands, and a poll must stay quick however long CI takes.
//
// The first caller for a commit, under the commit's lock, checks it out in
// a temporary work tree of the bare repository and starts a detached
// runner (Options.Runner, agenttree itself by default, started with
// proc.Detach, so it outlives the caller and is not hit by the caller's
// Ctrl-C). The runner (cirun.Main) runs the CI command under
// Options.Timeout, writes its output to the attempt's log and its exit
// status to the attempt's result file, removes its work tree, and exits.
// Until then every caller gets the check as pending; the first one after
// the result appears turns it into the final record. A runner that
// vanished without a result (its process gone, or no result long after
// Options.Timeout) is started once more and then recorded as failed, with
// the reason in the log.
//
// ctx bounds only the work done in this call (the checkout); a cancelled
// call records nothing. With no CI command configured the commit has one
// skipped check, "ci", which passes.
func (r *Runs) Checks(ctx context.Context, sha string) ([]forge.Check, error) {
	full, err := r.resolve(ctx, sha)
	if err != nil {
		return nil, err
	}
	if r.opts.Command == "" {
		return []forge.Check{noCommandCheck(full)}, nil
	}
	if rec, err := r.read(full); err != nil {
		return nil, err
	} else if rec != nil && rec.State.Done() {
		return []forge.Check{r.check(rec)}, nil
	}

	unlock, err := r.lock(ctx, full)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, err := r.read(full)
	if err != nil {
		return nil, err
	}
	switch {
	case rec == nil || rec.State == "":
		attempt := 1
		if rec != nil {
			attempt = rec.Attempt + 1
		}
		rec, err = r.startOrQueue(ctx, full, attempt, nil)
	case rec.State == forge.CheckPending && rec.Queued:
		rec, err = r.startOrQueue(ctx, full, rec.Attempt, rec)
	case rec.State == forge.CheckPending:
		rec, err = r.settle(ctx, rec, true)
	}
	if err != nil {
		return nil, err
	}
	return []forge.Check{r.check(rec)}, nil
}

// resolve turns a commit name into the full sha the records are keyed by.
func (r *Runs) resolve(ctx context.Context, sha string) (string, error) {
	full, err := r.opts.Bare.RevParse(ctx, sha)
	if errors.Is(err, gitx.ErrNoRef) {
		return "", fmt.Errorf("commit %s is not in %s (%w); push it first", sha, r.opts.Bare.Dir, forge.ErrNotFound)
	}
	return full, err
}

func (r *Runs) check(rec *record) forge.Check {
	return forge.Check{
		ID: int64(rec.Attempt), Name: checkName, SHA: rec.SHA, State: rec.State,
		URL: r.runPath(rec.SHA, rec.Attempt, ".log"), Kind: "local",
		StartedAt: rec.StartedAt, CompletedAt: rec.CompletedAt, Environment: rec.Environment, Queued: rec.Queued,
	}
}

// noCommandCheck stands for CI on a forge without a CI command: a passing
// check rather than none, because "no checks" reads as "CI has not
// started yet" and would have wait_for_ci wait for a run that never comes.
func noCommandCheck(sha string) forge.Check {
	return forge.Check{Name: checkName, SHA: sha, State: forge.CheckSkipped, Kind: "local", URL: noCommandNote}
}

// Recorded is what is known about sha's CI without starting a run (but
// one asked for starts: queued, when a slot is free; or its runner gone,
// again): nil when nothing is recorded. A result the runner has left since the
// last look is taken in, which is cheap and spares a PR view from showing
// a finished run as pending.
func (r *Runs) Recorded(ctx context.Context, sha string) ([]forge.Check, error) {
	if r.opts.Command == "" {
		return []forge.Check{noCommandCheck(sha)}, nil
	}
	rec, err := r.read(sha)
	if err != nil || rec == nil || rec.State == "" {
		return nil, err
	}
	if rec.State != forge.CheckPending {
		return []forge.Check{r.check(rec)}, nil
	}
	if rec.Queued {
		// Asked for already: a look is when a queued run may start.
		return r.Checks(ctx, sha)
	}
	_, done := cirun.ReadResult(r.resultFile(rec))
	if alive, _ := r.runnerAlive(rec); !done && !alive {
		// Asked for already, and its runner never started (a crash
		// between the record and the start) or is gone without a result:
		// started again, or recorded failed, as Checks does. The
		// controller's ticks read checks here (with the PRs), and would
		// otherwise show it pending until CI's time limit.
		return r.Checks(ctx, sha)
	}
	if done {
		unlock, err := r.lock(ctx, sha)
		if err != nil {
			return nil, err
		}
		defer unlock()
		if rec, err = r.read(sha); err != nil || rec == nil || rec.State == "" {
			return nil, err
		}
		if rec.State == forge.CheckPending {
			if rec, err = r.settle(ctx, rec, false); err != nil {
				return nil, err
			}
		}
	}
	return []forge.Check{r.check(rec)}, nil
}

// Rerun forgets the results of the given commits' CI, so that the next
// Checks runs it again as a new attempt. A runner still going is left to
// finish; its result belongs to its own attempt and is ignored.
func (r *Runs) Rerun(ctx context.Context, checks []forge.Check) error {
	if r.opts.Command == "" {
		return nil
	}
	seen := map[string]bool{}
	for _, c := range checks {
		if c.SHA == "" || seen[c.SHA] {
			continue
		}
		seen[c.SHA] = true
		full, err := r.resolve(ctx, c.SHA)
		if err != nil {
			return err
		}
		if err := r.forget(ctx, full); err != nil {
			return err
		}
	}
	return nil
}

func (r *Runs) forget(ctx context.Context, sha string) error {
	unlock, err := r.lock(ctx, sha)
	if err != nil {
		return err
	}
	defer unlock()
	rec, err := r.read(sha)
	if err != nil || rec == nil || rec.State == "" {
		return err
	}
	if rec.State.Done() {
		_ = os.Remove(r.runPath(sha, rec.Attempt, ".log"))
	}
	*rec = record{SHA: sha, Attempt: rec.Attempt, Command: rec.Command}
	return r.write(rec)
}
