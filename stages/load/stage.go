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
	"github.com/agenttree/agenttree/stages/load/internal/hookentry"
	"github.com/agenttree/agenttree/stages/load/internal/ledger"
	"github.com/agenttree/agenttree/stages/load/internal/toplevel"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
)

// stageReader reads shaped entries into stages.
type stageReader struct {
	d     *diag.Collector
	hooks *hookentry.Reader
	led   *ledger.Ledger
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
	r.settings(e, &s.Settings, ledger.Owner{Stage: s})
	for _, se := range e.subs {
		ss := &stages.Substage{Name: se.name, Pos: r.d.Pos(se.at), Stage: s}
		r.settings(se, &ss.Settings, ledger.Owner{Stage: s, Sub: ss})
		if first := s.AddSubstage(ss); first != nil {
			r.d.Errorf(ss.Pos, fmt.Sprintf("the first is at %s; rename one", first.Pos), "duplicate substage %q in stage %q", ss.Name, s.Name)
		}
	}
	return s
}

// setting reads the value of one key stages and substages share into st.
type setting func(r *stageReader, v *yaml.Node, st *stages.Settings, o ledger.Owner)

// settingReaders are the keys stages and substages share, and their readers: a
// table, so that reading 20,000 stages builds nothing per stage.
var settingReaders = map[string]setting{
	"role": func(r *stageReader, v *yaml.Node, st *stages.Settings, _ ledger.Owner) { r.role(v, st) },
	"host": func(r *stageReader, v *yaml.Node, st *stages.Settings, _ ledger.Owner) { r.host(v, st) },
	"human_review": func(r *stageReader, v *yaml.Node, st *stages.Settings, _ ledger.Owner) {
		r.d.BoolVar(v, &st.HumanReview)
	},
	"parking_lot": func(r *stageReader, v *yaml.Node, st *stages.Settings, _ ledger.Owner) {
		r.d.BoolVar(v, &st.ParkingLot)
	},
	"redirect_only": func(r *stageReader, v *yaml.Node, st *stages.Settings, _ ledger.Owner) {
		r.d.BoolVar(v, &st.RedirectOnly)
	},
	"terminal": func(r *stageReader, v *yaml.Node, st *stages.Settings, _ ledger.Owner) {
		diag.OneOf(r.d, v, &st.Terminal, "terminal kind", stages.TerminalCompletion, stages.TerminalAbandon)
	},
	"condition": func(r *stageReader, v *yaml.Node, st *stages.Settings, _ ledger.Owner) {
		st.Condition = r.d.Condition(v, "write an expression such as `needs_ui_review and not hotfix`")
	},
	"output": func(r *stageReader, v *yaml.Node, st *stages.Settings, _ ledger.Owner) { r.d.StringVar(v, &st.Output) },
	"skill":  func(r *stageReader, v *yaml.Node, st *stages.Settings, _ ledger.Owner) { r.skill(v, st) },
	"pre_completion": func(r *stageReader, v *yaml.Node, st *stages.Settings, o ledger.Owner) {
		st.PreCompletion = r.hooks.List(v, o, "pre_completion")
	},
	"post_start": func(r *stageReader, v *yaml.Node, st *stages.Settings, o ledger.Owner) {
		st.PostStart = r.hooks.List(v, o, "post_start")
	},
	"post_completion": func(r *stageReader, v *yaml.Node, st *stages.Settings, o ledger.Owner) {
		st.PostCompletion = r.hooks.List(v, o, "post_completion")
	},
	"on_failure": func(r *stageReader, v *yaml.Node, st *stages.Settings, o ledger.Owner) {
		st.OnFailure = r.onFailure(v, o)
	},
	"circuit_breaker": func(r *stageReader, v *yaml.Node, st *stages.Settings, _ ledger.Owner) {
		st.CircuitBreaker = toplevel.StageBreaker(r.d, v)
	},
}

// settings reads the keys stages and substages share.
func (r *stageReader) settings(e *entry, st *stages.Settings, o ledger.Owner) {
	for _, p := range e.keys {
		if read, ok := settingReaders[p.Key.Value]; ok {
			read(r, p.Val, st, o)
			continue
		}
		r.unknown(p.Key, o, e.nameKey)
	}
}

