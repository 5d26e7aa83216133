//go:build unix

package local_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
)

// A runner program that ends without running CI is a lost runner: CI is
// started once more, then recorded as failed.
func TestChecksRunnerThatDoesNotRun(t *testing.T) {
	t.Parallel()
	e, f := newForge(t, local.Options{CICommand: "true", Runner: []string{"true"}})
	sha := e.feature(t)
	c := waitCI(t, f, sha)
	assert.Equal(t, forge.CheckFailure, c.State)
	assert.EqualValues(t, 2, c.ID)
	log, err := f.Log(context.Background(), c, 0)
	require.NoError(t, err)
	assert.Contains(t, log, "the CI runner of attempt 1")
	assert.Contains(t, log, "stopped without a result: its process is gone; running CI again")
	assert.Contains(t, log, "not the CI command's verdict")
	e.noWorkTrees(t)
}

// A runner that cannot start leaves no verdict and no work tree. Not
// parallel: it sets the environment.
func TestChecksRunnerCannotStart(t *testing.T) {
	tests := []struct {
		name   string
		runner []string
		mark   bool
		want   string
	}{
		{"no such program", []string{filepath.Join(t.TempDir(), "missing")}, false, "no such file"},
		// This process started as a runner but ran on as something else
		// (a test binary without localtest.RunnerMain): it must not start
		// runners of its own.
		{"started as a runner", nil, true, "did not act as one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, f := newForge(t, local.Options{CICommand: "true", Runner: tt.runner})
			sha := e.feature(t)
			if tt.mark {
				t.Setenv("AGENTTREE_CI_RUNNER", "1")
			}
			_, err := f.Checks(context.Background(), sha)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "local CI of "+sha[:12]+": start")
			assert.Contains(t, err.Error(), tt.want)
			assert.Empty(t, e.ciRecord(t, sha).State, "no verdict: the next call starts afresh")
			e.noWorkTrees(t)
		})
	}
}
