package pr

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/pr/internal/cifailure"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/textsafe"
)

var (
	ciTimeoutParam = hooks.Duration("timeout",
		"how long one CI run on the head may take, from when it starts, before the wait ends (polling_timeout); unset: ci_polling.timeout_s")
	newRunTimeoutParam = hooks.Duration("new_run_timeout",
		"how long after a push CI may take to start (report, or leave the queue) before the wait ends (no_new_ci); unset: ci_polling.new_run_timeout_s")
	pollIntervalParam = hooks.Duration("poll_interval", "how soon to look again while CI runs; unset: ci_polling.poll_interval_s")
	rerunFailedParam  = hooks.Int("rerun_failed",
		"how many times failed checks are rerun on one head before the failure counts (for flaky CI)").Default(0).AtLeast(0)
)

// Watch keys of wait_for_ci, and what it writes for the agent.
const (
	watchHead    = "ci.head"
	watchSince   = "ci.head_seen_at"
	watchStarted = "ci.started_seen_at"
	watchReruns  = "ci.reruns"
	watchRerunAt = "ci.rerun_at"
	feedbackFile = "ci_feedback.md"
	logLines     = 200
)

// waitForCI makes one poll of the PR's CI: pending until every check on
// the head commit is done, then pass or a failure. It remembers in the
// watch state when it first saw the head, so timeouts survive restarts.
func waitForCI(ctx context.Context, c *hooks.Call) hooks.Outcome {
	f, pr, o := openPRToAct(ctx, c, "; reopen it or open a new one")
	if o != nil {
		return *o
	}
	cfg := c.Settings().CIPolling
	p := &ciPoll{c: c, f: f, pr: pr, now: c.Now(),
		interval: pollIntervalParam.Or(c, cfg.PollInterval),
		timeout:  ciTimeoutParam.Or(c, cfg.Timeout),
		newRun:   newRunTimeoutParam.Or(c, cfg.NewRunTimeout)}
	p.watch = readWatch(c.Issue.Watch, pr.HeadSHA, p.now)
	out := p.poll(ctx)
	out.Watch = p.watch.update
	return withOutputs(out, prOutputs(pr))
}

// ciWatch is what wait_for_ci remembers of the head it waits on.
type ciWatch struct {
	head  string
	since time.Time // when the head was first seen, or the wait restarted
	// started is when this wait first saw CI started on the head.
	started time.Time
	reruns  int
	rerunAt time.Time // when the last rerun was asked for
	// update holds the changes for Outcome.Watch.
	update map[string]string
}

// readWatch reads the watch state for head; a new head starts afresh, with
// its own clock and rerun budget.
func readWatch(state map[string]string, head string, now time.Time) ciWatch {
	w := ciWatch{head: head, update: map[string]string{}}
	since, err := time.Parse(time.RFC3339Nano, state[watchSince])
	if state[watchHead] != head || err != nil {
		w.since = now
		w.update = map[string]string{watchHead: head, watchSince: stamp(now), watchStarted: "", watchReruns: "", watchRerunAt: ""}
		return w
	}
	w.since = since
	w.started, _ = time.Parse(time.RFC3339Nano, state[watchStarted])
	w.reruns, _ = strconv.Atoi(state[watchReruns])
	w.rerunAt, _ = time.Parse(time.RFC3339Nano, state[watchRerunAt])
	return w
}

// restart starts a new wait on the same head, with its own budget: its
// clock runs from now, whenever CI started.
func (w *ciWatch) restart(now time.Time) {
	w.update[watchHead], w.update[watchSince], w.update[watchStarted] = w.head, stamp(now), ""
	w.since, w.started = now, time.Time{}
}

// sawStarted is when this wait first saw CI started on the head: now, the
// first time it is asked.
func (w *ciWatch) sawStarted(now time.Time) time.Time {
	if w.started.IsZero() {
		w.started = now
		w.update[watchHead], w.update[watchStarted] = w.head, stamp(now)
	}
	return w.started
}