// unknown reports a key nobody reads.
func (r *stageReader) unknown(k *yaml.Node, o ledger.Owner, nameKey bool) {
	known := slices.Collect(maps.Keys(settingReaders))
	if o.Sub == nil {
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
	r.d.UnknownKey(k, o.Where(), known, hint)
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

// skill reads a stage's instructions file: a file of the repository
// (what agents are told is the repository's, like its rules), warned of
// when it is not there (the stage still works, without instructions).
// The map form looks first where the earlier tool kept its skills
// (earlierSkills), then beside the config file; one found there is kept
// as its path from the config file's directory, which the engine reads.
func (r *stageReader) skill(v *yaml.Node, st *stages.Settings) {
	if !r.d.StringVar(v, &st.Skill) {
		return
	}
	if !filepath.IsLocal(st.Skill) {
		r.d.Errorf(r.d.Pos(v), "give a path inside the repository, relative to the config file (say skills/review.md)",
			"skill file %s is outside the repository", st.Skill)
		return
	}
	dir := filepath.Dir(r.d.File)
	if !r.d.Lax {
		if _, err := os.Stat(filepath.Join(dir, st.Skill)); err != nil {
			r.d.Warnf(r.d.Pos(v), "create it, or fix the path (relative to the config file)", "skill file %s not found", st.Skill)
		}
		return
	}
	earlier := filepath.Join(earlierSkills, st.Skill)
	for _, p := range []string{earlier, st.Skill} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			st.Skill = p
			return
		}
	}
	r.d.Warnf(r.d.Pos(v), "create "+filepath.ToSlash(earlier)+", or fix the path",
		"skill file %s not found in %s/, where the earlier tool kept skills, nor beside the config file", st.Skill, earlierSkills)
}

// earlierSkills is where the earlier tool read a stage's `skill:` from,
// relative to the repository's top, where its config file is.
const earlierSkills = "_agenttree/skills"

// onFailureKeys are the keys of a stage's on_failure.
var onFailureKeys = []string{"step_back_to", "message", "max_retries"}

func (r *stageReader) onFailure(n *yaml.Node, o ledger.Owner) *stages.OnFailure {
	if !r.d.IsMap(n, "on_failure") {
		return nil
	}
	of := &stages.OnFailure{Pos: r.d.Pos(n)}
	for _, p := range yamlnode.Pairs(n) {
		switch p.Key.Value {
		case "step_back_to":
			if r.d.StringVar(p.Val, &of.StepBackTo) {
				r.led.Refer(&ledger.Ref{Pos: r.d.Pos(p.Val), From: o, Ref: of.StepBackTo,
					Set: func(path string) { of.StepBackTo = path }, What: "on_failure.step_back_to", Verb: "on_failure", Move: stages.MoveStepBack})
			}
		case "message":
			if r.d.StringVar(p.Val, &of.Message) {
				r.led.Template(r.d.Pos(p.Val), of.Message, "on_failure.message")
			}
		case "max_retries":
			r.d.IntAtLeast(p.Val, &of.MaxRetries, 1, "on_failure.max_retries")
		default:
			r.d.UnknownKey(p.Key, "on_failure", onFailureKeys, "")
		}
	}
	return of
}

// StageKeys lists the keys a stage may have in a file of form f: `name`,
// `substages` and the settings stages and substages share, and in the
// compatible form the earlier tool's spellings of them. The list is the
// one the loader reads by, for references and schemas checked against it.
func StageKeys(f stages.Form) []string {
	keys := append(slices.Collect(maps.Keys(settingReaders)), "name", "substages")
	if f == stages.Compatible {
		keys = append(keys, slices.Collect(maps.Keys(compatKeys))...)
	}
	slices.Sort(keys)
	return keys
}

// OnFailureKeys lists the keys of a stage's on_failure.
func OnFailureKeys() []string { return slices.Clone(onFailureKeys) }
