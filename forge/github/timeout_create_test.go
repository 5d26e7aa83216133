package github

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/githubtest"
)

// A create GitHub did, whose answer never began within the answer
// timeout: EnsurePR looks again, as after a 5xx, and finds the PR.
func TestACreateWhoseAnswerTimedOutAfterGitHubMadeItFindsThePR(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv, func(o *Options) { o.AnswerTimeout = 100 * time.Millisecond })
	srv.SetBranch("feature", sha1)
	lost := githubtest.FaultTimeout.On(githubtest.EndpointCreatePull)
	lost.AfterHandling = true
	srv.FailNext(1, lost)
	pr, created, err := c.EnsurePR(context.Background(), forge.NewPR{Branch: "feature", Base: "main"})
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, 1, srv.PRCount(), "one PR")
	assert.Equal(t, 1, pr.Number)
}

// One GitHub never answered: the forge's trouble (ErrServer), which
// create_pr waits out, not a plain error it takes for the agent's.

func TestACreateWhoseAnswerTimedOutIsTheForgesTrouble(t *testing.T) {
	srv := githubtest.New(t)
	c, _ := newClient(t, srv, func(o *Options) { o.AnswerTimeout = 100 * time.Millisecond })
	srv.SetBranch("feature", sha1)
	srv.FailNext(1, githubtest.FaultTimeout.On(githubtest.EndpointCreatePull))
	_, _, err := c.EnsurePR(context.Background(), forge.NewPR{Branch: "feature", Base: "main"})
	require.Error(t, err)
	assert.ErrorIs(t, err, forge.ErrServer, "a timeout is the forge's trouble")
}
