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

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
)

// A record changed outside agenttree is a *forge.TamperedError: it names
// the record, says how it differs from what agenttree last wrote, field
// by field when the log holds that version, and what a person does.
func TestTamperedRecordSaysWhatChanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		attack  func(t *testing.T, f *local.Forge, pr *forge.PR, prPath, ciPath string)
		record  string // %s: the head's short sha
		why     string
		changes []string
		fix     string
	}{
		{
			name: "a CI failure turned into a success",
			attack: func(t *testing.T, f *local.Forge, pr *forge.PR, _, ciPath string) {
				waitCI(t, f, pr.HeadSHA)
				rewriteFile(t, ciPath, "state: failure", "state: success")
			},
			record: "local CI of %s", why: "its content is not the last version its log holds",
			changes: []string{"state: failure → success"}, fix: "or removes both to run CI again",
		},
		{
			name: "a CI success written before CI ran",
			attack: func(t *testing.T, _ *local.Forge, pr *forge.PR, _, ciPath string) {
				require.NoError(t, os.WriteFile(ciPath, []byte("sha: "+pr.HeadSHA+"\nattempt: 1\nstate: success\n"), 0o644))
			},
			record: "local CI of %s", why: "it has no log", fix: "a person removes the record to run CI again",
		},
		{
			name: "an approval added to a PR record",
			attack: func(t *testing.T, _ *local.Forge, pr *forge.PR, prPath, _ string) {
				rewriteFile(t, prPath, "state: open", "state: open\napprovals:\n    - by: alice\n      sha: "+pr.HeadSHA+"\n      at: 2026-01-01T00:00:00Z")
			},
			record: "local PR #1", why: "its content is not the last version its log holds",
			changes: []string{"approvals added"}, fix: "a person puts back the version agenttree last wrote",
		},
		{
			name: "a PR record removed",
			attack: func(t *testing.T, f *local.Forge, pr *forge.PR, prPath, _ string) {
				require.NoError(t, f.Comment(ctx, pr.Number, "a second version"))
				require.NoError(t, os.Remove(prPath))
			},
			record: "local PR #1", why: "it was removed", fix: "a person puts back the version agenttree last wrote",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, f := newForge(t, local.Options{CICommand: "exit 1"})
			pr := e.openPR(t, f)
			prPath := filepath.Join(e.state, "host", "forge", "prs", "1.yaml")
			ciPath := filepath.Join(e.state, "host", "forge", "checks", pr.HeadSHA+".yaml")
			tt.attack(t, f, pr, prPath, ciPath)

			_, err := f.PR(ctx, pr.Number)
			require.ErrorIs(t, err, forge.ErrTampered)
			var te *forge.TamperedError
			require.ErrorAs(t, err, &te)
			record := tt.record
			if strings.Contains(record, "%s") {
				record = strings.ReplaceAll(record, "%s", pr.HeadSHA[:12])
			}
			assert.Equal(t, record, te.Record)
			assert.Equal(t, tt.why, te.Why)
			assert.Equal(t, tt.changes, te.Changes)
			assert.Contains(t, te.Fix, tt.fix)
			reason := te.Escalation(7)
			for _, want := range []string{record, te.Path, tt.why, tt.fix, "`agenttree verify`", "`agenttree resume 7 --reason TEXT`", "no work for the agent"} {
				assert.Contains(t, reason, want)
			}
			for _, c := range tt.changes {
				assert.Contains(t, reason, c)
			}
		})
	}
}

// The batch of PRs the controller reads each tick leaves out one whose
// record was changed outside agenttree, without failing the others; that
// PR read alone is the error.
func TestPRsLeaveOutATamperedRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{})
	e.branch(t, "one", map[string]string{"one.txt": "1\n"})
	e.branch(t, "two", map[string]string{"two.txt": "2\n"})
	for _, b := range []string{"one", "two"} {
		_, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: b})
		require.NoError(t, err)
	}
	rewriteFile(t, filepath.Join(e.state, "host", "forge", "prs", "1.yaml"), "state: open", "state: merged")

	prs, err := f.PRs(ctx, []int{1, 2})
	require.NoError(t, err)
	assert.NotContains(t, prs, 1)
	require.Contains(t, prs, 2)
	assert.Equal(t, "two", prs[2].Branch)
	_, err = f.PR(ctx, 1)
	require.ErrorIs(t, err, forge.ErrTampered)
}

