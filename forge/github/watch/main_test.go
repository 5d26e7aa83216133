package watch

import (
	"os"
	"testing"

	"github.com/agenttree/agenttree/forge/github/githubtest/clienttest"
	"github.com/agenttree/agenttree/internal/gittest"
)

func TestMain(m *testing.M) {
	if os.Getenv(fakeForwarderEnv) != "" {
		os.Exit(runFakeForwarder(os.Args[1:]))
	}
	gittest.IsolateProcess()
	os.Exit(clienttest.RunIsolated(m))
}

const (
	sha1 = "1111111111111111111111111111111111111111"
	sha2 = "2222222222222222222222222222222222222222"
)
