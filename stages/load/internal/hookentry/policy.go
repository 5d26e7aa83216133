package hookentry

import (
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/ledger"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
)

// policyReader reads what a hook's failure does: the value of its
// on_failure, or of the on_conflict or on_ci_failure it takes. That is an
// action (`escalate`), `{step_back_to: STAGE}`, or a list of hook entries
// run in order that may end in one action:
//
//	on_failure:
//	  - send_message: "CI failed: {{failed_checks}}"
//	  - step_back_to: implement.code
type policyReader struct {
	r *Reader
	h *stages.HookEntry
	// key is the option being read, for messages: on_failure, on_conflict.
	key string
	o   ledger.Owner
}

// policy reads the policy the option key of h sets to val; nil when it
// has an error, which is reported.
func (r *Reader) policy(h *stages.HookEntry, key, val *yaml.Node, o ledger.Owner) *stages.FailurePolicy {
	pr := policyReader{r: r, h: h, key: key.Value, o: o}
	fp := &stages.FailurePolicy{Pos: r.d.Pos(val)}
	if spec, _ := r.cat.Hook(h.Name); spec.Watches {
		// The watch runs the hook that waits for CI, with these
		// policies: their messages may use its outputs ({{failed_checks}}).
		defer func(vars []string) { r.vars = vars }(r.vars)
		r.vars = append(slices.Clip(r.vars), r.ciOutputs()...)
	}
	errs := r.d.Errors()
	switch val.Kind {
	case yaml.ScalarNode:
		pr.scalar(fp, val)
	case yaml.MappingNode:
		pr.mapping(fp, val)
	case yaml.SequenceNode:
		pr.list(fp, val)
	default:
		r.d.Errorf(r.d.Pos(val), "", "%s must be an action, {step_back_to: STAGE} or a list, got %s", pr.key, yamlnode.Describe(val))
	}
	if r.d.Errors() > errs {
		return nil
	}
	return fp
}

// ciOutputs are the outputs of the catalog's hook that waits for CI.
func (r *Reader) ciOutputs() []string {
	for _, name := range r.cat.HookNames() {
		if spec, _ := r.cat.Hook(name); spec.Waits {
			return spec.Outputs
		}
	}
	return nil
}

// scalar reads `on_failure: ACTION`.
func (pr policyReader) scalar(fp *stages.FailurePolicy, val *yaml.Node) {
	d := pr.r.d
	var a string
	if !d.StringVar(val, &a) {
		return
	}
	if !isAction(a) {
		d.Errorf(d.Pos(val), diag.Suggest(a, actionNames()),
			"unknown %s action %q (use step_back, escalate, fail, ignore, or {step_back_to: STAGE})", pr.key, a)
		return
	}
	fp.Action = stages.FailureAction(a)
}

// mapping reads `on_failure: {step_back_to: STAGE}`, with the message
// the agent is told beside it (`message:`, a template).
func (pr policyReader) mapping(fp *stages.FailurePolicy, val *yaml.Node) {
	d := pr.r.d
	for _, p := range yamlnode.Pairs(val) {
		switch p.Key.Value {
		case "step_back_to":
			pr.stepBackTo(fp, p.Val)
		case "message":
			if d.StringVar(p.Val, &fp.Message) {
				pr.r.led.Template(d.Pos(p.Val), fp.Message, pr.key+".message", pr.r.vars...)
			}
		default:
			d.UnknownKey(p.Key, pr.key, []string{"step_back_to", "message"}, "")
		}
	}
	if fp.Action == "" {
		d.Errorf(d.Pos(val), "write `"+pr.key+": {step_back_to: STAGE}`", "%s names no stage to step back to", pr.key)
	}
}

func (pr policyReader) stepBackTo(fp *stages.FailurePolicy, v *yaml.Node) {
	d := pr.r.d
	fp.Action = stages.ActionStepBackTo
	if !d.StringVar(v, &fp.Target) {
		return
	}
	pr.r.led.Refer(&ledger.Ref{Pos: d.Pos(v), From: pr.o, Ref: fp.Target,
		Set: func(path string) { fp.Target = path }, What: pr.key + ".step_back_to", Verb: "`" + pr.h.Name + "` " + pr.key, Move: stages.MoveStepBack})
}

// list reads the list form: hook entries and at most one action.
func (pr policyReader) list(fp *stages.FailurePolicy, seq *yaml.Node) {
	d := pr.r.d
	if len(seq.Content) == 0 {
		d.Errorf(d.Pos(seq), "write an action such as `escalate`, or the hooks to run", "%s is an empty list", pr.key)
		return
	}
	pr.items(fp, seq.Content)
}

// items reads entries of the list form into fp. The hooks run first, in
// order, and the action follows, wherever it is written: `[step_back_to:
// X, send_message: ...]` sends the message with the step back. Only a
// hook that resolves the failure (rebase) must come before the action, as
// its pass ends the list. A last entry `on_failure: ...` says what follows
// when the entries before it did not deal with the failure: what it holds
// is the rest of the list (docs/CONFIG.md, "Spellings from the design
// notes").
func (pr policyReader) items(fp *stages.FailurePolicy, items []*yaml.Node) {
	d := pr.r.d
	for i, item := range items {
		name, val := entryName(item)
		if name == "on_failure" && val != nil {
			if i < len(items)-1 {
				d.Errorf(d.Pos(item), "move it to the end of the list, or write its entries in the list itself",
					"`on_failure` inside %s says what happens when the entries before it fail, so it ends the list, and it has entries after it", pr.key)
				continue
			}
			pr.nested(fp, val)
			continue
		}
		had := fp.Action
		if name, ok := pr.action(fp, item); ok {
			if had != "" {
				d.Errorf(d.Pos(item), "keep one", "%s has two actions, `%s` and `%s`", pr.key, had, name)
			}
			continue
		}
		step := pr.step(item)
		if step == nil {
			continue
		}
		if spec, _ := pr.r.cat.Hook(step.Name); spec.Resolves && fp.Action != "" {
			d.Errorf(step.Pos, fmt.Sprintf("move `%s` before `%s`", step.Name, fp.Action),
				"`%s` in %s comes after the action `%s`: the hooks of the list run before its action, and a pass of `%s` ends the list, so it would undo the action", step.Name, pr.key, fp.Action, step.Name)
			continue
		}
		fp.Steps = append(fp.Steps, step)
	}
}

