package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/statuscmd"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

// An issue whose directory is left but whose files were removed outside
// agenttree is listed as missing, with what to do, as verify names it; it
// never vanishes from status. One emptied a moment ago may be one being
// created, and waits its turn.
func TestStatusShowsAnIssueWhoseFilesWereRemoved(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	for _, title := range []string{"Add login page", "Add search", "Add checkout", "Add payments", "Add refunds"} {
		w.create(t, title)
	}
	// 2 is between issues status reads, 4 and 5 past them.
	for _, id := range []int{2, 4, 5} {
		files, err := filepath.Glob(filepath.Join(w.hostDir(id), "*"))
		require.NoError(t, err)
		require.NotEmpty(t, files)
		for _, f := range files {
			require.NoError(t, os.RemoveAll(f))
		}
	}
	long := time.Now().Add(-time.Minute)
	for _, id := range []int{2, 4} {
		require.NoError(t, os.Chtimes(w.hostDir(id), long, long))
	}

	res := w.run(t, humanEnv, "status")
	require.Equal(t, exitOK, res.code, res.stderr)
	for _, id := range []int{2, 4} {
		assert.Regexp(t, `(?m)^`+itoa(id)+`\s+missing\s+a person: its files were removed outside agenttree \(`+"`agenttree verify "+itoa(id)+"`"+`\)`, res.stdout)
		assert.Contains(t, res.stdout, "issue "+itoa(id)+": missing: the files of its directory "+w.hostDir(id)+" (issue.yaml, events.jsonl) were removed outside agenttree")
	}
	assert.NotRegexp(t, `(?m)^5\s`, res.stdout, "emptied a moment ago: maybe being created")

	res = w.run(t, humanEnv, "status", "--json")
	require.Equal(t, exitOK, res.code, res.stderr)
	var rows []statuscmd.Row
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rows), res.stdout)
	missing := map[int]bool{}
	for _, r := range rows {
		missing[r.ID] = r.Missing
		if r.Missing {
			assert.Equal(t, statuscmd.WaiterPerson, r.WaitingFor)
		}
	}
	assert.Equal(t, map[int]bool{1: false, 2: true, 3: false, 4: true}, missing)

	res = w.run(t, humanEnv, "verify", "2")
	assert.Equal(t, exitBlocked, res.code, res.stdout)
	assert.Contains(t, res.stdout, "issue.yaml is missing")
}
