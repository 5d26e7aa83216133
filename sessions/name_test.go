package sessions_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/internal/sessionstest"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// Without `project:`, two repositories' agents on one tmux server get
// sessions of their own, named after each repository's directory, as
// their worktrees are: before, both were "-developer-1", and a message
// for one repository's issue 1 was typed into the other's agent.
func TestSessionNamesAreUniquePerRepository(t *testing.T) {
	names := map[string]string{}
	for _, repo := range []string{"shop", "blog"} {
		dir := filepath.Join(t.TempDir(), repo)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		file := filepath.Join(dir, stages.FileName)
		require.NoError(t, os.WriteFile(file, []byte("stages:\n  - name: work\n  - name: done\n    terminal: completion\n"), 0o644))
		cfg, err := load.File(file, builtin.Registry())
		require.NoError(t, err)
		names[repo] = sessions.Name(cfg, &issues.Issue{ID: 1, Stage: "work"}, stages.RoleDeveloper)
	}
	assert.Equal(t, map[string]string{"shop": "shop-developer-1", "blog": "blog-developer-1"}, names)
}

// No agent is started on a parked issue, which no agent can move: the
// person is told to start the issue first.
func TestStartRefusesAParkedIssue(t *testing.T) {
	r := sessionstest.NewRig(t, "")
	iss := r.Create("Parked", "backlog")
	_, err := r.M.Start(context.Background(), iss.ID, sessions.Options{})
	require.ErrorIs(t, err, sessions.ErrNotYet)
	assert.Contains(t, err.Error(), fmt.Sprintf("`agenttree next -i %d`", iss.ID))
	list, err := r.M.List(context.Background())
	require.NoError(t, err)
	assert.Empty(t, list, "nothing was started")
}
