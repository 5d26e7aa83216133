package toplevel

import (
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load/internal/diag"
)

// readCIPolling reads ci_polling: how the controller waits for CI. Its
// intervals stand in order, min_interval_s ≤ poll_interval_s ≤
// max_interval_s.
func readCIPolling(d *diag.Collector, n *yaml.Node, c *stages.CIPolling) {
	floor := bound[time.Duration]{key: "min_interval_s", val: &c.MinInterval}
	start := bound[time.Duration]{key: "poll_interval_s", val: &c.PollInterval}
	ceiling := bound[time.Duration]{key: "max_interval_s", val: &c.MaxInterval}
	ciPollingFields(d, c, &floor, &start, &ceiling).mapping(d, n, "ci_polling")
	ascending(d, "ci_polling", "the interval starts at poll_interval_s and adapts between min_interval_s and max_interval_s",
		&floor, &start, &ceiling)
}

// ciPollingFields reads ci_polling's keys into c, noting in floor, start
// and ceiling where its intervals are set.
func ciPollingFields(d *diag.Collector, c *stages.CIPolling, floor, start, ceiling *bound[time.Duration]) fields {
	return fields{
		"timeout_s": func(v *yaml.Node) { d.DurationVar(v, &c.Timeout) },
		"min_interval_s": func(v *yaml.Node) {
			floor.read(v, d.DurationAtLeast(v, &c.MinInterval, time.Second, "ci_polling.min_interval_s"))
		},
		"poll_interval_s":   func(v *yaml.Node) { start.read(v, d.PositiveDurationVar(v, &c.PollInterval)) },
		"max_interval_s":    func(v *yaml.Node) { ceiling.read(v, d.PositiveDurationVar(v, &c.MaxInterval)) },
		"new_run_timeout_s": func(v *yaml.Node) { d.DurationVar(v, &c.NewRunTimeout) },
		"max_retries":       func(v *yaml.Node) { d.IntAtLeast(v, &c.MaxRetries, 0, "ci_polling.max_retries") },
		"on_failure":        func(v *yaml.Node) { c.OnFailure = readCIFailure(d, v) },
	}
}

// controllerFields reads controller: the tick of `agenttree controller`
// and how many issues it works on at once.
func controllerFields(d *diag.Collector, c *stages.Controller) fields {
	return fields{
		"interval_s":  func(v *yaml.Node) { d.DurationAtLeast(v, &c.Interval, time.Second, "controller.interval_s") },
		"concurrency": func(v *yaml.Node) { d.IntAtLeast(v, &c.Concurrency, 1, "controller.concurrency") },
	}
}

// readCircuitBreaker reads circuit_breaker: how many step backs without
// progress half-open and open it, and how many with the same failure
// open it.
func readCircuitBreaker(d *diag.Collector, n *yaml.Node, b *stages.CircuitBreaker) {
	half := bound[int]{key: "half_open_after", val: &b.HalfOpenAfter}
	open := bound[int]{key: "no_progress_threshold", val: &b.NoProgress}
	breakerFields(d, b, &half, &open).mapping(d, n, "circuit_breaker")
	ascending(d, "circuit_breaker", "the breaker half-opens before it opens", &half, &open)
}

// breakerFields reads circuit_breaker's keys into b, noting in half and
// open where its thresholds are set.
func breakerFields(d *diag.Collector, b *stages.CircuitBreaker, half, open *bound[int]) fields {
	return fields{
		"half_open_after": func(v *yaml.Node) {
			half.read(v, d.IntAtLeast(v, &b.HalfOpenAfter, 1, "circuit_breaker.half_open_after"))
		},
		"no_progress_threshold": func(v *yaml.Node) {
			open.read(v, d.IntAtLeast(v, &b.NoProgress, 1, "circuit_breaker.no_progress_threshold"))
		},
		"same_error_threshold": func(v *yaml.Node) {
			d.IntAtLeast(v, &b.SameError, 1, "circuit_breaker.same_error_threshold")
		},
	}
}

// bound is a setting of a section that must stand in order with others:
// its key, its value, and where the file sets it (nil while it keeps its
// default).
type bound[T int | time.Duration] struct {
	key string
	val *T
	at  *yaml.Node
}

// read notes that the file set the value at n, when it could be read.
func (b *bound[T]) read(n *yaml.Node, ok bool) {
	if ok {
		b.at = n
	}
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
