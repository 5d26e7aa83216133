package load_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// withStagePR writes a pipeline in the given form: a stage implement with
// substages code and feedback, then a stage pr with the keys given (each
// line indented 8 spaces). The keys of pr stand at the same line and
// column in both forms, so a diagnostic's position is the same.
func withStagePR(form stages.Form, keys string) string {
	// CI that tests something, last: the lines above keep their numbers.
	const ci = "ci: {command: \"true\"}\n"
	if form == stages.Compatible {
		return "flows:\n  default:\n    stages:\n      implement:\n        substages: {code: ~, feedback: ~}\n      pr:\n" + keys + ci
	}
	return "# the list form\n#\nstages:\n      - name: implement\n        substages: [code, feedback]\n      - name: pr\n" + keys + ci
}

// hookOfPR loads keys as stage pr's (see withStagePR) and returns its
// first post_start hook.
func hookOfPR(t *testing.T, form stages.Form, keys string) (*stages.HookEntry, error) {
	t.Helper()
	cfg, err := load.Parse("/repo/.agenttree.yaml", []byte(withStagePR(form, keys)), policyCatalog())
	if err != nil {
		return nil, err
	}
	n, ok := cfg.Node("pr")
	require.True(t, ok)
	hs := n.Entering(nil)
	require.NotEmpty(t, hs)
	return hs[0], nil
}

