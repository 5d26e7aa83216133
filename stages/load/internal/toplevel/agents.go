package toplevel

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
	"github.com/agenttree/agenttree/stages/settings"
)

// agentRef is a role's mention of an agent, checked once every agent is
// read (`agents:` may come after `roles:`).
type agentRef struct {
	role stages.Role
	name string
	at   *yaml.Node
	// implied says the earlier tool's spelling names it (`tool:`,
	// `default_tool:`), where a name with no entry is the command of that
	// name.
	implied bool
}

// agents reads agents: name → {command, resume_command}.
func (r *reader) agents(k settings.Key, _ any, v *yaml.Node, _ string) bool {
	if !r.d.IsMap(v, "agents") {
		return false
	}
	for _, p := range yamlnode.Pairs(v) {
		r.agent(p, "agents."+p.Key.Value, k.Keys, "agents.*")
	}
	return true
}

// agent reads one agent's entry, named where, by its keys ks at path.
func (r *reader) agent(p yamlnode.Pair, where string, ks []settings.Key, path string) {
	d := r.d
	a := &stages.Agent{Name: p.Key.Value, Pos: d.Pos(p.Key)}
	if _, dup := r.cfg.Agent(a.Name); dup {
		d.Errorf(a.Pos, "give each agent one entry", "agent %q is declared twice", a.Name)
		return
	}
	errs := d.Errors()
	if d.IsMap(p.Val, where) {
		r.read(ks, a, yamlnode.Pairs(p.Val), path, where)
	}
	if a.Command == "" {
		if d.Errors() == errs { // else what is wrong with it is said
			d.Errorf(a.Pos, "write the shell command that starts it, e.g. `command: claude`", "agent %q has no command", a.Name)
		}
		return
	}
	r.cfg.Agents = append(r.cfg.Agents, a)
}

// agentCommand reads a shell command that starts an agent. It is the
// config's own text: values reach the agent as environment variables
// (AGENTTREE_ISSUE, ...), never placeholders.
func agentCommand(d *diag.Collector, v *yaml.Node, what string, dst *string) {
	var cmd string
	if !d.StringVar(v, &cmd) {
		return
	}
	switch {
	case strings.TrimSpace(cmd) == "":
		d.Errorf(d.Pos(v), "leave it out, or write the shell command", "%s is empty", what)
	case len(stages.Placeholders(cmd)) > 0:
		d.Errorf(d.Pos(v), "read $AGENTTREE_ISSUE and $AGENTTREE_ROLE from the environment instead",
			"%s %q holds {{placeholders}}, which agent commands do not take", what, cmd)
	default:
		*dst = cmd
	}
}

// roles reads roles: role → how its sessions run, noting the agents the
// roles name for checkAgentRefs.
func (r *reader) roles(k settings.Key, _ any, v *yaml.Node, _ string) bool {
	d := r.d
	if !d.IsMap(v, "roles") {
		return false
	}
	for _, p := range yamlnode.Pairs(v) {
		rs := settings.RoleDefaults(stages.Role(p.Key.Value))
		rs.Pos = d.Pos(p.Key)
		switch {
		case !rs.Role.Agent():
			d.Tolerate(rs.Pos, diag.Tolerable{
				Hint:   "list the roles of agents here",
				Msg:    fmt.Sprintf("role %q is not an agent's: its stages have no agent sessions", rs.Role),
				LaxMsg: fmt.Sprintf("role %q is not an agent's: its entry is ignored", rs.Role),
			})
			continue
		case has(r.cfg, rs.Role):
			d.Errorf(rs.Pos, "give each role one entry", "role %q is declared twice", rs.Role)
			continue
		}
		where := "roles." + string(rs.Role)
		if d.IsMap(p.Val, where) {
			r.read(k.Keys, rs, yamlnode.Pairs(p.Val), "roles.*", where)
		}
		r.cfg.Roles = append(r.cfg.Roles, rs)
	}
	return true
}

// roleAgents reads a role's `agents:`, noting each agent it names.
func (r *reader) roleAgents(_ settings.Key, parent any, v *yaml.Node, _ string) bool {
	rs := parent.(*stages.RoleSessions)
	for _, at := range agentNodes(r.d, v) {
		rs.Agents = append(rs.Agents, at.Value)
		r.refs = append(r.refs, agentRef{role: rs.Role, name: at.Value, at: at})
	}
	return true
}

func has(cfg *stages.Config, role stages.Role) bool {
	_, ok := cfg.Sessions(role)
	return ok
}

// agentNodes are the names a role's `agents:` lists (one name is a list of
// one), each where it is written.
func agentNodes(d *diag.Collector, v *yaml.Node) []*yaml.Node {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	out := make([]*yaml.Node, 0, len(items))
	for _, it := range items {
		var name string
		if d.StringVar(it, &name) {
			out = append(out, it)
		}
	}
	return out
}

// checkAgentRefs reports a role naming an agent `agents:` does not
// declare.
func checkAgentRefs(d *diag.Collector, cfg *stages.Config, refs []agentRef) {
	for _, r := range refs {
		if _, ok := cfg.Agent(r.name); ok {
			continue
		}
		hint := diag.Suggest(r.name, cfg.AgentNames())
		if hint == "" {
			hint = fmt.Sprintf("declare it under `agents:` (%s: {command: ...})", r.name)
		}
		d.Errorf(d.Pos(r.at), hint, "role %q names unknown agent %q", r.role, r.name)
	}
}

// worktreesDir reads the directory template: a path relative to the config
// file's directory, over {{project}} only.
func worktreesDir(d *diag.Collector, v *yaml.Node, dst *string) {
	var dir string
	if !d.StringVar(v, &dir) {
		return
	}
	switch {
	case strings.TrimSpace(dir) == "":
		d.Errorf(d.Pos(v), "leave it out for the default `"+settings.Defaults().Worktrees.Dir+"`", "worktrees.dir is empty")
		return
	case strings.HasPrefix(dir, "~"):
		d.Errorf(d.Pos(v), "write the path in full, or relative to the config file", "worktrees.dir %q starts with `~`, which is not expanded", dir)
		return
	}
	for _, name := range stages.Placeholders(dir) {
		if name != "project" {
			d.Errorf(d.Pos(v), "one directory holds every issue's worktree; only {{project}} is known", "worktrees.dir %q uses {{%s}}", dir, name)
			return
		}
	}
	*dst = dir
}
