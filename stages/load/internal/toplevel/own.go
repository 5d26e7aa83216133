package toplevel

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/settings"
)

// ownReaders are the readers of the keys that take more than their
// type's reader: a check of their text, a template for the ledger, an
// order among a section's values, or entries of a mapping of names.
func (r *reader) ownReaders() map[string]ownReader {
	d := r.d
	text := func(read func(v *yaml.Node, dst *string)) ownReader {
		return func(k settings.Key, parent any, v *yaml.Node, _ string) bool {
			read(v, k.Field(parent).(*string))
			return true
		}
	}
	command := func(k settings.Key, parent any, v *yaml.Node, name string) bool {
		agentCommand(d, v, name, k.Field(parent).(*string))
		return true
	}
	worktrees := text(func(v *yaml.Node, dst *string) { worktreesDir(d, v, dst) })
	return map[string]ownReader{
		"ci_polling":            r.ciPolling,
		"ci_polling.on_failure": r.ciFailure,
		"circuit_breaker":       r.circuitBreaker,
		"agent_create": func(k settings.Key, parent any, v *yaml.Node, name string) bool {
			r.cfg.AgentCreate.Pos = d.Pos(v)
			return r.section(k, parent, v, "agent_create", name) != nil
		},
		"events": r.events,
		"state":  r.state,
		"state.etcd.endpoints": func(k settings.Key, parent any, v *yaml.Node, name string) bool {
			return etcdEndpoints(d, v, name, k.Field(parent).(*[]string))
		},
		"state.etcd.prefix":   text(func(v *yaml.Node, dst *string) { etcdPrefix(d, v, dst) }),
		"state.etcd.tls.ca":   r.tlsFile,
		"state.etcd.tls.cert": r.tlsFile,
		"state.etcd.tls.key":  r.tlsFile,
		"github.repo":         text(func(v *yaml.Node, dst *string) { githubRepo(d, v, dst) }),
		"tmux.session":        text(func(v *yaml.Node, dst *string) { sessionTemplate(d, r.led, v, dst) }),
		"tmux.socket":         text(func(v *yaml.Node, dst *string) { socketPath(d, v, dst) }),
		"tmux.manager":        text(func(v *yaml.Node, dst *string) { managerSession(d, v, dst) }),
		"notify.command":      text(func(v *yaml.Node, dst *string) { notifyCommand(d, r.led, v, dst) }),
		"sandbox": func(k settings.Key, parent any, v *yaml.Node, _ string) bool {
			readSandbox(d, v, k.Field(parent).(*stages.Sandbox))
			return true
		},
		"worktrees.dir":           worktrees,
		"agents":                  r.agents,
		"agents.*.command":        command,
		"agents.*.resume_command": command,
		"roles":                   r.roles,
		"roles.*.agents":          r.roleAgents,

		"worktrees_dir":            worktrees,
		"tools":                    r.tools,
		"tools.*.command":          command,
		"tools.*.resume_command":   command,
		"tools.*.skip_permissions": r.skipPermissions,
		"default_tool":             r.defaultToolOf,
		"roles.*.tool":             r.roleTool,
		"roles.*.container":        r.roleContainer,
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
