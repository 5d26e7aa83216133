package clienttest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	// A developer's login, as RunIsolated must keep out.
	for _, k := range []string{"GH_TOKEN", "GITHUB_TOKEN", "GH_HOST"} {
		if err := os.Setenv(k, "from-the-developer"); err != nil {
			panic(err)
		}
	}
	os.Exit(RunIsolated(m))
}

func TestRunIsolatedKeepsTheDevelopersGitHubOut(t *testing.T) {
	for _, k := range []string{"GH_TOKEN", "GITHUB_TOKEN", "GH_HOST"} {
		_, set := os.LookupEnv(k)
		assert.False(t, set, k)
	}
	dir := os.Getenv("GH_CONFIG_DIR")
	require.NotEmpty(t, dir)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "a config dir of its own, empty")
	assert.Equal(t, filepath.Join(dir, "no-gh-here"), os.Getenv("GH_PATH"))
}

func TestSleeperRecordsWaits(t *testing.T) {
	var sl Sleeper
	var seen []int
	sl.OnWait(func(n int) { seen = append(seen, n) })
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, sl.Sleep(ctx, time.Second))
	cancel()
	assert.ErrorIs(t, sl.Sleep(ctx, time.Minute), context.Canceled)
	assert.Equal(t, []time.Duration{time.Second, time.Minute}, sl.Waits())
	assert.Equal(t, []int{1, 2}, seen)
}
