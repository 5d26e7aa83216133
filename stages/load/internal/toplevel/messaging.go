package toplevel

import (
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/ledger"
	"github.com/agenttree/agenttree/stages/settings"
)

// controllerVars are what the controller adds to the message variables in
// the templates it fills outside a hook (an agent's session, the notify
// command): the project, and the role of the stage the issue is in.
var controllerVars = []string{"project", "role"}

// notifyCommand reads notify.command: the command people are told by.
func notifyCommand(d *diag.Collector, led *ledger.Ledger, v *yaml.Node, dst *string) {
	var cmd string
	if !d.StringVar(v, &cmd) {
		return
	}
	if strings.TrimSpace(cmd) == "" {
		d.Errorf(d.Pos(v), "leave `notify` out to tell people by tmux and the log only", "notify.command is empty")
		return
	}
	led.Template(d.Pos(v), cmd, "notify.command", controllerVars...)
	*dst = cmd
}

// sessionTemplate reads the template agents' sessions are named by. Each
// issue needs a session of its own, or one agent would be told another's
// failures.
func sessionTemplate(d *diag.Collector, led *ledger.Ledger, v *yaml.Node, dst *string) {
	var tmpl string
	if !d.StringVar(v, &tmpl) || !sessionName(d, v, "tmux.session", tmpl) {
		return
	}
	if !slices.Contains(stages.Placeholders(tmpl), "issue_id") {
		d.Warnf(d.Pos(v), "add {{issue_id}}, as in the default `"+settings.Defaults().Tmux.Session+"`",
			"tmux.session %q does not use {{issue_id}}: the agents of different issues would share a session", tmpl)
	}
	led.Template(d.Pos(v), tmpl, "tmux.session", controllerVars...)
	*dst = tmpl
}

// managerSession reads the session of the person running the pipeline:
// one session, named as it is.
func managerSession(d *diag.Collector, v *yaml.Node, dst *string) {
	var name string
	if !d.StringVar(v, &name) || !sessionName(d, v, "tmux.manager", name) {
		return
	}
	if len(stages.Placeholders(name)) > 0 {
		d.Errorf(d.Pos(v), "write the session's name as it is", "tmux.manager %q is the name of one session; it takes no {{placeholders}}", name)
		return
	}
	*dst = name
}

// sessionName checks the text of a session name outside its placeholders.
// tmux reads `:` and `.` in a target as separators, and turns them into
// `_` in the name of a session it makes: a name holding one would never
// find its session.
func sessionName(d *diag.Collector, v *yaml.Node, what, name string) bool {
	text := stages.Expand(name, func(string, int, int) string { return "" })
	switch {
	case strings.TrimSpace(name) == "":
		d.Errorf(d.Pos(v), "leave it out for the default", "%s is empty", what)
	case strings.ContainsAny(text, ".:"):
		d.Errorf(d.Pos(v), "use `-` or `_` instead", "%s %q holds `:` or `.`, which tmux reads as separators", what, name)
	default:
		return true
	}
	return false
}

// socketPath reads tmux.socket, a path relative to the config file's
// directory, made absolute so that it names the same server from wherever
// agenttree runs.
func socketPath(d *diag.Collector, v *yaml.Node, dst *string) {
	var p string
	if !d.StringVar(v, &p) {
		return
	}
	switch {
	case p == "":
		d.Errorf(d.Pos(v), "leave it out to use tmux's default server", "tmux.socket is empty")
		return
	case strings.HasPrefix(p, "~"):
		d.Errorf(d.Pos(v), "write the path in full, or relative to the config file", "tmux.socket %q starts with `~`, which is not expanded", p)
		return
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(d.File), p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	*dst = p
}
