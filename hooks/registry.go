package hooks

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/agenttree/agenttree/stages"
)

// Func runs a hook.
type Func func(ctx context.Context, c *Call) Outcome

// Def declares a hook: its spec (parameters, outputs, traits) and its
// implementation.
type Def struct {
	stages.HookSpec
	Run Func
}

// Registry maps hook names to their definitions. It satisfies
// stages.HookCatalog, so a config is validated against exactly the hooks
// that can run.
type Registry struct {
	defs    map[string]*Def
	aliases map[string]string
	// owners maps each output to the hooks that declare it.
	owners map[string][]string
	// RetryBase is the first backoff interval for `retries`.
	RetryBase time.Duration
}

// NewRegistry returns a registry holding defs.
func NewRegistry(defs ...Def) *Registry {
	r := &Registry{defs: map[string]*Def{}, aliases: map[string]string{}, owners: map[string][]string{}, RetryBase: 500 * time.Millisecond}
	for _, d := range defs {
		r.Register(d)
	}
	return r
}

// Register adds a hook. Registering a name twice is a programming error.
// The hook runs behind a guard that refuses entries the config loader did
// not build (a missing required parameter, not exactly one of a OneOf
// group), so hooks can take their required parameters for granted.
func (r *Registry) Register(d Def) {
	if _, dup := r.defs[d.Name]; dup {
		panic("hooks: duplicate hook " + d.Name)
	}
	d.Run = guard(d.HookSpec, d.Run)
	r.defs[d.Name] = &d
	for _, out := range d.Outputs {
		r.owners[out] = append(r.owners[out], d.Name)
	}
}

// Alias makes alias another name for the hook name.
func (r *Registry) Alias(alias, name string) { r.aliases[alias] = name }

// Aliases maps each other name of a hook to the hook's name.
func (r *Registry) Aliases() map[string]string { return maps.Clone(r.aliases) }

func (r *Registry) lookup(name string) (*Def, bool) {
	if canon, ok := r.aliases[name]; ok {
		name = canon
	}
	d, ok := r.defs[name]
	return d, ok
}

// Hook implements stages.HookCatalog.
func (r *Registry) Hook(name string) (stages.HookSpec, bool) {
	d, ok := r.lookup(name)
	if !ok {
		return stages.HookSpec{}, false
	}
	return d.HookSpec, true
}

