package toplevel

import (
	"fmt"
	"maps"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
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

// readAgents reads agents: name → {command, resume_command}.
func readAgents(d *diag.Collector, n *yaml.Node, cfg *stages.Config) {
	if !d.IsMap(n, "agents") {
		return
	}
	for _, p := range yamlnode.Pairs(n) {
		readAgent(d, p, "agents."+p.Key.Value, cfg, fields{})
	}
}

// readAgent reads one agent's entry, named where, with its command,
// resume_command and the extra fields fs.
func readAgent(d *diag.Collector, p yamlnode.Pair, where string, cfg *stages.Config, fs fields) {
	a := &stages.Agent{Name: p.Key.Value, Pos: d.Pos(p.Key)}
	if _, dup := cfg.Agent(a.Name); dup {
		d.Errorf(a.Pos, "give each agent one entry", "agent %q is declared twice", a.Name)
		return
	}
	errs := d.Errors()
	maps.Copy(fs, agentFields(d, a, where))
	fs.mapping(d, p.Val, where)
	if a.Command == "" {
		if d.Errors() == errs { // else what is wrong with it is said
			d.Errorf(a.Pos, "write the shell command that starts it, e.g. `command: claude`", "agent %q has no command", a.Name)
		}
		return
	}
	cfg.Agents = append(cfg.Agents, a)
}

// agentFields reads an agent's entry, named where, into a.
func agentFields(d *diag.Collector, a *stages.Agent, where string) fields {
	return fields{
		"command":        func(v *yaml.Node) { agentCommand(d, v, where+".command", &a.Command) },
		"resume_command": func(v *yaml.Node) { agentCommand(d, v, where+".resume_command", &a.ResumeCommand) },
	}
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

// readRoles reads roles: role → how its sessions run. It returns the
// agents the roles name, for checkAgentRefs. c, when not nil, adds the
// earlier tool's spellings.
func readRoles(d *diag.Collector, n *yaml.Node, cfg *stages.Config, c *compat) []agentRef {
	if !d.IsMap(n, "roles") {
		return nil
	}
	var refs []agentRef
	for _, p := range yamlnode.Pairs(n) {
		r := stages.DefaultRoleSessions(stages.Role(p.Key.Value))
		r.Pos = d.Pos(p.Key)
		switch {
		case !r.Role.Agent():
			d.Tolerate(r.Pos, diag.Tolerable{
				Hint:   "list the roles of agents here",
				Msg:    fmt.Sprintf("role %q is not an agent's: its stages have no agent sessions", r.Role),
				LaxMsg: fmt.Sprintf("role %q is not an agent's: its entry is ignored", r.Role),
			})
			continue
		case has(cfg, r.Role):
			d.Errorf(r.Pos, "give each role one entry", "role %q is declared twice", r.Role)
			continue
		}
		where := "roles." + string(r.Role)
		fs := roleSessionFields(d, r, where, &refs)
		if c != nil {
			c.roleFields(d, fs, r, &refs)
		}
		fs.mapping(d, p.Val, where)
		cfg.Roles = append(cfg.Roles, r)
	}
	return refs
}

// roleSessionFields reads a role's entry, named where, into r, noting the
// agents it names in refs.
func roleSessionFields(d *diag.Collector, r *stages.RoleSessions, where string, refs *[]agentRef) fields {
	return fields{
		"agents": func(v *yaml.Node) {
			for _, at := range agentNodes(d, v) {
				r.Agents = append(r.Agents, at.Value)
				*refs = append(*refs, agentRef{role: r.Role, name: at.Value, at: at})
			}
		},
		"fallback":      func(v *yaml.Node) { diag.OneOf(d, v, &r.Fallback, where+".fallback", stages.Fallbacks()...) },
		"max_restarts":  func(v *yaml.Node) { d.IntAtLeast(v, &r.MaxRestarts, 0, where+".max_restarts") },
		"stall_after_s": func(v *yaml.Node) { d.DurationAtLeast(v, &r.StallAfter, 0, where+".stall_after_s") },
		"auto_start":    func(v *yaml.Node) { d.BoolVar(v, &r.AutoStart) },
	}
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

// worktreesFields reads worktrees: where issues' worktrees are made.
func worktreesFields(d *diag.Collector, w *stages.Worktrees) fields {
	return fields{
		"dir": func(v *yaml.Node) { worktreesDir(d, v, &w.Dir) },
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
		d.Errorf(d.Pos(v), "leave it out for the default `"+stages.Defaults().Worktrees.Dir+"`", "worktrees.dir is empty")
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
