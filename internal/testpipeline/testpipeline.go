// Package testpipeline reads the pipelines tests share, from
// testdata/pipelines at the top of the repository, so that no test file
// pastes its own copy of the same config.
package testpipeline

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Read returns testdata/pipelines/NAME.yaml, or fails t.
func Read(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(Path(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Path is where testdata/pipelines/NAME.yaml is.
func Path(t testing.TB, name string) string {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testpipeline: cannot tell where the repository is")
	}
	return filepath.Join(filepath.Dir(self), "..", "..", "testdata", "pipelines", name+".yaml")
}
