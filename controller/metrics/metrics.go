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

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/hooks"
)

// Metrics is one controller's metrics, on a registry of its own. A nil
// *Metrics counts nothing: a controller without a board has none.
type Metrics struct {
	reg *prometheus.Registry
	// pipe is the scrape's reading of the issues' files, kept for a test
	// to set its clock.
	pipe *pipeline

	tick        prometheus.Histogram
	due         prometheus.Gauge
	stepBacks   *prometheus.CounterVec
	escalations *prometheus.CounterVec
	deliveries  *prometheus.CounterVec
}

// New makes the metrics of the pipeline load opens (the controller's
// Engine: the config as reloaded, the forge whose requests it counts).
// Nothing is read until a scrape.
func New(load func() (*engine.Engine, error)) *Metrics {
	m := &Metrics{
		reg:  prometheus.NewRegistry(),
		pipe: newPipeline(load),
		tick: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "agenttree_tick_duration_seconds",
			Help: "How long the controller's ticks took: the due issues found, their PRs fetched, each worked on.",
			// A tick is milliseconds when nothing is due, seconds when
			// hooks run, minutes when a merge waits on the forge.
			Buckets: []float64{.005, .025, .1, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}),
		due: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agenttree_issues_due",
			Help: "Issues the controller's last tick found due and worked on.",
		}),
		stepBacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agenttree_step_backs_total",
			Help: "Step backs the controller's passes made, by the kind of failure that sent the work back.",
		}, []string{"kind"}),
		escalations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agenttree_escalations_total",
			Help: "Escalations to a person the controller's passes made, by kind.",
		}, []string{"kind"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agenttree_tmux_deliveries_total",
			Help: "Messages typed into agents' tmux panes: sent (taken), untaken (typed, never taken), retried (sent after more than one attempt).",
		}, []string{"result"}),
	}
	for _, r := range []string{"sent", "untaken", "retried"} {
		m.deliveries.WithLabelValues(r)
	}
	for _, k := range failureKinds() {
		m.stepBacks.WithLabelValues(k)
	}
	for _, k := range escalationKinds() {
		m.escalations.WithLabelValues(k)
	}
	m.reg.MustRegister(m.tick, m.due, m.stepBacks, m.escalations, m.deliveries,
		m.pipe, newForgeStats(load),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Registry is the registry the metrics are on, for a test to gather.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

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
			m.stepBacks.WithLabelValues(bounded(string(o.Failure), failureKinds())).Inc()
		case o.Status == engine.StatusEscalated && o.Escalation != nil:
			m.escalations.WithLabelValues(bounded(string(o.Escalation.Kind), escalationKinds())).Inc()
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
			m.deliveries.WithLabelValues("untaken").Inc()
			continue
		}
		m.deliveries.WithLabelValues("sent").Inc()
		if msg.Attempts > 1 {
			m.deliveries.WithLabelValues("retried").Inc()
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
