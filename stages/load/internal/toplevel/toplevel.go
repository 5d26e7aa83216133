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
			read(p.Val)
			continue
		}
		d.UnknownKey(p.Key, where, append(slices.Collect(maps.Keys(fs)), shaped...), "")
	}
}

// mapping reads the mapping n, named what, with fs.
func (fs fields) mapping(d *diag.Collector, n *yaml.Node, what string) {
	if d.IsMap(n, what) {
		fs.read(d, yamlnode.Pairs(n), what)
	}
}

// Read reads the settings at the top of the file over the
// defaults: everything but the stages and flows. Its templates go to led,
// checked once every hook's outputs are known.
func Read(d *diag.Collector, led *ledger.Ledger, settings []yamlnode.Pair) *stages.Config {
	cfg := stages.Defaults()
	var refs []agentRef
	fs := fields{
		"project":             func(v *yaml.Node) { d.StringVar(v, &cfg.Project) },
		"default_branch":      func(v *yaml.Node) { d.StringVar(v, &cfg.DefaultBranch) },
		"forge":               func(v *yaml.Node) { diag.OneOf(d, v, &cfg.Forge, "forge", stages.ForgeGitHub, stages.ForgeLocal) },
		"allow_self_approval": func(v *yaml.Node) { d.BoolVar(v, &cfg.AllowSelfApprove) },
		"ci_polling":          func(v *yaml.Node) { readCIPolling(d, v, &cfg.CIPolling) },
		"conflict_handling": func(v *yaml.Node) {
			fields{
				"auto_rebase":          func(v *yaml.Node) { d.BoolVar(v, &cfg.Conflicts.AutoRebase) },
				"notify_on_rebase":     func(v *yaml.Node) { d.BoolVar(v, &cfg.Conflicts.NotifyOnRebase) },
				"max_conflict_retries": func(v *yaml.Node) { d.IntVar(v, &cfg.Conflicts.MaxConflictRetries) },
			}.mapping(d, v, "conflict_handling")
		},
		"ci": func(v *yaml.Node) {
			fields{
				"command":   func(v *yaml.Node) { d.StringVar(v, &cfg.CI.Command) },
				"timeout_s": func(v *yaml.Node) { d.DurationVar(v, &cfg.CI.Timeout) },
			}.mapping(d, v, "ci")
		},
		"github": func(v *yaml.Node) {
			fields{
				"repo": func(v *yaml.Node) { githubRepo(d, v, &cfg.GitHub.Repo) },
				"host": func(v *yaml.Node) { d.StringVar(v, &cfg.GitHub.Host) },
			}.mapping(d, v, "github")
		},
		"controller":      func(v *yaml.Node) { readController(d, v, &cfg.Controller) },
		"circuit_breaker": func(v *yaml.Node) { readCircuitBreaker(d, v, &cfg.CircuitBreaker) },
		"tmux":            func(v *yaml.Node) { readTmux(d, led, v, &cfg.Tmux) },
		"notify":          func(v *yaml.Node) { readNotify(d, led, v, &cfg.Notify) },
		"sandbox":         func(v *yaml.Node) { readSandbox(d, v, &cfg.Sandbox) },
		"agent_create": func(v *yaml.Node) {
			cfg.AgentCreate.Pos = d.Pos(v)
			fields{
				"flows": func(v *yaml.Node) { d.StringsVar(v, &cfg.AgentCreate.Flows) },
				"vars":  func(v *yaml.Node) { d.StringsVar(v, &cfg.AgentCreate.Vars) },
			}.mapping(d, v, "agent_create")
		},
		"agents":    func(v *yaml.Node) { readAgents(d, v, cfg) },
		"worktrees": func(v *yaml.Node) { readWorktrees(d, v, &cfg.Worktrees) },
	}
	var c *compat
	if d.Lax {
		c = &compat{}
		c.fields(d, fs, cfg)
	}
	fs["roles"] = func(v *yaml.Node) { refs = readRoles(d, v, cfg, c) }
	fs.read(d, settings, "the top level", "stages", "flows", "default_flow")
	if c != nil {
		c.finish(cfg, &refs)
	}
	checkAgentRefs(d, cfg, refs)
	return cfg
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
