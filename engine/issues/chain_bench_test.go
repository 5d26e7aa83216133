package issues_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/stages"
)

// benchIssue is an issue with 20 moves behind it, in a store under dir.
func benchIssue(b *testing.B, dir string) (*issues.Store, *issues.Issue) {
	b.Helper()
	ctx := context.Background()
	s, err := issues.Open(filepath.Join(dir, "_agenttree"))
	require.NoError(b, err)
	iss, err := s.Create(ctx, &issues.Issue{Title: "Add login page", Slug: "add-login-page", Flow: "default", Stage: "implement.code",
		Vars: map[string]any{"touches_auth": true}}, "human")
	require.NoError(b, err)
	for i := range 20 {
		iss, err = s.Update(ctx, iss.ID, iss.Version, func(cur *issues.Issue) error {
			to := fmt.Sprintf("s%02d", i)
			cur.History = append(cur.History, issues.HistoryEntry{From: cur.Stage, To: to, Kind: stages.MoveAdvance, Actor: "agent", At: time.Now().UTC()})
			cur.Stage = to
			return nil
		})
		require.NoError(b, err)
	}
	return s, iss
}

// BenchmarkUpdate is one Store.Update of an issue with 20 moves behind
// it, a change without history (an output), so every round writes the
// same amount. Run it in a copy of the code before the chain (it only
// uses what both have) to compare.
func BenchmarkUpdate(b *testing.B) {
	ctx := context.Background()
	s, iss := benchIssue(b, b.TempDir())
	n := 0
	for b.Loop() {
		var err error
		n++
		iss, err = s.Update(ctx, iss.ID, iss.Version, func(cur *issues.Issue) error {
			cur.Outputs = map[string]string{"round": fmt.Sprint(n)}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGet is a display's read of one issue, its head checked (run
// it before the chain too: status reads every issue so).
func BenchmarkGet(b *testing.B) {
	s, iss := benchIssue(b, b.TempDir())
	for b.Loop() {
		if _, err := s.Get(iss.ID); err != nil {
			b.Fatal(err)
		}
	}
}
