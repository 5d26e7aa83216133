package stages

import (
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// fields reads a mapping of settings: the reader of each key.
type fields map[string]func(v *yaml.Node)

// read reads ps with fs, reporting keys fs does not know; shaped are keys
// read elsewhere, known for suggestions.
func (fs fields) read(d *diags, ps []pair, where string, shaped ...string) {
	for _, p := range ps {
		if read, ok := fs[p.key.Value]; ok {
			read(p.val)
			continue
		}
		d.unknownKey(p.key, where, append(slices.Collect(maps.Keys(fs)), shaped...), "")
	}
}

// mapping reads the mapping n, named what, with fs.
func (fs fields) mapping(d *diags, n *yaml.Node, what string) {
	if d.isMap(n, what) {
		fs.read(d, pairs(n), what)
	}
}

// readTopLevel reads the settings at the top of the file over the
// defaults: everything but the stages and flows.
func readTopLevel(d *diags, settings []pair) *Config {
	cfg := Defaults()
	c := &cfg.CIPolling
	fields{
		"project":             func(v *yaml.Node) { d.str(v, &cfg.Project) },
		"default_branch":      func(v *yaml.Node) { d.str(v, &cfg.DefaultBranch) },
		"forge":               func(v *yaml.Node) { cfg.Forge = forgeKind(d, v, cfg.Forge) },
		"allow_self_approval": func(v *yaml.Node) { d.boolean(v, &cfg.AllowSelfApprove) },
		"ci_polling": func(v *yaml.Node) {
			fields{
				"timeout_s":         func(v *yaml.Node) { d.seconds(v, &c.Timeout) },
				"poll_interval_s":   func(v *yaml.Node) { d.positiveSeconds(v, &c.PollInterval) },
				"max_interval_s":    func(v *yaml.Node) { d.positiveSeconds(v, &c.MaxInterval) },
				"new_run_timeout_s": func(v *yaml.Node) { d.seconds(v, &c.NewRunTimeout) },
				"max_retries":       func(v *yaml.Node) { d.integer(v, &c.MaxRetries) },
			}.mapping(d, v, "ci_polling")
		},
		"conflict_handling": func(v *yaml.Node) {
			fields{
				"auto_rebase":          func(v *yaml.Node) { d.boolean(v, &cfg.Conflicts.AutoRebase) },
				"notify_on_rebase":     func(v *yaml.Node) { d.boolean(v, &cfg.Conflicts.NotifyOnRebase) },
				"max_conflict_retries": func(v *yaml.Node) { d.integer(v, &cfg.Conflicts.MaxConflictRetries) },
			}.mapping(d, v, "conflict_handling")
		},
		"ci": func(v *yaml.Node) {
			fields{
				"command":   func(v *yaml.Node) { d.str(v, &cfg.CI.Command) },
				"timeout_s": func(v *yaml.Node) { d.seconds(v, &cfg.CI.Timeout) },
			}.mapping(d, v, "ci")
		},
		"github": func(v *yaml.Node) {
			fields{
				"repo": func(v *yaml.Node) { githubRepo(d, v, &cfg.GitHub.Repo) },
				"host": func(v *yaml.Node) { d.str(v, &cfg.GitHub.Host) },
			}.mapping(d, v, "github")
		},
	}.read(d, settings, "the top level", "stages", "flows", "default_flow")
	return cfg
}

func forgeKind(d *diags, n *yaml.Node, def ForgeKind) ForgeKind {
	var s string
	if !d.str(n, &s) {
		return def
	}
	k := ForgeKind(s)
	if k != ForgeGitHub && k != ForgeLocal {
		d.errorf(d.pos(n), "use `github` or `local`", "unknown forge %q", s)
	}
	return k
}

// githubRepo reads OWNER/NAME.
func githubRepo(d *diags, n *yaml.Node, dst *string) {
	if !d.str(n, dst) {
		return
	}
	owner, name, ok := strings.Cut(*dst, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		d.errorf(d.pos(n), "write it as OWNER/NAME, e.g. `repo: octo/app`", "bad github.repo %q", *dst)
	}
}
