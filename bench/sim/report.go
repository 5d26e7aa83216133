//go:build etcd

package main

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/bench/internal/report"
)

// finish compares the actors' moves with the logs and prints the figures
// as Markdown.
func (w *world) finish(ctx context.Context) (verdict, error) {
	began := time.Now()
	v, err := w.tally.compare(ctx, w.people.eng.Store)
	if err != nil {
		return v, err
	}
	fmt.Fprintf(w.out, "verified %d issues' logs in %s\n\n", v.issues, secs(time.Since(began)))
	counts := w.srv.Counts()
	requests := 0
	for _, c := range counts {
		requests += c.Requests
	}
	var retries int64
	for _, p := range w.procs() {
		retries += p.gh.Stats().Retries
	}
	f := w.figs
	o := w.o
	fmt.Fprintf(w.out, "## agenttree at scale: %d nodes × %d agents, %d open issues, %.1f simulated hours\n\n", o.nodes, o.agents, o.issues, f.simulated.Hours())
	fmt.Fprintf(w.out, "machine: %s, peak RSS %s (the whole simulation: etcd, the fake, every process)\n\n", report.Machine(), peakRSS())
	fmt.Fprintf(w.out, "`go run -tags etcd ./bench/sim -nodes %d -agents %d -issues %d -controllers %d -latency %s -errors %g -hours %g -failovers %d -step %s -node-every %s -seed %d`\n\n",
		o.nodes, o.agents, o.issues, o.controllers, o.latency, o.errors, o.hours, o.failovers, o.step, o.nodeEvery, o.seed)
	fmt.Fprintf(w.out, "%.1f simulated hours in %s of wall time (%.0f×)\n\n", f.simulated.Hours(), f.wall.Round(time.Second), f.simulated.Seconds()/max(f.wall.Seconds(), 1e-9))
	fmt.Fprintln(w.out, "| figure | value |")
	fmt.Fprintln(w.out, "|---|--:|")
	row := func(k, format string, a ...any) { fmt.Fprintf(w.out, "| %s | %s |\n", k, fmt.Sprintf(format, a...)) }
	row("GitHub requests", "%d", requests)
	row("PR-hours (PRs open × simulated hours)", "%.0f", f.prHours)
	row("**requests per PR-hour**", "**%.3f**", float64(requests)/max(f.prHours, 1e-9))
	row("leader tick, steady (p50 / p95 / max, n)", "%s", spread(f.leaderTicks))
	row("leader's first tick of a term (p50 / max, n)", "%s", spread2(f.firstTicks))
	row("node tick (p50 / p95 / max, n)", "%s", spread(f.nodeTicks))
	for i, fo := range f.failovers {
		row(fmt.Sprintf("failover %d: elected / acting", i+1), "%s / %s", secs(fo.elected), secs(fo.acting))
	}
	row("issues created / created in logs", "%d / %d", v.createsMade, v.logged0)
	row("transitions made / logged", "%d / %d", v.made, v.logged)
	row("**transitions lost / doubled**", "**%d / %d**", v.lost, v.doubled)
	row("issues whose log does not verify", "%d of %d", v.broken, v.issues)
	row("GitHub errors injected / requests retried by the client", "%d / %d", w.srv.FaultsSent(), retries)
	row("agents' next retried (same request id)", "%d", w.tally.retries)
	row("moves asked and refused", "%s", refusals(w.tally.refusals))
	row("escalations", "%d", f.escalated)
	row("actions that failed (agents', people's)", "%d", f.actionErrs)
	fmt.Fprintf(w.out, "\nrequests by kind: %s\n", report.Kinds(counts))
	for _, s := range v.examples {
		fmt.Fprintln(w.out, "  differs:", s)
	}
	for _, s := range f.errExamples {
		fmt.Fprintln(w.out, "  failed:", s)
	}
	return v, nil
}

// procs are every process the run started, the killed ones included.
func (w *world) procs() []*proc {
	out := []*proc{w.people}
	for _, c := range w.ctrls {
		out = append(out, c.proc)
	}
	for _, n := range w.nodes {
		out = append(out, n.proc)
	}
	return out
}

func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("%s / %s / %s, %d", report.Ms(report.Percentile(s, 50)), report.Ms(report.Percentile(s, 95)), report.Ms(s[len(s)-1]), len(s))
}

func spread2(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("%s / %s, %d", report.Ms(report.Percentile(s, 50)), report.Ms(s[len(s)-1]), len(s))
}

func refusals(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// peakRSS is this process's peak resident set (VmHWM), where /proc
// tells it.
func peakRSS() string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kib, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err == nil {
				return fmt.Sprintf("%.0f MiB", float64(kib)/1024)
			}
		}
	}
	return "unknown"
}
