//go:build etcd

// Command sim runs agenttree at internet scale on one machine: an
// embedded etcd holding the issues, controllers electing one of them,
// nodes joined under leases, simulated agents moving their issues with
// the engine's Next, a person approving through engine.Approve, and the
// fake GitHub with latency and injected errors; over a simulated day, on
// a clock compressed in lockstep with the elected controller's ticks. It
// prints GitHub requests per PR-hour, tick times, failover times, and the
// transitions the actors made against those the issues' logs hold, lost
// or doubled.
//
//	go run -tags etcd ./bench/sim [-nodes 50] [-agents 200] [-issues 10000] [-latency 50ms] [-errors 0.05] [-hours 24] [-failovers 3]
//
// See bench/README.md, "The simulation".
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
)

// options are the simulation's flags.
type options struct {
	nodes, agents, issues int
	controllers           int
	latency               time.Duration
	errors                float64
	hours                 float64
	failovers             int
	// step is the simulated time between two ticks of the elected
	// controller; nodeEvery between two rounds of the nodes' ticks.
	step, nodeEvery time.Duration
	// The agents' and people's pace, simulated: work is an agent's mean
	// time to its first push, fix after a step back; ci a CI run's;
	// review a person's before approving; fail the chance a CI run fails.
	work, fix, ci, review time.Duration
	fail                  float64
	seed                  uint64
	workers               int
	keep                  bool
}

func main() {
	var o options
	flag.IntVar(&o.nodes, "nodes", 50, "nodes (hosts that run agents), each joined under its own lease")
	flag.IntVar(&o.agents, "agents", 200, "agents per node: each node's capacity of unfinished issues")
	flag.IntVar(&o.issues, "issues", 10000, "open issues, kept open: a merged issue is followed by a new one")
	flag.IntVar(&o.controllers, "controllers", 3, "controller processes campaigning for the election; one leads")
	flag.DurationVar(&o.latency, "latency", 50*time.Millisecond, "how long the fake GitHub holds each request")
	flag.Float64Var(&o.errors, "errors", 0.05, "fraction of GitHub requests answered with a 5xx or a hang-up")
	flag.Float64Var(&o.hours, "hours", 24, "simulated hours")
	flag.IntVar(&o.failovers, "failovers", 3, "times the elected controller is killed (no resign, its client closed), spread over the run")
	flag.DurationVar(&o.step, "step", 10*time.Second, "simulated time between the elected controller's ticks (controller.interval_s)")
	flag.DurationVar(&o.nodeEvery, "node-every", time.Minute, "simulated time between two rounds of the nodes' ticks")
	flag.DurationVar(&o.work, "work", 2*time.Hour, "an agent's mean time from its issue given to its first push (simulated)")
	flag.DurationVar(&o.fix, "fix", 30*time.Minute, "an agent's mean time to push a fix after a step back (simulated)")
	flag.DurationVar(&o.ci, "ci", 15*time.Minute, "a CI run's mean time (simulated)")
	flag.DurationVar(&o.review, "review", time.Hour, "a person's mean time to approve a PR that passed CI (simulated)")
	flag.Float64Var(&o.fail, "fail", 0.2, "chance that a CI run fails")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the agents', people's and the fake's randomness")
	flag.IntVar(&o.workers, "workers", 16, "agents' and people's actions run at once")
	flag.BoolVar(&o.keep, "keep", false, "keep the temp directory and print its path")
	flag.Parse()
	if err := o.check(); err != nil {
		fmt.Fprintln(os.Stderr, "sim:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, o, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sim:", err)
		os.Exit(1)
	}
}

func (o options) check() error {
	switch {
	case o.nodes < 1 || o.agents < 1 || o.issues < 1 || o.controllers < 1:
		return errors.New("-nodes, -agents, -issues and -controllers must be at least 1")
	case o.controllers < 2 && o.failovers > 0:
		return errors.New("-failovers needs at least 2 -controllers: a standby to take over")
	case o.hours <= 0 || o.step < time.Second || o.nodeEvery < o.step:
		return errors.New("-hours must be positive, -step at least 1s, -node-every at least -step")
	case o.errors < 0 || o.errors >= 1 || o.fail < 0 || o.fail >= 1:
		return errors.New("-errors and -fail are fractions below 1")
	case o.work <= 0 || o.fix <= 0 || o.ci <= 0 || o.review <= 0 || o.workers < 1:
		return errors.New("-work, -fix, -ci, -review and -workers must be positive")
	}
	return nil
}
