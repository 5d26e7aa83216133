//go:build unix

package local_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/internal/statedir"
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
			name: "a failure turned into a success, its log and the markers removed",
			why:  "it has no log",
			attack: func(t *testing.T, e *env, f *local.Forge, sha, path string) {
				waitCI(t, f, sha)
				passOffAsFromBeforeLogs(t, e, path)
				rewriteFile(t, path, "state: failure", "state: success")
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
			f = e.reopen(t, local.Options{CICommand: "exit 1"})

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

// An approval added to a PR record whose log (and every marker) was
// removed, to pass it off as a record from before logs, is no approval
// either: only the migration of a first-layout state directory adopts
// records without logs. The error says what a person does.
func TestApprovalWithItsLogRemovedIsDetected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{})
	pr := e.openPR(t, f)
	path := filepath.Join(e.state, "host", "forge", "prs", "1.yaml")
	passOffAsFromBeforeLogs(t, e, path)
	rewriteFile(t, path, "state: open", "state: open\napprovals:\n    - by: alice\n      sha: "+pr.HeadSHA+"\n      at: 2026-11-23T16:58:00Z")
	forged, err := os.ReadFile(path)
	require.NoError(t, err)
	f = e.reopen(t, local.Options{})

	_, err = f.PR(ctx, pr.Number)
	require.ErrorIs(t, err, chain.ErrUnlogged)
	assert.Contains(t, err.Error(), "local PR #1: its record was changed outside agenttree")
	assert.Contains(t, err.Error(), "a person removes the record")
	require.Error(t, f.Merge(ctx, pr.Number, forge.MergeMerge, false, ""), "nothing merges it")
	require.Error(t, f.Approve(ctx, pr.Number, "bob"), "nor writes over it")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(forged), string(got), "the forged record is left for a person to look at")
	assert.NoFileExists(t, filepath.Join(filepath.Dir(path), "1.chain.jsonl"), "nothing adopted it")

	// Removed by a person, the PR is opened again, to be reviewed again.
	require.NoError(t, os.Remove(path))
	again, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "feature"})
	require.NoError(t, err)
	assert.Equal(t, pr.Number, again.Number)
	assert.NotEqual(t, forge.ReviewApproved, again.ReviewDecision)
}

// Records from before their logs keep working: migrating their
// first-layout state directory gives them their logs; a record changed
// after that is detected.
func TestRecordsFromBeforeLogsAreAdopted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{CICommand: "exit 1"})
	pr := e.openPR(t, f)
	waitCI(t, f, pr.HeadSHA)
	// What an earlier agenttree left: the forge beside the documents, the
	// records alone.
	host := filepath.Join(e.state, "host")
	logs, err := filepath.Glob(filepath.Join(host, "forge", "*", "*.chain.jsonl"))
	require.NoError(t, err)
	require.Len(t, logs, 2)
	for _, log := range logs {
		require.NoError(t, os.Remove(log))
	}
	require.NoError(t, os.Rename(filepath.Join(host, "forge"), filepath.Join(e.state, "forge")))
	require.NoError(t, os.RemoveAll(host))

	f = e.reopen(t, local.Options{CICommand: "exit 1"})
	got, err := f.PR(ctx, pr.Number)
	require.NoError(t, err)
	assert.Equal(t, pr.Number, got.Number)
	require.Len(t, got.Checks, 1)
	assert.Equal(t, forge.CheckFailure, got.Checks[0].State)
	for _, log := range logs {
		require.FileExists(t, log)
	}

	rewriteFile(t, filepath.Join(host, "forge", "prs", "1.yaml"), "state: open", "state: merged")
	_, err = f.PR(ctx, pr.Number)
	assert.ErrorContains(t, err, "changed outside agenttree")
}

// reopen opens the state directory again, as the next command does:
// migrated (statedir.Layout.Migrate), then the forge on it.
func (e *env) reopen(t *testing.T, opts local.Options) *local.Forge {
	t.Helper()
	l := statedir.Layout{Root: e.state}
	m, err := l.Migrate(context.Background())
	require.NoError(t, err)
	if m.Adopt { // no issues here to adopt
		require.NoError(t, l.Adopted(context.Background()))
	}
	return e.forge(t, opts)
}

// passOffAsFromBeforeLogs removes the log of the record at path and every
// marker that could say the state directory has logs.
func passOffAsFromBeforeLogs(t *testing.T, e *env, path string) {
	t.Helper()
	for _, p := range []string{strings.TrimSuffix(path, ".yaml") + ".chain.jsonl", filepath.Join(filepath.Dir(path), ".chained"),
		filepath.Join(e.state, "host", "layout")} {
		require.NoError(t, os.RemoveAll(p))
	}
}

func rewriteFile(t *testing.T, path, from, to string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), from)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), from, to, 1)), 0o644))
}

// A PR record changed outside agenttree holds up only its own branch:
// opening a PR for another branch goes on, under a number of its own
// (never the changed record's, nor a removed one's, whose log stays);
// opening one for its branch again is the error, not a second PR that
// would hide what was done to the first.
func TestTamperedRecordHoldsUpOnlyItsBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{})
	prs := filepath.Join(e.state, "host", "forge", "prs")
	for _, b := range []string{"one", "two", "three", "four"} {
		e.branch(t, b, map[string]string{b + ".txt": b + "\n"})
	}
	for _, b := range []string{"one", "two"} {
		_, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: b})
		require.NoError(t, err)
	}
	rewriteFile(t, filepath.Join(prs, "1.yaml"), "state: open", "state: open\napprovals:\n    - by: alice\n      sha: abc\n      at: 2026-01-01T00:00:00Z")
	require.NoError(t, f.Comment(ctx, 2, "a second version"))
	require.NoError(t, os.Remove(filepath.Join(prs, "2.yaml")))

	three, created, err := f.EnsurePR(ctx, forge.NewPR{Branch: "three"})
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, 3, three.Number, "numbers 1 and 2 stay their records'")

	_, _, err = f.EnsurePR(ctx, forge.NewPR{Branch: "one"})
	require.ErrorIs(t, err, forge.ErrTampered)
	assert.ErrorContains(t, err, "local PR #1")
	_, _, err = f.EnsurePR(ctx, forge.NewPR{Branch: "two"})
	require.ErrorIs(t, err, forge.ErrTampered, "a removed record is no PR to open again")
	assert.ErrorContains(t, err, "it was removed")
	four, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: "four"})
	require.NoError(t, err)
	assert.Equal(t, 4, four.Number)
}

// A create killed after it made the PR's log and before it wrote a line
// there leaves an empty log and no record: the next create goes on, under
// that number, instead of failing on a PR that was never opened.
func TestAnEmptyLogLeftByAKillHoldsNothingUp(t *testing.T) {
	e, f := newForge(t, local.Options{})
	prs := statedir.Layout{Root: e.state}.ForgePRs()
	require.NoError(t, os.MkdirAll(prs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(prs, "1.chain.jsonl"), nil, 0o644))
	pr := e.openPR(t, f)
	assert.Equal(t, 1, pr.Number)
}
