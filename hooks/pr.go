package hooks

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/stages"
)

// Failure classes of the PR hooks. The controller keeps a retry budget per
// class, so a conflict or a GitHub outage never spends the CI budget.
const (
	ClassCIFailed       = "ci_failed"
	ClassNoNewCI        = "no_new_ci"
	ClassPollingTimeout = "polling_timeout"
	ClassConflict       = "conflict"
	ClassForge          = "forge_error"
)

// Watch keys of wait_for_ci.
const (
	watchHead    = "ci.head"
	watchSince   = "ci.head_seen_at"
	watchReruns  = "ci.reruns"
	watchRerunAt = "ci.rerun_at"
	feedbackFile = "ci_feedback.md"
	logLines     = 200
)

func prDefs() []Def {
	return []Def{
		{HookSpec: stages.HookSpec{Name: "create_pr",
			Params: []stages.Param{{Name: "draft", Type: stages.ParamBool}, {Name: "base", Type: stages.ParamString},
				{Name: "labels", Type: stages.ParamList}, {Name: "title", Type: stages.ParamTemplate}, {Name: "body", Type: stages.ParamTemplate}},
			Outputs: []string{"pr_number", "pr_url", "head_sha"}}, Run: createPR},
		{HookSpec: stages.HookSpec{Name: "wait_for_ci",
			Params: []stages.Param{{Name: "timeout", Type: stages.ParamDuration}, {Name: "new_run_timeout", Type: stages.ParamDuration},
				{Name: "poll_interval", Type: stages.ParamDuration}, {Name: "rerun_failed", Type: stages.ParamInt}},
			Outputs: []string{"head_sha", "ci_passed_sha", "failed_checks", "ci_url", "failure_reason"}}, Run: waitForCI},
		{HookSpec: stages.HookSpec{Name: "pr_ci_passed", Outputs: []string{"head_sha", "ci_passed_sha", "failed_checks", "ci_url"}}, Run: prCIPassed},
		{HookSpec: stages.HookSpec{Name: "check_conflicts",
			Params: []stages.Param{{Name: "auto_rebase", Type: stages.ParamBool},
				{Name: "on_conflict", Type: stages.ParamEnum, Enum: []string{"fail", "step_back", "escalate"}}},
			Outputs: []string{"conflict_files", "head_sha"}}, Run: checkConflicts},
		{HookSpec: stages.HookSpec{Name: "pr_mergeable", Outputs: []string{"conflict_files"}}, Run: prMergeable},
		{HookSpec: stages.HookSpec{Name: "rebase", Outputs: []string{"conflict_files", "head_sha"}}, Run: rebaseHook},
		{HookSpec: stages.HookSpec{Name: "pr_approved", Outputs: []string{"approved_sha"}}, Run: prApproved},
		{HookSpec: stages.HookSpec{Name: "merge_pr",
			Params: []stages.Param{{Name: "method", Type: stages.ParamEnum, Enum: []string{"squash", "merge", "rebase"}},
				{Name: "delete_branch", Type: stages.ParamBool}}}, Run: mergePR},
		{HookSpec: stages.HookSpec{Name: "close_pr", Params: []stages.Param{{Name: "comment", Type: stages.ParamTemplate}}}, Run: closePR},
	}
}

func settings(c *Call) *stages.Config {
	if c.Env != nil && c.Env.Config != nil {
		return c.Env.Config
	}
	return stages.Defaults()
}

func remote(c *Call) string {
	if c.Env != nil && c.Env.Remote != "" {
		return c.Env.Remote
	}
	return "origin"
}

func baseBranch(c *Call, pr *forge.PR) string {
	if pr != nil && pr.Base != "" {
		return pr.Base
	}
	if b := c.Params.String("base", ""); b != "" {
		return b
	}
	if c.Issue.DefaultBranch != "" {
		return c.Issue.DefaultBranch
	}
	return settings(c).DefaultBranch
}

func forgeOf(c *Call) (forge.Forge, *Outcome) {
	if c.Env == nil || c.Env.Forge == nil {
		o := Failf("hook `%s` needs a forge, and none is set up: set `forge: local` or `forge: github` in .agenttree.yaml", c.Entry.Name)
		o.Class = ClassConfig
		return nil, &o
	}
	// A forge opened on first use says here, before anything is pushed,
	// whether it can be opened at all.
	if _, err := forge.Unwrap(c.Env.Forge); err != nil {
		o := Failf("hook `%s`: %v", c.Entry.Name, err)
		o.Class = ClassConfig
		return nil, &o
	}
	return c.Env.Forge, nil
}

