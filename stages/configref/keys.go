package configref

import "github.com/agenttree/agenttree/stages"

// Type is the kind of value a key of .agenttree.yaml takes.
type Type string

const (
	TypeString    Type = "string"
	TypeTemplate  Type = "template" // a string with {{placeholders}}
	TypeInt       Type = "int"
	TypeNumber    Type = "number"
	TypeBool      Type = "bool"
	TypeDuration  Type = "duration"  // seconds, or "90s", "5m"
	TypeList      Type = "list"      // a list of strings; one string is a list of one
	TypeEnvNames  Type = "env names" // a list of names of environment variables
	TypeEnum      Type = "enum"
	TypeStageRef  Type = "stage"     // a node of the pipeline: `stage` or `stage.substage`
	TypeCondition Type = "condition" // an expression over issue variables
	TypeSection   Type = "mapping"   // a mapping of the keys Keys lists
	TypeNames     Type = "names"     // a mapping of names, each entry of the keys Keys lists
	TypeStages    Type = "stages"
	TypeSubstages Type = "substages"
	TypeFlows     Type = "flows"
	TypeHooks     Type = "hooks"      // a list of hook entries
	TypeOnFailure Type = "on_failure" // a stage's on_failure
	TypePolicy    Type = "policy"     // a hook entry's failure policy
	TypeSandbox   Type = "sandbox"
	TypeAny       Type = "any"
)

// Key is a key of .agenttree.yaml as the reference documents it.
type Key struct {
	Name string
	Type Type
	// Enum lists the values of a TypeEnum.
	Enum []string
	// Default is, in YAML, the value a file that leaves the key out gets;
	// "" when there is none worth writing (the Doc says what happens).
	Default string
	// Example is, in YAML, a value to show (and to load in tests) for a
	// key without a Default.
	Example string
	Doc     string
	// Keys are the keys of a TypeSection, or of each entry of a TypeNames.
	Keys []Key
	// Compat marks the earlier tool's spelling, read only in the
	// compatible form; Means says what the canonical form writes instead.
	Compat bool
	Means  string
}

// Value is the key's value to show or load: its default, else its example.
func (k Key) Value() string {
	if k.Default != "" {
		return k.Default
	}
	return k.Example
}

