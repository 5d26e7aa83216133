package watch

import (
	"os"
	"testing"

	"github.com/agenttree/agenttree/forge/github/githubtest/clienttest"
	"github.com/agenttree/agenttree/forge/github/githubtest/ghforward"
	"github.com/agenttree/agenttree/internal/gittest"
)

// fakeForwarderEnv makes the test binary the fake `gh webhook forward`
// (forge/github/githubtest/ghforward), with the fake GitHub's URL and
// token in the variable's value.
const fakeForwarderEnv = "AGENTTREE_TEST_FAKE_GH_FORWARD"

func TestMain(m *testing.M) {
	ghforward.Main(fakeForwarderEnv)
	gittest.IsolateProcess()
	os.Exit(clienttest.RunIsolated(m))
}

const (
	sha1 = "1111111111111111111111111111111111111111"
	sha2 = "2222222222222222222222222222222222222222"
)
