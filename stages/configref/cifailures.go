package configref

// ciFailureKinds documents how wait_for_ci tells a failure of the code
// from CI that gave no verdict on it, and the budget of each kind. The
// signatures of a failure of CI's environment are hooks/pr's
// (environment.go); the budgets engine/policy's (Budget).
func (w *mdWriter) ciFailureKinds() {
	w.p("## CI failure kinds")
	w.p("`wait_for_ci` tells a failure of the code from CI that gave no verdict on it. Each kind has its own budget of step backs " +
		"on one issue (a stage's `on_failure.max_retries` replaces each); the one after the last calls a person. Only `ci_failed` " +
		"writes ci_feedback.md and tells the agent to fix the code; the others tell it, with the reason, that there is nothing in " +
		"the code to fix (ci-stalled.md) and to push again.")
	w.table("Kind", "When", "Budget")
	w.row("`ci_failed`", "A check failed, and not for its environment.", "`ci_polling.max_retries`")
	w.row("`no_new_ci`", "No check started within `new_run_timeout_s` of the push.", "2")
	w.row("`polling_timeout`", "Checks still ran `timeout_s` after CI started.", "2")
	w.row("`ci_cancelled`", "Every failed check was cancelled or timed out on the CI service (on the local forge: stopped by TERM or INT from outside, or past `ci.timeout_s`); run again once first.", "2")
	w.row("`ci_environment`", "Every failed check failed for its environment (or was cancelled), at least one for its environment; "+
		"run again once first.", "2")
	w.endTable()
	w.p("A check failed for its environment, not its code, when:")
	w.p("- on GitHub, its conclusion is `startup_failure` (the workflow could not start);\n" +
		"- on the local forge, its command could not be started (the sandbox's user, the shell), its runner stopped without a " +
		"result twice, or the command was killed by a signal the runner did not send: KILL (the out-of-memory killer) or HUP (a " +
		"closing session). TERM or INT that the runner did not send (a person's kill or Ctrl-C) makes the run cancelled " +
		"(`ci_cancelled`). A crash of the program itself (SEGV, ABRT) is the code's;\n" +
		"- on either, a line of the tail of its log (the last 200 lines, which wait_for_ci reads for the feedback anyway) says, in " +
		"any case, `The runner has received a shutdown signal`, `lost communication with the server`, `No space left on device`, " +
		"`Could not resolve host` or `Temporary failure in name resolution`; or a download was refused: a URL, a word of " +
		"downloading (download, fetch, install, registry, proxy, pull, retriev…) and the status 403, 429, 500, 502, 503 or 504, " +
		"all on one line (a bare `GET URL … 403` is a test's, not a download's).")
	w.p("A real failure beside it makes the run `ci_failed`. A test whose output happens to hold such a line is taken for the " +
		"environment's failure: it is run again once, the agent is told to push again, and the third time a person is called.")
}