// Verify checks every PR record and CI result against its whole log, one
// report each, PRs by number: a record changed outside agenttree, one
// removed and a log line edited are each reported, with what a person
// does; the others are ok.
func TestVerifyChecksEveryRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, f := newForge(t, local.Options{CICommand: "exit 1"})
	var heads []string
	for i, b := range []string{"b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10"} {
		heads = append(heads, e.branch(t, b, map[string]string{b + ".txt": b + "\n"}))
		_, _, err := f.EnsurePR(ctx, forge.NewPR{Branch: b})
		require.NoError(t, err)
		if i == 0 {
			waitCI(t, f, heads[0])
		}
	}
	forgeDir := filepath.Join(e.state, "host", "forge")

	reports, err := local.Verify(e.state)
	require.NoError(t, err)
	require.Len(t, reports, 11, "ten PR records and one CI result")
	for i, r := range reports[:10] {
		assert.Equal(t, "local PR #"+itoa(i+1), r.Record, "PRs by number")
		assert.True(t, r.OK, "%+v", r)
		assert.Equal(t, 1, r.Versions)
	}
	ci := reports[10]
	assert.Equal(t, "local CI of "+heads[0][:12], ci.Record)
	assert.True(t, ci.OK, "%+v", ci)
	assert.GreaterOrEqual(t, ci.Versions, 2, "started, then its result")

	rewriteFile(t, filepath.Join(forgeDir, "checks", heads[0]+".yaml"), "state: failure", "state: success")
	require.NoError(t, os.Remove(filepath.Join(forgeDir, "prs", "2.yaml")))
	require.NoError(t, f.Comment(ctx, 3, "first"))
	rewriteFile(t, filepath.Join(forgeDir, "prs", "3.chain.jsonl"), `"file":"3.yaml"`, `"file": "3.yaml"`)

	reports, err = local.Verify(e.state)
	require.NoError(t, err)
	require.Len(t, reports, 11)
	byRecord := map[string]local.RecordReport{}
	for _, r := range reports {
		byRecord[r.Record] = r
	}
	ci = byRecord["local CI of "+heads[0][:12]]
	assert.False(t, ci.OK)
	assert.Equal(t, []string{"its content is not the last version its log holds"}, ci.Problems)
	assert.Equal(t, []string{"state: failure → success"}, ci.Changes)
	assert.Contains(t, ci.Fix, "or removes both to run CI again")

	// A record written once, then removed: its log holds what agenttree
	// wrote, as after a crash between the two, and the forge reads it
	// from there.
	removed := byRecord["local PR #2"]
	assert.True(t, removed.OK, "%+v", removed)
	assert.Contains(t, strings.Join(removed.Notes, "\n"), "its file is missing and its log holds it")

	edited := byRecord["local PR #3"]
	assert.False(t, edited.OK)
	require.NotEmpty(t, edited.Problems)
	assert.Contains(t, edited.Problems[0], "line 1: its hash does not match its content")
	assert.Contains(t, edited.Fix, "a person puts back the version agenttree last wrote")

	for _, n := range []string{"local PR #1", "local PR #4", "local PR #10"} {
		assert.True(t, byRecord[n].OK, "%s: %+v", n, byRecord[n])
	}
}

// Verify of a state directory without the local forge's records finds
// none, and no error.
func TestVerifyWithoutRecords(t *testing.T) {
	t.Parallel()
	reports, err := local.Verify(t.TempDir())
	require.NoError(t, err)
	assert.Empty(t, reports)
}
