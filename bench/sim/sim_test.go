//go:build etcd

package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSmallSimulationLosesNoTransition runs the simulation small and
// short (no failover: one waits out a lease of 10 s), the fake failing a
// request in twenty: every issue's log verifies, and every move the
// agents, the people and the controller made is in the logs once.
func TestSmallSimulationLosesNoTransition(t *testing.T) {
	o := options{nodes: 3, agents: 20, issues: 40, controllers: 2, latency: 5 * time.Millisecond, errors: 0.05,
		hours: 0.15, failovers: 0, step: 10 * time.Second, nodeEvery: time.Minute,
		work: 10 * time.Minute, fix: 5 * time.Minute, ci: 5 * time.Minute, review: 5 * time.Minute, fail: 0.3, seed: 7, workers: 8}
	require.NoError(t, o.check())
	var out bytes.Buffer
	v, err := simulate(context.Background(), t, o, &out)
	require.NoError(t, err, out.String())
	t.Log(out.String())
	assert.Zero(t, v.broken, "issues whose log does not verify")
	assert.Zero(t, v.lost, "transitions lost")
	assert.Zero(t, v.doubled, "transitions doubled")
	assert.Positive(t, v.made, "the agents, people and controllers moved nothing")
	assert.Equal(t, v.createsMade, v.logged0, "issues created against creates logged")
}
