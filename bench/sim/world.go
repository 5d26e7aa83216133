//go:build etcd

package main

import (
	"container/heap"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/agenttree/agenttree/bench/internal/fixture"
	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/forge/github/githubtest/edge"
)

// world is the simulation: the cluster, the fake, the processes, and
// what the agents and people will do next.
type world struct {
	o        options
	out      io.Writer
	dir      string
	config   string
	endpoint string
	prefix   string
	srv      *githubtest.Server
	clk      *fixture.Clock
	start    time.Time

	people *proc
	ctrls  []*ctrl
	nodes  []*node
	byName map[string]*node

	mu  sync.Mutex
	rng *rand.Rand
	q   events
	// agents are the issues whose agent works (given to a node);
	// waiting those created and not given one yet.
	agents  map[int]*agent
	waiting map[int]bool
	tally   *tally
	figs    figures
	// open are the PRs open on the fake, for the PR-hours.
	openPR   map[int]bool
	knownPRs int
	killed   int
}

// run starts the cluster and the fake in the process (etcdtest and
// githubtest want a testing.TB: the one call of a testing.Benchmark
// gives one, as bench/controller does) and runs the simulation.
func run(ctx context.Context, o options, out io.Writer) error {
	err := fmt.Errorf("the embedded etcd or the fake GitHub did not start")
	testing.Benchmark(func(b *testing.B) {
		_, err = simulate(ctx, b, o, out)
		b.SkipNow()
	})
	return err
}

// simulate runs the simulation in tb's cluster and fake, prints its
// figures to out, and returns the comparison of the moves made with the
// logs.
func simulate(ctx context.Context, tb testing.TB, o options, out io.Writer) (verdict, error) {
	dir, err := os.MkdirTemp("", "agenttree-sim-")
	if err != nil {
		return verdict{}, err
	}
	if o.keep {
		fmt.Fprintln(out, "temp dir:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	cluster := etcdtest.Start(tb)
	srv := githubtest.New(tb, githubtest.WithLatency(o.latency), githubtest.WithSeed(o.seed))
	// GitHub's hourly limits run on the wall clock, while a simulated day
	// passes in minutes: the figures say how far below them the load is.
	reset := time.Now().Add(365 * 24 * time.Hour)
	srv.SetRateLimit(edge.Core, 1<<30, 1<<30, reset)
	srv.SetRateLimit(edge.GraphQL, 1<<30, 1<<30, reset)
	w := &world{o: o, out: out, dir: dir, endpoint: cluster.Endpoint, prefix: "/agenttree-sim", srv: srv,
		clk: fixture.NewClock(time.Now().UTC().Truncate(time.Second)), byName: map[string]*node{},
		rng: rand.New(rand.NewPCG(o.seed, o.seed^0x5eed)), agents: map[int]*agent{}, waiting: map[int]bool{},
		tally: newTally(), openPR: map[int]bool{}}
	w.start = w.clk.Now()
	if w.config, err = writeConfig(dir); err != nil {
		return verdict{}, err
	}
	defer w.stopAll()
	if err := w.setup(ctx); err != nil {
		return verdict{}, err
	}
	if o.errors > 0 {
		// After the setup: the figures are the day's. Half 502s, half
		// 500s and hang-ups, GitHub's own mix of transient failures.
		srv.FailRate(o.errors/2, githubtest.Fault502)
		srv.FailRate(o.errors/4/(1-o.errors/2), githubtest.Fault500)
		srv.FailRate(o.errors/4/(1-3*o.errors/4), githubtest.FaultHangup)
	}
	if err := w.drive(ctx); err != nil {
		return verdict{}, err
	}
	return w.finish(ctx)
}

// setup starts the processes and creates the issues.
func (w *world) setup(ctx context.Context) error {
	began := time.Now()
	var err error
	if w.people, err = w.open(ctx, "people"); err != nil {
		return err
	}
	for i := range w.o.controllers {
		if err := w.startCtrl(ctx, fmt.Sprintf("controller-%d", i+1)); err != nil {
			return err
		}
	}
	for i := range w.o.nodes {
		n, err := w.startNode(ctx, fmt.Sprintf("node-%02d", i+1))
		if err != nil {
			return err
		}
		w.nodes = append(w.nodes, n)
		w.byName[n.name] = n
	}
	fmt.Fprintf(w.out, "setup: etcd, the fake, %d controllers and %d nodes in %s\n", w.o.controllers, w.o.nodes, secs(time.Since(began)))
	began = time.Now()
	if err := w.createIssues(ctx, w.o.issues); err != nil {
		return err
	}
	fmt.Fprintf(w.out, "setup: %d issues created in %s\n", w.o.issues, secs(time.Since(began)))
	return nil
}

func (w *world) startCtrl(ctx context.Context, name string) error {
	p, err := w.open(ctx, name)
	if err != nil {
		return err
	}
	c := &ctrl{proc: p, w: w}
	w.ctrls = append(w.ctrls, c)
	go c.campaign()
	return nil
}

// createIssues creates n issues as people do, a few at a time.
func (w *world) createIssues(ctx context.Context, n int) error {
	errs := make(chan error, n)
	sem := make(chan struct{}, w.o.workers)
	var wg sync.WaitGroup
	for range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs <- w.create(ctx)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *world) stopAll() {
	for _, c := range w.ctrls {
		c.kill()
	}
	for _, n := range w.nodes {
		n.kill()
	}
	if w.people != nil {
		w.people.kill()
	}
}

// event is something an agent, CI or a person does at a simulated time.
type event struct {
	at   time.Time
	kind eventKind
	id   int   // the issue
	run  int64 // evCI: the check run
	fail bool  // evCI: it fails
}

type eventKind int

const (
	evWork    eventKind = iota // the agent pushes and runs next
	evCI                       // a CI run ends
	evApprove                  // a person approves the PR and the issue
	evCreate                   // a person creates an issue
)

// events are ordered by time.
type events []event

func (q events) Len() int           { return len(q) }
func (q events) Less(i, j int) bool { return q[i].at.Before(q[j].at) }
func (q events) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *events) Push(x any)        { *q = append(*q, x.(event)) }
func (q *events) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// schedule adds e, after d of simulated time.
func (w *world) schedule(d time.Duration, e event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e.at = w.clk.Now().Add(d)
	heap.Push(&w.q, e)
}

// due takes the events due by now.
func (w *world) due(now time.Time) []event {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []event
	for len(w.q) > 0 && !w.q[0].at.After(now) {
		out = append(out, heap.Pop(&w.q).(event))
	}
	return out
}

// pace is a random duration of mean m, exponential, at least m/10.
func (w *world) pace(m time.Duration) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return max(time.Duration(w.rng.ExpFloat64()*float64(m)), m/10)
}

// chance is true with probability p.
func (w *world) chance(p float64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rng.Float64() < p
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
