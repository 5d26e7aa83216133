// Package toplevel reads the settings at the top of a config file, all but
// its stages and flows, over the defaults: the forge, how the controller
// polls, ticks and gives up, and where agents and people are told.
package toplevel

import (
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/ledger"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
)

// fields reads a mapping of settings: the reader of each key.
type fields map[string]func(v *yaml.Node)

// read reads ps with fs, reporting keys fs does not know; shaped are keys
// read elsewhere, known for suggestions.
func (fs fields) read(d *diag.Collector, ps []yamlnode.Pair, where string, shaped ...string) {
	for _, p := range ps {
		if read, ok := fs[p.Key.Value]; ok {
			d.Name(p.Val, settingName(where, p.Key.Value))
			read(p.Val)
			continue
		}
		d.UnknownKey(p.Key, where, append(slices.Collect(maps.Keys(fs)), shaped...), "")
	}
}

// settingName is the dotted name of key in where: `ci_polling.max_retries`.
func settingName(where, key string) string {
	if where == "the top level" {
		return key
	}
	return where + "." + key
}

// mapping reads the mapping n, named what, with fs.
func (fs fields) mapping(d *diag.Collector, n *yaml.Node, what string) {
	if d.IsMap(n, what) {
		fs.read(d, yamlnode.Pairs(n), what)
	}
}

// shaped are the top-level keys read before the settings, as they give
// the file its shape; known here for suggestions.
var shaped = []string{"stages", "flows", "default_flow"}

// Read reads the settings at the top of the file over the
// defaults: everything but the stages and flows. Its templates go to led,
// checked once every hook's outputs are known.
func Read(d *diag.Collector, led *ledger.Ledger, settings []yamlnode.Pair) *stages.Config {
	cfg := stages.Defaults()
	var refs []agentRef
	var c *compat
	if d.Lax {
		c = &compat{}
		// The earlier tool kept its PRs on GitHub and nowhere else: its
		// files say no `forge:`, and mean GitHub (docs/CONFIG.md).
		cfg.Forge = stages.ForgeGitHub
	}
	topFields(d, led, cfg, c, &refs).read(d, settings, "the top level", shaped...)
	if c != nil {
		c.finish(d, cfg, &refs)
	}
	checkAgentRefs(d, cfg, refs)
	return cfg
}

// topFields reads the keys of the top level into cfg; c, when not nil,
// adds the earlier tool's spellings. The roles read note the agents they
// name in refs.
func topFields(d *diag.Collector, led *ledger.Ledger, cfg *stages.Config, c *compat, refs *[]agentRef) fields {
	fs := fields{
		"project":             func(v *yaml.Node) { d.StringVar(v, &cfg.Project) },
		"default_branch":      func(v *yaml.Node) { d.StringVar(v, &cfg.DefaultBranch) },
		"forge":               func(v *yaml.Node) { diag.OneOf(d, v, &cfg.Forge, "forge", stages.ForgeGitHub, stages.ForgeLocal) },
		"allow_self_approval": func(v *yaml.Node) { d.BoolVar(v, &cfg.AllowSelfApprove) },
		"ci_polling":          func(v *yaml.Node) { readCIPolling(d, v, &cfg.CIPolling) },
		"conflict_handling":   func(v *yaml.Node) { conflictFields(d, &cfg.Conflicts).mapping(d, v, "conflict_handling") },
		"ci":                  func(v *yaml.Node) { ciFields(d, &cfg.CI).mapping(d, v, "ci") },
		"github":              func(v *yaml.Node) { githubFields(d, &cfg.GitHub).mapping(d, v, "github") },
		"controller":          func(v *yaml.Node) { controllerFields(d, &cfg.Controller).mapping(d, v, "controller") },
		"circuit_breaker":     func(v *yaml.Node) { readCircuitBreaker(d, v, &cfg.CircuitBreaker) },
		"tmux":                func(v *yaml.Node) { tmuxFields(d, led, &cfg.Tmux).mapping(d, v, "tmux") },
		"notify":              func(v *yaml.Node) { notifyFields(d, led, &cfg.Notify).mapping(d, v, "notify") },
		"sandbox":             func(v *yaml.Node) { readSandbox(d, v, &cfg.Sandbox) },
		"agent_create": func(v *yaml.Node) {
			cfg.AgentCreate.Pos = d.Pos(v)
			agentCreateFields(d, &cfg.AgentCreate).mapping(d, v, "agent_create")
		},
		"agents":    func(v *yaml.Node) { readAgents(d, v, cfg) },
		"worktrees": func(v *yaml.Node) { worktreesFields(d, &cfg.Worktrees).mapping(d, v, "worktrees") },
		"roles":     func(v *yaml.Node) { *refs = readRoles(d, v, cfg, c) },
	}
	if c != nil {
		c.fields(d, fs, cfg)
	}
	return fs
}

