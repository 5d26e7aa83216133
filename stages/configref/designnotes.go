package configref

import (
	"fmt"
	"slices"
	"time"

	"github.com/agenttree/agenttree/stages/settings"
)

// The design notes agenttree's behaviour comes from are named here by
// their subject; the reference maps what they write to what agenttree
// reads, and says which of them each default follows.
const (
	noteMonitor = "the CI monitor note"
	notePRReady = "the pr_ready note"
	noteBreaker = "the circuit breaker note"
	noteRuns    = "the agent-run monitor note"
	noteWatch   = "the watch state note"
)

// policyForms documents the forms of a failure policy beyond the table of
// actions: where a bare step_back goes, an action written before the
// hooks, and a nested on_failure.
func (w *mdWriter) policyForms() {
	w.p("A bare `step_back` (an `on_failure`, `on_conflict` or `on_ci_failure` that names no stage) goes to the stage's " +
		"`on_failure.step_back_to`, else to the nearest one declared before it in the issue's flow, else to the nearest earlier " +
		"stage where an agent works (not the controller's, a review, a parking lot, a `redirect_only` stage or an end) and that " +
		"`next` would not skip for the issue (its `condition` holds); the agent is told why. `agenttree validate` prints where each one goes (`note: ... steps back to implement.feedback`), and refuses one " +
		"with nowhere to go, with the rewrite: `on_failure: {step_back_to: STAGE}`.")
	w.p("In the list form the hooks run first, in order, and the action follows, wherever it is written: " +
		"`[step_back_to: implement.code, send_message: \"...\"]` sends the message with the step back. Only a hook that resolves " +
		"the failure (`rebase`) must come before the action, as its pass ends the list. A last item `on_failure: ...` says what " +
		"follows when the items before it did not deal with the failure; what it holds is the rest of the list. " +
		"`{step_back_to: STAGE, message: TEXT}` tells the agent TEXT (with {{placeholders}}) instead of the failure. " +
		"The hooks of a policy see the failure's outputs, and `{{failure_reason}}` (also spelled `{{ci_error}}`); those of a " +
		"watch's `on_ci_failure` and `on_conflict` also see the outputs of the CI poll (`{{failed_checks}}`, `{{ci_url}}`, ...).")
	w.p("```yaml\n- check_conflicts:\n    on_conflict:\n      - rebase:          # try a rebase first\n      - on_failure:      # if it did not resolve the conflict\n" +
		"        - send_message: \"Merge conflicts detected. Please rebase and resolve.\"\n        - step_back_to: implement.code\n```")
}

// designNotes writes the two sections on the design notes: how each
// spelling they use is read, and which note each default follows.
func (w *mdWriter) designNotes() {
	w.spellings()
	w.defaults()
}

func (w *mdWriter) spellings() {
	w.p("## Spellings from the design notes")
	w.p("agenttree's behaviour comes from five design notes: %s (Options A, B and C, its config changes, its configuration "+
		"options and a script alternative), %s, %s, %s and %s. Every config spelling they use loads as written and means what "+
		"this table says. The repository keeps each snippet of %s as a whole pipeline in "+
		"`stages/load/testdata/designnotes/`, loaded and driven by its tests on the local forge through a CI failure, a conflict, a run cancelled twice, a run queued behind another past the snippet's timeout, and a run that outlasts it (examples/designnotes*_test.go).", notePRReady, noteMonitor,
		noteBreaker, noteRuns, noteWatch, notePRReady)
	w.table("Note", "As the note writes it", "What agenttree reads")
	for _, r := range spellingRows() {
		w.row(r[0], r[1], r[2])
	}
	w.endTable()
}