// TopLevel is every key at the top of .agenttree.yaml, in the order the
// reference documents them.
func TopLevel() []Key {
	return []Key{
		{Name: "project", Type: TypeString, Example: "myapp",
			Doc: "The project's name, in session and worktree names. Default: the name of the directory the config file is in."},
		{Name: "default_branch", Type: TypeString, Default: "main",
			Doc: "The branch issues' branches start from and their PRs merge into."},
		{Name: "forge", Type: TypeEnum, Enum: []string{"github", "local"}, Default: "local",
			Doc: "Where PRs live: GitHub, or the local forge kept beside a bare repository (offline). A file in the earlier tool's map form that says none is on `github`, the one forge that tool had."},
		{Name: "allow_self_approval", Type: TypeBool, Default: "false",
			Doc: "Let `pr_approved` pass without a reviewer's approval, for a person working alone."},
		{Name: "ci_polling", Type: TypeSection, Doc: "How the controller waits for CI.", Keys: []Key{
			{Name: "timeout_s", Type: TypeDuration, Default: "600", Doc: "How long one CI run may take, from when it starts (a check leaves the queue), before the wait gives up (`polling_timeout`); time queued counts against new_run_timeout_s."},
			{Name: "min_interval_s", Type: TypeDuration, Default: "30", Doc: "The shortest interval between polls (at least 1s); an event halves the interval down to it."},
			{Name: "poll_interval_s", Type: TypeDuration, Default: "30", Doc: "The first interval between polls; it adapts between min_interval_s and max_interval_s."},
			{Name: "max_interval_s", Type: TypeDuration, Default: "300", Doc: "The longest interval between polls, and the one used after a rate-limit answer."},
			{Name: "new_run_timeout_s", Type: TypeDuration, Default: "1800", Doc: "After a push, how long CI may take to start on the new head, reported nothing or only queued checks (else `no_new_ci`)."},
			{Name: "max_retries", Type: TypeInt, Default: "5", Doc: "CI failures (step backs) on one issue before a person is called."},
			{Name: "on_failure", Type: TypeEnum, Enum: []string{"step_back", "escalate", "fail", "ignore"}, Example: "step_back",
				Doc: "What a CI failure does where the hook that waits for CI (`wait_for_ci`) has no `on_failure` of its own, and a watch (`poll_pr_status`) no `on_ci_failure`: " +
					"an action, as in a failure policy. `step_back` goes to the stage's `on_failure.step_back_to`, else to the nearest earlier stage where an agent works. " +
					"Default: none, the stage's `on_failure` decides (a person is called when it has none)."},
		}},
		{Name: "conflict_handling", Type: TypeSection, Doc: "What to do when a PR conflicts with its base.", Keys: []Key{
			{Name: "auto_rebase", Type: TypeBool, Default: "true", Doc: "Rebase a branch that is behind or conflicts onto its base, and push it."},
			{Name: "notify_on_rebase", Type: TypeBool, Default: "true", Doc: "Tell the agent when its branch was rebased."},
			{Name: "max_conflict_retries", Type: TypeInt, Default: "3", Doc: "Conflicts (step backs) on one issue before a person is called."},
		}},
		{Name: "ci", Type: TypeSection, Doc: "The local forge's CI: the command it runs on each pushed head.", Keys: []Key{
			{Name: "command", Type: TypeString, Example: "make check", Doc: "The shell command CI runs in a checkout of the head; exit 0 passes. Without it the local forge's CI runs nothing: its one check is skipped, which counts as passed, so every head passes untested (validate warns where a hook takes CI's verdict)."},
			{Name: "timeout_s", Type: TypeDuration, Example: "900", Doc: "How long one CI run may take. Default: 30 minutes."},
			{Name: "max_parallel", Type: TypeInt, Default: "0", Example: "2",
				Doc: "How many CI runs may go at once; a head pushed while that many run is queued until one ends, and `ci_polling.timeout_s` runs from when it starts " +
					"(`ci_polling.new_run_timeout_s` bounds the time queued). 0: no bound, every head's CI starts at once (on a small machine, several agents pushing at once share its cores)."},
			{Name: "env", Type: TypeEnvNames, Example: "[GOFLAGS]",
				Doc: "Names of variables of the controller's environment to pass to the command. Of that environment it gets only these, " +
					"PATH, HOME, USER, LOGNAME, LANG, LC_*, TERM, TMPDIR and TZ (under `sandbox: user:NAME`, that user's HOME, USER and LOGNAME), " +
					"beside CI=true, AGENTTREE_CI=1 and AGENTTREE_CI_SHA. Every agent can read what it gets: list no credentials (validate warns of a name that looks like one)."},
		}},
		{Name: "github", Type: TypeSection, Doc: "The GitHub repository, when `origin` does not say (forge: github).", Keys: []Key{
			{Name: "repo", Type: TypeString, Example: "octo/app", Doc: "OWNER/NAME. Default: read from the `origin` remote."},
			{Name: "host", Type: TypeString, Example: "github.example.com", Doc: "github.com or a GitHub Enterprise host."},
		}},
		{Name: "controller", Type: TypeSection, Doc: "How `agenttree controller` ticks.", Keys: []Key{
			{Name: "interval_s", Type: TypeDuration, Default: "10", Doc: "The tick: how often it looks for issues that are due (at least 1s)."},
			{Name: "concurrency", Type: TypeInt, Default: "4", Doc: "How many issues it works on at once (at least 1)."},
		}},
		{Name: "circuit_breaker", Type: TypeSection, Doc: "When an issue that keeps failing without progress is stopped and a person called.", Keys: BreakerKeys()},
		{Name: "tmux", Type: TypeSection, Doc: "Where agents' tmux sessions are.", Keys: []Key{
			{Name: "session", Type: TypeTemplate, Default: `"{{project}}-{{role}}-{{issue_id}}"`,
				Doc: "The name of an agent's session; it should hold {{issue_id}} (validate warns when it does not: agents of different issues would share a session), and may not hold `.` or `:`."},
			{Name: "socket", Type: TypeString, Example: "_agenttree/run/tmux.sock",
				Doc: "The tmux server's socket, relative to the config file. Default: tmux's own server."},
			{Name: "manager", Type: TypeString, Example: "main",
				Doc: "The tmux session of the person running the pipeline: what they are needed for is shown on its status line (display-message), never typed into it. Default: nobody is told by tmux."},
		}},
		{Name: "notify", Type: TypeSection, Doc: "How people are told they are needed (an escalation, a review waiting).", Keys: []Key{
			{Name: "command", Type: TypeTemplate, Example: `"notify-send agenttree '{{issue_title}}'"`,
				Doc: "A shell command run with the event as JSON on stdin. Default: tmux and the log only."},
		}},
		{Name: "sandbox", Type: TypeSandbox, Example: "none",
			Doc: "Where agents run, apart from the state: `none` (default), `user:NAME` (another OS user), `docker:IMAGE` or `podman:IMAGE`. See docs/SECURITY.md."},
		{Name: "agent_create", Type: TypeSection, Doc: "What an agent may choose when it creates an issue. Default: the default flow and no variables.", Keys: []Key{
			{Name: "flows", Type: TypeList, Example: "[default]", Doc: "Flows agents may create issues in. Default: the default flow only."},
			{Name: "vars", Type: TypeList, Example: "[needs_ui_review]", Doc: "Variables agents may set on the issues they create."},
		}},
		{Name: "agents", Type: TypeNames, Doc: "The programs that work on issues, by name.", Keys: agentKeys()},
		{Name: "roles", Type: TypeNames, Doc: "How the sessions of each agent role run, by role (developer, reviewer, ...).", Keys: roleKeys()},
		{Name: "worktrees", Type: TypeSection, Doc: "Where issues' worktrees are made.", Keys: []Key{
			{Name: "dir", Type: TypeTemplate, Default: `"../{{project}}-worktrees"`,
				Doc: "The directory holding every issue's worktree, relative to the config file; only {{project}} is known."},
		}},
		{Name: "stages", Type: TypeStages, Doc: "The stages of the pipeline, in order: a list of `- name:` items (a mapping of name to definition in the compatible form)."},
		{Name: "flows", Type: TypeFlows, Example: "{quick: [backlog, implement, accepted]}",
			Doc: "Extra orderings of the stages, by name: a list of stage references (`stage` or `stage.substage`). A flow named `default` of every stage is added when none is."},
		{Name: "default_flow", Type: TypeString, Example: "default", Doc: "The flow new issues use. Default: `default`."},

		{Name: "tools", Type: TypeNames, Compat: true, Means: "agents", Doc: "The earlier tool's agents, by name.", Keys: append(agentKeys(),
			Key{Name: "startup_prompt", Type: TypeAny, Example: "hello", Compat: true, Doc: "Not read (warned of): agenttree types the stage's instructions as the agent's first message."},
			Key{Name: "skip_permissions", Type: TypeAny, Example: "true", Compat: true, Means: "agents.NAME.command", Doc: "Not read (warned of): write the agent's own flag into `command`."},
		)},
		{Name: "default_tool", Type: TypeString, Example: "claude", Compat: true, Means: "roles.ROLE.agents",
			Doc: "The agent of every agent role that names none."},
		{Name: "worktrees_dir", Type: TypeTemplate, Example: `"../{{project}}-worktrees"`, Compat: true, Means: "worktrees.dir",
			Doc: "Where issues' worktrees are made."},
		{Name: "on", Type: TypeSection, Compat: true, Means: "controller.interval_s",
			Doc: "The earlier tool's controller events: only the heartbeat's tick is read; other events are warned of and ignored.", Keys: []Key{
				{Name: "heartbeat", Type: TypeSection, Doc: "The controller's tick.", Keys: []Key{
					{Name: "interval_s", Type: TypeDuration, Example: "10", Doc: "The tick, as controller.interval_s."},
				}},
			}},
	}
}