// HookNames implements stages.HookCatalog.
func (r *Registry) HookNames() []string {
	out := make([]string, 0, len(r.defs))
	for n := range r.defs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Variables implements stages.HookCatalog: the issue's own variables
// (IssueVars), which every issue provides.
func (r *Registry) Variables() []string {
	out := make([]string, len(issueVars))
	for i, v := range issueVars {
		out[i] = v.Name
	}
	return out
}

// Run calls the hook of entry with the common options applied: `when`
// (false skips it), `timeout`, `retries` (transient failures retried with
// backoff) and `optional` (a failure becomes a warning).
func (r *Registry) Run(ctx context.Context, entry *stages.HookEntry, issue *Issue, env *Env) Outcome {
	if entry.Unsupported {
		return Outcome{Kind: KindPass, Warnings: []string{fmt.Sprintf("hook `%s` (%s) is not implemented by agenttree and did not run", entry.Name, entry.Pos)}}
	}
	if o, skip := skipped(entry, issue); skip {
		return o
	}
	def, ok := r.lookup(entry.Name)
	if !ok {
		return Failf("hook `%s` (%s) is not registered", entry.Name, entry.Pos)
	}
	call := &Call{Issue: issue, Entry: entry, Params: Params(entry.Params), Env: env}
	out := r.retry(ctx, entry, func() Outcome { return attempt(ctx, entry, def, call) }, env)
	out = r.ownOutputs(def, out)
	if out.Kind == KindFail && entry.Context != "" {
		out.Reason = entry.Context + ": " + out.Reason
	}
	if entry.Optional && out.Kind == KindFail {
		// Keep everything else the hook asked for (feedback files, watch
		// state): only the verdict changes. The reason already carries the
		// context label, if any.
		warning := "optional " + entry.Name + " failed: " + out.Reason
		out.Kind, out.Reason, out.Class, out.Warnings = KindPass, "", "", append(out.Warnings, warning)
	}
	return out
}

// With names the one registered hook whose spec has the trait (it checks
// approvals, say, or waits for CI): callers find hooks by what they
// declare, never by name. what says the trait in errors: none, or more
// than one, is an error.
func (r *Registry) With(what string, trait func(stages.HookSpec) bool) (string, error) {
	var found []string
	for _, name := range r.HookNames() {
		if trait(r.defs[name].HookSpec) {
			found = append(found, name)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no hook %s in this build of agenttree", what)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("more than one hook %s (%s); agenttree cannot tell which to use", what, strings.Join(found, ", "))
}

// ownOutputs drops the outputs of o that another hook declares and def
// does not: a hook's outputs never pose as another's facts (a `run`
// command printing {"pr_number": "99"} or {"approved_sha": ...} changes
// no PR the issue has, and no verdict a gate keeps).
func (r *Registry) ownOutputs(def *Def, o Outcome) Outcome {
	for k := range o.Outputs {
		if slices.Contains(def.Outputs, k) {
			continue
		}
		if owner := r.declares(k); owner != "" {
			delete(o.Outputs, k)
			o.Warnings = append(o.Warnings, fmt.Sprintf("%s may not set output %q: it is %s's", def.Name, k, owner))
		}
	}
	return o
}

// declares names a hook whose spec declares output name, or "".
func (r *Registry) declares(name string) string {
	if owners := r.owners[name]; len(owners) > 0 {
		return slices.Min(owners)
	}
	return ""
}

// skipped is the outcome of an entry whose `when` condition is false.
func skipped(entry *stages.HookEntry, issue *Issue) (Outcome, bool) {
	if entry.When == nil {
		return Outcome{}, false
	}
	ok, err := entry.When.Eval(issue.CondVars())
	if ok {
		return Outcome{}, false
	}
	o := Outcome{Kind: KindSkipped, Reason: fmt.Sprintf("%s skipped: when %s is false", entry.Label(), entry.When.Src)}
	if err != nil {
		o.Warnings = append(o.Warnings, err.Error())
	}
	return o, true
}

// attempt runs the hook once under the entry's timeout. A general failure
// that ran out of time is a timeout, which `retries` may retry.
func attempt(ctx context.Context, entry *stages.HookEntry, def *Def, call *Call) Outcome {
	if entry.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, entry.Timeout)
		defer cancel()
	}
	o := def.Run(ctx, call)
	if o.Kind == KindFail && errors.Is(ctx.Err(), context.DeadlineExceeded) && o.Class == ClassGeneral {
		o.Class = ClassTimeout
	}
	return o
}

// retry calls run again, with exponential backoff, while it fails in a way
// that may pass by itself and the entry's `retries` are not spent.
func (r *Registry) retry(ctx context.Context, entry *stages.HookEntry, run func() Outcome, env *Env) Outcome {
	if entry.Retries == 0 {
		return run()
	}
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = r.RetryBase
	var out Outcome
	_ = backoff.Retry(func() error {
		out = run()
		if out.transient() {
			env.logger().Info("transient hook failure", "hook", entry.Name, "class", out.Class, "reason", out.Reason)
			return errors.New(out.Reason)
		}
		return nil
	}, backoff.WithContext(backoff.WithMaxRetries(bo, uint64(entry.Retries)), ctx))
	return out
}

// guard refuses calls whose parameters the loader would have refused.
func guard(spec stages.HookSpec, run Func) Func {
	return func(ctx context.Context, c *Call) Outcome {
		for _, p := range spec.Params {
			if v, ok := c.Params[p.Name]; p.Required && (!ok || v == "") {
				return Failf("hook `%s` needs parameter `%s`; add it to the hook in the config", spec.Name, p.Name)
			}
		}
		for _, group := range spec.OneOf {
			set := 0
			for _, name := range group {
				if _, ok := c.Params[name]; ok {
					set++
				}
			}
			if set != 1 {
				return Failf("hook `%s` takes exactly one of %s, got %d; fix the hook in the config", spec.Name, quoteNames(group), set)
			}
		}
		return run(ctx, c)
	}
}

func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	return strings.Join(q, ", ")
}
