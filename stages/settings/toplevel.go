package settings

import "github.com/agenttree/agenttree/stages"

// TopLevel is every key at the top of .agenttree.yaml, in the order the
// reference documents them.
func TopLevel() []Key {
	return []Key{
		{Name: "project", Field: at(func(c *stages.Config) any { return &c.Project }), Type: TypeString, Example: "myapp",
			Doc: "The project's name, in session and worktree names. Default: the name of the directory the config file is in."},
		{Name: "default_branch", Field: at(func(c *stages.Config) any { return &c.DefaultBranch }), Type: TypeString, Default: "main",
			Doc: "The branch issues' branches start from and their PRs merge into."},
		{Name: "forge", Field: at(func(c *stages.Config) any { return &c.Forge }), Type: TypeEnum, Enum: []string{"github", "local"}, Default: "local",
			Doc: "Where PRs live: GitHub, or the local forge kept beside a bare repository (offline). A file in the earlier tool's map form that says none is on `github`, the one forge that tool had."},
		{Name: "allow_self_approval", Field: at(func(c *stages.Config) any { return &c.AllowSelfApprove }), Type: TypeBool, Default: "false",
			Doc: "Let `pr_approved` pass without a reviewer's approval, for a person working alone."},
		{Name: "ci_polling", Field: at(func(c *stages.Config) any { return &c.CIPolling }), Type: TypeSection, Doc: "How the controller waits for CI.", Keys: []Key{
			{Name: "timeout_s", Field: at(func(c *stages.CIPolling) any { return &c.Timeout }), Type: TypeDuration, Default: "600", Doc: "How long one CI run may take, from when it starts (a check leaves the queue), before the wait gives up (`polling_timeout`); time queued counts against new_run_timeout_s."},
			{Name: "min_interval_s", Min: "1s", Field: at(func(c *stages.CIPolling) any { return &c.MinInterval }), Type: TypeDuration, Default: "30", Doc: "The shortest interval between polls (at least 1s); an event halves the interval down to it."},
			{Name: "poll_interval_s", Positive: true, Field: at(func(c *stages.CIPolling) any { return &c.PollInterval }), Type: TypeDuration, Default: "30", Doc: "The first interval between polls; it adapts between min_interval_s and max_interval_s."},
			{Name: "max_interval_s", Positive: true, Field: at(func(c *stages.CIPolling) any { return &c.MaxInterval }), Type: TypeDuration, Default: "300", Doc: "The longest interval between polls, and the one used after a rate-limit answer."},
			{Name: "new_run_timeout_s", Field: at(func(c *stages.CIPolling) any { return &c.NewRunTimeout }), Type: TypeDuration, Default: "1800", Doc: "After a push, how long CI may take to start on the new head, reported nothing or only queued checks (else `no_new_ci`)."},
			{Name: "max_retries", Min: "0", Field: at(func(c *stages.CIPolling) any { return &c.MaxRetries }), Type: TypeInt, Default: "5", Doc: "CI failures (step backs) on one issue before a person is called."},
			{Name: "on_failure", Field: at(func(c *stages.CIPolling) any { return &c.OnFailure }), Type: TypeEnum, Enum: []string{"step_back", "escalate", "fail", "ignore"}, Example: "step_back",
				Doc: "What a CI failure does where the hook that waits for CI (`wait_for_ci`) has no `on_failure` of its own, and a watch (`poll_pr_status`) no `on_ci_failure`: " +
					"an action, as in a failure policy. `step_back` goes to the stage's `on_failure.step_back_to`, else to the nearest earlier stage where an agent works. " +
					"Default: none, the stage's `on_failure` decides (a person is called when it has none)."},
		}},
		{Name: "conflict_handling", Field: at(func(c *stages.Config) any { return &c.Conflicts }), Type: TypeSection, Doc: "What to do when a PR conflicts with its base.", Keys: []Key{
			{Name: "auto_rebase", Field: at(func(c *stages.ConflictHandling) any { return &c.AutoRebase }), Type: TypeBool, Default: "true", Doc: "Rebase a branch that is behind or conflicts onto its base, and push it."},
			{Name: "notify_on_rebase", Field: at(func(c *stages.ConflictHandling) any { return &c.NotifyOnRebase }), Type: TypeBool, Default: "true", Doc: "Tell the agent when its branch was rebased."},
			{Name: "max_conflict_retries", Field: at(func(c *stages.ConflictHandling) any { return &c.MaxConflictRetries }), Type: TypeInt, Default: "3", Doc: "Conflicts (step backs) on one issue before a person is called."},
		}},
		{Name: "ci", Field: at(func(c *stages.Config) any { return &c.CI }), Type: TypeSection, Doc: "The local forge's CI: the command it runs on each pushed head.", Keys: []Key{
			{Name: "command", Field: at(func(c *stages.CI) any { return &c.Command }), Type: TypeString, Example: "make check", Doc: "The shell command CI runs in a checkout of the head; exit 0 passes. Without it the local forge's CI runs nothing: its one check is skipped, which counts as passed, so every head passes untested (validate warns where a hook takes CI's verdict)."},
			{Name: "timeout_s", Field: at(func(c *stages.CI) any { return &c.Timeout }), Type: TypeDuration, Example: "900", Doc: "How long one CI run may take. Default: 30 minutes."},
			{Name: "max_parallel", Min: "0", Field: at(func(c *stages.CI) any { return &c.MaxParallel }), Type: TypeInt, Default: "0", Example: "2",
				Doc: "How many CI runs may go at once; a head pushed while that many run is queued until one ends, and `ci_polling.timeout_s` runs from when it starts " +
					"(`ci_polling.new_run_timeout_s` bounds the time queued). 0: no bound, every head's CI starts at once (on a small machine, several agents pushing at once share its cores)."},
			{Name: "env", Field: at(func(c *stages.CI) any { return &c.Env }), Type: TypeEnvNames, Example: "[GOFLAGS]",
				Doc: "Names of variables of the controller's environment to pass to the command. Of that environment it gets only these, " +
					"PATH, HOME, USER, LOGNAME, LANG, LC_*, TERM, TMPDIR and TZ (under `sandbox: user:NAME`, that user's HOME, USER and LOGNAME), " +
					"beside CI=true, AGENTTREE_CI=1 and AGENTTREE_CI_SHA. Every agent can read what it gets: list no credentials (validate warns of a name that looks like one)."},
		}},
		{Name: "github", Field: at(func(c *stages.Config) any { return &c.GitHub }), Type: TypeSection, Doc: "The GitHub repository, when `origin` does not say (forge: github).", Keys: []Key{
			{Name: "repo", Field: at(func(c *stages.GitHub) any { return &c.Repo }), Type: TypeString, Example: "octo/app", Doc: "OWNER/NAME. Default: read from the `origin` remote."},
			{Name: "host", Field: at(func(c *stages.GitHub) any { return &c.Host }), Type: TypeString, Example: "github.example.com", Doc: "github.com or a GitHub Enterprise host."},
		}},
		{Name: "events", Field: at(func(c *stages.Config) any { return &c.Events }), Type: TypeSection,
			Doc: "How the GitHub forge hears of PR changes (CI finished, a push, a review) as they happen, so the controller looks again within seconds instead of at its next poll. Polling stays the source of truth: a change lost is found by the next poll.", Keys: []Key{
				{Name: "mode", Field: at(func(e *stages.Events) any { return &e.Mode }), Type: TypeEnum, Enum: []string{"poll", "gh-forward", "webhook"}, Default: "poll",
					Doc: "`poll`: hear of nothing, poll. `gh-forward`: the controller runs `gh webhook forward` for the repository (the `gh-webhook` extension; one per repository) and receives on `listen`. " +
						"`webhook`: a repository webhook the controller creates and keeps (its id under the state directory) delivers to `url`, which must reach `listen` (a reverse proxy or tunnel of your own); each delivery is checked against the secret (`X-Hub-Signature-256`). " +
						"Either needs a token that may manage the repository's hooks (admin)."},
				{Name: "url", Field: at(func(e *stages.Events) any { return &e.URL }), Type: TypeString, Example: "https://ci.example.com/agenttree/github",
					Doc: "The public https URL GitHub delivers to (webhook mode, where it is required)."},
				{Name: "listen", Field: at(func(e *stages.Events) any { return &e.Listen }), Type: TypeString, Default: `"127.0.0.1:0"`,
					Doc: "The local address the receiver listens on. gh-forward mode takes a loopback address only (127.0.0.1, ::1 or localhost): its deliveries come from the forwarder on this machine, and another address would let anyone who reaches it at the receiver. " +
						"Port 0 takes a free port, which gh-forward mode hands to the forwarder; webhook mode needs a fixed port, the one `url` reaches, and may listen beyond loopback for a proxy or tunnel elsewhere."},
				{Name: "secret_file", Field: at(func(e *stages.Events) any { return &e.SecretFile }), Type: TypeString, Example: "_agenttree/webhook-secret",
					Doc: "A file holding the webhook's HMAC secret (webhook mode), relative to the config file; it must be readable by its owner only. " +
						"Default: a random secret the controller writes under the state directory. It is never written in the config nor passed on a command line; gh-forward mode needs none of it (it gives each forwarder a fresh secret of its own)."},
				{Name: "forward_command", Field: at(func(e *stages.Events) any { return &e.ForwardCommand }), Type: TypeList, Example: "[gh, webhook, forward]",
					Doc: "The forwarder gh-forward mode runs, as a program and its first arguments; `--repo`, `--events`, `--url` and `--secret` are added. Default: `[gh, webhook, forward]`."},
			}},
		{Name: "controller", Field: at(func(c *stages.Config) any { return &c.Controller }), Type: TypeSection, Doc: "How `agenttree controller` ticks.", Keys: []Key{
			{Name: "interval_s", Min: "1s", Field: at(func(c *stages.Controller) any { return &c.Interval }), Type: TypeDuration, Default: "10", Doc: "The tick: how often it looks for issues that are due (at least 1s)."},
			{Name: "concurrency", Min: "1", Field: at(func(c *stages.Controller) any { return &c.Concurrency }), Type: TypeInt, Default: "4", Doc: "How many issues it works on at once (at least 1)."},
		}},
		{Name: "circuit_breaker", Field: at(func(c *stages.Config) any { return &c.CircuitBreaker }), Type: TypeSection, Doc: "When an issue that keeps failing without progress is stopped and a person called.", Keys: BreakerKeys()},
		{Name: "tmux", Field: at(func(c *stages.Config) any { return &c.Tmux }), Type: TypeSection, Doc: "Where agents' tmux sessions are.", Keys: []Key{
			{Name: "session", Field: at(func(c *stages.Tmux) any { return &c.Session }), Type: TypeTemplate, Default: `"{{project}}-{{role}}-{{issue_id}}"`,
				Doc: "The name of an agent's session; it should hold {{issue_id}} (validate warns when it does not: agents of different issues would share a session), and may not hold `.` or `:`."},
			{Name: "socket", Field: at(func(c *stages.Tmux) any { return &c.Socket }), Type: TypeString, Example: "_agenttree/run/tmux.sock",
				Doc: "The tmux server's socket, relative to the config file. Default: tmux's own server."},
			{Name: "manager", Field: at(func(c *stages.Tmux) any { return &c.Manager }), Type: TypeString, Example: "main",
				Doc: "The tmux session of the person running the pipeline: what they are needed for is shown on its status line (display-message), never typed into it. Default: nobody is told by tmux."},
		}},
		{Name: "notify", Field: at(func(c *stages.Config) any { return &c.Notify }), Type: TypeSection, Doc: "How people are told they are needed (an escalation, a review waiting).", Keys: []Key{
			{Name: "command", Field: at(func(c *stages.Notify) any { return &c.Command }), Type: TypeTemplate, Example: `"notify-send agenttree '{{issue_title}}'"`,
				Doc: "A shell command run with the event as JSON on stdin. Default: tmux and the log only."},
		}},
		{Name: "sandbox", Field: at(func(c *stages.Config) any { return &c.Sandbox }), Type: TypeSandbox, Example: "none",
			Doc: "Where agents run, apart from the state: `none` (default), `user:NAME` (another OS user), `docker:IMAGE` or `podman:IMAGE`. See docs/SECURITY.md."},
		{Name: "agent_create", Field: at(func(c *stages.Config) any { return &c.AgentCreate }), Type: TypeSection, Doc: "What an agent may choose when it creates an issue. Default: the default flow and no variables.", Keys: []Key{
			{Name: "flows", Field: at(func(c *stages.AgentCreate) any { return &c.Flows }), Type: TypeList, Example: "[default]", Doc: "Flows agents may create issues in. Default: the default flow only."},
			{Name: "vars", Field: at(func(c *stages.AgentCreate) any { return &c.Vars }), Type: TypeList, Example: "[needs_ui_review]", Doc: "Variables agents may set on the issues they create."},
		}},
		{Name: "agents", Type: TypeNames, Doc: "The programs that work on issues, by name.", Keys: agentKeys()},
		{Name: "roles", Type: TypeNames, Doc: "How the sessions of each agent role run, by role (developer, reviewer, ...).", Keys: roleKeys()},
		{Name: "worktrees", Field: at(func(c *stages.Config) any { return &c.Worktrees }), Type: TypeSection, Doc: "Where issues' worktrees are made.", Keys: []Key{
			{Name: "dir", Field: at(func(c *stages.Worktrees) any { return &c.Dir }), Type: TypeTemplate, Default: `"../{{project}}-worktrees"`,
				Doc: "The directory holding every issue's worktree, relative to the config file; only {{project}} is known."},
		}},
		{Name: "state", Field: at(func(c *stages.Config) any { return &c.State }), Type: TypeSection,
			Doc: "Where the issues' state is kept (docs/ARCHITECTURE.md §2, the store backend).", Keys: []Key{
				{Name: "backend", Field: at(func(s *stages.State) any { return &s.Backend }), Type: TypeEnum, Enum: []string{"files", "etcd"}, Default: "files",
					Doc: "`files`: under `_agenttree/host/`, nothing to run. `etcd`: in the etcd cluster `etcd` names, for state shared by several hosts, the issues' outboxes with it; the stage documents and sessions stay under `_agenttree/`. Controllers of the repository on any host then elect one, the others standing by until its 10 s lease ends (docs/ARCHITECTURE.md §8). `agenttree migrate --to etcd` moves the state there."},
				{Name: "etcd", Field: at(func(s *stages.State) any { return &s.Etcd }), Type: TypeSection, Doc: "The cluster (backend: etcd).", Keys: []Key{
					{Name: "endpoints", Field: at(func(e *stages.Etcd) any { return &e.Endpoints }), Type: TypeList, Example: "[https://etcd-1.example.com:2379]",
						Doc: "Its members' client URLs, `http(s)://HOST:PORT`, all `http` or all `https`; backend etcd needs at least one."},
					{Name: "prefix", Field: at(func(e *stages.Etcd) any { return &e.Prefix }), Type: TypeString, Example: "/agenttree/myapp",
						Doc: "Where the keys go, starting with `/`; repositories sharing a cluster need prefixes of their own. Default: `/agenttree/` and `project`."},
					{Name: "tls", Field: at(func(e *stages.Etcd) any { return &e.TLS }), Type: TypeSection, Doc: "The client's TLS, for `https` endpoints; paths relative to the config file.", Keys: []Key{
						{Name: "ca", Field: at(func(t *stages.EtcdTLS) any { return &t.CA }), Type: TypeString, Example: "etcd/ca.pem", Doc: "The CA that signed the members' certificates. Default: the system's."},
						{Name: "cert", Field: at(func(t *stages.EtcdTLS) any { return &t.Cert }), Type: TypeString, Example: "etcd/client.pem", Doc: "The client's certificate, with `key`."},
						{Name: "key", Field: at(func(t *stages.EtcdTLS) any { return &t.Key }), Type: TypeString, Example: "etcd/client-key.pem", Doc: "The client certificate's key, readable by its owner only."},
					}},
				}},
				{Name: "nodes", Field: at(func(s *stages.State) any { return &s.Nodes }), Type: TypeSection,
					Doc: "Written (backend: etcd), agents run on nodes, not beside the controller: each host that runs agents runs `agenttree node` in a checkout of its own, and the elected controller gives each issue reaching an agent's stage to one of them, by label or by room; a stage of the agents pushes the branch for the controller (`push_branch`) (docs/ARCHITECTURE.md §8, Nodes).", Keys: []Key{
						{Name: "capacity", Min: "1", Field: at(func(n *stages.Nodes) any { return &n.Capacity }), Type: TypeInt, Default: "10",
							Doc: "How many unfinished issues a node takes unless its `--capacity` says; an issue waits for room when every node is full."},
					}},
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
		{Name: "worktrees_dir", Field: at(func(c *stages.Config) any { return &c.Worktrees.Dir }), Type: TypeTemplate, Example: `"../{{project}}-worktrees"`, Compat: true, Means: "worktrees.dir",
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
		{Name: "command", Type: TypeString, Example: "claude", Field: at(func(a *stages.Agent) any { return &a.Command }),
			Doc: "The shell command that starts the agent in the issue's worktree. It takes no {{placeholders}}: it reads $AGENTTREE_ISSUE and $AGENTTREE_ROLE (the session token is in the file $AGENTTREE_TOKEN_FILE names, which `agenttree` reads itself)."},
		{Name: "resume_command", Type: TypeString, Example: "claude --continue", Field: at(func(a *stages.Agent) any { return &a.ResumeCommand }),
			Doc: "The command that starts it again after it exited, continuing its conversation. Default: `command`."},
	}
}

func roleKeys() []Key {
	return []Key{
		{Name: "agents", Type: TypeList, Example: "[claude]", Field: at(func(r *stages.RoleSessions) any { return &r.Agents }),
			Doc: "The agents of the role, in the order they are tried; the first is started."},
		{Name: "fallback", Type: TypeEnum, Field: at(func(r *stages.RoleSessions) any { return &r.Fallback }), Enum: []string{"next_in_list", "same_agent", "fail"}, Default: "next_in_list",
			Doc: "What happens when an agent has spent its restarts: start the next agent, start the same one afresh, or call a person."},
		{Name: "max_restarts", Type: TypeInt, Min: "0", Field: at(func(r *stages.RoleSessions) any { return &r.MaxRestarts }),
			Default: "2", Doc: "Restarts of one agent before its fallback."},
		{Name: "stall_after_s", Type: TypeDuration, Min: "0", Field: at(func(r *stages.RoleSessions) any { return &r.StallAfter }),
			Default: "900", Doc: "How long an agent may show no change before it is nudged; 0: never."},
		{Name: "auto_start", Type: TypeBool, Field: at(func(r *stages.RoleSessions) any { return &r.AutoStart }),
			Default: "false", Doc: "The controller starts a session when an issue enters a stage of the role."},
		{Name: "tool", Type: TypeString, Example: "claude", Compat: true, Means: "agents", Doc: "The role's one agent."},
		{Name: "container", Type: TypeAny, Example: "true", Compat: true, Means: "sandbox",
			Doc: "Not read (warned of): the sandbox is set for every role at the top level."},
	}
}

// BreakerKeys are the keys of the top-level circuit_breaker.
func BreakerKeys() []Key {
	return []Key{
		{Name: "half_open_after", Type: TypeInt, Min: "1", Field: at(func(b *stages.CircuitBreaker) any { return &b.HalfOpenAfter }),
			Default: "2", Doc: "Failures without progress before the breaker half-opens: people are warned."},
		{Name: "no_progress_threshold", Type: TypeInt, Min: "1", Field: at(func(b *stages.CircuitBreaker) any { return &b.NoProgress }),
			Default: "3", Doc: "Failures without progress before it opens: the issue stops for a person."},
		{Name: "same_error_threshold", Type: TypeInt, Min: "1", Field: at(func(b *stages.CircuitBreaker) any { return &b.SameError }),
			Default: "3", Doc: "Failures in a row with the same fingerprint before it opens."},
	}
}
