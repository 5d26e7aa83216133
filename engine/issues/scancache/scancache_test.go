package scancache

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/bincode"
)

// A field added to Issue or WatchFile of a kind bincode cannot encode
// would turn the scan cache off without a word (every status reading
// every issue again): this says which field.
func TestScanCacheEncodesEveryFieldOfAnIssue(t *testing.T) {
	_, err := bincode.New[scanFile]()
	require.NoError(t, err)
}