// rerun counts a rerun the forge accepted.
func (w *ciWatch) rerun(now time.Time) {
	w.reruns++
	w.update[watchHead], w.update[watchReruns], w.update[watchRerunAt] = w.head, strconv.Itoa(w.reruns), stamp(now)
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ciPoll is one poll of wait_for_ci.
type ciPoll struct {
	c                         *hooks.Call
	f                         forge.Forge
	pr                        *forge.PR
	watch                     ciWatch
	now                       time.Time
	interval, timeout, newRun time.Duration
}

func (p *ciPoll) poll(ctx context.Context) hooks.Outcome {
	if p.pr.Mergeable == forge.Conflicting {
		files := forgeConflictFiles(ctx, p.f, p.pr)
		return conflictFailure(conflictReason(p.c, p.pr, files)+"; its CI results do not count until then", files)
	}
	checks, err := headChecks(ctx, p.f, p.watch.head)
	if err != nil {
		return p.outage(err)
	}
	// A failure that finished before the rerun we asked for is the old
	// run's; wait for the new one.
	sum := forge.Summarize(supersededAsPending(checks, p.watch.rerunAt))
	switch {
	case sum.Total == 0:
		return p.notStarted()
	case sum.Pending > 0:
		return p.running(sum, checks)
	case sum.Failing == 0:
		return ciPassed(p.watch.head)
	}
	return p.failed(ctx, sum.Failed)
}

func (p *ciPoll) waited() time.Duration { return p.now.Sub(p.began()) }

// began is when this wait began: the head first seen, the wait restarted
// after a timeout, or a person resuming the issue since, whichever is
// last. A resumed wait has its whole time again.
func (p *ciPoll) began() time.Time {
	resumed, err := time.Parse(time.RFC3339Nano, p.c.Issue.Watch[hooks.WatchResumedAt])
	if err == nil && resumed.After(p.watch.since) && !resumed.After(p.now) {
		return resumed
	}
	return p.watch.since
}

func (p *ciPoll) short() string { return gitx.ShortSHA(p.watch.head) }

// outage is a poll that could not read the checks. An outage that
// outlasts the whole wait ends it too, but as what it is: no verdict on
// the code.
func (p *ciPoll) outage(err error) hooks.Outcome {
	o := forgeFailure(p.c, "reading checks of "+p.short(), err)
	if o.Kind == hooks.KindPending && p.timeout > 0 && p.waited() >= p.timeout {
		o = hooks.FailAs(hooks.ClassPollingTimeout, "no CI verdict on %s after %s (polling_timeout): %s", p.short(), p.timeout, o.Reason)
		p.watch.restart(p.now)
	}
	return o
}

func (p *ciPoll) notStarted() hooks.Outcome {
	if p.waited() >= p.newRun {
		o := hooks.FailAs(hooks.ClassNoNewCI, "no CI run started on %s within %s of the push (no_new_ci); check that the CI workflow runs on pull requests to %s",
			p.short(), p.newRun, p.pr.Base)
		p.watch.restart(p.now) // a resumed wait looks again from then
		return withOutputs(o, map[string]string{"failure_reason": o.Reason})
	}
	return hooks.Pending(p.interval, fmt.Sprintf("waiting for CI to start on %s (%s so far)", p.short(), p.waited().Round(time.Second)))
}

// running is a poll while checks are pending. CI's time runs from when it
// started, not from the push: a run that waited in a queue for a runner
// has all of its timeout once it runs. Until then the wait is bounded by
// new_run_timeout, as CI that never reported is.
func (p *ciPoll) running(sum forge.Summary, checks []forge.Check) hooks.Outcome {
	start, ok := p.ciStart(checks)
	if !ok {
		if p.waited() >= p.newRun {
			o := hooks.FailAs(hooks.ClassNoNewCI, "CI on %s was queued for %s after the push and never started (no_new_ci); %d of %d checks still queued: check that the CI service has a runner free for it",
				p.short(), p.newRun, sum.Pending, sum.Total)
			p.watch.restart(p.now)
			return withOutputs(o, map[string]string{"failure_reason": o.Reason})
		}
		return hooks.Pending(p.interval, fmt.Sprintf("%d of %d checks queued on %s, waiting for CI to start (%s so far)",
			sum.Pending, sum.Total, p.short(), p.waited().Round(time.Second)))
	}
	if ran := p.now.Sub(start); p.timeout > 0 && ran >= p.timeout {
		o := hooks.FailAs(hooks.ClassPollingTimeout, "CI on %s is still running after %s from its start at %s (polling_timeout); %d of %d checks pending",
			p.short(), p.timeout, start.UTC().Format(time.RFC3339), sum.Pending, sum.Total)
		p.watch.restart(p.now) // the next wait is a new one
		return withOutputs(o, map[string]string{"failure_reason": o.Reason})
	}
	return hooks.Pending(p.interval, fmt.Sprintf("%d of %d checks still running on %s", sum.Pending, sum.Total, p.short()))
}

// ciStart is when CI started on the head, and whether it has: the
// earliest start of a check that is not queued (one running, or one that
// finished; a skipped check never ran). It is never before this wait
// began (a restarted or resumed wait gets a fresh clock), nor after this wait first saw
// CI started: a check the forge gives no start time, or a forge whose
// clock is ahead of ours, does not hold the timeout off.
func (p *ciPoll) ciStart(checks []forge.Check) (time.Time, bool) {
	var first time.Time
	started := false
	for _, ch := range checks {
		if ch.Queued || ch.State == forge.CheckSkipped {
			continue
		}
		started = true
		if !ch.StartedAt.IsZero() && (first.IsZero() || ch.StartedAt.Before(first)) {
			first = ch.StartedAt
		}
	}
	if !started {
		return time.Time{}, false
	}
	if seen := p.watch.sawStarted(p.now); first.IsZero() || first.After(seen) {
		first = seen
	}
	if began := p.began(); first.Before(began) {
		first = began
	}
	return first, true
}

// failed reruns the failed checks while the rerun budget lasts, and
// reports the failure after.
func (p *ciPoll) failed(ctx context.Context, failed []forge.Check) hooks.Outcome {
	maxReruns := rerunFailedParam.Get(p.c)
	run := cifailure.Read(ctx, p.f, failed, logLines)
	unfinished := run.NoVerdict()
	if unfinished {
		// A run cancelled or timed out on the CI service, or failed for
		// its environment, said nothing of the code: it is run once more
		// before anyone hears of it.
		maxReruns = max(maxReruns, 1)
	}
	if p.resumedSince() && rerunnable(failed) {
		maxReruns = p.watch.reruns + 1 // a person resumed after this failure: try once more
	}
	if p.watch.reruns >= maxReruns || !rerunnable(failed) {
		if unfinished {
			return p.noVerdict(run)
		}
		return ciFailureOf(p.pr, run)
	}
	if p.c.DryRun() {
		return hooks.Pending(p.interval, fmt.Sprintf("would rerun %s (rerun %d of %d)", checkNames(failed), p.watch.reruns+1, maxReruns))
	}
	// Only a rerun the forge accepted is counted: asking again after an
	// error is safe (a rerun already running is not started twice).
	switch err := p.f.Rerun(ctx, failed); {
	case errors.Is(err, forge.ErrNotRerunnable) && unfinished:
		return p.noVerdict(run)
	case errors.Is(err, forge.ErrNotRerunnable):
		return ciFailureOf(p.pr, run)
	case err != nil:
		return forgeFailure(p.c, "rerunning failed checks", err)
	}
	p.watch.rerun(p.now)
	return hooks.Pending(p.interval, fmt.Sprintf("rerunning %s (rerun %d of %d on %s)", checkNames(failed), p.watch.reruns, maxReruns, p.short()))
}

// unfinished is CI whose failed checks were all cancelled or timed out on
// the CI service, run again as far as allowed: no verdict on the code, so
// no feedback file and no ci_failed (design notes: the CI monitor's
// canceled and timed-out outcomes are not its failure).
func (p *ciPoll) unfinished(checks []forge.Check) hooks.Outcome {
	o := hooks.FailAs(hooks.ClassCICancelled, "CI on %s did not finish: %s (ci_cancelled); nothing failed in the code as far as CI tells, "+
		"so there is no feedback; its service cancelled or stopped the run", p.short(), checkNames(checks))
	p.watch.restart(p.now)
	return withOutputs(o, map[string]string{"failure_reason": o.Reason, "failed_checks": ""})
}

// resumedSince reports whether a person resumed the issue after the last
// rerun this wait asked for (or since it began): the failure they saw is
// to be tried again (a flaky check), not reported again.
func (p *ciPoll) resumedSince() bool {
	resumed, err := time.Parse(time.RFC3339Nano, p.c.Issue.Watch[hooks.WatchResumedAt])
	if err != nil {
		return false
	}
	last := p.watch.rerunAt
	if last.IsZero() {
		last = p.watch.since
	}
	return resumed.After(last)
}

// prCIPassed is the gate: it does not wait, it reports CI's verdict on the
// PR's head as it is now.
func prCIPassed(ctx context.Context, c *hooks.Call) hooks.Outcome {
	f, pr, o := openPR(ctx, c)
	if o != nil {
		return *o
	}
	checks, err := headChecks(ctx, f, pr.HeadSHA)
	if err != nil {
		return forgeFailure(c, "reading checks", err)
	}
	sum := forge.Summarize(checks)
	short := gitx.ShortSHA(pr.HeadSHA)
	switch {
	case sum.Failing > 0:
		return withOutputs(ciFailure(ctx, f, pr, sum.Failed), prOutputs(pr))
	case sum.Pending > 0:
		// Not a verdict: the gate waits (the controller looks again).
		return hooks.Pending(c.Settings().CIPolling.PollInterval,
			fmt.Sprintf("CI is still running on %s (%d of %d checks pending); wait for it (`agenttree pr wait %d`)", short, sum.Pending, sum.Total, c.Issue.ID))
	case sum.Total == 0:
		// Right after a push GitHub often reports nothing yet: no checks
		// is no verdict, never a pass.
		return hooks.Pending(c.Settings().CIPolling.PollInterval,
			fmt.Sprintf("no CI has reported on %s of PR #%d yet; wait for it (`agenttree pr wait %d`)", short, pr.Number, c.Issue.ID))
	}
	return withOutputs(ciPassed(pr.HeadSHA), prOutputs(pr))
}

// headChecks lists the checks bound to sha; results for any other commit
// are not facts about this head and are dropped.
func headChecks(ctx context.Context, f forge.Forge, sha string) ([]forge.Check, error) {
	all, err := f.Checks(ctx, sha)
	if err != nil {
		return nil, err
	}
	out := all[:0:0]
	for _, ch := range all {
		if ch.SHA == sha || ch.SHA == "" {
			ch.SHA = sha
			out = append(out, ch)
		}
	}
	return out, nil
}

// supersededAsPending turns failed checks that completed before rerunAt
// into pending ones.
func supersededAsPending(checks []forge.Check, rerunAt time.Time) []forge.Check {
	if rerunAt.IsZero() {
		return checks
	}
	out := make([]forge.Check, len(checks))
	for i, ch := range checks {
		if ch.State.Done() && !ch.State.Passing() && !ch.CompletedAt.IsZero() && ch.CompletedAt.Before(rerunAt) {
			ch.State = forge.CheckPending
		}
		out[i] = ch
	}
	return out
}

// rerunnable reports whether the forge can start every failed check again:
// a commit status posted by an outside CI service cannot be, and rerunning
// only the others would not change the verdict.
func rerunnable(failed []forge.Check) bool {
	for _, ch := range failed {
		if ch.Kind == "status" {
			return false
		}
	}
	return true
}

// ciPassed is the verdict that lets head merge: ci_passed_sha names the
// commit CI verified, and merge_pr merges only that commit. The feedback of
// an earlier failure is removed.
func ciPassed(head string) hooks.Outcome {
	o := hooks.Pass()
	// Empty values remove an earlier failure's facts from the issue.
	o.Outputs = map[string]string{"ci_passed_sha": head, "failure_reason": "", "failed_checks": "", "failure_details": "", "ci_url": ""}
	o.Files = map[string]string{feedbackFile: ""}
	return o
}

// ciFailure builds the failure of a finished, failed CI run, with
// ci_feedback.md for the agent.
func ciFailure(ctx context.Context, f forge.Forge, pr *forge.PR, failed []forge.Check) hooks.Outcome {
	return ciFailureOf(pr, cifailure.Read(ctx, f, failed, logLines))
}

// ciFailureOf is ciFailure of a run whose logs are read.
func ciFailureOf(pr *forge.PR, run cifailure.Run) hooks.Outcome {
	failed := run.Checks
	o := hooks.FailAs(hooks.ClassCIFailed, "CI failed on %s: %s", gitx.ShortSHA(pr.HeadSHA), checkNames(failed))
	url := ""
	var names []string
	for _, ch := range failed {
		names = append(names, ch.Name)
		if url == "" {
			url = ch.URL
		}
	}
	o.Outputs = map[string]string{"failed_checks": textsafe.Names(names), "ci_url": url, "failure_reason": o.Reason,
		"failure_details": run.Details()}
	o.Files = map[string]string{feedbackFile: run.Feedback(pr)}
	return o
}

// checkNames names checks with their states, for a reason.
func checkNames(checks []forge.Check) string {
	names := make([]string, len(checks))
	for i, ch := range checks {
		names[i] = fmt.Sprintf("%s (%s)", textsafe.Name(ch.Name), ch.State)
	}
	return strings.Join(names, ", ")
}

// noVerdict is CI whose failed checks gave no verdict on the code, run
// again as far as allowed: ci_environment when one of them failed for its
// environment, else ci_cancelled. Neither has a feedback file, and
// neither spends the budget of ci_failed.
func (p *ciPoll) noVerdict(run cifailure.Run) hooks.Outcome {
	if !run.Environment() {
		return p.unfinished(run.Checks)
	}
	o := hooks.FailAs(hooks.ClassCIEnvironment, "CI on %s failed for its environment, not the code (ci_environment), after it was run again: %s; "+
		"nothing in the code to fix: the CI service, its runners or the network need a person", p.short(), strings.Join(run.EnvironmentReasons(), "; "))
	p.watch.restart(p.now)
	return withOutputs(o, map[string]string{"failure_reason": o.Reason, "failed_checks": "", "failure_details": ""})
}
