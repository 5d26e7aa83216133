package issues_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/stages"
)

// FuzzVerify runs the store's Verify (over the file backend) on an issue
// whose issue.yaml and events.jsonl are any bytes, seeded with the files
// the store wrote for an issue moved three times, and those files with
// one byte changed (docs/SECURITY.md, tamper evidence). Verify never
// passes a log whose chain is broken: when it finds nothing wrong (nor an
// interrupted write), the log is the one written (with at most a torn
// line after it) and issue.yaml reads as the issue written.
func FuzzVerify(f *testing.F) {
	s, err := issues.Open(filepath.Join(f.TempDir(), "_agenttree"))
	require.NoError(f, err)
	ctx := context.Background()
	iss, err := s.Create(ctx, &issues.Issue{Title: "Add login page", Slug: "add-login-page", Flow: "default", Stage: "implement.code"}, "human")
	require.NoError(f, err)
	for _, to := range []string{"implement.review", "implement.code", "implement.review"} {
		iss, err = s.Update(ctx, iss.ID, iss.Version, func(cur *issues.Issue) error {
			cur.History = append(cur.History, issues.HistoryEntry{From: cur.Stage, To: to, Kind: stages.MoveAdvance, Actor: "agent", At: cur.Updated})
			cur.Stage = to
			if to == "implement.code" {
				cur.Vars = map[string]any{"coverage": 81.5, "needs_ui_review": true}
			}
			return nil
		})
		require.NoError(f, err)
	}
	dir := s.HostDir(iss.ID)
	origYAML, err := os.ReadFile(filepath.Join(dir, "issue.yaml"))
	require.NoError(f, err)
	origLog, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	require.NoError(f, err)
	rep, err := s.Verify(iss.ID)
	require.NoError(f, err)
	require.True(f, rep.OK, "%+v", rep)
	want := asJSON(f, origYAML)

	f.Add(origYAML, origLog)
	for _, at := range []int{0, len(origLog) / 3, len(origLog) / 2, len(origLog) - 2} {
		changed := bytes.Clone(origLog)
		changed[at] ^= 1
		f.Add(origYAML, changed)
	}
	for _, edit := range [][2]string{{"implement.review", "implement.code"}, {"version: 4", "version: 5"}, {"81.5", "80"}, {"chain: ", "chain: 0"}} {
		f.Add(bytes.Replace(origYAML, []byte(edit[0]), []byte(edit[1]), 1), origLog)
	}
	f.Add(origYAML, origLog[:bytes.LastIndexByte(origLog[:len(origLog)-1], '\n')+1])
	f.Fuzz(func(t *testing.T, yamlData, log []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "issue.yaml"), yamlData, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl"), log, 0o644))
		rep, err := s.Verify(iss.ID)
		require.NoError(t, err)
		if !rep.OK || rep.Interrupted {
			return
		}
		require.True(t, bytes.HasPrefix(log, origLog), "a changed events.jsonl verified: %q", log)
		require.NotContains(t, string(log[len(origLog):]), "\n", "lines after the written ones verified")
		require.JSONEq(t, want, asJSON(t, yamlData), "a changed issue.yaml verified: %q", yamlData)
	})
}

// asJSON is issue.yaml's issue as JSON, what its state hash covers.
func asJSON(tb testing.TB, data []byte) string {
	tb.Helper()
	var iss issues.Issue
	require.NoError(tb, yaml.Unmarshal(data, &iss))
	out, err := json.Marshal(&iss)
	require.NoError(tb, err)
	return string(out)
}
