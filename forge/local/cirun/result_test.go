package cirun_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/local/cirun"
)

// A result file is "STATUS TIMEDOUT", and " WHY" after them when the run
// failed for its environment; anything else is no result yet (a runner
// still writing it), and the file's modification time is when CI ended.
func TestReadResult(t *testing.T) {
	t.Parallel()
	ended := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		content string
		want    cirun.Result
		ok      bool
	}{
		{"passed", "0 0\n", cirun.Result{Exit: 0, At: ended}, true},
		{"failed", "3 0\n", cirun.Result{Exit: 3, At: ended}, true},
		{"timed out", "143 1\n", cirun.Result{Exit: 143, TimedOut: true, At: ended}, true},
		{"lost", "-1 0", cirun.Result{Exit: -1, At: ended}, true},
		{"could not start", "126 0 start\n", cirun.Result{Exit: 126, At: ended, Environment: cirun.EnvStart}, true},
		{"killed from outside", "137 0 signal\n", cirun.Result{Exit: 137, At: ended, Environment: cirun.EnvSignal}, true},
		{"cancelled from outside", "143 0 cancelled\n", cirun.Result{Exit: 143, At: ended, Cancelled: true}, true},
		{"an unknown reason", "1 0 why\n", cirun.Result{}, false},
		{"empty", "", cirun.Result{}, false},
		{"half written", "3", cirun.Result{}, false},
		{"not numbers", "x 0\n", cirun.Result{}, false},
		{"too much", "0 0 0\n", cirun.Result{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "ci.result")
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o644))
			require.NoError(t, os.Chtimes(path, ended, ended))
			got, ok := cirun.ReadResult(path)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// A published result and one a runner wrote but did not publish are read
// apart, and removed together.
func TestUnpublishedResult(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ci.result")
	_, ok := cirun.ReadResult(path)
	assert.False(t, ok, "no file, no result")
	require.NoError(t, os.WriteFile(path+".tmp", []byte("3 0\n"), 0o644))
	_, ok = cirun.ReadResult(path)
	assert.False(t, ok, "not published")
	res, ok := cirun.ReadUnpublished(path)
	require.True(t, ok)
	assert.Equal(t, 3, res.Exit)

	require.NoError(t, os.WriteFile(path, []byte("0 0\n"), 0o644))
	cirun.RemoveResult(path)
	assert.NoFileExists(t, path)
	assert.NoFileExists(t, path+".tmp")
	cirun.RemoveResult(path) // nothing left to remove is fine
}
