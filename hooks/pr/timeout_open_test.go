package pr

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gitx"
)

// A create whose answer never began within the answer timeout, GitHub
// having made the PR or not: create_pr finds the PR or waits the forge's
// trouble out, and never steps the agent back for it.
func TestCreatePRWhoseAnswerTimedOutWaitsItOut(t *testing.T) {
	for _, after := range []bool{false, true} {
		t.Run(map[bool]string{false: "before handling", true: "after handling"}[after], func(t *testing.T) {
			f := newGitHubFixture(t, github.RetryPolicy{})
			client, err := github.New(context.Background(), github.Options{
				Repo: f.srv.Owner + "/" + f.srv.Name, Host: "github.com", Token: f.srv.Token, BaseURL: f.srv.URL,
				AnswerTimeout: 100 * time.Millisecond,
				Sleep:         func(ctx context.Context, d time.Duration) error { return ctx.Err() },
			})
			require.NoError(t, err)
			bare, work := gitRemoteRepo(t)
			f.env.Forge = &mirroredForge{Client: client, srv: f.srv, bare: bare, t: t}
			f.env.Git = func(dir string) *gitx.Repo { return &gitx.Repo{Dir: dir} }
			issue := &hooks.Issue{ID: 7, Title: "Add login", Stage: "pr_ready", Branch: "issue-7", Dir: t.TempDir(), WorkDir: work, DefaultBranch: "main"}
			fault := githubtest.FaultTimeout.On(githubtest.EndpointCreatePull)
			fault.AfterHandling = after
			f.srv.FailNext(1, fault)
			o := runHook(t, f.env, issue, "create_pr", nil)
			t.Logf("kind=%v class=%q agentFixable=%v reason=%s", o.Kind, o.Class, o.AgentFixable(), o.Reason)
			assert.False(t, o.Kind == hooks.KindFail && o.AgentFixable(), "GitHub's silence is not the agent's to fix")
		})
	}
}
