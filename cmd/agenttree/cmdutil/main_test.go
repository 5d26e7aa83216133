package cmdutil

import (
	"os"
	"testing"

	"github.com/agenttree/agenttree/forge/local/localtest"
)

func TestMain(m *testing.M) {
	// The local forge runs CI by starting this test binary as its runner.
	localtest.RunnerMain()
	os.Exit(m.Run())
}
