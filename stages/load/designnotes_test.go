package load_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// designNote loads a snippet of the design notes, copied as written into
// testdata/designnotes with only the stages around it added (docs/CONFIG.md,
// "Spellings from the design notes"), and lists the warnings it gives.
func designNote(t *testing.T, name string) (*stages.Config, []string) {
	t.Helper()
	cfg, err := load.File(filepath.Join("testdata", "designnotes", name), catalog())
	require.NoError(t, err, "the design notes' %s loads as written", name)
	var warns []string
	for _, w := range cfg.Warnings {
		warns = append(warns, w.Msg)
	}
	return cfg, warns
}

// nowhere is the warning of a hook whose failures the snippets leave to a
// person: the notes say where CI failures and conflicts go, not where a
// PR that cannot be opened does.
func nowhere(hook, node string) string {
	return "failures of `" + hook + "` in " + node + " lead nowhere: add `on_failure: {step_back_to: STAGE}` to the stage or an `on_failure` to the hook"
}

// conflictsOnly is the warning of a hook whose on_conflict routes its
// conflicts and nothing its other failures.
func conflictsOnly(hook, node string) string {
	return "failures of `" + hook + "` in " + node + " other than a conflict (a git error, say; a forge that cannot be reached is tried again) " +
		"go to a person: `on_conflict` routes only conflicts; to route the others, add `on_failure: {step_back_to: STAGE}` to the stage " +
		"or an `on_failure` to the hook (`on_failure: escalate` to say a person takes them)"
}

// hookAt is the hook entry named hook among the hooks of the node at path.
func hookAt(t *testing.T, cfg *stages.Config, path, hook string) *stages.HookEntry {
	t.Helper()
	n, ok := cfg.Node(path)
	require.True(t, ok, path)
	for _, h := range n.EveryHook() {
		if h.Name == hook {
			return h
		}
	}
	require.Failf(t, "no such hook", "%s has no %s", path, hook)
	return nil
}

