package stages

import (
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// owner is the stage, or substage, whose keys are being read.
type owner struct {
	stage *Stage
	sub   *Substage // nil for a stage's own keys, which apply in all its substages
}

func (o owner) where() string {
	if o.sub != nil {
		return "substage " + o.stage.Name + "." + o.sub.Name
	}
	return "stage " + o.stage.Name
}

func (o owner) node() *Node {
	if o.sub != nil {
		return substageNode(o.stage, o.sub)
	}
	return &Node{Path: o.stage.Name, Stage: o.stage}
}

// stageReader reads shaped entries into stages.
type stageReader struct {
	d     *diags
	hooks *hookReader
	led   *ledger
}

// stages reads every entry; a second stage of a name is reported and left
// out. byName indexes the stages kept.
func (r *stageReader) stages(entries []*entry) (stages []*Stage, byName map[string]*Stage) {
	byName = make(map[string]*Stage, len(entries))
	for _, e := range entries {
		s := r.stage(e)
		if first, dup := byName[s.Name]; dup {
			r.d.errorf(s.Pos, fmt.Sprintf("the first is at %s; rename one", first.Pos), "duplicate stage %q", s.Name)
			continue
		}
		byName[s.Name] = s
		stages = append(stages, s)
	}
	return stages, byName
}

func (r *stageReader) stage(e *entry) *Stage {
	s := &Stage{Name: e.name, Pos: r.d.pos(e.at)}
	r.settings(e, &s.Settings, owner{stage: s})
	for _, se := range e.subs {
		ss := &Substage{Name: se.name, Pos: r.d.pos(se.at), Stage: s}
		r.settings(se, &ss.Settings, owner{stage: s, sub: ss})
		if first := s.addSubstage(ss); first != nil {
			r.d.errorf(ss.Pos, fmt.Sprintf("the first is at %s; rename one", first.Pos), "duplicate substage %q in stage %q", ss.Name, s.Name)
		}
	}
	return s
}

// settings reads the keys stages and substages share.
func (r *stageReader) settings(e *entry, st *Settings, o owner) {
	for _, p := range e.keys {
		v := p.val
		switch p.key.Value {
		case "role":
			r.role(v, st)
		case "host":
			r.host(v, st)
		case "human_review":
			r.d.boolean(v, &st.HumanReview)
		case "parking_lot":
			r.d.boolean(v, &st.ParkingLot)
		case "redirect_only":
			r.d.boolean(v, &st.RedirectOnly)
		case "terminal":
			r.terminal(v, st)
		case "condition":
			st.Condition = r.d.condition(v, "write an expression such as `needs_ui_review and not hotfix`")
		case "output":
			r.d.str(v, &st.Output)
		case "skill":
			r.skill(v, st)
		case "pre_completion":
			st.PreCompletion = r.hooks.list(v, o, p.key.Value)
		case "post_start":
			st.PostStart = r.hooks.list(v, o, p.key.Value)
		case "post_completion":
			st.PostCompletion = r.hooks.list(v, o, p.key.Value)
		case "on_failure":
			st.OnFailure = r.onFailure(v, o)
		default:
			r.unknown(p.key, o, e.nameKey)
		}
	}
}

var settingKeys = []string{"role", "host", "human_review", "parking_lot", "terminal", "redirect_only",
	"condition", "output", "skill", "pre_completion", "post_start", "post_completion", "on_failure"}

func (r *stageReader) unknown(k *yaml.Node, o owner, nameKey bool) {
	known := append([]string(nil), settingKeys...)
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
	r.d.unknownKey(k, o.where(), known, hint)
}

func (r *stageReader) role(v *yaml.Node, st *Settings) {
	var role string
	if !r.d.str(v, &role) {
		return
	}
	switch role {
	case "manager", "human":
		role = string(RoleHuman)
	case "":
		r.d.errorf(r.d.pos(v), "", "empty role")
	}
	st.Role = Role(role)
}

func (r *stageReader) host(v *yaml.Node, st *Settings) {
	var host string
	if !r.d.str(v, &host) {
		return
	}
	switch host {
	case "controller":
		st.Role = RoleController
	case "agent", "container":
	default:
		r.d.errorf(r.d.pos(v), "use `host: controller` for stages the host controller runs", "unknown host %q", host)
	}
}

func (r *stageReader) terminal(v *yaml.Node, st *Settings) {
	var t string
	if !r.d.str(v, &t) {
		return
	}
	st.Terminal = Terminal(t)
	if st.Terminal != TerminalCompletion && st.Terminal != TerminalAbandon {
		r.d.errorf(r.d.pos(v), "use `completion` or `abandon`", "unknown terminal kind %q", t)
	}
}

// skill warns of an instructions file that is not there: the stage still
// works, without the instructions.
func (r *stageReader) skill(v *yaml.Node, st *Settings) {
	if !r.d.str(v, &st.Skill) {
		return
	}
	p := st.Skill
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(r.d.file), p)
	}
	if _, err := os.Stat(p); err != nil {
		r.d.warnf(r.d.pos(v), "create it, or fix the path (relative to the config file)", "skill file %s not found", st.Skill)
	}
}

func (r *stageReader) onFailure(n *yaml.Node, o owner) *OnFailure {
	if !r.d.isMap(n, "on_failure") {
		return nil
	}
	of := &OnFailure{Pos: r.d.pos(n)}
	for _, p := range pairs(n) {
		switch p.key.Value {
		case "step_back_to":
			if r.d.str(p.val, &of.StepBackTo) {
				r.led.refer(&stageRef{pos: r.d.pos(p.val), from: o, ref: of.StepBackTo,
					set: func(path string) { of.StepBackTo = path }, what: "on_failure.step_back_to", verb: "on_failure"})
			}
		case "message":
			if r.d.str(p.val, &of.Message) {
				r.led.template(r.d.pos(p.val), of.Message, "on_failure.message")
			}
		default:
			r.d.unknownKey(p.key, "on_failure", []string{"step_back_to", "message"}, "")
		}
	}
	return of
}