func conflictFields(d *diag.Collector, c *stages.ConflictHandling) fields {
	return fields{
		"auto_rebase":          func(v *yaml.Node) { d.BoolVar(v, &c.AutoRebase) },
		"notify_on_rebase":     func(v *yaml.Node) { d.BoolVar(v, &c.NotifyOnRebase) },
		"max_conflict_retries": func(v *yaml.Node) { d.IntVar(v, &c.MaxConflictRetries) },
	}
}

func ciFields(d *diag.Collector, ci *stages.CI) fields {
	return fields{
		"command":      func(v *yaml.Node) { d.StringVar(v, &ci.Command) },
		"timeout_s":    func(v *yaml.Node) { d.DurationVar(v, &ci.Timeout) },
		"env":          func(v *yaml.Node) { d.EnvNamesVar(v, "ci.env", &ci.Env) },
		"max_parallel": func(v *yaml.Node) { d.IntAtLeast(v, &ci.MaxParallel, 0, "ci.max_parallel") },
	}
}

func githubFields(d *diag.Collector, g *stages.GitHub) fields {
	return fields{
		"repo": func(v *yaml.Node) { githubRepo(d, v, &g.Repo) },
		"host": func(v *yaml.Node) { d.StringVar(v, &g.Host) },
	}
}

func agentCreateFields(d *diag.Collector, a *stages.AgentCreate) fields {
	return fields{
		"flows": func(v *yaml.Node) { d.StringsVar(v, &a.Flows) },
		"vars":  func(v *yaml.Node) { d.StringsVar(v, &a.Vars) },
	}
}

// readSandbox reads none, user:NAME, docker:IMAGE or podman:IMAGE.
func readSandbox(d *diag.Collector, n *yaml.Node, dst *stages.Sandbox) {
	var text string
	if !d.StringVar(n, &text) {
		return
	}
	kind, name, _ := strings.Cut(text, ":")
	switch stages.SandboxKind(kind) {
	case stages.SandboxNone:
		if name == "" {
			*dst = stages.Sandbox{Kind: stages.SandboxNone}
			return
		}
	case stages.SandboxUser, stages.SandboxDocker, stages.SandboxPodman:
		if name != "" {
			*dst = stages.Sandbox{Kind: stages.SandboxKind(kind), Name: name}
			return
		}
	}
	d.Errorf(d.Pos(n), "write `none`, `user:NAME` (agents run as another OS user), `docker:IMAGE` or `podman:IMAGE`", "bad sandbox %q", text)
}

// githubRepo reads OWNER/NAME.
func githubRepo(d *diag.Collector, n *yaml.Node, dst *string) {
	if !d.StringVar(n, dst) {
		return
	}
	owner, name, ok := strings.Cut(*dst, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		d.Errorf(d.Pos(n), "write it as OWNER/NAME, e.g. `repo: octo/app`", "bad github.repo %q", *dst)
	}
}
