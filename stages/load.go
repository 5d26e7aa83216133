package stages

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Find walks up from dir to the nearest .agenttree.yaml.
func Find(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		p := filepath.Join(d, FileName)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no %s in %s or any parent directory; run `agenttree init` to create one, or pass --config PATH", FileName, abs)
		}
	}
}

// Load reads the config at path and validates it against the hook catalog.
// On any error it returns a *LoadError listing every problem found.
func Load(path string, catalog HookCatalog) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data, catalog)
}

// Parse validates config text as if read from file.
func Parse(file string, data []byte, catalog HookCatalog) (*Config, error) {
	l := &loader{
		d:       diags{file: file},
		cat:     catalog,
		cfg:     &Config{File: file},
		outputs: map[string]bool{},

		brokenFlows: map[string]bool{},
	}
	for _, v := range builtinVars {
		l.outputs[v] = true
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		pos, msg := syntaxPos(file, err)
		l.d.errorf(pos, "fix the YAML syntax", "%s", msg)
	} else if len(root.Content) == 0 || isNull(root.Content[0]) {
		l.d.errorf(Pos{File: file, Line: 1, Col: 1}, "run `agenttree init` for a starter config", "the config is empty")
	} else if root.Content[0].Kind != yaml.MappingNode {
		l.d.errorf(l.pos(root.Content[0]), "", "the config must be a mapping of keys such as `stages:` and `flows:`, got %s", kindName(root.Content[0]))
	} else {
		l.duplicateKeys(root.Content[0])
		l.load(root.Content[0])
	}
	errs, warns := l.d.split()
	if len(errs) > 0 {
		return nil, &LoadError{Diagnostics: append(errs, warns...)}
	}
	l.cfg.Warnings = warns
	return l.cfg, nil
}

// pendingRef is a stage reference a hook or on_failure makes, resolved once
// every stage is known.
type pendingRef struct {
	pos   Pos
	stage *Stage
	// sub is nil for a stage's own keys, which apply in all its substages.
	sub *Substage
	ref string
	set func(path string)
	// what names the reference in errors: `section_check.on_fail`.
	what string
	// verb says what sends the issue there: "on_fail" in "whose on_fail
	// sends issues to".
	verb string
	// target is the resolved node path; empty when ref did not resolve.
	target string
}

type pendingTemplate struct {
	pos  Pos
	text string
	what string
}

type loader struct {
	d         diags
	cat       HookCatalog
	cfg       *Config
	refs      []pendingRef
	templates []pendingTemplate
	outputs   map[string]bool
	// brokenFlows name flows with a bad reference, already reported.
	brokenFlows map[string]bool
}

func (l *loader) pos(n *yaml.Node) Pos {
	return Pos{File: l.d.file, Line: n.Line, Col: n.Column}
}

func (l *loader) canonical() bool { return l.cfg.Form == Canonical }

// unknownKey reports a key nobody reads: an error in the canonical form, a
// warning in the compatible one (whose files carry keys of the earlier tool).
func (l *loader) unknownKey(k *yaml.Node, where string, known []string, hint string) {
	if hint == "" {
		hint = suggest(k.Value, known)
	}
	if l.canonical() {
		l.d.errorf(l.pos(k), hint, "unknown key `%s` in %s", k.Value, where)
	} else {
		l.d.warnf(l.pos(k), hint, "unknown key `%s` in %s is ignored", k.Value, where)
	}
}

var topKeys = []string{"project", "default_branch", "forge", "allow_self_approval", "ci_polling",
	"conflict_handling", "ci", "github", "stages", "flows", "default_flow"}

