package issues_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/statedir"
)

// preChainLog is issue 1's events.jsonl as agenttree wrote it before
// chains: one line per history entry, no hashes.
const preChainLog = `{"issue":1,"version":1,"from":"","to":"implement.code","kind":"create","actor":"human","reason":"","at":"2024-01-01T00:00:00Z"}` + "\n"

// firstLayout is a state directory as an agenttree from before host/
// and chains left it: issue 1 (no chain, a log of the old kind) beside
// its documents, a PR record and a CI record without logs. It returns
// the issue as issue.yaml holds it.
func firstLayout(t *testing.T) (statedir.Layout, *issues.Issue) {
	t.Helper()
	scratch, err := issues.Open(filepath.Join(t.TempDir(), "_agenttree"))
	require.NoError(t, err)
	old, err := scratch.Create(context.Background(), &issues.Issue{Title: "Old", Slug: "old", Flow: "default", Stage: "implement.code"}, "human")
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(scratch.HostDir(old.ID), "issue.yaml"))
	require.NoError(t, err)
	old.Chain = ""

	l := statedir.Layout{Root: filepath.Join(t.TempDir(), "_agenttree")}
	for path, content := range map[string]string{
		filepath.Join(l.Docs(1), "issue.yaml"):                string(data[:strings.Index(string(data), "chain:")]),
		filepath.Join(l.Docs(1), "events.jsonl"):              preChainLog,
		filepath.Join(l.Docs(1), "review.md"):                 "# Review\n",
		filepath.Join(l.Root, "issues", ".last-id"):           "1\n",
		filepath.Join(l.Root, "forge", "prs", "1.yaml"):       "number: 1\nstate: open\n",
		filepath.Join(l.Root, "forge", "checks", "0abc.yaml"): "sha: 0abc\nstate: failure\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	return l, old
}

// forgeRecord reads the forge record name in dir through its log.
func forgeRecord(dir, name string) error {
	_, err := chain.Records{Dir: dir}.Read(name)
	return err
}

// migrated is firstLayout opened once: migrated and adopted.
func migrated(t *testing.T) (statedir.Layout, *issues.Store, *issues.Issue) {
	t.Helper()
	l, old := firstLayout(t)
	s, err := issues.Open(l.Root)
	require.NoError(t, err)
	got, err := s.Get(old.ID)
	require.NoError(t, err)
	assert.NotEmpty(t, got.Chain, "opening the store chained it")
	assert.Equal(t, old.Version, got.Version, "migrating is no change of the issue")
	assert.Equal(t, old.Stage, got.Stage)
	return l, s, got
}

