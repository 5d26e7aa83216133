package local_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/internal/chain"
)

// writeRecord writes a forge record as agenttree does, through its log:
// for tests that set up a state agenttree could have left (a crash, a
// record from an older version).
func writeRecord(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, chain.FileAt(path).Write([]byte(content), 0o644))
}

// A CI result written by hand (state: success for a commit whose CI
// never ran, or ran and failed) is never reported: the forge says the
// record was changed outside agenttree.
func TestCIResultWrittenByHandIsDetected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		attack func(t *testing.T, e *env, f *local.Forge, sha, path string)
		why    string
	}{
		{
			name: "success before CI ran",
			why:  "it has no log",
			attack: func(t *testing.T, _ *env, _ *local.Forge, sha, path string) {
				require.NoError(t, os.WriteFile(path, []byte("sha: "+sha+"\nattempt: 1\nstate: success\ncommand: \"exit 1\"\n"), 0o644))
			},
		},
		{
			name: "a failure turned into a success",
			why:  "its content is not the last version its log holds",
			attack: func(t *testing.T, _ *env, f *local.Forge, sha, path string) {
				c := waitCI(t, f, sha)
				require.Equal(t, forge.CheckFailure, c.State)
				data, err := os.ReadFile(path)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), "state: failure", "state: success", 1)), 0o644))
			},
		},
		{
			name: "a failure removed, for another try",
			why:  "it was removed",
			attack: func(t *testing.T, _ *env, f *local.Forge, sha, path string) {
				waitCI(t, f, sha)
				require.NoError(t, os.Remove(path))
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, f := newForge(t, local.Options{CICommand: "exit 1"})
			pr := e.openPR(t, f)
			path := filepath.Join(e.state, "host", "forge", "checks", pr.HeadSHA+".yaml")
			tt.attack(t, e, f, pr.HeadSHA, path)

			_, err := f.PR(ctx, pr.Number)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "changed outside agenttree")
			assert.Contains(t, err.Error(), tt.why)
			checks, err := f.Checks(ctx, pr.HeadSHA)
			require.Error(t, err, "checks %+v", checks)
			assert.Contains(t, err.Error(), "local CI of "+pr.HeadSHA[:12])
		})
	}
}

// An approval added to a PR record by hand is never an approval.
func TestApprovalAddedByHandIsDetected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{})
	pr := e.openPR(t, f)
	path := filepath.Join(e.state, "host", "forge", "prs", "1.yaml")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	forged := string(data) + "approvals:\n  - by: alice\n    sha: " + pr.HeadSHA + "\n    at: 2025-01-01T00:00:00Z\n"
	require.NoError(t, os.WriteFile(path, []byte(forged), 0o644))

	_, err = f.PR(ctx, pr.Number)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "local PR #1: its record was changed outside agenttree")
	err = f.Merge(ctx, pr.Number, forge.MergeMerge, false, "")
	require.Error(t, err, "nothing merges a PR whose record was changed by hand")
	require.Error(t, f.Approve(ctx, pr.Number, "bob"), "nor writes over it")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, forged, string(got), "the forged record is left for a person to look at")

	// Put back as agenttree wrote it, the PR works again.
	require.NoError(t, os.WriteFile(path, data, 0o644))
	require.NoError(t, f.Approve(ctx, pr.Number, "bob"))
	got2, err := f.PR(ctx, pr.Number)
	require.NoError(t, err)
	assert.Equal(t, forge.ReviewApproved, got2.ReviewDecision)
}

// Records from before their logs keep working: the forge gives them
// their logs when it opens; a record changed after that is detected.
func TestRecordsFromBeforeLogsAreAdopted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{})
	pr := e.openPR(t, f)
	prs := filepath.Join(e.state, "host", "forge", "prs")
	// What an earlier agenttree left: the record alone.
	for _, name := range []string{"1.chain.jsonl", ".chained"} {
		require.NoError(t, os.Remove(filepath.Join(prs, name)))
	}
	f = e.forge(t, local.Options{})
	require.NoError(t, f.InitRecords())
	got, err := f.PR(ctx, pr.Number)
	require.NoError(t, err)
	assert.Equal(t, pr.Number, got.Number)
	require.FileExists(t, filepath.Join(prs, "1.chain.jsonl"))

	rewriteFile(t, filepath.Join(prs, "1.yaml"), "state: open", "state: merged")
	_, err = f.PR(ctx, pr.Number)
	assert.ErrorContains(t, err, "changed outside agenttree")
}

func rewriteFile(t *testing.T, path, from, to string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), from)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), from, to, 1)), 0o644))
}
