// Package hookentry reads the entries of a stage's hook lists against the
// hook catalog: `- name`, `- name: value` or `- name: {params}`, with the
// common options beside the hook or among its parameters, and the failure
// policies (on_failure, and on_conflict or on_ci_failure where the hook
// takes them) in each of their forms. What can only be checked once every
// stage is read goes to the ledger.
package hookentry

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/ledger"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
)

// commonOptions are the keys any hook entry may carry beside its hook.
var commonOptions = []string{"optional", "timeout", "retries", "when", "context", "on_failure"}

// policyOptions are the failure policies beside on_failure that the hook
// of spec takes, as options: what a conflict does, for the hooks that find
// conflicts, and what a CI failure does, for the hooks that watch a PR.
// As options they win over parameters of the same name, which a hook may
// still declare for its documentation.
func policyOptions(spec stages.HookSpec) []string {
	var out []string
	if spec.Conflicts || spec.Watches {
		out = append(out, "on_conflict")
	}
	if spec.Watches {
		out = append(out, "on_ci_failure")
	}
	return out
}

// optionsOf lists every option an entry of the hook of spec may carry.
func optionsOf(spec stages.HookSpec) []string {
	return append(slices.Clip(commonOptions), policyOptions(spec)...)
}

// Reader reads hook entries against the hook catalog.
type Reader struct {
	d   *diag.Collector
	cat stages.HookCatalog
	led *ledger.Ledger
	// vars are the variables the templates being read may use beside
	// every message's: in a policy of a hook that watches a PR, the
	// outputs of the CI poll it runs.
	vars []string
	// CIFailure is ci_polling.on_failure: the policy of a CI failure
	// where a hook list's entry that waits for CI has no on_failure, and
	// one that watches a PR no on_ci_failure; nil for none.
	CIFailure *stages.FailurePolicy
}

// NewReader returns a reader reporting into d.
func NewReader(d *diag.Collector, cat stages.HookCatalog, led *ledger.Ledger) *Reader {
	return &Reader{d: d, cat: cat, led: led}
}

// List reads a stage's hook list (pre_completion, post_start, ...), the
// value of its key list.
func (r *Reader) List(n *yaml.Node, o ledger.Owner, list string) []*stages.HookEntry {
	if yamlnode.IsNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.d.Errorf(r.d.Pos(n), "write each hook as a `- hook_name: ...` item", "`%s` must be a list, got %s", list, yamlnode.Describe(n))
		return nil
	}
	var out []*stages.HookEntry
	for _, item := range n.Content {
		if h := r.entry(item, o); h != nil {
			r.ciDefault(h)
			out = append(out, h)
		}
	}
	return out
}

// ciDefault gives h the ci_polling.on_failure policy where it waits for
// CI, or watches a PR, and says nothing of its own about a CI failure.
func (r *Reader) ciDefault(h *stages.HookEntry) {
	spec, _ := r.cat.Hook(h.Name)
	switch {
	case r.CIFailure == nil:
	case spec.Waits && h.OnFailure == nil:
		h.OnFailure = r.CIFailure
	case spec.Watches && h.OnCIFailure == nil:
		h.OnCIFailure = r.CIFailure
	}
}

// entry reads `- name`, `- name: value` or `- name: {params}`, with
// common options beside the hook or among its parameters.
func (r *Reader) entry(item *yaml.Node, o ledger.Owner) *stages.HookEntry {
	nameNode, value, options, ok := r.split(item)
	if !ok {
		return nil
	}
	h := &stages.HookEntry{Name: nameNode.Value, Pos: r.d.Pos(nameNode), Params: map[string]any{}}
	spec, known := r.cat.Hook(h.Name)
	if known {
		h.Name = spec.Name
	}
	for _, p := range options {
		r.option(h, p.Key, p.Val, o)
	}
	if !known {
		return r.unknownHook(h)
	}
	r.led.Output(spec.Outputs...)
	given, ok := r.params(h, spec, value, o)
	if !ok {
		return nil
	}
	r.checkGiven(h, spec, given)
	r.check(h, spec)
	if names, ok := h.Params[spec.OutputsParam].([]string); ok {
		r.led.Output(names...)
	}
	return h
}

// check reports what the hook's own Check finds wrong with the entry's
// parameters, each error of a join on its own.
func (r *Reader) check(h *stages.HookEntry, spec stages.HookSpec) {
	if spec.Check == nil {
		return
	}
	err := spec.Check(h.Params)
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	for _, err := range errs {
		if err != nil {
			r.d.Errorf(h.Pos, "", "hook `%s` %v", h.Name, err)
		}
	}
}

