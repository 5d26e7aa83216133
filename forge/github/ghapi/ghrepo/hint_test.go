package ghrepo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/github/ghapi/ghrepo"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages/load"
)

// TestConfigHintLoads writes into a config the snippet Resolve's errors
// tell the user to write, and loads it as agenttree does, so that the hint
// can never again name a key the loader rejects.
func TestConfigHintLoads(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{name: "no origin remote", setup: func(t *testing.T, dir string) { gittest.Run(t, dir, "init", "-q") }},
		{name: "not a git repository", setup: func(*testing.T, string) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			_, err := ghrepo.Resolve(context.Background(), ghrepo.Lookup{Dir: dir})
			require.ErrorIs(t, err, ghrepo.ErrNoRemote)

			snippet := configSnippet(t, err.Error())
			config := snippet + "\n" + testpipeline.Read(t, "review-gate")
			cfg, err := load.Parse(".agenttree.yaml", []byte(config), builtin.Registry())
			require.NoError(t, err, "the hint %q does not load", snippet)
			assert.Empty(t, cfg.Warnings)
			assert.Equal(t, "owner/name", cfg.GitHub.Repo)
		})
	}
}

// configSnippet is the one code span in msg (text between backquotes)
// that names the repository, as a user is told to write it.
func configSnippet(t *testing.T, msg string) string {
	t.Helper()
	var found []string
	for i, part := range strings.Split(msg, "`") {
		if i%2 == 1 && strings.Contains(part, "owner/name") {
			found = append(found, part)
		}
	}
	require.Len(t, found, 1, "one config snippet naming owner/name quoted in %q", msg)
	return found[0]
}
