package toplevel

import (
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
	"github.com/agenttree/agenttree/stages/load/internal/yamlnode"
	"github.com/agenttree/agenttree/stages/settings"
)

// ciPolling reads ci_polling: how the controller waits for CI. Its
// intervals stand in order, min_interval_s ≤ poll_interval_s ≤
// max_interval_s.
func (r *reader) ciPolling(k settings.Key, parent any, v *yaml.Node, name string) bool {
	set := r.section(k, parent, v, "ci_polling", name)
	if set == nil {
		return false
	}
	c := k.Field(parent).(*stages.CIPolling)
	ascending(r.d, "ci_polling", "the interval starts at poll_interval_s and adapts between min_interval_s and max_interval_s",
		&bound[time.Duration]{key: "min_interval_s", val: &c.MinInterval, at: set["min_interval_s"]},
		&bound[time.Duration]{key: "poll_interval_s", val: &c.PollInterval, at: set["poll_interval_s"]},
		&bound[time.Duration]{key: "max_interval_s", val: &c.MaxInterval, at: set["max_interval_s"]})
	return true
}

// ciFailure reads ci_polling.on_failure: what a CI failure does where
// the hook that waits for CI says nothing of its own (docs/CONFIG.md,
// "Spellings from the design notes"). It is an action; a stage to step
// back to belongs to a stage or a hook, which a bare name is read from.
func (r *reader) ciFailure(k settings.Key, parent any, v *yaml.Node, name string) bool {
	d := r.d
	if v.Kind == yaml.MappingNode {
		d.Errorf(d.Pos(v), "write `ci_polling: {on_failure: step_back}` (it goes to the nearest earlier stage where an agent works), "+
			"or name the stage on the stage that waits for CI: `on_failure: {step_back_to: STAGE}`",
			"ci_polling.on_failure is an action (step_back, escalate, fail or ignore), not a stage to step back to")
		return false
	}
	var a string
	diag.OneOf(d, v, &a, name+" action", k.Enum...)
	if a == "" {
		return false
	}
	*k.Field(parent).(**stages.FailurePolicy) = &stages.FailurePolicy{Pos: d.Pos(v), Action: stages.FailureAction(a)}
	return true
}

// circuitBreaker reads circuit_breaker: how many step backs without
// progress half-open and open it, and how many with the same failure
// open it.
func (r *reader) circuitBreaker(k settings.Key, parent any, v *yaml.Node, name string) bool {
	set := r.section(k, parent, v, "circuit_breaker", name)
	if set == nil {
		return false
	}
	breakerOrder(r.d, k.Field(parent).(*stages.CircuitBreaker), set)
	return true
}

// StageBreaker reads a stage's circuit_breaker: its own thresholds over
// the top level's, 0 where it keeps the top level's. Its two thresholds
// stand in order when it sets both; one it sets alone is put in order
// with the inherited one where the issue is (policy.Thresholds).
func StageBreaker(d *diag.Collector, n *yaml.Node) *stages.CircuitBreaker {
	if !d.IsMap(n, "circuit_breaker") {
		return nil
	}
	b := &stages.CircuitBreaker{}
	r := &reader{d: d}
	set := r.read(settings.BreakerKeys(), b, yamlnode.Pairs(n), "", "circuit_breaker")
	if set["half_open_after"] != nil && set["no_progress_threshold"] != nil {
		breakerOrder(d, b, set)
	}
	return b
}

// breakerOrder checks that the breaker half-opens before it opens.
func breakerOrder(d *diag.Collector, b *stages.CircuitBreaker, set map[string]*yaml.Node) {
	ascending(d, "circuit_breaker", "the breaker half-opens before it opens",
		&bound[int]{key: "half_open_after", val: &b.HalfOpenAfter, at: set["half_open_after"]},
		&bound[int]{key: "no_progress_threshold", val: &b.NoProgress, at: set["no_progress_threshold"]})
}

// bound is a setting of a section that must stand in order with others:
// its key, its value, and where the file sets it (nil while it keeps its
// default).
type bound[T int | time.Duration] struct {
	key string
	val *T
	at  *yaml.Node
}

// ascending checks that bs do not decrease. A default the file left makes
// way for the values it set around it (a poll_interval_s of 10 lowers the
// default floor of 30 to 10), so only values the file set can disagree,
// and then the error names both.
func ascending[T int | time.Duration](d *diag.Collector, section, hint string, bs ...*bound[T]) {
	for i, b := range bs {
		if b.at != nil {
			continue
		}
		for _, before := range bs[:i] {
			if before.at != nil {
				*b.val = max(*b.val, *before.val)
			}
		}
		for _, after := range bs[i+1:] {
			if after.at != nil {
				*b.val = min(*b.val, *after.val)
			}
		}
	}
	var prev *bound[T]
	for _, b := range bs {
		if b.at == nil {
			continue
		}
		if prev != nil && *prev.val > *b.val {
			d.Errorf(d.Pos(prev.at), hint, "%s.%s (%v) is above %s (%v)", section, prev.key, *prev.val, b.key, *b.val)
		}
		prev = b
	}
}
