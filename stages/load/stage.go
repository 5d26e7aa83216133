package load

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
)

// owner is the stage, or substage, whose keys are being read.
type owner struct {
	stage *stages.Stage
	sub   *stages.Substage // nil for a stage's own keys, which apply in all its substages
}

func (o owner) where() string {
	if o.sub != nil {
		return "substage " + o.stage.Name + "." + o.sub.Name
	}
	return "stage " + o.stage.Name
}

// stageReader reads shaped entries into stages.
type stageReader struct {
	d     *diag.Collector
	hooks *hookReader
	led   *ledger
}

// addStages reads every entry into cfg; a second stage of a name is
// reported and left out.
func (r *stageReader) addStages(cfg *stages.Config, entries []*entry) {
	for _, e := range entries {
		s := r.stage(e)
		if first := cfg.AddStage(s); first != nil {
			r.d.Errorf(s.Pos, fmt.Sprintf("the first is at %s; rename one", first.Pos), "duplicate stage %q", s.Name)
		}
	}
}

func (r *stageReader) stage(e *entry) *stages.Stage {
	s := &stages.Stage{Name: e.name, Pos: r.d.Pos(e.at)}
	r.settings(e, &s.Settings, owner{stage: s})
	for _, se := range e.subs {
		ss := &stages.Substage{Name: se.name, Pos: r.d.Pos(se.at), Stage: s}
		r.settings(se, &ss.Settings, owner{stage: s, sub: ss})
		if first := s.AddSubstage(ss); first != nil {
			r.d.Errorf(ss.Pos, fmt.Sprintf("the first is at %s; rename one", first.Pos), "duplicate substage %q in stage %q", ss.Name, s.Name)
		}
	}
	return s
}

// setting reads the value of one key stages and substages share into st.
type setting func(r *stageReader, v *yaml.Node, st *stages.Settings, o owner)

// settingReaders are the keys stages and substages share, and their readers: a
// table, so that reading 20,000 stages builds nothing per stage.
var settingReaders = map[string]setting{
	"role":          func(r *stageReader, v *yaml.Node, st *stages.Settings, _ owner) { r.role(v, st) },
	"host":          func(r *stageReader, v *yaml.Node, st *stages.Settings, _ owner) { r.host(v, st) },
	"human_review":  func(r *stageReader, v *yaml.Node, st *stages.Settings, _ owner) { r.d.BoolVar(v, &st.HumanReview) },
	"parking_lot":   func(r *stageReader, v *yaml.Node, st *stages.Settings, _ owner) { r.d.BoolVar(v, &st.ParkingLot) },
	"redirect_only": func(r *stageReader, v *yaml.Node, st *stages.Settings, _ owner) { r.d.BoolVar(v, &st.RedirectOnly) },
	"terminal": func(r *stageReader, v *yaml.Node, st *stages.Settings, _ owner) {
		diag.OneOf(r.d, v, &st.Terminal, "terminal kind", stages.TerminalCompletion, stages.TerminalAbandon)
	},
	"condition": func(r *stageReader, v *yaml.Node, st *stages.Settings, _ owner) {
		st.Condition = r.d.Condition(v, "write an expression such as `needs_ui_review and not hotfix`")
	},
	"output": func(r *stageReader, v *yaml.Node, st *stages.Settings, _ owner) { r.d.StringVar(v, &st.Output) },
	"skill":  func(r *stageReader, v *yaml.Node, st *stages.Settings, _ owner) { r.skill(v, st) },
	"pre_completion": func(r *stageReader, v *yaml.Node, st *stages.Settings, o owner) {
		st.PreCompletion = r.hooks.list(v, o, "pre_completion")
	},
	"post_start": func(r *stageReader, v *yaml.Node, st *stages.Settings, o owner) {
		st.PostStart = r.hooks.list(v, o, "post_start")
	},
	"post_completion": func(r *stageReader, v *yaml.Node, st *stages.Settings, o owner) {
		st.PostCompletion = r.hooks.list(v, o, "post_completion")
	},
	"on_failure": func(r *stageReader, v *yaml.Node, st *stages.Settings, o owner) { st.OnFailure = r.onFailure(v, o) },
}

// settings reads the keys stages and substages share.
func (r *stageReader) settings(e *entry, st *stages.Settings, o owner) {
	for _, p := range e.keys {
		if read, ok := settingReaders[p.Key.Value]; ok {
			read(r, p.Val, st, o)
			continue
		}
		r.unknown(p.Key, o, e.nameKey)
	}
}

// unknown reports a key nobody reads.
func (r *stageReader) unknown(k *yaml.Node, o owner, nameKey bool) {
	known := slices.Collect(maps.Keys(settingReaders))
	if o.sub == nil {
		known = append(known, "substages")
	}
	if nameKey {
		known = append(known, "name")
	}
	hint := ""
	if canon, ok := compatKeys[k.Value]; ok {
		hint = fmt.Sprintf("in the list form write `%s: %s`", canon.key, canon.value)
	} else if k.Value == "substages" {
		hint = "substages cannot nest" // a stage's own were shaped already
	}
	r.d.UnknownKey(k, o.where(), known, hint)
}

func (r *stageReader) role(v *yaml.Node, st *stages.Settings) {
	var role string
	if !r.d.StringVar(v, &role) {
		return
	}
	switch role {
	case "manager", "human":
		role = string(stages.RoleHuman)
	case "":
		r.d.Errorf(r.d.Pos(v), "", "empty role")
	}
	st.Role = stages.Role(role)
}

func (r *stageReader) host(v *yaml.Node, st *stages.Settings) {
	var host string
	if !r.d.StringVar(v, &host) {
		return
	}
	switch host {
	case "controller":
		st.Role = stages.RoleController
	case "agent", "container":
	default:
		r.d.Errorf(r.d.Pos(v), "use `host: controller` for stages the host controller runs", "unknown host %q", host)
	}
}

// skill warns of an instructions file that is not there: the stage still
// works, without the instructions.
func (r *stageReader) skill(v *yaml.Node, st *stages.Settings) {
	if !r.d.StringVar(v, &st.Skill) {
		return
	}
	p := st.Skill
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(r.d.File), p)
	}
	if _, err := os.Stat(p); err != nil {
		r.d.Warnf(r.d.Pos(v), "create it, or fix the path (relative to the config file)", "skill file %s not found", st.Skill)
	}
}

func (r *stageReader) onFailure(n *yaml.Node, o owner) *stages.OnFailure {
	if !r.d.IsMap(n, "on_failure") {
		return nil
	}
	of := &stages.OnFailure{Pos: r.d.Pos(n)}
	for _, p := range yamlnode.Pairs(n) {
		switch p.Key.Value {
		case "step_back_to":
			if r.d.StringVar(p.Val, &of.StepBackTo) {
				r.led.refer(&stageRef{pos: r.d.Pos(p.Val), from: o, ref: of.StepBackTo,
					set: func(path string) { of.StepBackTo = path }, what: "on_failure.step_back_to", verb: "on_failure"})
			}
		case "message":
			if r.d.StringVar(p.Val, &of.Message) {
				r.led.template(r.d.Pos(p.Val), of.Message, "on_failure.message")
			}
		default:
			r.d.UnknownKey(p.Key, "on_failure", []string{"step_back_to", "message"}, "")
		}
	}
	return of
}
