//go:build unix

package issues_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/atomicfile"
)

// A Create that fails after it took its id (here: its issue's lock held
// elsewhere) gives the id back: it was never an issue's, so it is not
// listed as missing, and the next Create takes it.
func TestFailedCreateIsNotMissing(t *testing.T) {
	ctx := context.Background()
	s, first := newStore(t)
	// The next issue's directory is a symlink, which the id count does
	// not see, to a directory whose .lock is held: Create takes id 2,
	// makes nothing new, and waits for the lock in vain.
	held := t.TempDir()
	unlock, err := atomicfile.Lock(ctx, filepath.Join(held, ".lock"), time.Second, "held by the test")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(held, s.HostDir(first.ID+1)))
	s.LockTimeout = 200 * time.Millisecond

	_, err = s.Create(ctx, &issues.Issue{Title: "Two", Slug: "two", Flow: "default", Stage: "implement.code"}, "human")
	require.Error(t, err)
	unlock()
	_, err = os.Lstat(s.HostDir(first.ID + 1))
	require.ErrorIs(t, err, os.ErrNotExist, "the failed Create removed what it made")
	last, err := os.ReadFile(filepath.Join(filepath.Dir(s.HostDir(first.ID)), ".last-id"))
	require.NoError(t, err)
	assert.Equal(t, "1", strings.TrimSpace(string(last)), "the id is given back")
	ids, err := s.IDs()
	require.NoError(t, err)
	missing, err := s.Missing(ids)
	require.NoError(t, err)
	assert.Empty(t, missing)

	again, err := s.Create(ctx, &issues.Issue{Title: "Two", Slug: "two", Flow: "default", Stage: "implement.code"}, "human")
	require.NoError(t, err)
	assert.Equal(t, first.ID+1, again.ID)
}