// Every snippet of the design notes' pr_ready stage loads as written, and
// means what docs/CONFIG.md ("Spellings from the design notes") says.
func TestDesignNotesSnippetsLoadAsWritten(t *testing.T) {
	tests := []struct {
		file  string
		warns []string
		means func(t *testing.T, cfg *stages.Config)
	}{
		{"option-a.yaml", []string{nowhere("create_pr", "pr_ready"), conflictsOnly("check_conflicts", "pr_ready")}, func(t *testing.T, cfg *stages.Config) {
			ci := hookAt(t, cfg, "pr_ready", "wait_for_ci")
			assert.Equal(t, "→ step_back", policy(ci.OnFailure))
			assert.Equal(t, 600*time.Second, ci.Params["timeout"])
			assert.Equal(t, "→ step_back", policy(hookAt(t, cfg, "pr_ready", "check_conflicts").OnConflict))
			flow, err := cfg.Flow("")
			require.NoError(t, err)
			assert.Equal(t, "implement.feedback", flow.BareStepBack("pr_ready", nil), "as the note's comment says: go back to implement.feedback")
			var routes []string
			for _, r := range cfg.BareStepBacks() {
				routes = append(routes, r.Node+" "+r.Hook+" "+r.Policy+" → "+r.To)
			}
			assert.Equal(t, []string{
				"pr_ready wait_for_ci on_failure → implement.feedback",
				"pr_ready check_conflicts on_conflict → implement.feedback",
			}, routes, "what validate prints")
		}},
		{"option-b.yaml", []string{nowhere("create_pr", "implementation_review"), conflictsOnly("check_conflicts", "implementation_review")}, func(t *testing.T, cfg *stages.Config) {
			assert.Equal(t, "send_message[text:CI failed. Please check {{pr_url}} and fix the issues.] → step_back_to implement.code",
				policy(hookAt(t, cfg, "implementation_review", "wait_for_ci").OnFailure))
			assert.Equal(t, "rebase send_message[text:Merge conflicts detected. Please rebase and resolve.] → step_back_to implement.code",
				policy(hookAt(t, cfg, "implementation_review", "check_conflicts").OnConflict),
				"try the rebase; if it does not resolve the conflict, the nested on_failure follows")
		}},
		{"option-c.yaml", []string{nowhere("create_pr", "implementation_review")}, func(t *testing.T, cfg *stages.Config) {
			w := hookAt(t, cfg, "implementation_review", "poll_pr_status")
			assert.Equal(t, 60*time.Second, w.Params["interval"])
			assert.Equal(t, "send_message[text:CI failed: {{ci_error}}] → step_back_to implement.code", policy(w.OnCIFailure),
				"the message is sent with the step back written before it")
			assert.Equal(t, "send_message[text:Conflicts detected, please rebase] → step_back_to implement.code", policy(w.OnConflict))
		}},
		{"config-changes.yaml", nil, func(t *testing.T, cfg *stages.Config) {
			flow, err := cfg.Flow("")
			require.NoError(t, err)
			assert.Equal(t, []string{"backlog", "implement.code", "implement.feedback", "pr_ready", "implementation_review", "accepted"}, flow.Paths(),
				"substages written as a mapping, in order")
			fb, ok := cfg.Node("implement.feedback")
			require.True(t, ok)
			_, gates := fb.Leaving(nil)
			var names []string
			for _, h := range gates {
				names = append(names, h.Name)
			}
			assert.Equal(t, []string{"has_commits", "file_exists", "section_check"}, names)
			pr, ok := cfg.Node("pr_ready")
			require.True(t, ok)
			assert.Equal(t, "implement.feedback", pr.OnFailure().StepBackTo)
			assert.Equal(t, "{{failure_reason}}", pr.OnFailure().Message)
			assert.Equal(t, 30*time.Second, hookAt(t, cfg, "pr_ready", "wait_for_ci").Params["poll_interval"])
			assert.Equal(t, true, hookAt(t, cfg, "pr_ready", "check_conflicts").Params["auto_rebase"])
		}},
		{"configuration-options.yaml", []string{nowhere("create_pr", "pr_ready"), nowhere("check_conflicts", "pr_ready")}, func(t *testing.T, cfg *stages.Config) {
			assert.Equal(t, 600*time.Second, cfg.CIPolling.Timeout)
			assert.Equal(t, 30*time.Second, cfg.CIPolling.PollInterval)
			assert.Equal(t, 5, cfg.CIPolling.MaxRetries)
			assert.Equal(t, "→ step_back", policy(cfg.CIPolling.OnFailure))
			assert.Equal(t, "→ step_back", policy(hookAt(t, cfg, "pr_ready", "wait_for_ci").OnFailure),
				"ci_polling.on_failure is what wait_for_ci's failure does when it says nothing of its own")
			assert.Nil(t, hookAt(t, cfg, "pr_ready", "create_pr").OnFailure, "only the hook that waits for CI")
			assert.Equal(t, stages.ConflictHandling{AutoRebase: true, NotifyOnRebase: true, MaxConflictRetries: 3}, cfg.Conflicts)
			flow, err := cfg.Flow("")
			require.NoError(t, err)
			assert.Equal(t, "implement.feedback", flow.BareStepBack("pr_ready", nil))
		}},
		{"script-alternative.yaml", []string{nowhere("create_pr", "implementation_review")}, func(t *testing.T, cfg *stages.Config) {
			run := hookAt(t, cfg, "implementation_review", "run")
			assert.Equal(t, "→ step_back_to implement.feedback", policy(run.OnFailure))
			assert.Equal(t, "CI checks failed. Please fix and retry.", run.OnFailure.Message)
			assert.Contains(t, run.Params["command"], "gh pr checks $pr_number")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			cfg, warns := designNote(t, tt.file)
			assert.Equal(t, tt.warns, warns, "a bare step_back is no warning: it has somewhere to go")
			tt.means(t, cfg)
		})
	}
}