// policy spells a failure policy for comparison: its steps, then its
// action and target: "send_message(hi) rebase → step_back_to implement.code".
func policy(p *stages.FailurePolicy) string {
	if p == nil {
		return "<none>"
	}
	var parts []string
	for _, s := range p.Steps {
		if len(s.Params) == 0 {
			parts = append(parts, s.Name)
			continue
		}
		parts = append(parts, s.Name+strings.TrimPrefix(fmt.Sprint(s.Params), "map"))
	}
	parts = append(parts, "→", string(p.Action))
	if p.Target != "" {
		parts = append(parts, p.Target)
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

func TestOnFailureForms(t *testing.T) {
	const stage = "        host: controller\n        post_start:\n"
	tests := []struct {
		name  string
		entry string // stage pr's first post_start hook, indented 10
		want  string
	}{
		{"step back", "          - wait_for_ci: {on_failure: step_back}\n", "→ step_back"},
		{"escalate", "          - wait_for_ci:\n            on_failure: escalate\n", "→ escalate"},
		{"fail", "          - wait_for_ci: {on_failure: fail}\n", "→ fail"},
		{"ignore", "          - wait_for_ci: {on_failure: ignore}\n", "→ ignore"},
		{"step back to a stage", "          - wait_for_ci: {on_failure: {step_back_to: implement.code}}\n", "→ step_back_to implement.code"},
		{"a stage's first substage", "          - wait_for_ci: {on_failure: {step_back_to: implement}}\n", "→ step_back_to implement.code"},
		{"a message, then a step back",
			"          - wait_for_ci:\n            on_failure:\n              - send_message: \"CI failed: {{failed_checks}}\"\n              - step_back_to: implement.feedback\n",
			"send_message[message:CI failed: {{failed_checks}}] → step_back_to implement.feedback"},
		{"a rebase, then a step back", "          - wait_for_ci:\n            on_failure: [rebase, step_back]\n", "rebase → step_back"},
		{"an action written as a key", "          - wait_for_ci:\n            on_failure:\n              - rebase:\n              - escalate:\n", "rebase → escalate"},
		{"step_back written as a key is the action", "          - wait_for_ci:\n            on_failure:\n              - step_back:\n", "→ step_back"},
		{"hooks with no action", "          - wait_for_ci:\n            on_failure:\n              - send_message: hi\n              - rebase: {}\n",
			"send_message[message:hi] rebase →"},
		{"an action alone", "          - wait_for_ci: {on_failure: [ignore]}\n", "→ ignore"},
		{"the action first, the message after it",
			"          - wait_for_ci:\n            on_failure:\n              - step_back_to: implement.code\n              - send_message: \"CI failed: {{ci_error}}\"\n",
			"send_message[message:CI failed: {{ci_error}}] → step_back_to implement.code"},
		{"a nested on_failure: what follows a rebase that failed",
			"          - wait_for_ci:\n            on_failure:\n              - rebase:\n              - on_failure:\n                - send_message: hi\n                - step_back_to: implement.code\n",
			"rebase send_message[message:hi] → step_back_to implement.code"},
		{"a nested on_failure that is an action", "          - wait_for_ci:\n            on_failure: [rebase, on_failure: escalate]\n", "rebase → escalate"},
		{"a nested on_failure that names a stage", "          - wait_for_ci:\n            on_failure: [rebase, on_failure: {step_back_to: implement.code}]\n",
			"rebase → step_back_to implement.code"},
		{"a step with options", "          - wait_for_ci:\n            on_failure:\n              - send_message: hi\n                optional: true\n              - escalate\n",
			"send_message[message:hi] → escalate"},
	}
	for _, tt := range tests {
		for _, form := range forms {
			t.Run(string(form)+"/"+tt.name, func(t *testing.T) {
				h, err := hookOfPR(t, form, stage+tt.entry)
				require.NoError(t, err)
				assert.Equal(t, tt.want, policy(h.OnFailure))
				assert.NotContains(t, h.Params, "on_failure")
			})
		}
	}
}

// Each error of an on_failure is reported at its place, in either form.
func TestOnFailureErrors(t *testing.T) {
	const stage = "        host: controller\n        on_failure: {step_back_to: implement.feedback}\n        post_start:\n"
	tests := []struct {
		name  string
		entry string // stage pr's first post_start hook, indented 10
		want  []string
	}{
		{"unknown action", "          - wait_for_ci: {on_failure: escalte}\n",
			[]string{`:10:39: error: unknown on_failure action "escalte" (use step_back, escalate, fail, ignore, or {step_back_to: STAGE}) (did you mean ` + "`escalate`?)"}},
		{"step_back_to without its stage", "          - wait_for_ci: {on_failure: step_back_to}\n",
			[]string{`:10:39: error: unknown on_failure action "step_back_to"`}},
		// Found by FuzzParse (testdata/fuzz/FuzzParse/crash-bare-step-back-to): the
		// loader read the missing value and panicked.
		{"step_back_to without its stage in a list", "          - wait_for_ci:\n            on_failure:\n              - send_message: hi\n              - step_back_to\n",
			[]string{":13:17: error: on_failure.step_back_to names no stage to step back to (write `- step_back_to: STAGE`)"}},
		{"no action", "          - wait_for_ci:\n            on_failure:\n",
			[]string{":11:24: error: expected a string, got nothing"}},
		{"unknown key", "          - wait_for_ci: {on_failure: {step_back: implement}}\n",
			[]string{":10:39: error: on_failure names no stage to step back to (write `on_failure: {step_back_to: STAGE}`)", ":10:40: error: unknown key `step_back` in on_failure (did you mean `step_back_to`?)"}},
		{"unknown stage", "          - wait_for_ci: {on_failure: {step_back_to: implemnt.code}}\n",
			[]string{`:10:54: error: on_failure.step_back_to names unknown stage "implemnt.code" (did you mean ` + "`implement.code`?)"}},
		{"unknown stage in a list", "          - wait_for_ci:\n            on_failure:\n              - send_message: hi\n              - step_back_to: implement.fedback\n",
			[]string{`:13:31: error: on_failure.step_back_to names unknown stage "implement.fedback" (did you mean ` + "`implement.feedback`?)"}},
		{"an empty list", "          - wait_for_ci: {on_failure: []}\n",
			[]string{":10:39: error: on_failure is an empty list (write an action such as `escalate`, or the hooks to run)"}},
		{"a rebase after the action", "          - wait_for_ci:\n            on_failure:\n              - escalate\n              - rebase\n",
			[]string{":13:17: error: `rebase` in on_failure comes after the action `escalate`: the hooks of the list run before its action, " +
				"and a pass of `rebase` ends the list, so it would undo the action (move `rebase` before `escalate`)"}},
		{"two actions", "          - wait_for_ci:\n            on_failure:\n              - step_back_to: implement.code\n              - escalate\n",
			[]string{":13:17: error: on_failure has two actions, `step_back_to` and `escalate` (keep one)"}},
		{"two actions, one nested", "          - wait_for_ci:\n            on_failure:\n              - escalate\n              - on_failure: [step_back]\n",
			[]string{":13:30: error: on_failure has two actions, `escalate` and `step_back` (keep one)"}},
		{"a nested on_failure before the end", "          - wait_for_ci:\n            on_failure:\n              - on_failure: [escalate]\n              - rebase\n",
			[]string{":12:17: error: `on_failure` inside on_failure says what happens when the entries before it fail, so it ends the list, " +
				"and it has entries after it (move it to the end of the list, or write its entries in the list itself)"}},
		{"a misspelt action", "          - wait_for_ci:\n            on_failure: [send_message: hi, escalte]\n",
			[]string{":11:44: error: unknown action or hook `escalte` in on_failure (did you mean `escalate`?)"}},
		{"a misspelt hook", "          - wait_for_ci:\n            on_failure:\n              - send_mesage: hi\n",
			[]string{":12:17: error: unknown action or hook `send_mesage` in on_failure (did you mean `send_message`?)"}},
		{"an action with a value", "          - wait_for_ci:\n            on_failure:\n              - escalate: now\n",
			[]string{":12:17: error: the action `escalate` in on_failure takes no value (write `- escalate`)"}},
		{"a step's bad parameter", "          - wait_for_ci:\n            on_failure:\n              - send_message: [a, b]\n",
			[]string{":12:31: error: hook `send_message` parameter `message`: expected a string, got a list"}},
		{"a step's missing parameter", "          - wait_for_ci:\n            on_failure:\n              - send_message:\n",
			[]string{":12:17: error: hook `send_message` needs parameter `message`"}},
		{"a step's unknown variable", "          - wait_for_ci:\n            on_failure:\n              - send_message: \"{{failed_chekcs}}\"\n",
			[]string{":12:31: error: send_message.message uses {{failed_chekcs}}, which no hook or issue provides (did you mean `failed_checks`?)"}},
		{"a step's own policy", "          - wait_for_ci:\n            on_failure:\n              - rebase:\n                on_failure: escalate\n",
			[]string{":13:29: error: `rebase` in on_failure of `wait_for_ci` runs once, as it is: it takes no failure policy of its own"}},
		{"a step that moves the issue", "          - wait_for_ci:\n            on_failure:\n              - step_back: implement.code\n",
			[]string{":12:17: error: `step_back` in on_failure of `wait_for_ci` would send the issue to implement.code, which a hook run there cannot do (end the list with `- step_back_to: implement.code`)"}},
		{"not a policy", "          - wait_for_ci: {on_failure: {step_back_to: [a]}}\n",
			[]string{":10:54: error: expected a string, got a list"}},
	}
	// What the earlier tool's form reports instead, where it only warns.
	laxForm := map[string][]string{
		"unknown key": {":10:39: error: on_failure names no stage to step back to",
			":10:40: warning: unknown key `step_back` in on_failure is ignored (did you mean `step_back_to`?)"},
	}
	for _, tt := range tests {
		for _, form := range forms {
			t.Run(string(form)+"/"+tt.name, func(t *testing.T) {
				_, err := hookOfPR(t, form, stage+tt.entry)
				require.Error(t, err)
				want := tt.want
				if lax, ok := laxForm[tt.name]; ok && form == stages.Compatible {
					want = lax
				}
				containEach(t, diagStrings(diagnostics(t, err)), want)
			})
		}
	}
}

// on_conflict is an option of the hooks that find conflicts, in the forms
// of on_failure, whether or not the hook still declares the parameter it
// used to be; where the hook is not marked as finding conflicts, the
// parameter loads as it always did.
func TestOnConflict(t *testing.T) {
	const stage = "        host: controller\n        on_failure: {step_back_to: implement.feedback}\n        post_start:\n"
	specs := []struct {
		name      string
		spec      stages.HookSpec
		asOption  bool
		paramLoad bool // the value also loads as the old parameter
	}{
		{"finds conflicts", checkConflicts(true, false), true, false},
		{"finds conflicts, old parameter still declared", checkConflicts(true, true), true, false},
		{"the old parameter only", checkConflicts(false, true), false, true},
	}
	entries := []struct {
		name  string
		entry string
		want  string
	}{
		{"among the parameters", "          - check_conflicts: {auto_rebase: true, on_conflict: step_back}\n", "→ step_back"},
		{"beside the hook", "          - check_conflicts: {auto_rebase: true}\n            on_conflict: escalate\n", "→ escalate"},
	}
	for _, sp := range specs {
		for _, e := range entries {
			for _, form := range forms {
				t.Run(sp.name+"/"+e.name+"/"+string(form), func(t *testing.T) {
					cat := withSpecs(sp.spec)
					cfg, err := load.Parse("/repo/.agenttree.yaml", []byte(withStagePR(form, stage+e.entry)), cat)
					if !sp.asOption && strings.Contains(e.name, "beside") {
						if form == stages.Compatible {
							require.NoError(t, err)
							assert.Contains(t, diagStrings(cfg.Warnings), "/repo/.agenttree.yaml:11:13: warning: unknown option `on_conflict` beside hook `check_conflicts` is ignored")
							return
						}
						require.Error(t, err)
						assert.Contains(t, err.Error(), ":11:13: error: unknown option `on_conflict` beside hook `check_conflicts`")
						return
					}
					require.NoError(t, err)
					n, _ := cfg.Node("pr")
					h := n.Entering(nil)[0]
					assert.Equal(t, true, h.Params["auto_rebase"])
					if sp.asOption {
						assert.Equal(t, e.want, policy(h.OnConflict))
						assert.NotContains(t, h.Params, "on_conflict")
						return
					}
					assert.Nil(t, h.OnConflict)
					assert.Equal(t, strings.TrimPrefix(e.want, "→ "), h.Params["on_conflict"])
				})
			}
		}
	}

	t.Run("a list", func(t *testing.T) {
		for _, form := range forms {
			h, err := hookOfPR(t, form, stage+"          - check_conflicts:\n            on_conflict:\n              - rebase:\n              - send_message: \"conflicts in {{conflict_files}}\"\n              - step_back\n            on_failure: escalate\n")
			require.NoError(t, err)
			assert.Equal(t, "rebase send_message[message:conflicts in {{conflict_files}}] → step_back", policy(h.OnConflict))
			assert.Equal(t, "→ escalate", policy(h.OnFailure))
		}
	})
	t.Run("an unknown stage", func(t *testing.T) {
		_, err := hookOfPR(t, stages.Canonical, stage+"          - check_conflicts: {on_conflict: {step_back_to: implement.cod}}\n")
		require.Error(t, err)
		assert.Contains(t, err.Error(), `:10:59: error: on_conflict.step_back_to names unknown stage "implement.cod" (did you mean `+"`implement.code`?)")
	})
	t.Run("elsewhere an unknown parameter", func(t *testing.T) {
		_, err := hookOfPR(t, stages.Canonical, stage+"          - wait_for_ci: {on_conflict: step_back}\n")
		require.Error(t, err)
		assert.Contains(t, err.Error(), ":10:27: error: hook `wait_for_ci` has no parameter `on_conflict`")
	})
	t.Run("elsewhere an unknown option", func(t *testing.T) {
		_, err := hookOfPR(t, stages.Canonical, stage+"          - wait_for_ci:\n            on_conflict: step_back\n")
		require.Error(t, err)
		assert.Contains(t, err.Error(), ":11:13: error: unknown option `on_conflict` beside hook `wait_for_ci` (known options: optional, timeout, retries, when, context, on_failure)")
	})
	t.Run("the options a hook that finds conflicts knows", func(t *testing.T) {
		_, err := hookOfPR(t, stages.Canonical, stage+"          - check_conflicts:\n            on_conflcit: step_back\n")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "unknown option `on_conflcit` beside hook `check_conflicts` (known options: optional, timeout, retries, when, context, on_failure, on_conflict) (did you mean `on_conflict`?)")
	})
}

// A hook that watches a PR takes on_ci_failure and on_conflict in the
// forms of on_failure.
func TestWatchingHookPolicies(t *testing.T) {
	const stage = "        on_failure: {step_back_to: implement.feedback}\n        post_start:\n"
	tests := []struct {
		name       string
		entry      string
		ciFailure  string
		onConflict string
		err        string
	}{
		{name: "actions", entry: "          - poll_pr_status: {interval: 60, on_ci_failure: step_back, on_conflict: escalate}\n",
			ciFailure: "→ step_back", onConflict: "→ escalate"},
		{name: "beside the hook",
			entry:     "          - poll_pr_status:\n            on_ci_failure: {step_back_to: implement.code}\n            on_conflict: [rebase, step_back]\n",
			ciFailure: "→ step_back_to implement.code", onConflict: "rebase → step_back"},
		{name: "lists",
			entry:     "          - poll_pr_status:\n              on_ci_failure:\n                - send_message: \"CI failed on {{head_sha}}\"\n                - step_back_to: implement.feedback\n",
			ciFailure: "send_message[message:CI failed on {{head_sha}}] → step_back_to implement.feedback", onConflict: "<none>"},
		{name: "a bad action", entry: "          - poll_pr_status: {on_ci_failure: stepback}\n",
			err: `:9:45: error: unknown on_ci_failure action "stepback" (use step_back, escalate, fail, ignore, or {step_back_to: STAGE}) (did you mean ` + "`step_back`?)"},
		{name: "a rebase after the action", entry: "          - poll_pr_status: {on_conflict: [escalate, rebase]}\n",
			err: ":9:54: error: `rebase` in on_conflict comes after the action `escalate`"},
		{name: "the design notes' Option C: the action first, then the message",
			entry:     "          - poll_pr_status:\n              on_ci_failure:\n                - step_back_to: implement.code\n                - send_message: \"CI failed: {{ci_error}} ({{failed_checks}})\"\n",
			ciFailure: "send_message[message:CI failed: {{ci_error}} ({{failed_checks}})] → step_back_to implement.code", onConflict: "<none>"},
	}
	for _, tt := range tests {
		for _, form := range forms {
			t.Run(string(form)+"/"+tt.name, func(t *testing.T) {
				h, err := hookOfPR(t, form, stage+tt.entry)
				if tt.err != "" {
					require.Error(t, err)
					assert.Contains(t, err.Error(), tt.err)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, tt.ciFailure, policy(h.OnCIFailure))
				assert.Equal(t, tt.onConflict, policy(h.OnConflict))
				assert.Nil(t, h.OnFailure)
				assert.NotContains(t, h.Params, "on_ci_failure")
				assert.NotContains(t, h.Params, "on_conflict")
			})
		}
	}

	t.Run("not on other hooks", func(t *testing.T) {
		_, err := hookOfPR(t, stages.Canonical, stage+"          - wait_for_ci: {on_ci_failure: escalate}\n")
		require.Error(t, err)
		assert.Contains(t, err.Error(), ":9:27: error: hook `wait_for_ci` has no parameter `on_ci_failure`")
	})
	t.Run("its own parameters", func(t *testing.T) {
		h, err := hookOfPR(t, stages.Canonical, stage+"          - poll_pr_status: {interval: 60}\n")
		require.NoError(t, err)
		assert.Equal(t, map[string]any{"interval": time.Minute}, h.Params)
	})
}

func TestStageOnFailure(t *testing.T) {
	tests := []struct {
		name string
		keys string // stage pr's, indented 8
		want stages.OnFailure
		err  string
	}{
		{name: "max_retries", keys: "        on_failure: {step_back_to: implement.feedback, message: \"{{failure_reason}}\", max_retries: 2}\n",
			want: stages.OnFailure{StepBackTo: "implement.feedback", Message: "{{failure_reason}}", MaxRetries: 2}},
		{name: "max_retries unset", keys: "        on_failure:\n          step_back_to: implement.feedback\n",
			want: stages.OnFailure{StepBackTo: "implement.feedback"}},
		{name: "max_retries of zero", keys: "        on_failure: {step_back_to: implement.feedback, max_retries: 0}\n",
			err: ":7:69: error: on_failure.max_retries must be at least 1, got 0 (use 1 or more)"},
		{name: "max_retries not a number", keys: "        on_failure: {max_retries: twice}\n",
			err: `:7:35: error: expected a whole number, got "twice"`},
		{name: "misspelt", keys: "        on_failure: {step_back_to: implement.feedback, max_retry: 2}\n",
			err: ":7:56: error: unknown key `max_retry` in on_failure (did you mean `max_retries`?)"},
	}
	for _, tt := range tests {
		for _, form := range forms {
			t.Run(string(form)+"/"+tt.name, func(t *testing.T) {
				cfg, err := load.Parse("/repo/.agenttree.yaml", []byte(withStagePR(form, tt.keys)), policyCatalog())
				if form == stages.Compatible && strings.Contains(tt.err, "unknown key") {
					// The earlier tool's form ignores it, with a warning.
					require.NoError(t, err)
					require.Len(t, cfg.Warnings, 1)
					assert.Contains(t, cfg.Warnings[0].String(), strings.Replace(tt.err, "error:", "warning:", 1)[:30])
					return
				}
				if tt.err != "" {
					require.Error(t, err)
					assert.Contains(t, err.Error(), tt.err)
					return
				}
				require.NoError(t, err)
				n, _ := cfg.Node("pr")
				of := n.OnFailure()
				require.NotNil(t, of)
				of.Pos = stages.Pos{}
				assert.Equal(t, tt.want, *of)
			})
		}
	}
}