// A state directory from before chains keeps working: migrating it
// gives its issues (from their state then, the old log kept aside) and
// its forge records their chains, once.
func TestFirstLayoutIsAdopted(t *testing.T) {
	l, s, got := migrated(t)
	kept, err := os.ReadFile(filepath.Join(s.HostDir(got.ID), "events.pre-chain.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, preChainLog, string(kept))
	rep, err := s.Verify(got.ID)
	require.NoError(t, err)
	assert.True(t, rep.OK, "%+v", rep)
	assert.Contains(t, strings.Join(rep.Notes, "\n"), "migrate")
	require.NoError(t, forgeRecord(l.ForgePRs(), "1.yaml"))
	require.NoError(t, forgeRecord(l.ForgeChecks(), "0abc.yaml"))
	m, err := l.Migrate(context.Background())
	require.NoError(t, err)
	assert.False(t, m.Adopt, "the migration is done")
	_, err = s.Update(context.Background(), got.ID, got.Version, func(*issues.Issue) error { return nil })
	require.NoError(t, err)
}

// Once migrated, nothing deleted makes state count as from before
// chains: an issue without a chain, or a record without its log, is
// tampering, refused and shown by verify; a person may still adopt it.
func TestFirstLayoutIsAdoptedOnlyOnce(t *testing.T) {
	for _, tt := range []struct {
		name    string
		markers func(l statedir.Layout) []string
	}{
		{"with the marker", func(statedir.Layout) []string { return nil }},
		{"with the marker removed", func(l statedir.Layout) []string { return []string{filepath.Join(l.Host(), "layout")} }},
		{"with the markers of before removed too", func(l statedir.Layout) []string {
			return []string{filepath.Join(l.Host(), "layout"), filepath.Join(l.HostIssues(), ".chained"), filepath.Join(l.ForgePRs(), ".chained")}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, s, got := migrated(t)
			// What an agent of the same user can do: pass the issue and the
			// PR record off as ones from before chains.
			dir := s.HostDir(got.ID)
			rewrite(t, filepath.Join(dir, "issue.yaml"), func(s string) string {
				return strings.Replace(s[:strings.Index(s, "chain:")], "stage: implement.code", "stage: accepted", 1) +
					"entry_pending:\n    stage: accepted\n"
			})
			require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(preChainLog), 0o644))
			require.NoError(t, os.Remove(filepath.Join(l.ForgePRs(), "1.chain.jsonl")))
			rewrite(t, filepath.Join(l.ForgePRs(), "1.yaml"), func(s string) string { return s + "approvals:\n    - by: alice\n" })
			for _, m := range tt.markers(l) {
				require.NoError(t, os.RemoveAll(m))
			}
			attacked := snapshot(t, s, got.ID)

			s, err := issues.Open(l.Root)
			require.NoError(t, err)
			_, err = s.Get(got.ID)
			var te *issues.TamperedError
			require.ErrorAs(t, err, &te)
			assert.Contains(t, err.Error(), "as if it came from before chains")
			_, err = s.Update(context.Background(), got.ID, got.Version, func(*issues.Issue) error { return nil })
			require.ErrorAs(t, err, &te)
			rep, err := s.Verify(got.ID)
			require.NoError(t, err)
			assert.False(t, rep.OK)
			assert.Contains(t, strings.Join(rep.Problems, "\n"), "as if it came from before chains")
			assert.Equal(t, attacked, snapshot(t, s, got.ID), "nothing adopted it")
			require.ErrorIs(t, forgeRecord(l.ForgePRs(), "1.yaml"), chain.ErrUnlogged)
			require.NoError(t, forgeRecord(l.ForgeChecks(), "0abc.yaml"))

			_, err = s.Repair(context.Background(), got.ID, false)
			require.ErrorIs(t, err, issues.ErrNothingToRestore)
			done, err := s.Repair(context.Background(), got.ID, true)
			require.NoError(t, err, "a person's explicit choice still adopts it")
			assert.Equal(t, issues.RepairAdopted, done.Action)
			_, err = s.Get(got.ID)
			require.NoError(t, err)
		})
	}
}

// A crash after the migration moved the files, before the issues had
// their chains, is resumed by the next Open: the marker says the
// adoption is due until it is done.
func TestFirstLayoutAdoptionResumesAfterACrash(t *testing.T) {
	l, old := firstLayout(t)
	m, err := l.Migrate(context.Background()) // the files move, then the crash
	require.NoError(t, err)
	require.True(t, m.Adopt)
	require.FileExists(t, filepath.Join(l.Issue(old.ID), "issue.yaml"))

	s, err := issues.Open(l.Root)
	require.NoError(t, err)
	got, err := s.Get(old.ID)
	require.NoError(t, err)
	assert.NotEmpty(t, got.Chain)
	require.NoError(t, forgeRecord(l.ForgePRs(), "1.yaml"))
	m, err = l.Migrate(context.Background())
	require.NoError(t, err)
	assert.False(t, m.Adopt)
}

// A host/ without its marker is no first-layout directory: an issue
// without a chain there is not adopted, even on the first Open.
func TestHostWithoutMarkerAdoptsNothing(t *testing.T) {
	l, old := firstLayout(t)
	require.NoError(t, os.MkdirAll(l.Host(), statedir.HostMode))
	s, err := issues.Open(l.Root)
	require.NoError(t, err)
	_, err = s.Get(old.ID)
	var te *issues.TamperedError
	require.ErrorAs(t, err, &te)
	require.ErrorIs(t, forgeRecord(l.ForgePRs(), "1.yaml"), chain.ErrUnlogged)
}
