package statuscmd

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/engine"
	ghforge "github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/forge/github/githubtest/edge"
)

// Once GitHub said a quota is spent, status says until when and which,
// from what the controller recorded: it asks GitHub nothing itself.
func TestStatusSaysRateLimitedUntil(t *testing.T) {
	w := newWorkspace(t)
	e, err := w.App.Engine(t.Context())
	require.NoError(t, err)
	t.Setenv("GH_CONFIG_DIR", t.TempDir())
	srv := githubtest.New(t)
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	srv.SetRateLimit(edge.Core, 5000, 0, reset)
	client, err := ghforge.New(t.Context(), ghforge.Options{
		Repo: srv.Owner + "/" + srv.Name, Host: "github.com", Token: srv.Token, BaseURL: srv.URL,
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
	})
	require.NoError(t, err)
	_, err = client.Checks(t.Context(), "0123456789abcdef0123456789abcdef01234567")
	require.Error(t, err, "the spent quota refused the request")

	require.NoError(t, statusRun(t.Context(), &StatusOptions{App: w.App}))
	assert.NotContains(t, w.Out.String(), "rate-limited", "no controller has recorded a limit")
	w.Reset()

	e.Forge = client
	c := &controller.Controller{Load: func() (*engine.Engine, error) { return e, nil }}
	_, err = c.Tick(t.Context())
	require.NoError(t, err)
	before := srv.Counts()
	require.NoError(t, statusRun(t.Context(), &StatusOptions{App: w.App}))
	assert.Contains(t, w.Out.String(), "\nrate-limited until "+reset.Local().Format(time.TimeOnly)+" (core): requests to the forge wait until then\n")
	assert.Equal(t, before, srv.Counts(), "status asked GitHub nothing")
}