func agentKeys() []Key {
	return []Key{
		{Name: "command", Type: TypeString, Example: "claude",
			Doc: "The shell command that starts the agent in the issue's worktree. It takes no {{placeholders}}: it reads $AGENTTREE_ISSUE and $AGENTTREE_ROLE (the session token is in the file $AGENTTREE_TOKEN_FILE names, which `agenttree` reads itself)."},
		{Name: "resume_command", Type: TypeString, Example: "claude --continue",
			Doc: "The command that starts it again after it exited, continuing its conversation. Default: `command`."},
	}
}

func roleKeys() []Key {
	return []Key{
		{Name: "agents", Type: TypeList, Example: "[claude]", Doc: "The agents of the role, in the order they are tried; the first is started."},
		{Name: "fallback", Type: TypeEnum, Enum: []string{"next_in_list", "same_agent", "fail"}, Default: "next_in_list",
			Doc: "What happens when an agent has spent its restarts: start the next agent, start the same one afresh, or call a person."},
		{Name: "max_restarts", Type: TypeInt, Default: "2", Doc: "Restarts of one agent before its fallback."},
		{Name: "stall_after_s", Type: TypeDuration, Default: "900", Doc: "How long an agent may show no change before it is nudged; 0: never."},
		{Name: "auto_start", Type: TypeBool, Default: "false", Doc: "The controller starts a session when an issue enters a stage of the role."},
		{Name: "tool", Type: TypeString, Example: "claude", Compat: true, Means: "agents", Doc: "The role's one agent."},
		{Name: "container", Type: TypeAny, Example: "true", Compat: true, Means: "sandbox",
			Doc: "Not read (warned of): the sandbox is set for every role at the top level."},
	}
}

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

// BreakerKeys are the keys of the top-level circuit_breaker.
func BreakerKeys() []Key {
	return []Key{
		{Name: "half_open_after", Type: TypeInt, Default: "2", Doc: "Failures without progress before the breaker half-opens: people are warned."},
		{Name: "no_progress_threshold", Type: TypeInt, Default: "3", Doc: "Failures without progress before it opens: the issue stops for a person."},
		{Name: "same_error_threshold", Type: TypeInt, Default: "3", Doc: "Failures in a row with the same fingerprint before it opens."},
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