// unknownHook keeps an entry naming no hook of the catalog only where the
// earlier tool's hooks are tolerated: it is reported, never run.
func (r *Reader) unknownHook(h *stages.HookEntry) *stages.HookEntry {
	sev := r.d.Tolerate(h.Pos, diag.Tolerable{
		Msg:    fmt.Sprintf("unknown hook `%s`", h.Name),
		LaxMsg: fmt.Sprintf("hook `%s` is not implemented by agenttree; it will be reported each time it would run, and never run", h.Name),
		Hint:   diag.Suggest(h.Name, r.cat.HookNames()),
	})
	if sev == stages.SevError {
		return nil
	}
	h.Unsupported = true
	return h
}

// split finds which key of a `- hook: ...` mapping names the hook; the rest
// are options beside it. Files of the earlier tool put options of its own
// there (`host_only: true`): where that is tolerated, a key that names no
// hook beside one that does is ignored with a warning, and when no key
// names a hook the first is taken for the earlier tool's hook.
func (r *Reader) split(item *yaml.Node) (name, value *yaml.Node, options []yamlnode.Pair, ok bool) {
	switch item.Kind {
	case yaml.ScalarNode:
		return item, nil, nil, true
	case yaml.MappingNode:
	default:
		r.d.Errorf(r.d.Pos(item), "write `- hook_name: {params}`", "a hook entry must be a mapping, got %s", yamlnode.Describe(item))
		return nil, nil, nil, false
	}
	var cands, hooks []yamlnode.Pair
	for _, p := range yamlnode.Pairs(item) {
		if slices.Contains(commonOptions, p.Key.Value) {
			options = append(options, p)
			continue
		}
		cands = append(cands, p)
		if _, known := r.cat.Hook(p.Key.Value); known {
			hooks = append(hooks, p)
		}
	}
	var hook yamlnode.Pair
	switch {
	case len(cands) == 1:
		return cands[0].Key, cands[0].Val, options, true
	case len(hooks) == 1:
		hook = hooks[0]
	case len(hooks) == 0 && len(cands) > 1 && r.d.Lax:
		hook = cands[0]
	default:
		r.notOneHook(item, cands)
		return nil, nil, nil, false
	}
	spec, _ := r.cat.Hook(hook.Key.Value)
	for _, c := range cands {
		switch {
		case c == hook:
		case slices.Contains(policyOptions(spec), c.Key.Value):
			options = append(options, c)
		default:
			r.besideHook(c.Key, hook.Key, optionsOf(spec))
		}
	}
	return hook.Key, hook.Val, options, true
}

// besideHook reports a key beside a hook that is none of its options.
func (r *Reader) besideHook(key, hook *yaml.Node, options []string) {
	r.d.Tolerate(r.d.Pos(key), diag.Tolerable{
		Msg: fmt.Sprintf("unknown option `%s` beside hook `%s` (known options: %s)",
			key.Value, hook.Value, strings.Join(options, ", ")),
		LaxMsg: fmt.Sprintf("unknown option `%s` beside hook `%s` is ignored", key.Value, hook.Value),
		Hint:   diag.Suggest(key.Value, options),
	})
}

func (r *Reader) notOneHook(item *yaml.Node, cands []yamlnode.Pair) {
	got := make([]string, len(cands))
	for i, c := range cands {
		got[i] = "`" + c.Key.Value + "`"
	}
	r.d.Errorf(r.d.Pos(item), "write one hook per list item: `- hook_name: {params}`",
		"a hook entry must name exactly one hook, found %d (%s)", len(cands), strings.Join(got, ", "))
}

// option reads a common option of a hook entry.
func (r *Reader) option(h *stages.HookEntry, key, val *yaml.Node, o ledger.Owner) {
	switch key.Value {
	case "optional":
		r.d.BoolVar(val, &h.Optional)
	case "timeout":
		r.d.DurationVar(val, &h.Timeout)
	case "retries":
		r.d.IntVar(val, &h.Retries)
		if h.Retries < 0 {
			r.d.Errorf(r.d.Pos(val), "", "retries must not be negative")
		}
	case "context":
		r.d.StringVar(val, &h.Context)
	case "when":
		if c := r.d.Condition(val, ""); c != nil {
			h.When = c
		}
	case "on_failure":
		h.OnFailure = r.policy(h, key, val, o)
	case "on_conflict":
		h.OnConflict = r.policy(h, key, val, o)
	case "on_ci_failure":
		h.OnCIFailure = r.policy(h, key, val, o)
	}
}
