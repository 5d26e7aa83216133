package settings

import "github.com/agenttree/agenttree/stages"

// StageKeys is every key of a stage, in the order the reference documents
// them. Substages take the same keys but `substages`.
func StageKeys() []Key {
	return []Key{
		{Name: "name", Type: TypeString, Example: "implement",
			Doc: "The stage's name: letters, digits, `_` and `-`. The map form writes it as the key instead."},
		{Name: "substages", Type: TypeSubstages, Doc: "The steps inside the stage, in order, with the same keys (substages do not nest). They inherit `role` and `condition`."},
		{Name: "role", Type: TypeString, Example: "reviewer",
			Doc: "Who acts: an agent role (default `developer`, or any name such as `reviewer`), `controller` (the host controller), or `human` (`manager` in the earlier tool)."},
		{Name: "host", Type: TypeEnum, Enum: []string{"controller", "agent", "container"}, Example: "controller",
			Doc: "`host: controller` is `role: controller`: the host controller runs the stage (`agent` and `container` change nothing)."},
		{Name: "human_review", Type: TypeBool, Example: "true",
			Doc: "A person approves (`agenttree approve ID`; a person's `agenttree next -i ID` there is the same approval) or rejects; agents cannot leave the stage. " +
				"The approval is recorded as of the PR's head, the one CI passed on, whatever hooks the stage declares, and `merge_pr` after it merges that head. " +
				"A head pushed to the PR meanwhile is not approved: the issue goes back through the stage before the review that runs CI, and comes back for a new approval."},
		{Name: "parking_lot", Type: TypeBool, Example: "true", Doc: "A waiting place (a backlog): issues rest there until moved on."},
		{Name: "terminal", Type: TypeEnum, Enum: []string{"completion", "abandon"}, Example: "completion",
			Doc: "A final stage: the issue is done (`completion`) or given up (`abandon`)."},
		{Name: "redirect_only", Type: TypeBool, Example: "true", Doc: "Reached only by a redirect or a step back; `next` skips it."},
		{Name: "condition", Type: TypeCondition, Example: `"needs_ui_review and not hotfix"`,
			Doc: "An expression over the issue's variables; when false the stage is skipped."},
		{Name: "output", Type: TypeString, Example: "spec.md", Doc: "A document in the issue directory that must exist before the issue leaves the stage."},
		{Name: "skill", Type: TypeString, Example: "docs/skills/implement-code.md",
			Doc: "The instructions file printed when an issue enters the stage, relative to the config file (the earlier tool's map form looks in `_agenttree/skills/` first)."},
		{Name: "pre_completion", Type: TypeHooks, Example: "[has_commits]", Doc: "Gates: hooks that must pass before the issue leaves the stage."},
		{Name: "post_start", Type: TypeHooks, Example: "[create_pr]", Doc: "Hooks run when an issue enters the stage (by the controller, in a controller stage)."},
		{Name: "post_completion", Type: TypeHooks, Example: "[{rollback: {to: implement}}]", Doc: "Hooks run after the issue left the stage; a rollback there wins over the advance."},
		{Name: "on_failure", Type: TypeOnFailure, Example: "{step_back_to: implement}",
			Doc: "Where a failing hook of the stage sends the issue when its own on_failure says `step_back` (and the controller's hooks always).", Keys: OnFailureKeys()},
		{Name: "circuit_breaker", Type: TypeSection, Example: "{no_progress_threshold: 5}",
			Doc: "The circuit breaker's thresholds for failures at this stage (a substage's over its stage's), each over the top-level one; " +
				"see [`circuit_breaker`](#circuit_breaker).", Keys: stageBreakerKeys()},

		{Name: "is_parking_lot", Type: TypeBool, Example: "true", Compat: true, Means: "parking_lot: true", Doc: "A waiting place."},
		{Name: "is_completion", Type: TypeBool, Example: "true", Compat: true, Means: "terminal: completion", Doc: "The issue is done."},
		{Name: "is_abandon", Type: TypeBool, Example: "true", Compat: true, Means: "terminal: abandon", Doc: "The issue is given up."},
	}
}

// stageBreakerKeys are the keys of a stage's circuit_breaker: the top
// level's, each defaulting to the top level's value.
func stageBreakerKeys() []Key {
	ks := BreakerKeys()
	for i := range ks {
		ks[i].Example, ks[i].Default = ks[i].Default, ""
		ks[i].Doc += " Default: the top level's."
	}
	return ks
}

// OnFailureKeys are the keys of a stage's on_failure.
func OnFailureKeys() []Key {
	return []Key{
		{Name: "step_back_to", Type: TypeStageRef, Example: "implement", Doc: "The stage or substage the issue steps back to: an earlier one, or a `redirect_only` fix stage."},
		{Name: "message", Type: TypeTemplate, Example: `"{{failure_reason}}"`, Doc: "What the agent is told, with {{placeholders}}."},
		{Name: "max_retries", Type: TypeInt, Example: "3",
			Doc: "Step backs of one failure kind before a person is called (at least 1). Default: the ci_polling or conflict_handling budget."},
	}
}

// HookOption is an option any hook entry may carry, beside its hook or
// among its parameters.
type HookOption struct {
	Key
	// For, when set, limits the option to the hooks it holds for.
	For func(stages.HookSpec) bool
}

// HookOptions are the options of hook entries, in the order the reference
// documents them.
func HookOptions() []HookOption {
	return []HookOption{
		{Key: Key{Name: "optional", Type: TypeBool, Example: "true", Doc: "A failure is only a warning."}},
		{Key: Key{Name: "timeout", Type: TypeDuration, Example: "300", Doc: "How long one run of the hook may take."}},
		{Key: Key{Name: "retries", Type: TypeInt, Example: "2", Doc: "How many times a transient failure (a timeout, a rate limit) is retried, with backoff."}},
		{Key: Key{Name: "when", Type: TypeCondition, Example: "needs_rework", Doc: "An expression over the issue's variables; when false the hook is skipped."}},
		{Key: Key{Name: "context", Type: TypeString, Example: "tests", Doc: "A label put before the hook's failure reason."}},
		{Key: Key{Name: "on_failure", Type: TypePolicy, Example: "escalate", Doc: "What the hook's failure does (see Failure policies)."}},
		{Key: Key{Name: "on_conflict", Type: TypePolicy, Example: "step_back", Doc: "What a merge conflict does, for the hooks that find conflicts or watch a PR."},
			For: func(s stages.HookSpec) bool { return s.Conflicts || s.Watches }},
		{Key: Key{Name: "on_ci_failure", Type: TypePolicy, Example: "escalate", Doc: "What a CI failure does, for the hooks that watch a PR."},
			For: func(s stages.HookSpec) bool { return s.Watches }},
	}
}

// Takes reports whether an entry of the hook of spec may carry o.
func (o HookOption) Takes(spec stages.HookSpec) bool { return o.For == nil || o.For(spec) }

// Action is what a failure policy may end in.
type Action struct {
	Name stages.FailureAction
	Doc  string
}

// Actions are the failure actions, in the order stages documents them.
func Actions() []Action {
	return []Action{
		{stages.ActionStepBack, "Step back to the stage's `on_failure.step_back_to` (else the nearest one before it), with its message; " +
			"with none declared, to the nearest earlier stage where an agent works."},
		{stages.ActionStepBackTo, "Step back to the stage it names: `{step_back_to: implement.code}`."},
		{stages.ActionEscalate, "Stop and call a person, with the reason."},
		{stages.ActionFail, "The failure stands: the gate blocks (the default)."},
		{stages.ActionIgnore, "The failure becomes a warning."},
	}
}