func (l *loader) load(root *yaml.Node) {
	var stagesNode, flowsNode, defaultFlow *yaml.Node
	for _, p := range pairs(root) {
		switch p.key.Value {
		case "stages":
			stagesNode = p.val
		case "flows":
			flowsNode = p.val
		case "default_flow":
			defaultFlow = p.val
		}
	}
	l.cfg.Form = Canonical
	if stagesNode != nil && stagesNode.Kind == yaml.MappingNode {
		l.cfg.Form = Compatible
	}
	if stagesNode == nil {
		for _, p := range pairs(flowsNode) {
			if p.val.Kind == yaml.MappingNode {
				for _, q := range pairs(p.val) {
					if q.key.Value == "stages" && q.val.Kind == yaml.MappingNode {
						l.cfg.Form = Compatible
					}
				}
			}
		}
	}

	d := Defaults()
	l.cfg.Forge, l.cfg.DefaultBranch, l.cfg.CIPolling, l.cfg.Conflicts = d.Forge, d.DefaultBranch, d.CIPolling, d.Conflicts

	for _, p := range pairs(root) {
		switch p.key.Value {
		case "stages", "flows", "default_flow":
		case "project":
			l.str(p.val, &l.cfg.Project)
		case "default_branch":
			l.str(p.val, &l.cfg.DefaultBranch)
		case "forge":
			l.str(p.val, &l.cfg.Forge)
			if l.cfg.Forge != "github" && l.cfg.Forge != "local" {
				l.d.errorf(l.pos(p.val), "use `github` or `local`", "unknown forge %q", l.cfg.Forge)
			}
		case "allow_self_approval":
			l.boolean(p.val, &l.cfg.AllowSelfApprove)
		case "ci_polling":
			l.ciPolling(p.val)
		case "conflict_handling":
			l.conflicts(p.val)
		case "ci":
			l.ci(p.val)
		case "github":
			l.github(p.val)
		default:
			l.unknownKey(p.key, "the top level", topKeys, "")
		}
	}

	if stagesNode != nil {
		switch stagesNode.Kind {
		case yaml.SequenceNode:
			for _, item := range stagesNode.Content {
				if s := l.canonicalStage(item); s != nil {
					l.addStage(s)
				}
			}
		case yaml.MappingNode:
			for _, p := range pairs(stagesNode) {
				if s := l.mapStage(p.key, p.val); s != nil {
					l.addStage(s)
				}
			}
		default:
			l.d.errorf(l.pos(stagesNode), "write `stages:` as a list of `- name: ...` items", "`stages` must be a list, got %s", kindName(stagesNode))
		}
	}
	l.flows(flowsNode, stagesNode == nil)
	if len(l.cfg.Stages) == 0 {
		l.d.errorf(l.pos(root), "add a `stages:` list", "the config declares no stages")
		return
	}
	if !l.hasFlow("default") && (l.cfg.Form == Canonical || len(l.cfg.Flows) == 0) {
		f := &Flow{Name: "default", Pos: l.pos(root)}
		for _, s := range l.cfg.Stages {
			f.Nodes = append(f.Nodes, expandStage(s)...)
		}
		l.cfg.Flows = append([]*Flow{f}, l.cfg.Flows...)
	}
	switch {
	case defaultFlow != nil:
		l.str(defaultFlow, &l.cfg.DefaultFlow)
		if !l.hasFlow(l.cfg.DefaultFlow) {
			l.d.errorf(l.pos(defaultFlow), suggest(l.cfg.DefaultFlow, l.cfg.FlowNames()), "default_flow names unknown flow %q", l.cfg.DefaultFlow)
		}
	case l.hasFlow("default"):
		l.cfg.DefaultFlow = "default"
	default:
		l.cfg.DefaultFlow = l.cfg.Flows[0].Name
	}
	for _, f := range l.cfg.Flows {
		l.checkFlow(f)
	}
	l.resolveRefs()
	l.checkFlowTargets()
	l.checkTemplates()
}

// duplicateKeys reports every key given twice in one mapping. yaml.v3 keeps
// both in the node tree, and reading it would silently use one of them.
func (l *loader) duplicateKeys(n *yaml.Node) {
	if n == nil || n.Kind == yaml.AliasNode {
		return // the anchored node is checked where it is defined
	}
	if n.Kind == yaml.MappingNode {
		seen := map[string]*yaml.Node{}
		for _, p := range pairs(n) {
			if p.key.Kind != yaml.ScalarNode || p.key.Value == "<<" {
				continue
			}
			id := p.key.ShortTag() + " " + p.key.Value
			if first, dup := seen[id]; dup {
				l.d.errorf(l.pos(p.key), "keep one of them, merging what each says", "duplicate key `%s` (the first is at %s)", p.key.Value, l.pos(first))
				continue
			}
			seen[id] = p.key
		}
	}
	for _, c := range n.Content {
		l.duplicateKeys(c)
	}
}

func (l *loader) hasFlow(name string) bool {
	for _, f := range l.cfg.Flows {
		if f.Name == name {
			return true
		}
	}
	return false
}

func (l *loader) addStage(s *Stage) {
	for _, o := range l.cfg.Stages {
		if o.Name == s.Name {
			l.d.errorf(s.Pos, fmt.Sprintf("the first is at %s; rename one", o.Pos), "duplicate stage %q", s.Name)
			return
		}
	}
	l.cfg.Stages = append(l.cfg.Stages, s)
}