// nested reads the value of an `on_failure` that ends a list: an action,
// `{step_back_to: STAGE}`, or more entries.
func (pr policyReader) nested(fp *stages.FailurePolicy, val *yaml.Node) {
	d := pr.r.d
	had := fp.Action
	switch val.Kind {
	case yaml.SequenceNode:
		pr.items(fp, val.Content)
		return
	case yaml.ScalarNode:
		pr.scalar(fp, val)
	case yaml.MappingNode:
		pr.mapping(fp, val)
	default:
		d.Errorf(d.Pos(val), "", "on_failure must be an action, {step_back_to: STAGE} or a list, got %s", yamlnode.Describe(val))
	}
	if had != "" && fp.Action != "" {
		d.Errorf(d.Pos(val), "keep one", "%s has two actions, `%s` and `%s`", pr.key, had, fp.Action)
	}
}

// action reads item into fp if it is an action: `- escalate`,
// `- escalate:` or `- step_back_to: STAGE`. A name that is also a hook's
// (step_back) is the action only without a value.
func (pr policyReader) action(fp *stages.FailurePolicy, item *yaml.Node) (name string, ok bool) {
	name, val := entryName(item)
	switch {
	case name == string(stages.ActionStepBackTo) && val == nil:
		// `- step_back_to` on its own: the item is a name, not a mapping,
		// so there is no value to read the stage from.
		fp.Action = stages.ActionStepBackTo
		pr.r.d.Errorf(pr.r.d.Pos(item), "write `- step_back_to: STAGE`", "%s.step_back_to names no stage to step back to", pr.key)
		return name, true
	case name == string(stages.ActionStepBackTo):
		pr.stepBackTo(fp, val)
		return name, true
	case isAction(name) && yamlnode.IsNull(val):
		fp.Action = stages.FailureAction(name)
		return name, true
	}
	return name, false
}

// step reads a hook entry of the list: any hook, in the forms of a hook
// list, that runs once as it is when the failure happens.
func (pr policyReader) step(item *yaml.Node) *stages.HookEntry {
	d := pr.r.d
	if name, _ := entryName(item); name != "" {
		if _, known := pr.r.cat.Hook(name); !known {
			pr.unknownStep(item, name)
			return nil
		}
	}
	h := pr.r.entry(item, pr.o)
	if h == nil {
		return nil
	}
	for _, own := range []*stages.FailurePolicy{h.OnFailure, h.OnConflict, h.OnCIFailure} {
		if own != nil {
			d.Errorf(own.Pos, "", "`%s` in %s of `%s` runs once, as it is: it takes no failure policy of its own", h.Name, pr.key, pr.h.Name)
		}
	}
	if to, ok := pr.moves(h); ok {
		d.Errorf(h.Pos, "end the list with `- step_back_to: "+to+"`",
			"`%s` in %s of `%s` would send the issue to %s, which a hook run there cannot do", h.Name, pr.key, pr.h.Name, to)
	}
	return h
}

// unknownStep reports an entry that names neither an action nor a hook.
func (pr policyReader) unknownStep(item *yaml.Node, name string) {
	d := pr.r.d
	if isAction(name) {
		d.Errorf(d.Pos(item), "write `- "+name+"`", "the action `%s` in %s takes no value", name, pr.key)
		return
	}
	d.Errorf(d.Pos(item), diag.Suggest(name, append(actionNames(), pr.r.cat.HookNames()...)),
		"unknown action or hook `%s` in %s", name, pr.key)
}

// moves reports where h would send an issue through a stage parameter:
// the engine runs a policy's hooks for what they do, not for where they
// lead, so such a move would be lost.
func (pr policyReader) moves(h *stages.HookEntry) (to string, ok bool) {
	spec, _ := pr.r.cat.Hook(h.Name)
	for _, p := range spec.Params {
		if p.Type != stages.ParamStageRef {
			continue
		}
		if to, ok := h.Params[p.Name].(string); ok {
			return to, true
		}
	}
	return "", false
}

// entryName is the name an entry of the list form leads with, and its
// value: a scalar, or the only key of a mapping. It is "" for any other
// shape, which the hook entry reader reports on.
func entryName(item *yaml.Node) (string, *yaml.Node) {
	switch {
	case item.Kind == yaml.ScalarNode && !yamlnode.IsNull(item):
		return item.Value, nil
	case item.Kind == yaml.MappingNode && len(item.Content) == 2:
		return item.Content[0].Value, item.Content[1]
	}
	return "", nil
}

// isAction reports whether name is an action written on its own: every
// action but step_back_to, which names its stage.
func isAction(name string) bool {
	a := stages.FailureAction(name)
	return a != stages.ActionStepBackTo && slices.Contains(stages.FailureActions(), a)
}

func actionNames() []string {
	var out []string
	for _, a := range stages.FailureActions() {
		out = append(out, string(a))
	}
	return out
}
