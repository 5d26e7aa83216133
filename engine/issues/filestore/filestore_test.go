package filestore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/engine/issues/eventlog"
	"github.com/agenttree/agenttree/engine/issues/filestore"
	"github.com/agenttree/agenttree/engine/issues/storetest"
	"github.com/agenttree/agenttree/internal/statedir"
)

// The file backend passes the store backends' conformance suite, on the
// state directory the store opens it on, as issues.Open does.
func TestFilestoreConforms(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Subject {
		root := filepath.Join(t.TempDir(), "_agenttree")
		layout := statedir.Layout{Root: root}
		return storetest.Subject{
			Backend: filestore.Open(root),
			Root:    root,
			Again:   func(*testing.T) backend.Backend { return filestore.Open(root) },
			Remove: func(t *testing.T, id int) {
				require.NoError(t, os.RemoveAll(layout.Issue(id)))
			},
			RemoveLog: func(t *testing.T, id int) {
				require.NoError(t, os.Remove(filepath.Join(layout.Issue(id), eventlog.File)))
			},
			Tear: func(t *testing.T, id int, partial []byte) {
				f, err := os.OpenFile(filepath.Join(layout.Issue(id), eventlog.File), os.O_APPEND|os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = f.Write(partial)
				require.NoError(t, err)
				require.NoError(t, f.Close())
			},
		}
	})
}
