// Package metrics is what the controller counts, in the Prometheus text
// format (docs/ARCHITECTURE.md §6): served as /metrics on the board's
// listener. Most of it is read when scraped from what the pipeline
// already keeps — the issues' files, the forge's counts of its requests,
// its quota and its webhook deliveries — so the layers below the
// controller know nothing of Prometheus; the rest the controller tells
// as it ticks and delivers (Tick, Delivered).
package metrics

import (
	"net/http"
	"slices"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/promtext"
)

// Metrics is one controller's metrics, on a registry of its own. A nil
// *Metrics counts nothing: a controller without a board has none.
//
// They are written by internal/promtext, not client_golang, whose init
// cost every command 1.7 ms (docs/ARCHITECTURE.md §2); the Go runtime's
// and the process's own families (go_*, process_*) went with it.
type Metrics struct {
	reg *promtext.Registry
	// pipe is the scrape's reading of the issues' files, kept for a test
	// to set its clock.
	pipe *pipeline

	tick        *promtext.HistogramValue
	due         *promtext.GaugeValue
	stepBacks   *promtext.CounterVec
	escalations *promtext.CounterVec
	deliveries  *promtext.CounterVec
}

// New makes the metrics of the pipeline load opens (the controller's
// Engine: the config as reloaded, the forge whose requests it counts).
// Nothing is read until a scrape.
func New(load func() (*engine.Engine, error)) *Metrics {
	reg := promtext.NewRegistry()
	m := &Metrics{
		reg:  reg,
		pipe: newPipeline(load),
		tick: reg.NewHistogram("agenttree_tick_duration_seconds",
			"How long the controller's ticks took: the due issues found, their PRs fetched, each worked on.",
			// A tick is milliseconds when nothing is due, seconds when
			// hooks run, minutes when a merge waits on the forge.
			[]float64{.005, .025, .1, .5, 1, 2.5, 5, 10, 30, 60, 300}),
		due: reg.NewGauge("agenttree_issues_due",
			"Issues the controller's last tick found due and worked on."),
		stepBacks: reg.NewCounterVec("agenttree_step_backs_total",
			"Step backs the controller's passes made, by the kind of failure that sent the work back.", "kind"),
		escalations: reg.NewCounterVec("agenttree_escalations_total",
			"Escalations to a person the controller's passes made, by kind.", "kind"),
		deliveries: reg.NewCounterVec("agenttree_tmux_deliveries_total",
			"Messages typed into agents' tmux panes: sent (taken), untaken (typed, never taken), retried (sent after more than one attempt).", "result"),
	}
	for _, r := range []string{"sent", "untaken", "retried"} {
		m.deliveries.Init(r)
	}
	for _, k := range failureKinds() {
		m.stepBacks.Init(k)
	}
	for _, k := range escalationKinds() {
		m.escalations.Init(k)
	}
	reg.Collect(m.pipe.collect)
	reg.Collect(newForgeStats(load).collect)
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler { return m.reg.Handler() }

// Tick records one tick of the controller: how long it took, how many
// issues were due, and the step backs and escalations its passes made.
func (m *Metrics) Tick(took time.Duration, due int, results []*engine.Result) {
	if m == nil {
		return
	}
	m.tick.Observe(took.Seconds())
	m.due.Set(float64(due))
	for _, r := range results {
		switch o := r.Outcome; {
		case o.Status == engine.StatusSteppedBack:
			m.stepBacks.Inc(bounded(string(o.Failure), failureKinds()))
		case o.Status == engine.StatusEscalated && o.Escalation != nil:
			m.escalations.Inc(bounded(string(o.Escalation.Kind), escalationKinds()))
		}
	}
}

// Delivered records what a delivery to an issue carried: the agent's
// messages typed and taken, typed and never taken, and those taken after
// more than one attempt.
func (m *Metrics) Delivered(msgs []outbox.Message) {
	if m == nil {
		return
	}
	for _, msg := range msgs {
		if msg.To != outbox.ToAgent && msg.To != "" {
			continue
		}
		if msg.State == outbox.Untaken {
			m.deliveries.Inc("untaken")
			continue
		}
		m.deliveries.Inc("sent")
		if msg.Attempts > 1 {
			m.deliveries.Inc("retried")
		}
	}
}

// failureKinds and escalationKinds bound the kind labels: a kind read
// from a file that no version wrote is "other", so a label set never
// grows with what is on disk. Each starts at 0, so a rate of them reads
// from the first scrape.
func failureKinds() []string {
	return []string{string(hooks.ClassGeneral), string(hooks.ClassTimeout), string(hooks.ClassCIFailed),
		string(hooks.ClassNoNewCI), string(hooks.ClassPollingTimeout), string(hooks.ClassCICancelled),
		string(hooks.ClassCIEnvironment), string(hooks.ClassConflict), "other"}
}

func escalationKinds() []string {
	return []string{string(issues.EscalatedBudget), string(issues.EscalatedBreaker), string(issues.EscalatedHook),
		string(issues.EscalatedError), string(issues.EscalatedAgent), string(issues.EscalatedTampered), "other"}
}

func bounded(v string, known []string) string {
	if slices.Contains(known, v) {
		return v
	}
	return "other"
}
