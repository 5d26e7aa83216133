package load

import (
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
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

// readTopLevel reads the settings at the top of the file over the
// defaults: everything but the stages and flows.
func readTopLevel(d *diag.Collector, settings []yamlnode.Pair) *stages.Config {
	cfg := stages.Defaults()
	c := &cfg.CIPolling
	fields{
		"project":             func(v *yaml.Node) { d.StringVar(v, &cfg.Project) },
		"default_branch":      func(v *yaml.Node) { d.StringVar(v, &cfg.DefaultBranch) },
		"forge":               func(v *yaml.Node) { diag.OneOf(d, v, &cfg.Forge, "forge", stages.ForgeGitHub, stages.ForgeLocal) },
		"allow_self_approval": func(v *yaml.Node) { d.BoolVar(v, &cfg.AllowSelfApprove) },
		"ci_polling": func(v *yaml.Node) {
			fields{
				"timeout_s":         func(v *yaml.Node) { d.DurationVar(v, &c.Timeout) },
				"poll_interval_s":   func(v *yaml.Node) { d.PositiveDurationVar(v, &c.PollInterval) },
				"max_interval_s":    func(v *yaml.Node) { d.PositiveDurationVar(v, &c.MaxInterval) },
				"new_run_timeout_s": func(v *yaml.Node) { d.DurationVar(v, &c.NewRunTimeout) },
				"max_retries":       func(v *yaml.Node) { d.IntVar(v, &c.MaxRetries) },
			}.mapping(d, v, "ci_polling")
		},
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
	}.read(d, settings, "the top level", "stages", "flows", "default_flow")
	return cfg
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
