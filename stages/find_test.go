package stages_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

func TestFindWalksUp(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, stages.FileName), []byte("stages: [{name: a}]\n"), 0o644))
	deep := filepath.Join(root, "x", "y")
	require.NoError(t, os.MkdirAll(deep, 0o755))
	got, err := stages.Find(deep)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, stages.FileName), got)

	_, err = stages.Find(t.TempDir())
	require.ErrorContains(t, err, "agenttree init")
}
