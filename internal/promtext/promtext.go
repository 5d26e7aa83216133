// Package promtext writes metrics in the Prometheus text exposition
// format, version 0.0.4: counters by label, gauges, histograms with fixed
// buckets, and values computed when scraped.
//
// It stands in for github.com/prometheus/client_golang, whose package
// init (its default registry's Go and process collectors, and protobuf
// through client_model) cost every agenttree command about 1.7 ms, `next`
// included, though only the controller's /metrics writes the format
// (docs/ARCHITECTURE.md §2). What it writes is what client_golang wrote
// for the same values, byte for byte: the tests hold it to a golden file
// client_golang wrote and read it back with expfmt's parser.
package promtext

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
)

// Type is a metric family's type, as its # TYPE line says it.
type Type string

const (
	Counter   Type = "counter"
	Gauge     Type = "gauge"
	Histogram Type = "histogram"
)

// Desc is a metric family: its name, help, type and label names.
type Desc struct {
	name, help string
	typ        Type
	labels     []string
	// order is the labels' positions sorted by name: the format writes
	// a series' labels by name, whatever order they were declared in.
	order []int
}

// NewDesc describes a family. A name or label name the format cannot
// carry is a mistake in the code, so it panics.
func NewDesc(name, help string, typ Type, labels ...string) *Desc {
	if !validName(name, true) {
		panic(fmt.Sprintf("promtext: invalid metric name %q", name))
	}
	order := make([]int, len(labels))
	for i, l := range labels {
		if !validName(l, false) || l == "le" && typ == Histogram {
			panic(fmt.Sprintf("promtext: invalid label name %q of %s", l, name))
		}
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(labels[a], labels[b]) })
	return &Desc{name: name, help: help, typ: typ, labels: slices.Clone(labels), order: order}
}

func validName(s string, colon bool) bool {
	for i, c := range s {
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || (c >= '0' && c <= '9' && i > 0) || (colon && c == ':')
		if !ok {
			return false
		}
	}
	return s != ""
}

// series is one sample of a family (or one histogram): its label values
// in the desc's declared order.
type series struct {
	values []string
	value  float64
	hist   *histSnapshot
}

type histSnapshot struct {
	upper  []float64
	counts []uint64 // cumulative, one per upper bound
	count  uint64
	sum    float64
}

// Sink takes the samples of one scrape.
type Sink struct {
	families map[*Desc][]series
}

// Add adds one sample of d with its label values, in d's label order. A
// count of values unlike d's labels is a mistake in the code: it panics.
func (s *Sink) Add(d *Desc, v float64, labelValues ...string) {
	if d.typ == Histogram {
		panic("promtext: a histogram is added with Histogram, not Add")
	}
	s.add(d, series{values: checkValues(d, labelValues), value: v})
}

func (s *Sink) add(d *Desc, sr series) {
	s.families[d] = append(s.families[d], sr)
}

func checkValues(d *Desc, values []string) []string {
	if len(values) != len(d.labels) {
		panic(fmt.Sprintf("promtext: %s has labels %v, given %d values", d.name, d.labels, len(values)))
	}
	return slices.Clone(values)
}

// Registry is a set of families written together.
type Registry struct {
	mu    sync.Mutex
	hooks []func(*Sink)
}

// NewRegistry is an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Collect adds a hook each scrape calls to add the values it computes
// then. Hooks run one after another, in the order added.
func (r *Registry) Collect(hook func(*Sink)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hooks = append(r.hooks, hook)
}

// gather runs every hook into one sink.
func (r *Registry) gather() *Sink {
	r.mu.Lock()
	hooks := slices.Clone(r.hooks)
	r.mu.Unlock()
	s := &Sink{families: map[*Desc][]series{}}
	for _, h := range hooks {
		h(s)
	}
	return s
}

// CounterVec is a counter by label values.
type CounterVec struct {
	d  *Desc
	mu sync.Mutex
	// by is keyed by the label values joined with a byte no UTF-8 text
	// holds, so no two value lists share a key.
	by map[string]*series
}

// NewCounterVec adds a counter family with labels.
func (r *Registry) NewCounterVec(name, help string, labels ...string) *CounterVec {
	c := &CounterVec{d: NewDesc(name, help, Counter, labels...), by: map[string]*series{}}
	r.Collect(func(s *Sink) {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, sr := range c.by {
			s.add(c.d, series{values: sr.values, value: sr.value})
		}
	})
	return c
}

func (c *CounterVec) series(values []string) *series {
	key := ""
	for _, v := range values {
		key += v + "\xff"
	}
	sr, ok := c.by[key]
	if !ok {
		sr = &series{values: checkValues(c.d, values)}
		c.by[key] = sr
	}
	return sr
}

// Init makes the series of these label values, at 0 until added to, so a
// rate over it reads from the first scrape.
func (c *CounterVec) Init(labelValues ...string) { c.Add(0, labelValues...) }

// Add adds v (never negative: a counter only goes up) to the series of
// these label values.
func (c *CounterVec) Add(v float64, labelValues ...string) {
	if v < 0 {
		panic("promtext: a counter cannot go down")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.series(labelValues).value += v
}

// Inc adds 1 to the series of these label values.
func (c *CounterVec) Inc(labelValues ...string) { c.Add(1, labelValues...) }

// Value is the series' count, 0 for one never made.
func (c *CounterVec) Value(labelValues ...string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.series(labelValues).value
}

// GaugeValue is a gauge without labels.
type GaugeValue struct {
	mu sync.Mutex
	v  float64
}

// NewGauge adds a gauge family without labels.
func (r *Registry) NewGauge(name, help string) *GaugeValue {
	g := &GaugeValue{}
	d := NewDesc(name, help, Gauge)
	r.Collect(func(s *Sink) { s.Add(d, g.Value()) })
	return g
}

// Set sets the gauge.
func (g *GaugeValue) Set(v float64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.v = v
}

// Value is the gauge's value.
func (g *GaugeValue) Value() float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.v
}

// HistogramValue is a histogram without labels, over fixed buckets.
type HistogramValue struct {
	mu     sync.Mutex
	upper  []float64
	counts []uint64 // per bucket, not cumulative; the last is above every bound
	sum    float64
}

// NewHistogram adds a histogram family without labels; buckets are the
// upper bounds, increasing (+Inf is added after them).
func (r *Registry) NewHistogram(name, help string, buckets []float64) *HistogramValue {
	if !slices.IsSorted(buckets) {
		panic(fmt.Sprintf("promtext: %s's buckets are not increasing", name))
	}
	h := &HistogramValue{upper: slices.Clone(buckets), counts: make([]uint64, len(buckets)+1)}
	d := NewDesc(name, help, Histogram)
	r.Collect(func(s *Sink) { s.add(d, series{hist: h.snapshot()}) })
	return h
}

// Observe counts one value in its bucket and its sum.
func (h *HistogramValue) Observe(v float64) {
	i, _ := slices.BinarySearch(h.upper, v) // a value on a bound is in that bound's bucket
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts[i]++
	h.sum += v
}

func (h *HistogramValue) snapshot() *histSnapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := &histSnapshot{upper: h.upper, counts: make([]uint64, len(h.upper)), sum: h.sum}
	for i := range h.upper {
		s.count += h.counts[i]
		s.counts[i] = s.count
	}
	s.count += h.counts[len(h.upper)]
	return s
}

// Count is how many values were observed.
func (h *HistogramValue) Count() uint64 { return h.snapshot().count }
