package hooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/agenttree/agenttree/stages"
)

// Call is one invocation of a hook.
type Call struct {
	Issue  *Issue
	Entry  *stages.HookEntry
	Params Params
	Env    *Env
	Log    *slog.Logger
}

// Func runs a hook.
type Func func(ctx context.Context, c *Call) Outcome

// Def declares a hook: its parameters and its implementation.
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
	// RetryBase is the first backoff interval for `retries`.
	RetryBase time.Duration
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{defs: map[string]*Def{}, aliases: map[string]string{}, RetryBase: 500 * time.Millisecond}
}

// Register adds a hook. Registering a name twice is a programming error.
func (r *Registry) Register(d Def) {
	if _, dup := r.defs[d.Name]; dup {
		panic("hooks: duplicate hook " + d.Name)
	}
	r.defs[d.Name] = &d
}

// Alias makes alias another name for the hook name.
func (r *Registry) Alias(alias, name string) { r.aliases[alias] = name }

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

// Run calls the hook of entry with the common options applied: `when`
// (false skips it), `timeout`, `retries` (transient failures retried with
// backoff) and `optional` (a failure becomes a warning).
func (r *Registry) Run(ctx context.Context, entry *stages.HookEntry, issue *Issue, env *Env) Outcome {
	log := env.logger()
	if entry.Unsupported {
		return Outcome{Kind: KindPass, Warnings: []string{fmt.Sprintf("hook `%s` (%s) is not implemented by agenttree and did not run", entry.Name, entry.Pos)}}
	}
	if entry.When != nil {
		ok, err := entry.When.Eval(issue.CondVars())
		if !ok {
			o := Outcome{Kind: KindSkipped, Reason: fmt.Sprintf("%s skipped: when %s is false", entry.Label(), entry.When.Src)}
			if err != nil {
				o.Warnings = append(o.Warnings, err.Error())
			}
			return o
		}
	}
	def, ok := r.lookup(entry.Name)
	if !ok {
		return Failf("hook `%s` (%s) is not registered", entry.Name, entry.Pos)
	}
	call := &Call{Issue: issue, Entry: entry, Params: Params(entry.Params), Env: env, Log: log.With("hook", entry.Name)}
	attempt := func() Outcome {
		cctx := ctx
		if entry.Timeout > 0 {
			var cancel context.CancelFunc
			cctx, cancel = context.WithTimeout(ctx, entry.Timeout)
			defer cancel()
		}
		o := def.Run(cctx, call)
		if o.Kind == KindFail && errors.Is(cctx.Err(), context.DeadlineExceeded) && o.Class == ClassGeneral {
			o.Class = ClassTimeout
		}
		return o
	}
	var out Outcome
	if entry.Retries == 0 {
		out = attempt()
	} else {
		bo := backoff.NewExponentialBackOff()
		bo.InitialInterval = r.RetryBase
		b := backoff.WithContext(backoff.WithMaxRetries(bo, uint64(entry.Retries)), ctx)
		_ = backoff.Retry(func() error {
			out = attempt()
			if out.transient() {
				call.Log.Info("transient hook failure", "class", out.Class, "reason", out.Reason)
				return errors.New(out.Reason)
			}
			return nil
		}, b)
	}
	if out.Kind == KindFail && entry.Context != "" {
		out.Reason = entry.Context + ": " + out.Reason
	}
	if entry.Optional && out.Kind == KindFail {
		// Keep everything else the hook asked for (feedback files, watch
		// state): only the verdict changes. The reason already carries the
		// context label, if any.
		warning := "optional " + entry.Name + " failed: " + out.Reason
		out.Kind, out.Reason, out.Class, out.Warnings = KindPass, "", "", append(out.Warnings, warning)
		return out
	}
	return out
}
