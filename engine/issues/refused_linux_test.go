package issues_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/stages"
)

// A reader without the lock (Store.Get: the controller's mail, status,
// show) never sees a move a full disk refused: issue.yaml's new content
// is written before the line is logged, so the disk refuses the move
// before anything is logged (docs/RELIABILITY.md).
func TestALocklessReaderNeverSeesAMoveRefused(t *testing.T) {
	root := filepath.Join(t.TempDir(), "_agenttree")
	require.NoError(t, os.MkdirAll(root, 0o755))
	ostest.Tmpfs(t, root, 1<<20)
	s, err := issues.Open(root)
	require.NoError(t, err)
	iss, err := s.Create(context.Background(), &issues.Issue{Title: "Add login page", Slug: "add-login-page", Flow: "default", Stage: "implement.code"}, "human")
	require.NoError(t, err)
	filler := ostest.Fill(t, root, 0)
	defer os.Remove(filler)

	var stop atomic.Bool
	var phantom atomic.Int64
	var phantomStage atomic.Value
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				got, err := s.Get(iss.ID)
				if err == nil && got.Version > iss.Version {
					phantom.Add(1)
					phantomStage.Store(got.Stage)
				}
			}
		}()
	}
	refused := 0
	for i := 0; i < 3000 && phantom.Load() == 0; i++ {
		_, err := s.Update(context.Background(), iss.ID, iss.Version, func(cur *issues.Issue) error {
			cur.History = append(cur.History, issues.HistoryEntry{From: cur.Stage, To: "implement.review", Kind: stages.MoveAdvance, Actor: "agent", At: cur.Updated})
			cur.Stage = "implement.review"
			return nil
		})
		require.Error(t, err)
		require.Contains(t, err.Error(), "the change was not saved and the issue is as it was", "refused whole")
		refused++
	}
	stop.Store(true)
	wg.Wait()
	got, err := s.Get(iss.ID)
	require.NoError(t, err)
	require.Equal(t, iss.Version, got.Version, "each change refused")
	t.Logf("%d refused updates; a lockless Get returned version %d+1 (stage %v) %d times", refused, iss.Version, phantomStage.Load(), phantom.Load())
	require.Zero(t, phantom.Load(), "Get returned a state that was never made")
}