// spellingRows are the rows of the spellings table: note, spelling, reading.
func spellingRows() [][3]string {
	bare := "steps back to the nearest earlier stage where an agent works (`implement.feedback` in the note's pipeline, as its comment says), " +
		"unless the stage or one before it declares `on_failure.step_back_to`; the agent is told the failure, and validate prints where it goes"
	return [][3]string{
		{notePRReady + ", Option A", "`host: controller`", "`role: controller`: the controller runs the stage's hooks; when they pass it moves the issue on"},
		{notePRReady + ", Option A", "`post_start: [create_pr:, wait_for_ci:, check_conflicts:]`", "the stage's entry hooks, run in order when an issue arrives"},
		{notePRReady + ", Option A", "`wait_for_ci: {timeout: 600}`", "`wait_for_ci`'s own `timeout` parameter, in seconds (over `ci_polling.timeout_s`)"},
		{notePRReady + ", Option A", "`wait_for_ci: {on_failure: step_back}` with no `step_back_to` anywhere", bare},
		{notePRReady + ", Option A", "`check_conflicts: {on_conflict: step_back}`", "the same, for a conflict `check_conflicts` could not rebase away"},
		{notePRReady + ", Options A, B, C", "`human_review: true`", "a person approves (`agenttree approve`) or rejects"},
		{notePRReady + ", Option B", "`human_review: true` with `host: controller` and `post_start`", "a review whose entry hooks the controller runs; a person still approves it"},
		{notePRReady + ", Option B", "`on_failure: [send_message: \"... {{pr_url}} ...\", step_back_to: implement.code]`", "as written: the message, then the step back"},
		{notePRReady + ", Option B", "`on_conflict: [rebase:, on_failure: [send_message: ..., step_back_to: implement.code]]`",
			"a rebase first; a rebase that resolves the conflict ends the list (the check runs again); else the nested list follows: " +
				"the same as `[rebase, send_message: ..., step_back_to: implement.code]`"},
		{notePRReady + ", Option C", "`poll_pr_status: {interval: 60}`", "the controller watches the PR in the background, every 60 s, while the stage is worked on"},
		{notePRReady + ", Option C", "`on_ci_failure: [step_back_to: implement.code, send_message: \"CI failed: {{ci_error}}\"]`",
			"the action may come first: the message is sent with the step back"},
		{notePRReady + ", Option C", "`{{ci_error}}`", "`{{failure_reason}}`: why the hook failed"},
		{notePRReady, "`{{failed_checks}}` in `on_ci_failure`", "the failed checks of the CI poll the watch runs"},
		{notePRReady + ", hooks", "`wait_for_ci(timeout=600, poll_interval=30)`", "`wait_for_ci: {timeout: 600, poll_interval: 30}`"},
		{notePRReady + ", hooks", "`check_conflicts(auto_rebase=True)`", "`check_conflicts: {auto_rebase: true}`"},
		{notePRReady + ", hooks", "`step_back(to_stage, to_substage, message)`", "`step_back: {to: STAGE.SUBSTAGE, message: TEXT}`, or a policy's `step_back_to`"},
		{notePRReady + ", config changes", "`substages:` as a mapping (`feedback: {pre_completion: [...]}`) under a `- name:` stage",
			"the substages in the order written, as a list of `- name:` items would give them"},
		{notePRReady + ", config changes", "`has_commits:`, `file_exists: review.md`, `section_check: {file, section, expect: empty}`", "as written"},
		{notePRReady + ", config changes", "`pre_completion: [pr_ci_passed:, pr_mergeable:]`", "gates: CI passed on the head, and the PR merges cleanly"},
		{notePRReady + ", config changes", "stage `on_failure: {step_back_to: implement.feedback, message: \"{{failure_reason}}\"}`",
			"where the stage's failures go, and what the agent is told"},
		{notePRReady + ", config changes", "`pre_completion: [pr_approved:]`", "a gate: a person approved the PR at its head"},
		{notePRReady + ", configuration options", "`ci_polling: {timeout_s: 600, poll_interval_s: 30, max_retries: 5}`", "as written (these are the defaults)"},
		{notePRReady + ", configuration options", "`ci_polling.on_failure: step_back`",
			"what a CI failure does where `wait_for_ci` has no `on_failure` (and a watch no `on_ci_failure`): an action; " +
				"`{step_back_to: STAGE}` is refused there, with the rewrite (put it on the stage)"},
		{notePRReady + ", configuration options", "`conflict_handling: {auto_rebase: true, notify_on_rebase: true, max_conflict_retries: 3}`", "as written (these are the defaults)"},
		{notePRReady + ", script alternative", "`run: |` a script using `{{pr_number}}`",
			"`run`: the command runs with `sh -c`, `{{pr_number}}` standing for `$AGENTTREE_PR_NUMBER`; `for i in {1..20}` is bash, " +
				"which a POSIX `sh` loops over once: write `for i in $(seq 20)`"},
		{notePRReady + ", script alternative", "a hook's `on_failure: {step_back_to: implement.feedback, message: \"...\"}`", "the step back, telling the agent the message"},
		{noteMonitor, "`subagentTimeout` (60 min)", "`ci_polling.timeout_s` (see [Defaults and the design notes](#defaults-and-the-design-notes))"},
		{noteMonitor, "the new-CIPE timeout (30 min), `expectedCommitSha`", "`ci_polling.new_run_timeout_s`; CI results are bound to the PR's head commit, so a run of an older commit is never read"},
		{noteMonitor, "backoff 60 s, 90 s, 120 s", "`ci_polling.poll_interval_s`, growing to `max_interval_s` while nothing happens"},
		{noteMonitor, "5 consecutive failed polls", "5 errors in a row talking to the forge call a person"},
		{noteBreaker, "thresholds (`NO_PROGRESS_THRESHOLD`, `SAME_ERROR_THRESHOLD`), half-open after 2", "`circuit_breaker` (" + breakerKeysText() + ")"},
		{noteBreaker, "`inputs`, `metrics`, the session and status blocks", "not configuration: agenttree keeps the breaker's state on the issue"},
		{noteRuns, "`max_retries`, `fallback_strategy` (`next_in_list`, `same_agent`, `fail`), agents per role", "`roles.ROLE.max_restarts`, `roles.ROLE.fallback`, `roles.ROLE.agents`"},
		{noteRuns, "the work package's front matter", "not configuration"},
		{noteWatch, "`min_interval` 30 s, `max_interval` 300 s, `initial_interval` 60 s", "`ci_polling.min_interval_s`, `max_interval_s`, `poll_interval_s`"},
		{noteWatch, "`additive_increase` 30 s, `multiplicative_decrease` 0.5", "fixed: an idle poll adds 30 s (at most the first interval), an event halves it"},
		{noteWatch, "the state file (`head_sha`, `handled_checks`, `handled_threads`, ...)", "not configuration: the controller keeps it in the issue's `watch.yaml`"},
	}
}

