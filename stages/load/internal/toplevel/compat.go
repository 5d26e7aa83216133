package toplevel

import (
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
)

// The earlier Python agenttree declared its agents as `tools:` (name →
// command), chose one with `default_tool:` or a role's `tool:`, and put
// worktrees in `worktrees_dir:`. In its files these say what `agents:`,
// `roles: {R: {agents: [...]}}` and `worktrees: {dir}` say; what it had
// no equivalent for is reported and ignored.

// compat is what the earlier tool's spellings add to the top-level
// readers; its defaultTool is applied once every key is read.
type compat struct {
	defaultTool *yaml.Node
}

// fields adds the earlier tool's top-level keys to fs.
func (c *compat) fields(d *diag.Collector, fs fields, cfg *stages.Config) {
	fs["tools"] = func(v *yaml.Node) { readTools(d, v, cfg) }
	fs["default_tool"] = func(v *yaml.Node) {
		var name string
		if d.StringVar(v, &name) {
			c.defaultTool = v
		}
	}
	fs["worktrees_dir"] = func(v *yaml.Node) { worktreesDir(d, v, &cfg.Worktrees.Dir) }
}

// readTools reads tools: name → {command, startup_prompt,
// skip_permissions} as agents.
func readTools(d *diag.Collector, n *yaml.Node, cfg *stages.Config) {
	if !d.IsMap(n, "tools") {
		return
	}
	for _, p := range yamlnode.Pairs(n) {
		where := "tools." + p.Key.Value
		readAgent(d, p, where, cfg, toolFields(d, where))
	}
}

// toolFields are the keys of a tool, named where, that an agent does not
// have and whose loss changes what the agent does: each is reported and
// ignored. (Those that change nothing, `startup_prompt`, the map form's
// shaping drops.)
func toolFields(d *diag.Collector, where string) fields {
	return fields{
		"skip_permissions": func(v *yaml.Node) {
			d.Warnf(d.Pos(v), "write the agent's own flag into `command`, e.g. `command: claude --dangerously-skip-permissions`",
				"%s.skip_permissions is not read", where)
		},
	}
}

// roleFields adds the earlier tool's role keys: `tool:` is a list of one
// agent; a per-role `container:` has no equivalent.
func (c *compat) roleFields(d *diag.Collector, fs fields, r *stages.RoleSessions, refs *[]agentRef) {
	fs["tool"] = func(v *yaml.Node) {
		var name string
		if d.StringVar(v, &name) {
			r.Agents = append(r.Agents, name)
			*refs = append(*refs, agentRef{role: r.Role, name: name, at: v, implied: true})
		}
	}
	fs["container"] = func(v *yaml.Node) {
		d.Warnf(d.Pos(v), "agents' sandbox is set for every role at the top level, e.g. `sandbox: docker:IMAGE`",
			"roles.%s.container is not read", r.Role)
	}
}

// finish gives default_tool to the agent roles that name no agent, and to
// the developer when no role is declared for it, as the earlier tool did;
// then declares the tools named that `tools:` does not.
func (c *compat) finish(d *diag.Collector, cfg *stages.Config, refs *[]agentRef) {
	if c.defaultTool != nil {
		name := c.defaultTool.Value
		if !has(cfg, stages.RoleDeveloper) {
			cfg.Roles = append(cfg.Roles, stages.DefaultRoleSessions(stages.RoleDeveloper))
		}
		for _, r := range cfg.Roles {
			if len(r.Agents) == 0 {
				r.Agents = []string{name}
				*refs = append(*refs, agentRef{role: r.Role, name: name, at: c.defaultTool, implied: true})
			}
		}
	}
	impliedTools(d, cfg, *refs)
}

// impliedTools declares each tool a role's `tool:` or `default_tool:`
// names that `tools:` does not: the earlier tool ran a tool it had no
// entry for as the command of its name (`tool: claude` runs `claude`).
// A name close to a declared tool's is most likely a typo, and warned of.
func impliedTools(d *diag.Collector, cfg *stages.Config, refs []agentRef) {
	declared := cfg.AgentNames()
	for _, r := range refs {
		if _, ok := cfg.Agent(r.name); ok || !r.implied {
			continue
		}
		a := &stages.Agent{Name: r.name, Pos: d.Pos(r.at)}
		if agentCommand(d, r.at, "the command of tool "+r.name, &a.Command); a.Command == "" {
			continue
		}
		if hint := diag.Suggest(r.name, declared); hint != "" {
			d.Warnf(a.Pos, hint, "tool %q has no entry in `tools:`; it runs as the command `%s`", r.name, a.Command)
		}
		cfg.Agents = append(cfg.Agents, a)
	}
}