func gitOf(c *Call) (Git, *Outcome) {
	if c.Env == nil || c.Env.Git == nil {
		o := Failf("hook `%s` needs git in the issue's work tree, and none is set up", c.Entry.Name)
		o.Class = ClassConfig
		return nil, &o
	}
	return c.Env.Git(c.Issue.WorkDir), nil
}

// forgeFailure turns an error talking to the forge into an outcome. It is
// never a CI failure: a rate limit or an outage is waited out.
func forgeFailure(c *Call, what string, err error) Outcome {
	var rl *forge.RateLimitError
	switch {
	case errors.As(err, &rl):
		wait := rl.RetryAfter
		if wait <= 0 {
			wait = rl.Reset.Sub(c.Env.now())
		}
		if wait <= 0 {
			wait = time.Minute
		}
		o := Pending(wait, fmt.Sprintf("%s: %v", what, err))
		o.Class = ClassRateLimit
		return o
	case errors.Is(err, forge.ErrUnavailable):
		o := Failf("%s: %v", what, err)
		o.Class = ClassConfig
		return o
	case errors.Is(err, forge.ErrAuth):
		o := Failf("%s: %v; check the token (`gh auth status`, GH_TOKEN)", what, err)
		o.Class = ClassAuth
		return o
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		o := Pending(settings(c).CIPolling.PollInterval, fmt.Sprintf("%s: %v", what, err))
		o.Class = ClassTimeout
		return o
	}
	o := Pending(settings(c).CIPolling.PollInterval, fmt.Sprintf("%s failed (will retry): %v", what, err))
	o.Class = ClassForge
	return o
}

// openPR loads the issue's PR.
func openPR(ctx context.Context, c *Call) (forge.Forge, *forge.PR, *Outcome) {
	f, o := forgeOf(c)
	if o != nil {
		return nil, nil, o
	}
	n := c.Issue.PRNumber
	if n == 0 {
		n, _ = strconv.Atoi(c.Issue.Outputs["pr_number"])
	}
	if n == 0 {
		o := Failf("issue %d has no pull request yet; the create_pr hook opens one", c.Issue.ID)
		return nil, nil, &o
	}
	pr, err := f.PR(ctx, n)
	if err != nil {
		o := forgeFailure(c, fmt.Sprintf("reading PR #%d", n), err)
		if errors.Is(err, forge.ErrNotFound) {
			o = Failf("PR #%d of issue %d no longer exists on the forge; open a new one (create_pr)", n, c.Issue.ID)
		}
		return nil, nil, &o
	}
	return f, pr, nil
}

func short(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}

func prOutputs(pr *forge.PR) map[string]string {
	return map[string]string{"pr_number": strconv.Itoa(pr.Number), "pr_url": pr.URL, "head_sha": pr.HeadSHA}
}