// breakerKeysText lists the keys of circuit_breaker, for the table.
func breakerKeysText() string {
	for _, k := range settings.TopLevel() {
		if k.Name == "circuit_breaker" {
			var names []string
			for _, sub := range k.Keys {
				names = append(names, sub.Name)
			}
			s := codes(names)
			if slices.ContainsFunc(settings.StageKeys(), func(k settings.Key) bool { return k.Name == "circuit_breaker" }) {
				s += "; a stage's own `circuit_breaker` for the note's thresholds per phase"
			}
			return s
		}
	}
	return ""
}

func (w *mdWriter) defaults() {
	d := settings.Defaults()
	c := d.CIPolling
	w.p("## Defaults and the design notes")
	w.p("The notes disagree on some defaults. Each default below says which note it follows and why; a setting the notes " +
		"do not name is not listed.")
	w.table("Setting", "Default", "The notes", "Follows, and why")
	w.row("`ci_polling.poll_interval_s` (the first interval)", secs(c.PollInterval),
		notePRReady+": 30 s; "+noteMonitor+": 60 s; "+noteWatch+": 60 s",
		notePRReady+", the note about this stage (its hook and its config both say 30 s): a fast CI is seen early, "+
			"and the interval grows while nothing happens, so a long run is polled about as rarely as the others ask")
	w.row("`ci_polling.min_interval_s`, `max_interval_s`", secs(c.MinInterval)+", "+secs(c.MaxInterval),
		noteWatch+": 30 s to 300 s; "+noteMonitor+": 60 s to 120 s",
		noteWatch+": its additive increase and halving on an event cover the monitor's fixed steps and react to what happens; "+
			"a ceiling of 300 s keeps many waiting issues within the forge's rate limit")
	w.row("`ci_polling.timeout_s`", secs(c.Timeout),
		notePRReady+": 10 min; "+noteMonitor+": 60 min",
		notePRReady+", the note that names this setting and its default; agenttree counts it from when CI starts on the head, "+
			"not from the push, so a slow queue does not eat it (time queued counts against `new_run_timeout_s`). "+
			"The monitor's hour bounds a whole session of waiting; for CI that takes longer, set `timeout_s: 3600`")
	w.row("`ci_polling.new_run_timeout_s`", secs(c.NewRunTimeout), noteMonitor+": 30 min for a new run to appear", noteMonitor+", the only note that has it")
	w.row("a wait before the first poll", "none: the first look is at the controller's next tick ("+secs(d.Controller.Interval)+")",
		noteMonitor+": 60 s (30 s when a new run is expected)",
		"neither: the monitor waits so as not to read the previous run, and agenttree binds every CI result to the PR's head commit, "+
			"so an early look reads nothing stale; a run already finished (a fast local CI, a resumed issue) is seen at once")
	w.row("`ci_polling.max_retries`", fmt.Sprint(c.MaxRetries), notePRReady+": 5", notePRReady)
	w.row("`conflict_handling`", fmt.Sprintf("`auto_rebase: %t`, `notify_on_rebase: %t`, `max_conflict_retries: %d`",
		d.Conflicts.AutoRebase, d.Conflicts.NotifyOnRebase, d.Conflicts.MaxConflictRetries), notePRReady+": the same", notePRReady)
	b := d.CircuitBreaker
	w.row("`circuit_breaker`", fmt.Sprintf("`half_open_after: %d`, `no_progress_threshold: %d`, `same_error_threshold: %d`", b.HalfOpenAfter, b.NoProgress, b.SameError),
		noteBreaker+": half-open after 2; open after 2 to 5 without progress and 3 to 5 with the same error, by phase",
		noteBreaker+": half-open as it says; 3 without progress is its most common threshold, and 3 with the same error is that of its "+
			"GREEN phase (making failing tests pass), which is what a CI failure loop is")
	w.row("errors talking to the forge", "5 in a row call a person", noteMonitor+": 5 consecutive failures", noteMonitor)
	w.endTable()
}

// secs writes a duration as seconds, with minutes when it is whole ones.
func secs(d time.Duration) string {
	s := fmt.Sprintf("%d s", int(d/time.Second))
	if d >= time.Minute && d%time.Minute == 0 {
		s += fmt.Sprintf(" (%d min)", int(d/time.Minute))
	}
	return s
}
