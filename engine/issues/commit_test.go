package issues_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
)

// The log's line and issue.yaml's new content are synced together; a line
// that cannot be logged leaves issue.yaml as it was and no temp file: the
// change is not made.
func TestChangeNotLoggedLeavesIssueYAMLAsItWas(t *testing.T) {
	s, iss := moved(t)
	dir := s.HostDir(iss.ID)
	log := filepath.Join(dir, "events.jsonl")
	before := snapshot(t, s, iss.ID)
	_, err := s.Update(context.Background(), iss.ID, iss.Version, func(cur *issues.Issue) error {
		cur.Stage = "accepted"
		// The log cannot be appended to: a directory stands in its place.
		require.NoError(t, os.Rename(log, log+".aside"))
		return os.Mkdir(log, 0o755)
	})
	require.ErrorContains(t, err, "the change was not saved and the issue is as it was")

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.Contains(e.Name(), ".tmp-"), "temp file %s left behind", e.Name())
	}
	require.NoError(t, os.Remove(log))
	require.NoError(t, os.Rename(log+".aside", log))
	assert.Equal(t, before, snapshot(t, s, iss.ID))
	got, err := s.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, iss.Version, got.Version)
	assert.Equal(t, iss.Stage, got.Stage)
}
