// Package localtest lets a test binary serve as the local forge's CI
// runner. The forge runs CI by starting its own executable again with
// cirun.Command (see local.Options.Runner); under `go test` that
// executable is the test binary, which must then run the CI attempt
// instead of the tests.
package localtest

import (
	"context"
	"os"

	"github.com/agenttree/agenttree/forge/local/cirun"
)

// RunnerMain runs the CI attempt and exits when this process was started
// as a local CI runner, and returns at once otherwise. Call it first in
// the TestMain of every package whose tests run the local forge's CI:
//
//	func TestMain(m *testing.M) {
//		localtest.RunnerMain()
//		os.Exit(m.Run())
//	}
func RunnerMain() {
	if len(os.Args) < 2 || os.Args[1] != cirun.Command {
		return
	}
	os.Exit(cirun.Main(context.Background(), os.Args[2:], os.Stderr))
}