// A spelling of the design notes that has no meaning where it is written
// is refused with the rewrite, at its place.
func TestDesignNotesSpellingsRefusedWithTheRewrite(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       string
	}{
		{name: "a bare step_back with no stage before it where an agent works",
			yaml: "stages:\n  - name: pr_ready\n    host: controller\n    post_start:\n      - wait_for_ci:\n          on_failure: step_back\n  - name: done\n    terminal: completion\n",
			want: "/repo/.agenttree.yaml:6:23: error: the `on_failure: step_back` of `wait_for_ci` in pr_ready has no stage to step back to: " +
				"no on_failure.step_back_to is declared there or before it, and no stage before it is one where an agent works " +
				"(name the stage it goes back to: `on_failure: {step_back_to: STAGE}`, or add `on_failure: {step_back_to: STAGE}` to the stage)"},
		{name: "ci_polling.on_failure naming a stage",
			yaml: "ci_polling:\n  on_failure: {step_back_to: implement.feedback}\nstages:\n  - name: implement\n",
			want: "/repo/.agenttree.yaml:2:15: error: ci_polling.on_failure is an action (step_back, escalate, fail or ignore), not a stage to step back to " +
				"(write `ci_polling: {on_failure: step_back}` (it goes to the nearest earlier stage where an agent works), " +
				"or name the stage on the stage that waits for CI: `on_failure: {step_back_to: STAGE}`)"},
		{name: "a substage of the mapping that is not one",
			yaml: "stages:\n  - name: implement\n    substages:\n      code: [has_commits]\n",
			want: "/repo/.agenttree.yaml:4:13: error: substage \"code\" must be a mapping or empty, got a list " +
				"(write its settings as a mapping (`code: {pre_completion: [...]}`), or nothing)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseYAML(t, tt.yaml)
			require.Error(t, err)
			assert.Equal(t, tt.want, strings.Join(errorStrings(t, err), "\n"))
		})
	}
}

// ci_polling.on_failure is what a CI failure does where the hook says
// nothing of its own: wait_for_ci's on_failure, a watch's on_ci_failure.
func TestCIPollingOnFailureIsTheDefaultOfTheCIHooks(t *testing.T) {
	cfg, err := parseYAML(t, `ci_polling: {on_failure: escalate}
ci: {command: "true"}
stages:
  - name: implement
  - name: pr
    host: controller
    post_start:
      - create_pr:
      - wait_for_ci:
      - poll_pr_status: {on_conflict: step_back}
  - name: again
    host: controller
    post_start:
      - wait_for_ci: {on_failure: {step_back_to: implement, message: "CI: {{ci_error}} ({{failed_checks}})"}}
  - name: done
    terminal: completion
`)
	require.NoError(t, err)
	assert.Equal(t, "→ escalate", policy(hookAt(t, cfg, "pr", "wait_for_ci").OnFailure))
	assert.Nil(t, hookAt(t, cfg, "pr", "create_pr").OnFailure)
	w := hookAt(t, cfg, "pr", "poll_pr_status")
	assert.Equal(t, "→ escalate", policy(w.OnCIFailure))
	assert.Equal(t, "→ step_back", policy(w.OnConflict), "a conflict is no CI failure")
	own := hookAt(t, cfg, "again", "wait_for_ci").OnFailure
	assert.Equal(t, "→ step_back_to implement", policy(own), "its own wins")
	assert.Equal(t, "CI: {{ci_error}} ({{failed_checks}})", own.Message)

	_, err = parseYAML(t, "ci_polling: {on_failure: stepback}\nstages:\n  - name: implement\n")
	require.Error(t, err)
	assert.Equal(t, []string{"/repo/.agenttree.yaml:1:26: error: unknown ci_polling.on_failure action \"stepback\" (use `step_back`, `escalate`, `fail` or `ignore`)"},
		errorStrings(t, err))
}
