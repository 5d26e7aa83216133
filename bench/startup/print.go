package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/agenttree/agenttree/bench/internal/report"
)

// Targets (issue 10): the median of a command as a multiple of the empty
// program's median, and status's median.
const (
	targetHelp   = 1.5
	targetNext   = 2.5
	targetStatus = 150 * time.Millisecond
)

// figures are a command's samples, summed up.
type figures struct {
	median, p90, min, max time.Duration
}

func summarize(samples []sample) figures {
	walls := make([]time.Duration, len(samples))
	var f figures
	for i, s := range samples {
		walls[i] = s.wall
	}
	slices.Sort(walls)
	f.median, f.p90 = report.Percentile(walls, 50), report.Percentile(walls, 90)
	f.min, f.max = walls[0], walls[len(walls)-1]
	return f
}

func (s *suite) print(w io.Writer, o options) {
	fmt.Fprintf(w, "startup: %d rounds after %d warm-up ones, each running every command once in a random order; status in %d of them\n",
		o.rounds, o.warmup, o.statusRounds)
	fmt.Fprintf(w, "machine: %s\n", report.Machine())
	if o.static {
		fmt.Fprintln(w, "built with CGO_ENABLED=0 (static)")
	}
	for _, t := range s.targets {
		fmt.Fprintf(w, "%s: %s\n", t.label, t.help.bin)
	}
	fmt.Fprintln(w)
	empty := summarize(s.empty.samples)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tmedian\tp90\tmin\tmax\t× empty\ttarget\t")
	row(tw, s.empty.label, empty, "", "")
	for _, f := range s.floors {
		fl := summarize(f.samples)
		row(tw, f.label, fl, ratio(fl, empty), "")
	}
	for _, t := range s.targets {
		h, n := summarize(t.help.samples), summarize(t.next.samples)
		row(tw, t.label+": "+t.help.label, h, ratio(h, empty), fmt.Sprintf("≤ %.1f× %s", targetHelp, report.Verdict(times(h, empty) <= targetHelp)))
		row(tw, t.label+": "+t.next.label, n, ratio(n, empty), fmt.Sprintf("≤ %.1f× %s", targetNext, report.Verdict(times(n, empty) <= targetNext)))
		if t.status != nil && len(t.status.samples) > 0 {
			st := summarize(t.status.samples)
			row(tw, t.label+": "+t.status.label, st, ratio(st, empty), fmt.Sprintf("< %s %s", report.Ms(targetStatus), report.Verdict(st.median < targetStatus)))
		}
	}
	tw.Flush()
}

func row(w io.Writer, label string, f figures, ratio, target string) {
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", label, report.Ms(f.median), report.Ms(f.p90),
		report.Ms(f.min), report.Ms(f.max), ratio, target)
}

func times(f, empty figures) float64 { return float64(f.median) / float64(empty.median) }

func ratio(f, empty figures) string { return fmt.Sprintf("%.2f×", times(f, empty)) }