func (l *loader) stageNamed(name string) *Stage {
	for _, s := range l.cfg.Stages {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func (l *loader) str(n *yaml.Node, dst *string) bool {
	s, err := scalarString(n)
	if err != nil {
		l.d.errorf(l.pos(n), "", "%s", err)
		return false
	}
	*dst = s
	return true
}

func (l *loader) boolean(n *yaml.Node, dst *bool) {
	b, err := scalarBool(n)
	if err != nil {
		l.d.errorf(l.pos(n), "", "%s", err)
		return
	}
	*dst = b
}

func (l *loader) integer(n *yaml.Node, dst *int) {
	v, err := scalarInt(n)
	if err != nil {
		l.d.errorf(l.pos(n), "", "%s", err)
		return
	}
	*dst = v
}

func (l *loader) seconds(n *yaml.Node, dst *time.Duration) {
	d, err := scalarDuration(n)
	if err != nil {
		l.d.errorf(l.pos(n), "", "%s", err)
		return
	}
	*dst = d
}

// positiveSeconds is seconds that must be more than zero: a zero poll
// interval would spin.
func (l *loader) positiveSeconds(n *yaml.Node, dst *time.Duration) {
	l.seconds(n, dst)
	if *dst <= 0 {
		l.d.errorf(l.pos(n), "use at least 1", "this interval must be more than 0 seconds")
	}
}

func (l *loader) ciPolling(n *yaml.Node) {
	known := []string{"timeout_s", "poll_interval_s", "max_interval_s", "new_run_timeout_s", "max_retries"}
	if !l.isMap(n, "ci_polling") {
		return
	}
	c := &l.cfg.CIPolling
	for _, p := range pairs(n) {
		switch p.key.Value {
		case "timeout_s":
			l.seconds(p.val, &c.Timeout)
		case "poll_interval_s":
			l.positiveSeconds(p.val, &c.PollInterval)
		case "max_interval_s":
			l.positiveSeconds(p.val, &c.MaxInterval)
		case "new_run_timeout_s":
			l.seconds(p.val, &c.NewRunTimeout)
		case "max_retries":
			l.integer(p.val, &c.MaxRetries)
		default:
			l.unknownKey(p.key, "ci_polling", known, "")
		}
	}
}

func (l *loader) conflicts(n *yaml.Node) {
	known := []string{"auto_rebase", "notify_on_rebase", "max_conflict_retries"}
	if !l.isMap(n, "conflict_handling") {
		return
	}
	c := &l.cfg.Conflicts
	for _, p := range pairs(n) {
		switch p.key.Value {
		case "auto_rebase":
			l.boolean(p.val, &c.AutoRebase)
		case "notify_on_rebase":
			l.boolean(p.val, &c.NotifyOnRebase)
		case "max_conflict_retries":
			l.integer(p.val, &c.MaxConflictRetries)
		default:
			l.unknownKey(p.key, "conflict_handling", known, "")
		}
	}
}

func (l *loader) ci(n *yaml.Node) {
	if !l.isMap(n, "ci") {
		return
	}
	for _, p := range pairs(n) {
		switch p.key.Value {
		case "command":
			l.str(p.val, &l.cfg.CI.Command)
		case "timeout_s":
			l.seconds(p.val, &l.cfg.CI.Timeout)
		default:
			l.unknownKey(p.key, "ci", []string{"command", "timeout_s"}, "")
		}
	}
}

func (l *loader) github(n *yaml.Node) {
	if !l.isMap(n, "github") {
		return
	}
	for _, p := range pairs(n) {
		switch p.key.Value {
		case "repo":
			if l.str(p.val, &l.cfg.GitHub.Repo) {
				if owner, name, ok := strings.Cut(l.cfg.GitHub.Repo, "/"); !ok || owner == "" || name == "" || strings.Contains(name, "/") {
					l.d.errorf(l.pos(p.val), "write it as OWNER/NAME, e.g. `repo: octo/app`", "bad github.repo %q", l.cfg.GitHub.Repo)
				}
			}
		case "host":
			l.str(p.val, &l.cfg.GitHub.Host)
		default:
			l.unknownKey(p.key, "github", []string{"repo", "host"}, "")
		}
	}
}

func (l *loader) isMap(n *yaml.Node, what string) bool {
	if n.Kind != yaml.MappingNode {
		l.d.errorf(l.pos(n), "", "`%s` must be a mapping, got %s", what, kindName(n))
		return false
	}
	return true
}

func (l *loader) checkName(n *yaml.Node, what string) (string, bool) {
	name, err := scalarString(n)
	if err != nil {
		l.d.errorf(l.pos(n), "", "%s name: %s", what, err)
		return "", false
	}
	if name == "" || strings.ContainsAny(name, ". \t") {
		l.d.errorf(l.pos(n), "use letters, digits, `_` and `-`", "bad %s name %q", what, name)
		return "", false
	}
	return name, true
}

// canonicalStage reads one `- name: ...` item of the list form.
func (l *loader) canonicalStage(item *yaml.Node) *Stage {
	if item.Kind == yaml.ScalarNode && !isNull(item) {
		name, ok := l.checkName(item, "stage")
		if !ok {
			return nil
		}
		return &Stage{Name: name, Pos: l.pos(item)}
	}
	if item.Kind != yaml.MappingNode {
		l.d.errorf(l.pos(item), "write `- name: STAGE`", "a stage must be a mapping, got %s", kindName(item))
		return nil
	}
	s := &Stage{Pos: l.pos(item)}
	var nameNode *yaml.Node
	for _, p := range pairs(item) {
		if p.key.Value == "name" {
			nameNode = p.val
		}
	}
	if nameNode == nil {
		l.d.errorf(l.pos(item), "add `name: STAGE`", "a stage has no name")
		return nil
	}
	name, ok := l.checkName(nameNode, "stage")
	if !ok {
		return nil
	}
	s.Name = name
	l.settings(item, &s.Settings, s, nil, true, true)
	return s
}

// mapStage reads `name: {definition}` of the compatible form; a null
// definition is a plain stage.
func (l *loader) mapStage(key, val *yaml.Node) *Stage {
	name, ok := l.checkName(key, "stage")
	if !ok {
		return nil
	}
	s := &Stage{Name: name, Pos: l.pos(key)}
	if isNull(val) {
		return s
	}
	if val.Kind != yaml.MappingNode {
		l.d.errorf(l.pos(val), "", "stage %q must be a mapping or empty, got %s", name, kindName(val))
		return nil
	}
	l.settings(val, &s.Settings, s, nil, true, false)
	return s
}

var settingKeys = []string{"role", "host", "human_review", "parking_lot", "terminal", "redirect_only",
	"condition", "output", "skill", "pre_completion", "post_start", "post_completion", "on_failure"}

var compatSettingKeys = map[string]string{
	"is_parking_lot": "parking_lot: true",
	"is_completion":  "terminal: completion",
	"is_abandon":     "terminal: abandon",
}

// settings reads the keys stages and substages share from m.
// nameKey says whether `name:` belongs in m (list-form items carry it).
func (l *loader) settings(m *yaml.Node, st *Settings, stage *Stage, sub *Substage, isStage bool, nameKey bool) {
	where := "stage " + stage.Name
	if sub != nil {
		where = "substage " + stage.Name + "." + sub.Name
	}
	known := append([]string(nil), settingKeys...)
	if isStage {
		known = append(known, "substages")
	}
	if nameKey {
		known = append(known, "name")
	}
	for _, p := range pairs(m) {
		k, v := p.key.Value, p.val
		switch k {
		case "name":
			if !nameKey {
				l.unknownKey(p.key, where, known, "")
			}
		case "substages":
			if !isStage {
				l.unknownKey(p.key, where, known, "substages cannot nest")
				continue
			}
			l.substages(v, stage)
		case "role":
			var r string
			if l.str(v, &r) {
				switch r {
				case "manager", "human":
					r = string(RoleHuman)
				case "":
					l.d.errorf(l.pos(v), "", "empty role")
				}
				st.Role = Role(r)
			}
		case "host":
			var h string
			if l.str(v, &h) {
				switch h {
				case "controller":
					st.Role = RoleController
				case "agent", "container":
				default:
					l.d.errorf(l.pos(v), "use `host: controller` for stages the host controller runs", "unknown host %q", h)
				}
			}
		case "human_review":
			l.boolean(v, &st.HumanReview)
		case "parking_lot":
			l.boolean(v, &st.ParkingLot)
		case "redirect_only":
			l.boolean(v, &st.RedirectOnly)
		case "terminal":
			var t string
			if l.str(v, &t) {
				st.Terminal = Terminal(t)
				if st.Terminal != TerminalCompletion && st.Terminal != TerminalAbandon {
					l.d.errorf(l.pos(v), "use `completion` or `abandon`", "unknown terminal kind %q", t)
				}
			}
		case "condition":
			var src string
			if l.str(v, &src) {
				c, err := ParseCondition(src)
				if err != nil {
					l.d.errorf(l.pos(v), "write an expression such as `needs_ui_review and not hotfix`", "%s", err)
				} else {
					c.Pos = l.pos(v)
					st.Condition = c
				}
			}
		case "output":
			l.str(v, &st.Output)
		case "skill":
			if l.str(v, &st.Skill) {
				p := st.Skill
				if !filepath.IsAbs(p) {
					p = filepath.Join(filepath.Dir(l.d.file), p)
				}
				if _, err := os.Stat(p); err != nil {
					l.d.warnf(l.pos(v), "create it, or fix the path (relative to the config file)", "skill file %s not found", st.Skill)
				}
			}
		case "pre_completion":
			st.PreCompletion = l.hookList(v, stage, sub, k)
		case "post_start":
			st.PostStart = l.hookList(v, stage, sub, k)
		case "post_completion":
			st.PostCompletion = l.hookList(v, stage, sub, k)
		case "on_failure":
			st.OnFailure = l.onFailure(v, stage, sub)
		default:
			if canon, ok := compatSettingKeys[k]; ok && !l.canonical() {
				var b bool
				l.boolean(v, &b)
				if b {
					switch k {
					case "is_parking_lot":
						st.ParkingLot = true
					case "is_completion":
						st.Terminal = TerminalCompletion
					case "is_abandon":
						st.Terminal = TerminalAbandon
					}
				}
				continue
			} else if ok {
				l.unknownKey(p.key, where, known, "in the list form write `"+canon+"`")
				continue
			}
			l.unknownKey(p.key, where, known, "")
		}
	}
}

func (l *loader) substages(n *yaml.Node, stage *Stage) {
	add := func(ss *Substage) {
		for _, o := range stage.Substages {
			if o.Name == ss.Name {
				l.d.errorf(ss.Pos, fmt.Sprintf("the first is at %s; rename one", o.Pos), "duplicate substage %q in stage %q", ss.Name, stage.Name)
				return
			}
		}
		stage.Substages = append(stage.Substages, ss)
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for _, item := range n.Content {
			if item.Kind == yaml.ScalarNode && !isNull(item) {
				if name, ok := l.checkName(item, "substage"); ok {
					add(&Substage{Name: name, Pos: l.pos(item), Stage: stage})
				}
				continue
			}
			if item.Kind != yaml.MappingNode {
				l.d.errorf(l.pos(item), "write `- name: SUBSTAGE`", "a substage must be a mapping, got %s", kindName(item))
				continue
			}
			var nameNode *yaml.Node
			for _, p := range pairs(item) {
				if p.key.Value == "name" {
					nameNode = p.val
				}
			}
			if nameNode == nil {
				l.d.errorf(l.pos(item), "add `name: SUBSTAGE`", "a substage of %q has no name", stage.Name)
				continue
			}
			name, ok := l.checkName(nameNode, "substage")
			if !ok {
				continue
			}
			ss := &Substage{Name: name, Pos: l.pos(item), Stage: stage}
			l.settings(item, &ss.Settings, stage, ss, false, true)
			add(ss)
		}
	case yaml.MappingNode:
		if l.canonical() {
			l.d.errorf(l.pos(n), "in the list form write substages as `- name: SUBSTAGE` items", "substages of %q must be a list", stage.Name)
			return
		}
		for _, p := range pairs(n) {
			name, ok := l.checkName(p.key, "substage")
			if !ok {
				continue
			}
			ss := &Substage{Name: name, Pos: l.pos(p.key), Stage: stage}
			if !isNull(p.val) {
				if p.val.Kind != yaml.MappingNode {
					l.d.errorf(l.pos(p.val), "", "substage %q must be a mapping or empty, got %s", name, kindName(p.val))
					continue
				}
				l.settings(p.val, &ss.Settings, stage, ss, false, false)
			}
			add(ss)
		}
	default:
		if !isNull(n) {
			l.d.errorf(l.pos(n), "", "substages of %q must be a list, got %s", stage.Name, kindName(n))
		}
	}
}

func (l *loader) onFailure(n *yaml.Node, stage *Stage, sub *Substage) *OnFailure {
	if !l.isMap(n, "on_failure") {
		return nil
	}
	of := &OnFailure{Pos: l.pos(n)}
	for _, p := range pairs(n) {
		switch p.key.Value {
		case "step_back_to":
			if l.str(p.val, &of.StepBackTo) {
				l.refs = append(l.refs, pendingRef{pos: l.pos(p.val), stage: stage, sub: sub, ref: of.StepBackTo,
					set: func(path string) { of.StepBackTo = path }, what: "on_failure.step_back_to", verb: "on_failure"})
			}
		case "message":
			if l.str(p.val, &of.Message) {
				l.templates = append(l.templates, pendingTemplate{pos: l.pos(p.val), text: of.Message, what: "on_failure.message"})
			}
		default:
			l.unknownKey(p.key, "on_failure", []string{"step_back_to", "message"}, "")
		}
	}
	return of
}

var commonOptions = []string{"optional", "timeout", "retries", "when", "context", "on_failure"}

func isCommonOption(k string) bool {
	for _, c := range commonOptions {
		if c == k {
			return true
		}
	}
	return false
}

func (l *loader) hookList(n *yaml.Node, stage *Stage, sub *Substage, list string) []*HookEntry {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		l.d.errorf(l.pos(n), "write each hook as a `- hook_name: ...` item", "`%s` must be a list, got %s", list, kindName(n))
		return nil
	}
	var out []*HookEntry
	for _, item := range n.Content {
		if h := l.hookEntry(item, stage, sub); h != nil {
			out = append(out, h)
		}
	}
	return out
}

func (l *loader) hookEntry(item *yaml.Node, stage *Stage, sub *Substage) *HookEntry {
	h := &HookEntry{Pos: l.pos(item), Params: map[string]any{}}
	var nameNode, value *yaml.Node
	var options []pair
	switch item.Kind {
	case yaml.ScalarNode:
		nameNode = item
	case yaml.MappingNode:
		var ok bool
		if nameNode, value, options, ok = l.splitHookItem(item); !ok {
			return nil
		}
	default:
		l.d.errorf(l.pos(item), "write `- hook_name: {params}`", "a hook entry must be a mapping, got %s", kindName(item))
		return nil
	}
	h.Name = nameNode.Value
	h.Pos = l.pos(nameNode)
	spec, known := l.cat.Hook(h.Name)
	if known {
		h.Name = spec.Name
	}
	for _, p := range options {
		l.commonOption(h, p.key, p.val, stage, sub)
	}
	if !known {
		hint := suggest(h.Name, l.cat.HookNames())
		if l.canonical() {
			l.d.errorf(h.Pos, hint, "unknown hook `%s`", h.Name)
			return nil
		}
		l.d.warnf(h.Pos, hint, "hook `%s` is not implemented by agenttree; it will be reported each time it would run, and never run", h.Name)
		h.Unsupported = true
		return h
	}
	for _, o := range spec.Outputs {
		l.outputs[o] = true
	}
	// given maps every parameter written, even with a bad value, to its
	// spelling, so a bad value is not also reported missing.
	given := map[string]string{}
	switch {
	case isNull(value):
	case value.Kind == yaml.MappingNode:
		for _, p := range pairs(value) {
			if _, isParam := spec.Param(p.key.Value); !isParam && isCommonOption(p.key.Value) {
				l.commonOption(h, p.key, p.val, stage, sub)
				continue
			}
			l.param(h, spec, p.key, p.val, stage, sub, given)
		}
	default:
		if spec.Main == "" {
			l.d.errorf(l.pos(value), fmt.Sprintf("write `%s:` with no value, or `%s: {param: value}`", h.Name, h.Name), "hook `%s` takes no main parameter", h.Name)
			return nil
		}
		l.param(h, spec, &yaml.Node{Kind: yaml.ScalarNode, Value: spec.Main, Line: value.Line, Column: value.Column}, value, stage, sub, given)
	}
	for _, p := range spec.Params {
		if _, ok := given[p.Name]; p.Required && !ok {
			l.d.errorf(h.Pos, fmt.Sprintf("add `%s:`", p.Name), "hook `%s` needs parameter `%s`", h.Name, p.Name)
		}
	}
	for _, group := range spec.OneOf {
		n := 0
		for _, name := range group {
			if _, ok := given[name]; ok {
				n++
			}
		}
		switch {
		case n == 0:
			l.d.errorf(h.Pos, "add one of them", "hook `%s` needs %s", h.Name, orList(group))
		case n > 1:
			l.d.errorf(h.Pos, "keep one", "hook `%s` takes %s, not both", h.Name, orList(group))
		}
	}
	if spec.OutputsParam != "" {
		if names, ok := h.Params[spec.OutputsParam].([]string); ok {
			for _, o := range names {
				l.outputs[o] = true
			}
		}
	}
	return h
}

// orList spells alternatives: "`text` or `values`".
func orList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	if len(q) <= 2 {
		return strings.Join(q, " or ")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// splitHookItem finds which key of a `- hook: ...` mapping names the hook;
// the rest are options beside it. Files of the earlier tool put options of
// its own there (`host_only: true`), so in the compatible form a key that
// names no hook, beside one that does, is ignored with a warning.
func (l *loader) splitHookItem(item *yaml.Node) (name, value *yaml.Node, options []pair, ok bool) {
	var cands, hooks []pair
	for _, p := range pairs(item) {
		if isCommonOption(p.key.Value) {
			options = append(options, p)
			continue
		}
		cands = append(cands, p)
		if _, known := l.cat.Hook(p.key.Value); known {
			hooks = append(hooks, p)
		}
	}
	var hook pair
	switch {
	case len(cands) == 1:
		return cands[0].key, cands[0].val, options, true
	case len(hooks) == 1:
		hook = hooks[0]
	case len(hooks) == 0 && len(cands) > 1 && !l.canonical():
		// None is ours: the earlier tool's hook comes first, its options after.
		hook = cands[0]
	default:
		got := make([]string, len(cands))
		for i, c := range cands {
			got[i] = "`" + c.key.Value + "`"
		}
		l.d.errorf(l.pos(item), "write one hook per list item: `- hook_name: {params}`", "a hook entry must name exactly one hook, found %d (%s)", len(cands), strings.Join(got, ", "))
		return nil, nil, nil, false
	}
	for _, c := range cands {
		if c == hook {
			continue
		}
		if l.canonical() {
			l.d.errorf(l.pos(c.key), suggest(c.key.Value, commonOptions), "unknown option `%s` beside hook `%s` (known options: %s)",
				c.key.Value, hook.key.Value, strings.Join(commonOptions, ", "))
		} else {
			l.d.warnf(l.pos(c.key), suggest(c.key.Value, commonOptions), "unknown option `%s` beside hook `%s` is ignored", c.key.Value, hook.key.Value)
		}
	}
	return hook.key, hook.val, options, true
}

func paramNames(spec HookSpec) []string {
	var out []string
	for _, p := range spec.Params {
		out = append(out, p.Name)
		out = append(out, p.Aliases...)
	}
	return out
}

func (l *loader) param(h *HookEntry, spec HookSpec, key, val *yaml.Node, stage *Stage, sub *Substage, given map[string]string) {
	p, ok := spec.Param(key.Value)
	if !ok {
		known := paramNames(spec)
		hint := suggest(key.Value, append(known, commonOptions...))
		if hint == "" {
			hint = "known parameters: " + strings.Join(known, ", ")
		}
		if l.canonical() {
			l.d.errorf(l.pos(key), hint, "hook `%s` has no parameter `%s`", h.Name, key.Value)
		} else {
			l.d.warnf(l.pos(key), hint, "hook `%s` has no parameter `%s`; it is ignored", h.Name, key.Value)
		}
		return
	}
	bad := func(err error) {
		l.d.errorf(l.pos(val), "", "hook `%s` parameter `%s`: %s", h.Name, key.Value, err)
	}
	if first, dup := given[p.Name]; dup {
		if first != key.Value { // the same spelling twice is a duplicate key, reported already
			l.d.errorf(l.pos(key), "keep one spelling", "hook `%s` parameter `%s` is given twice (`%s` is another spelling of it)", h.Name, p.Name, key.Value)
		}
		return
	}
	given[p.Name] = key.Value
	switch p.Type {
	case ParamString, ParamTemplate, ParamStageRef, ParamEnum:
		s, err := scalarString(val)
		if err != nil {
			bad(err)
			return
		}
		if p.Type == ParamEnum && !contains(p.Enum, s) {
			l.d.errorf(l.pos(val), suggest(s, p.Enum), "hook `%s` parameter `%s` must be one of %s, got %q", h.Name, p.Name, strings.Join(p.Enum, ", "), s)
			return
		}
		h.Params[p.Name] = s
		if p.Type == ParamTemplate {
			l.templates = append(l.templates, pendingTemplate{pos: l.pos(val), text: s, what: h.Name + "." + p.Name})
		}
		if p.Type == ParamStageRef {
			name := p.Name
			verb := h.Name + " " + p.Name
			switch {
			case p.Name == "on_fail":
				verb = "on_fail"
			case p.Name == spec.Main:
				verb = h.Name // rollback, step_back
			}
			l.refs = append(l.refs, pendingRef{pos: l.pos(val), stage: stage, sub: sub, ref: s,
				set: func(path string) { h.Params[name] = path }, what: h.Name + "." + key.Value, verb: verb})
		}
	case ParamInt:
		v, err := scalarInt(val)
		if err != nil {
			bad(err)
			return
		}
		h.Params[p.Name] = v
	case ParamNumber:
		var v float64
		if val.Kind != yaml.ScalarNode || (val.Tag != "!!int" && val.Tag != "!!float") || val.Decode(&v) != nil {
			bad(fmt.Errorf("expected a number, got %s", kindName(val)))
			return
		}
		h.Params[p.Name] = v
	case ParamBool:
		v, err := scalarBool(val)
		if err != nil {
			bad(err)
			return
		}
		h.Params[p.Name] = v
	case ParamDuration:
		v, err := scalarDuration(val)
		if err != nil {
			bad(err)
			return
		}
		h.Params[p.Name] = v
	case ParamList:
		v, err := stringList(val)
		if err != nil {
			bad(err)
			return
		}
		h.Params[p.Name] = v
	default:
		var v any
		if err := val.Decode(&v); err != nil {
			bad(err)
			return
		}
		h.Params[p.Name] = v
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var failureActions = []string{"step_back", "step_back_to", "escalate", "fail", "ignore"}

func (l *loader) commonOption(h *HookEntry, key, val *yaml.Node, stage *Stage, sub *Substage) {
	switch key.Value {
	case "optional":
		l.boolean(val, &h.Optional)
	case "timeout":
		l.seconds(val, &h.Timeout)
	case "retries":
		l.integer(val, &h.Retries)
		if h.Retries < 0 {
			l.d.errorf(l.pos(val), "", "retries must not be negative")
		}
	case "context":
		l.str(val, &h.Context)
	case "when":
		var src string
		if l.str(val, &src) {
			c, err := ParseCondition(src)
			if err != nil {
				l.d.errorf(l.pos(val), "", "%s", err)
				return
			}
			c.Pos = l.pos(val)
			h.When = c
		}
	case "on_failure":
		fp := &FailurePolicy{}
		target := func(n *yaml.Node) {
			if l.str(n, &fp.Target) {
				l.refs = append(l.refs, pendingRef{pos: l.pos(n), stage: stage, sub: sub, ref: fp.Target,
					set: func(path string) { fp.Target = path }, what: "on_failure.step_back_to", verb: "`" + h.Name + "` on_failure"})
			}
		}
		switch val.Kind {
		case yaml.ScalarNode:
			var a string
			if !l.str(val, &a) {
				return
			}
			fp.Action = FailureAction(a)
			if !contains(failureActions, a) || fp.Action == ActionStepBackTo {
				l.d.errorf(l.pos(val), suggest(a, failureActions), "unknown on_failure action %q (use step_back, escalate, fail, ignore, or {step_back_to: STAGE})", a)
				return
			}
		case yaml.MappingNode:
			for _, p := range pairs(val) {
				if p.key.Value != "step_back_to" {
					l.unknownKey(p.key, "on_failure", []string{"step_back_to"}, "")
					continue
				}
				fp.Action = ActionStepBackTo
				target(p.val)
			}
		default:
			l.d.errorf(l.pos(val), "", "on_failure must be an action or {step_back_to: STAGE}, got %s", kindName(val))
			return
		}
		h.OnFailure = fp
	}
}

func (l *loader) refNames() []string {
	var names []string
	for _, s := range l.cfg.Stages {
		names = append(names, s.Name)
		for _, ss := range s.Substages {
			names = append(names, ss.Name, s.Name+"."+ss.Name)
		}
	}
	return names
}

func (l *loader) resolveRefs() {
	for i := range l.refs {
		r := &l.refs[i]
		from := &Node{Path: r.stage.Name, Stage: r.stage, Sub: r.sub}
		if r.sub != nil {
			from.Path += "." + r.sub.Name
		}
		n, ok := l.cfg.ResolveRef(from, r.ref)
		if !ok {
			l.d.errorf(r.pos, suggest(r.ref, l.refNames()), "%s names unknown stage %q", r.what, r.ref)
			continue
		}
		r.target = n.Path
		r.set(n.Path)
	}
}

// checkFlowTargets checks that every node a flow's stages can send an issue
// to belongs to that flow: an issue keeps its flow, and on a node its flow
// does not contain `next` cannot tell where to go. The earlier tool did not
// check this, so its files get a warning.
func (l *loader) checkFlowTargets() {
	for _, f := range l.cfg.Flows {
		if l.brokenFlows[f.Name] {
			continue // its node list is incomplete and already reported
		}
		for _, r := range l.refs {
			if r.target == "" || f.Index(r.target) >= 0 {
				continue
			}
			from := ""
			for _, n := range f.Nodes {
				if n.Stage == r.stage && (r.sub == nil || n.Sub == r.sub) {
					from = n.Path
					break
				}
			}
			if from == "" {
				continue
			}
			report := l.d.errorf
			if !l.canonical() {
				report = l.d.warnf
			}
			report(r.pos, "", "flow `%s` includes %s, whose %s sends issues to %s, which flow `%s` does not include; add it to the flow",
				f.Name, from, r.verb, r.target, f.Name)
		}
	}
}

func (l *loader) checkTemplates() {
	known := make([]string, 0, len(l.outputs))
	for k := range l.outputs {
		known = append(known, k)
	}
	sort.Strings(known)
	for _, t := range l.templates {
		for _, name := range Placeholders(t.text) {
			if !l.outputs[name] {
				hint := suggest(name, known)
				if hint == "" {
					hint = "known variables: " + strings.Join(known, ", ")
				}
				l.d.errorf(t.pos, hint, "%s uses {{%s}}, which no hook or issue provides", t.what, name)
			}
		}
	}
}
