package toplevel

import (
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
	"github.com/agenttree/agenttree/stages/settings"
)

// The earlier Python agenttree declared its agents as `tools:` (name →
// command), chose one with `default_tool:` or a role's `tool:`, and put
// worktrees in `worktrees_dir:`. In its files these say what `agents:`,
// `roles: {R: {agents: [...]}}` and `worktrees: {dir}` say; what it had
// no equivalent for is reported and ignored. Their keys are declared
// Compat, so only a file of its form reaches these readers.

// tools reads tools: name → {command, startup_prompt, skip_permissions}
// as agents. (Of the keys an agent does not have, those that change
// nothing, `startup_prompt`, the map form's shaping drops.)
func (r *reader) tools(k settings.Key, _ any, v *yaml.Node, _ string) bool {
	if !r.d.IsMap(v, "tools") {
		return false
	}
	for _, p := range yamlnode.Pairs(v) {
		r.agent(p, "tools."+p.Key.Value, k.Keys, "tools.*")
	}
	return true
}

// skipPermissions reports a tool's skip_permissions, which changes what
// the agent does and is not read.
func (r *reader) skipPermissions(_ settings.Key, _ any, v *yaml.Node, name string) bool {
	r.d.Warnf(r.d.Pos(v), "write the agent's own flag into `command`, e.g. `command: claude --dangerously-skip-permissions`",
		"%s is not read", name)
	return true
}

// defaultToolOf notes `default_tool:`, applied once every key is read.
func (r *reader) defaultToolOf(_ settings.Key, _ any, v *yaml.Node, _ string) bool {
	var name string
	if !r.d.StringVar(v, &name) {
		return false
	}
	r.defaultTool = v
	return true
}

// roleTool reads a role's `tool:`, a list of one agent.
func (r *reader) roleTool(_ settings.Key, parent any, v *yaml.Node, _ string) bool {
	rs := parent.(*stages.RoleSessions)
	var name string
	if !r.d.StringVar(v, &name) {
		return false
	}
	rs.Agents = append(rs.Agents, name)
	r.refs = append(r.refs, agentRef{role: rs.Role, name: name, at: v, implied: true})
	return true
}

// roleContainer reports a role's `container:`, which has no equivalent.
func (r *reader) roleContainer(_ settings.Key, _ any, v *yaml.Node, name string) bool {
	r.d.Warnf(r.d.Pos(v), "agents' sandbox is set for every role at the top level, e.g. `sandbox: docker:IMAGE`",
		"%s is not read", name)
	return true
}

// finishCompat gives default_tool to the agent roles that name no agent,
// and to the developer when no role is declared for it, as the earlier
// tool did; then declares the tools named that `tools:` does not.
func (r *reader) finishCompat() {
	cfg := r.cfg
	if r.defaultTool != nil {
		name := r.defaultTool.Value
		if !has(cfg, stages.RoleDeveloper) {
			cfg.Roles = append(cfg.Roles, settings.RoleDefaults(stages.RoleDeveloper))
		}
		for _, rs := range cfg.Roles {
			if len(rs.Agents) == 0 {
				rs.Agents = []string{name}
				r.refs = append(r.refs, agentRef{role: rs.Role, name: name, at: r.defaultTool, implied: true})
			}
		}
	}
	impliedTools(r.d, cfg, r.refs)
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
