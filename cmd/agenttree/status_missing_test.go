package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/cli/statuscmd"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

// An issue whose directory is left but whose files were removed outside
// agenttree is listed as missing, with what to do, as verify names it; it
// never vanishes from status. One emptied a moment ago may be one being
// created, and waits its turn.
func TestStatusShowsAnIssueWhoseFilesWereRemoved(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	for _, title := range []string{"Add login page", "Add search", "Add checkout"} {
		w.create(t, title)
	}
	for _, id := range []int{2, 3} {
		files, err := filepath.Glob(filepath.Join(w.hostDir(id), "*"))
		require.NoError(t, err)
		require.NotEmpty(t, files)
		for _, f := range files {
			require.NoError(t, os.RemoveAll(f))
		}
	}
	long := time.Now().Add(-time.Minute)
	require.NoError(t, os.Chtimes(w.hostDir(2), long, long))

	res := w.run(t, humanEnv, "status")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Regexp(t, `(?m)^2\s+missing\s+a person: its files were removed outside agenttree \(`+"`agenttree verify 2`"+`\)`, res.stdout)
	assert.Contains(t, res.stdout, "issue 2: missing: the files of its directory "+w.hostDir(2)+" (issue.yaml, events.jsonl) were removed outside agenttree")
	assert.NotRegexp(t, `(?m)^3\s`, res.stdout, "emptied a moment ago: maybe being created")

	res = w.run(t, humanEnv, "status", "--json")
	require.Equal(t, exitOK, res.code, res.stderr)
	var rows []statuscmd.Row
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rows), res.stdout)
	require.Len(t, rows, 2)
	assert.Equal(t, 1, rows[0].ID)
	assert.Equal(t, 2, rows[1].ID)
	assert.True(t, rows[1].Missing)
	assert.Equal(t, statuscmd.WaiterPerson, rows[1].WaitingFor)

	res = w.run(t, humanEnv, "verify", "2")
	assert.Equal(t, exitBlocked, res.code, res.stdout)
	assert.Contains(t, res.stdout, "issue.yaml is missing")
}