func createPR(ctx context.Context, c *Call) Outcome {
	f, o := forgeOf(c)
	if o != nil {
		return *o
	}
	g, o := gitOf(c)
	if o != nil {
		return *o
	}
	branch := c.Issue.Branch
	if branch == "" {
		return Failf("issue %d has no branch to open a PR from", c.Issue.ID)
	}
	if c.Env.DryRun {
		out := Pass()
		out.Message = fmt.Sprintf("would push %s and open a PR", branch)
		return out
	}
	if err := g.Push(ctx, remote(c), branch, ""); err != nil {
		return Failf("pushing %s to %s: %v; make sure the branch exists and has your commits", branch, remote(c), err)
	}
	vars := c.Issue.MessageVars()
	title := stages.Render(c.Params.String("title", "{{issue_title}}"), vars)
	body := stages.Render(c.Params.String("body", "Issue {{issue_id}}: {{issue_title}}\n\nOpened by agenttree from branch `{{branch}}`."), vars)
	pr, created, err := f.EnsurePR(ctx, forge.NewPR{Branch: branch, Base: baseBranch(c, nil), Title: title, Body: body,
		Draft: c.Params.Bool("draft", false), Labels: c.Params.List("labels")})
	if err != nil {
		if errors.Is(err, forge.ErrAuth) || errors.Is(err, forge.ErrRateLimit) {
			return forgeFailure(c, "opening the PR", err)
		}
		return Failf("opening a PR for %s: %v", branch, err)
	}
	out := Pass()
	out.Outputs = prOutputs(pr)
	if created {
		out.Message = fmt.Sprintf("opened PR #%d: %s", pr.Number, pr.URL)
	} else {
		out.Message = fmt.Sprintf("PR #%d is open: %s", pr.Number, pr.URL)
	}
	return out
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

func checkNames(checks []forge.Check) string {
	names := make([]string, len(checks))
	for i, ch := range checks {
		names[i] = fmt.Sprintf("%s (%s)", ch.Name, ch.State)
	}
	return strings.Join(names, ", ")
}

// waitForCI makes one poll of the PR's CI: pending until every check on
// the head commit is done, then pass or a failure. It remembers in the
// watch state when it first saw the head, so timeouts survive restarts.
func waitForCI(ctx context.Context, c *Call) Outcome {
	f, pr, o := openPR(ctx, c)
	if o != nil {
		return *o
	}
	cfg := settings(c).CIPolling
	interval := c.Params.Duration("poll_interval", cfg.PollInterval)
	timeout := c.Params.Duration("timeout", cfg.Timeout)
	newRun := c.Params.Duration("new_run_timeout", cfg.NewRunTimeout)
	maxReruns := c.Params.Int("rerun_failed", 0)
	now := c.Env.now()

	switch pr.State {
	case forge.StateMerged:
		return withOutputs(Pass(), prOutputs(pr))
	case forge.StateClosed:
		return Failf("PR #%d is closed; reopen it or open a new one", pr.Number)
	}

	head := pr.HeadSHA
	watch := map[string]string{}
	since, err := time.Parse(time.RFC3339Nano, c.Issue.Watch[watchSince])
	reruns, _ := strconv.Atoi(c.Issue.Watch[watchReruns])
	rerunAt, _ := time.Parse(time.RFC3339Nano, c.Issue.Watch[watchRerunAt])
	if c.Issue.Watch[watchHead] != head || err != nil {
		since, reruns, rerunAt = now, 0, time.Time{}
		watch[watchHead], watch[watchSince], watch[watchReruns], watch[watchRerunAt] = head, now.UTC().Format(time.RFC3339Nano), "", ""
	}
	finish := func(o Outcome) Outcome {
		o.Watch = watch
		if o.Outputs == nil {
			o.Outputs = map[string]string{}
		}
		for k, v := range prOutputs(pr) {
			o.Outputs[k] = v
		}
		return o
	}
	if pr.Mergeable == forge.Conflicting {
		o := Failf("PR #%d conflicts with %s; its CI results do not count until it is rebased", pr.Number, pr.Base)
		o.Class = ClassConflict
		return finish(o)
	}
	waited := now.Sub(since)
	checks, err := headChecks(ctx, f, head)
	if err != nil {
		o := forgeFailure(c, fmt.Sprintf("reading checks of %s", short(head)), err)
		if o.Kind == KindPending && timeout > 0 && waited >= timeout {
			// An outage that outlasts the whole wait ends it too, but as
			// what it is: no verdict on the code.
			o = Failf("no CI verdict on %s after %s (polling_timeout): %s", short(head), timeout, o.Reason)
			o.Class = ClassPollingTimeout
			watch[watchHead], watch[watchSince] = head, now.UTC().Format(time.RFC3339Nano)
		}
		return finish(o)
	}
	// A failure that finished before the rerun we asked for is the old
	// run's; wait for the new one.
	checks = supersededAsPending(checks, rerunAt)
	sum := forge.Summarize(checks)
	switch {
	case sum.Total == 0:
		if waited >= newRun {
			o := Failf("no CI run started on %s within %s of the push (no_new_ci); check that the CI workflow runs on pull requests to %s", short(head), newRun, pr.Base)
			o.Class = ClassNoNewCI
			o.Outputs = map[string]string{"failure_reason": o.Reason}
			return finish(o)
		}
		return finish(Pending(interval, fmt.Sprintf("waiting for CI to start on %s (%s so far)", short(head), waited.Round(time.Second))))
	case sum.Pending > 0:
		if timeout > 0 && waited >= timeout {
			o := Failf("CI on %s is still running after %s (polling_timeout); %d of %d checks pending", short(head), timeout, sum.Pending, sum.Total)
			o.Class = ClassPollingTimeout
			o.Outputs = map[string]string{"failure_reason": o.Reason}
			// The next wait is a new one, with its own budget.
			watch[watchHead], watch[watchSince] = head, now.UTC().Format(time.RFC3339Nano)
			return finish(o)
		}
		return finish(Pending(interval, fmt.Sprintf("%d of %d checks still running on %s", sum.Pending, sum.Total, short(head))))
	case sum.Failing == 0:
		return finish(ciPassed(head))
	}
	if reruns < maxReruns && rerunnable(sum.Failed) {
		if c.Env != nil && c.Env.DryRun {
			return finish(Pending(interval, fmt.Sprintf("would rerun %s (rerun %d of %d)", checkNames(sum.Failed), reruns+1, maxReruns)))
		}
		// Only a rerun the forge accepted is counted: asking again after
		// an error is safe (a rerun already running is not started twice).
		err := f.Rerun(ctx, sum.Failed)
		switch {
		case errors.Is(err, forge.ErrNotRerunnable):
			return finish(ciFailure(ctx, c, f, pr, sum.Failed))
		case err != nil:
			return finish(forgeFailure(c, "rerunning failed checks", err))
		}
		watch[watchHead], watch[watchReruns] = head, strconv.Itoa(reruns+1)
		watch[watchRerunAt] = now.UTC().Format(time.RFC3339Nano)
		return finish(Pending(interval, fmt.Sprintf("rerunning %s (rerun %d of %d on %s)", checkNames(sum.Failed), reruns+1, maxReruns, short(head))))
	}
	return finish(ciFailure(ctx, c, f, pr, sum.Failed))
}

// ciPassed is the verdict that lets head merge: ci_passed_sha names the
// commit CI verified, and merge_pr merges only that commit. The feedback of
// an earlier failure is removed.
func ciPassed(head string) Outcome {
	o := Pass()
	// Empty values remove an earlier failure's facts from the issue.
	o.Outputs = map[string]string{"ci_passed_sha": head, "failure_reason": "", "failed_checks": "", "ci_url": ""}
	o.Files = map[string]string{feedbackFile: ""}
	return o
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

// ciFailure builds the failure of a finished, failed CI run, with
// ci_feedback.md for the agent.
func ciFailure(ctx context.Context, c *Call, f forge.Forge, pr *forge.PR, failed []forge.Check) Outcome {
	o := Failf("CI failed on %s: %s", short(pr.HeadSHA), checkNames(failed))
	o.Class = ClassCIFailed
	url := ""
	var names []string
	for _, ch := range failed {
		names = append(names, ch.Name)
		if url == "" {
			url = ch.URL
		}
	}
	o.Outputs = map[string]string{"failed_checks": strings.Join(names, ", "), "ci_url": url, "failure_reason": o.Reason}
	o.Files = map[string]string{feedbackFile: ciFeedback(ctx, f, pr, failed)}
	return o
}

func ciFeedback(ctx context.Context, f forge.Forge, pr *forge.PR, failed []forge.Check) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# CI failed\n\nPR #%d (%s), commit %s.\n\n## Failing checks\n\n", pr.Number, pr.URL, pr.HeadSHA)
	for _, ch := range failed {
		link := ch.URL
		if link == "" {
			link = "no link"
		}
		fmt.Fprintf(&b, "- **%s**: %s — %s\n", ch.Name, ch.State, link)
	}
	for _, ch := range failed {
		text, err := f.Log(ctx, ch, logLines)
		if err != nil {
			fmt.Fprintf(&b, "\n## %s\n\nThe log could not be fetched: %v\n", ch.Name, err)
			continue
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		fmt.Fprintf(&b, "\n## %s (last %d lines of the log)\n\n```text\n%s\n```\n", ch.Name, logLines, strings.TrimRight(text, "\n"))
	}
	b.WriteString("\nFix the failures, commit, push (`git push`), then run `agenttree next`.\n")
	return b.String()
}

func withOutputs(o Outcome, outputs map[string]string) Outcome {
	o.Outputs = outputs
	return o
}

func prCIPassed(ctx context.Context, c *Call) Outcome {
	f, pr, o := openPR(ctx, c)
	if o != nil {
		return *o
	}
	checks, err := headChecks(ctx, f, pr.HeadSHA)
	if err != nil {
		return forgeFailure(c, "reading checks", err)
	}
	sum := forge.Summarize(checks)
	switch {
	case sum.Failing > 0:
		o := ciFailure(ctx, c, f, pr, sum.Failed)
		for k, v := range prOutputs(pr) {
			o.Outputs[k] = v
		}
		return o
	case sum.Pending > 0:
		return Failf("CI is still running on %s (%d of %d checks pending); wait for it (`agenttree pr wait %d`)", short(pr.HeadSHA), sum.Pending, sum.Total, c.Issue.ID)
	case sum.Total == 0:
		// Right after a push GitHub often reports nothing yet: no checks
		// is no verdict, never a pass.
		return Pending(settings(c).CIPolling.PollInterval, fmt.Sprintf("no CI has reported on %s of PR #%d yet; wait for it (`agenttree pr wait %d`)", short(pr.HeadSHA), pr.Number, c.Issue.ID))
	}
	out := ciPassed(pr.HeadSHA)
	for k, v := range prOutputs(pr) {
		out.Outputs[k] = v
	}
	return out
}

func prMergeable(ctx context.Context, c *Call) Outcome {
	f, pr, o := openPR(ctx, c)
	if o != nil {
		return *o
	}
	switch {
	case pr.State == forge.StateMerged:
		return Pass()
	case pr.State == forge.StateClosed:
		return Failf("PR #%d is closed; reopen it or open a new one", pr.Number)
	}
	switch pr.Mergeable {
	case forge.Mergeable:
		return Pass()
	case forge.Unknown:
		// GitHub works mergeability out in the background: give it a few
		// polls (abandoned if the head moves) before answering "later".
		if w, ok := forge.As[forge.MergeableWaiter](f); ok {
			if known, err := w.WaitMergeable(ctx, pr.Number, pr.HeadSHA); err == nil && known.Mergeable != forge.Unknown {
				pr = known
				break
			}
		}
		return Pending(10*time.Second, fmt.Sprintf("the forge is still working out whether PR #%d merges cleanly", pr.Number))
	}
	if pr.Mergeable == forge.Mergeable {
		return Pass()
	}
	files := ""
	if cl, ok := forge.As[forge.ConflictLister](f); ok {
		if list, err := cl.ConflictFiles(ctx, pr.Number); err == nil {
			files = strings.Join(list, ", ")
		}
	}
	out := Failf("PR #%d conflicts with %s%s; on branch %s run `git fetch %s && git rebase %s/%s`, resolve the conflicts, then `git push --force-with-lease`", pr.Number, pr.Base, inFiles(files), pr.Branch, remote(c), remote(c), pr.Base)
	out.Class = ClassConflict
	out.Outputs = map[string]string{"conflict_files": files}
	return out
}

func inFiles(files string) string {
	if files == "" {
		return ""
	}
	return " in " + files
}

// rebaseOnto rebases the issue's branch onto the PR's base in its work
// tree and pushes with a lease on the head the forge reported, so work
// pushed meanwhile is never overwritten.
func rebaseOnto(ctx context.Context, c *Call, g Git, pr *forge.PR) (newHead string, conflicts []string, err error) {
	rem := remote(c)
	if err := g.Fetch(ctx, rem); err != nil {
		return "", nil, fmt.Errorf("fetching %s: %w", rem, err)
	}
	// The push below replaces the PR's head, so the work tree must be on
	// the PR's branch and hold that head: commits pushed from elsewhere
	// are never dropped.
	if branch, err := g.CurrentBranch(ctx); err != nil || branch != pr.Branch {
		return "", nil, fmt.Errorf("the work tree %s is not on %s (on %q); check out the PR's branch", c.Issue.WorkDir, pr.Branch, branch)
	}
	if ok, err := g.IsAncestor(ctx, pr.HeadSHA, "HEAD"); err != nil || !ok {
		return "", nil, fmt.Errorf("the PR's head %s is not in the work tree %s (someone pushed to %s); pull it first: git pull --rebase %s %s", short(pr.HeadSHA), c.Issue.WorkDir, pr.Branch, rem, pr.Branch)
	}
	if err := g.Rebase(ctx, rem+"/"+pr.Base); err != nil {
		var ce interface{ ConflictingFiles() []string }
		if errors.As(err, &ce) {
			return "", ce.ConflictingFiles(), nil
		}
		if errors.Is(err, forge.ErrConflict) {
			files, _ := g.ConflictFiles(ctx, rem+"/"+pr.Base, pr.HeadSHA)
			return "", files, nil
		}
		return "", nil, fmt.Errorf("rebasing onto %s/%s: %w", rem, pr.Base, err)
	}
	if err := g.Push(ctx, rem, pr.Branch, pr.HeadSHA); err != nil {
		return "", nil, fmt.Errorf("pushing the rebased %s: %w", pr.Branch, err)
	}
	head, err := g.RevParse(ctx, "HEAD")
	if err != nil {
		return "", nil, err
	}
	return head, nil, nil
}

func conflictOutcome(c *Call, pr *forge.PR, files []string) Outcome {
	list := strings.Join(files, ", ")
	rem := remote(c)
	reason := fmt.Sprintf("PR #%d conflicts with %s%s; on branch %s run `git fetch %s && git rebase %s/%s`, resolve the conflicts, then `git push --force-with-lease`", pr.Number, pr.Base, inFiles(list), pr.Branch, rem, rem, pr.Base)
	var o Outcome
	switch c.Params.String("on_conflict", "fail") {
	case "step_back":
		o = StepBack("", reason) // the stage's on_failure names the target
	case "escalate":
		o = Escalate(reason)
	default:
		o = Failf("%s", reason)
	}
	o.Class = ClassConflict
	o.Outputs = map[string]string{"conflict_files": list, "failure_reason": reason}
	return o
}

// prAndGit loads the issue's PR and git in its work tree.
func prAndGit(ctx context.Context, c *Call) (*forge.PR, Git, *Outcome) {
	_, pr, o := openPR(ctx, c)
	if o != nil {
		return nil, nil, o
	}
	g, o := gitOf(c)
	if o != nil {
		return nil, nil, o
	}
	return pr, g, nil
}

func checkConflicts(ctx context.Context, c *Call) Outcome {
	pr, g, o := prAndGit(ctx, c)
	if o != nil {
		return *o
	}
	rem := remote(c)
	if err := g.Fetch(ctx, rem); err != nil {
		return forgeFailure(c, "fetching "+rem, err)
	}
	base := rem + "/" + pr.Base
	files, err := g.ConflictFiles(ctx, base, pr.HeadSHA)
	if err != nil {
		return Failf("checking %s against %s for conflicts: %v", short(pr.HeadSHA), base, err)
	}
	auto := c.Params.Bool("auto_rebase", settings(c).Conflicts.AutoRebase)
	if len(files) == 0 {
		// With auto_rebase the branch is also kept on top of its base, so
		// what CI tests is what the merge will produce.
		upToDate, err := g.IsAncestor(ctx, base, pr.HeadSHA)
		if !auto || err != nil || upToDate {
			return withOutputs(Pass(), map[string]string{"conflict_files": ""})
		}
	} else if !auto {
		return conflictOutcome(c, pr, files)
	}
	if c.Env.DryRun {
		return Pending(0, fmt.Sprintf("would rebase %s onto %s", pr.Branch, base))
	}
	head, conflicts, err := rebaseOnto(ctx, c, g, pr)
	if err != nil {
		return Failf("%v", err)
	}
	if len(conflicts) > 0 {
		return conflictOutcome(c, pr, conflicts)
	}
	// The rebased head is new code: nothing may pass on it until CI has
	// run there, so this check waits (the next call finds it up to date).
	out := Pending(settings(c).CIPolling.PollInterval, fmt.Sprintf("rebased %s onto %s (now %s); CI must pass on the new head", pr.Branch, pr.Base, short(head)))
	out.Outputs = map[string]string{"conflict_files": "", "head_sha": head}
	if settings(c).Conflicts.NotifyOnRebase {
		why := "it was behind " + pr.Base
		if len(files) > 0 {
			why = "it conflicted in " + strings.Join(files, ", ")
		}
		out.Message = fmt.Sprintf("agenttree rebased %s onto %s (now %s) because %s; pull before you change anything", pr.Branch, pr.Base, short(head), why)
	}
	return out
}

func rebaseHook(ctx context.Context, c *Call) Outcome {
	pr, g, o := prAndGit(ctx, c)
	if o != nil {
		return *o
	}
	if c.Env.DryRun {
		return Pending(0, fmt.Sprintf("would rebase %s onto %s", pr.Branch, pr.Base))
	}
	head, conflicts, err := rebaseOnto(ctx, c, g, pr)
	if err != nil {
		return Failf("%v", err)
	}
	if len(conflicts) > 0 {
		return conflictOutcome(c, pr, conflicts)
	}
	out := withOutputs(Pass(), map[string]string{"conflict_files": "", "head_sha": head})
	out.Message = fmt.Sprintf("rebased %s onto %s (now %s)", pr.Branch, pr.Base, short(head))
	return out
}

func prApproved(ctx context.Context, c *Call) Outcome {
	_, pr, o := openPR(ctx, c)
	if o != nil {
		if settings(c).AllowSelfApprove {
			return Pass()
		}
		return *o
	}
	// approved_sha binds the approval to the commit a person looked at:
	// merge_pr merges nothing else.
	approved := withOutputs(Pass(), map[string]string{"approved_sha": pr.HeadSHA})
	if settings(c).AllowSelfApprove {
		return approved
	}
	switch pr.ReviewDecision {
	case forge.ReviewApproved:
		if pr.ApprovedSHA != "" && pr.ApprovedSHA != pr.HeadSHA {
			return Failf("PR #%d was approved at %s, but its head is now %s; the new commits need a review (%s)", pr.Number, short(pr.ApprovedSHA), short(pr.HeadSHA), pr.URL)
		}
		return approved
	case forge.ReviewChangesRequested:
		return Failf("PR #%d has changes requested; address the review on %s", pr.Number, pr.URL)
	}
	return Failf("PR #%d is not approved yet; a reviewer approves it on %s (on the local forge: `agenttree approve %d`)", pr.Number, pr.URL, c.Issue.ID)
}

func mergePR(ctx context.Context, c *Call) Outcome {
	f, pr, o := openPR(ctx, c)
	if o != nil {
		return *o
	}
	if pr.State == forge.StateMerged {
		return withOutputs(Pass(), prOutputs(pr))
	}
	if pr.State == forge.StateClosed {
		return Failf("PR #%d is closed without merging; reopen it first", pr.Number)
	}
	method := forge.MergeMethod(c.Params.String("method", string(forge.MergeSquash)))
	// Merge exactly the head the CI gates verified (recorded on the issue);
	// a push since then must go through CI first.
	expect := c.Issue.Outputs["ci_passed_sha"]
	if expect == "" {
		expect = pr.HeadSHA // no CI gate in this pipeline
	}
	if approved := c.Issue.Outputs["approved_sha"]; approved != "" && approved != expect {
		return Failf("PR #%d is not at the commit a person approved (approved %s, CI verified %s, head %s); the new code needs review: a person approves again", pr.Number, short(approved), short(expect), short(pr.HeadSHA))
	}
	if c.Env != nil && c.Env.DryRun {
		return withOutputs(Pass(), prOutputs(pr))
	}
	if err := f.Merge(ctx, pr.Number, method, c.Params.Bool("delete_branch", true), expect); err != nil {
		if errors.Is(err, forge.ErrHeadChanged) {
			return Failf("PR #%d is not at the commit CI verified (%v); its new head needs CI before it merges", pr.Number, err)
		}
		if errors.Is(err, forge.ErrConflict) {
			out := Failf("PR #%d cannot be merged: %v; rebase it onto %s", pr.Number, err, pr.Base)
			out.Class = ClassConflict
			return out
		}
		return forgeFailure(c, fmt.Sprintf("merging PR #%d", pr.Number), err)
	}
	out := withOutputs(Pass(), prOutputs(pr))
	out.Message = fmt.Sprintf("merged PR #%d into %s (%s)", pr.Number, pr.Base, method)
	return out
}

func closePR(ctx context.Context, c *Call) Outcome {
	f, pr, o := openPR(ctx, c)
	if o != nil {
		return *o
	}
	if pr.State != forge.StateOpen {
		return Pass()
	}
	if c.Env != nil && c.Env.DryRun {
		return Pass()
	}
	comment := stages.Render(c.Params.String("comment", ""), c.Issue.MessageVars())
	if err := f.Close(ctx, pr.Number, comment); err != nil {
		return forgeFailure(c, fmt.Sprintf("closing PR #%d", pr.Number), err)
	}
	return Pass()
}
