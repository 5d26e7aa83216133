package archtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/agenttree/agenttree"

// layers are the ranks of docs/ARCHITECTURE.md §2, by path prefix within
// the module: a package may import its own rank and the ranks below it,
// never one above. controller, sessions and board share a rank; bench programs
// may import anything.
var layers = []struct {
	prefix string
	rank   int
}{
	{"internal", 0},
	{"chain", 0},
	{"docs", 0},
	{"examples", 0},
	{"stages", 1},
	{"forge", 2},
	{"hooks", 3},
	{"engine", 4},
	{"controller", 5},
	{"sessions", 5},
	{"board", 5},
	{"cmd", 6},
	{"bench", 7},
}

func rankOf(t *testing.T, pkg string) int {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	for _, l := range layers {
		if rel == l.prefix || strings.HasPrefix(rel, l.prefix+"/") {
			return l.rank
		}
	}
	t.Fatalf("package %s has no layer: add its directory to layers in layers_test.go and to docs/ARCHITECTURE.md §2", pkg)
	return 0
}

// TestNoImportRunsUpward walks the production imports of every package
// in the module (tests may reach anywhere) and fails on an arrow from a
// lower layer to a higher one.
func TestNoImportRunsUpward(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...").Output()
	require.NoError(t, err, "go list: %s", errText(err))

	var upward []string
	packages := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		packages++
		from := fields[0]
		for _, to := range fields[1:] {
			if !strings.HasPrefix(to, module+"/") {
				continue
			}
			if rankOf(t, to) > rankOf(t, from) {
				upward = append(upward, strings.TrimPrefix(from, module+"/")+" → "+strings.TrimPrefix(to, module+"/"))
			}
		}
	}
	require.NoError(t, sc.Err())
	require.Greater(t, packages, 50, "go list found too few packages to judge")
	require.Empty(t, upward, "imports that run upward (docs/ARCHITECTURE.md §2)")
}

func errText(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// TestPackagesStayReadable holds the size guideline of docs/ARCHITECTURE.md
// §2: no production package over 1,500 lines, no file over 500. A package
// that outgrows it is split along a seam, not trimmed to fit.
func TestPackagesStayReadable(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.Dir}}{{range .GoFiles}} {{.}}{{end}}`, module+"/...").Output()
	require.NoError(t, err, "go list: %s", errText(err))

	var over []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		dir, total := fields[0], 0
		for _, name := range fields[1:] {
			data, err := os.ReadFile(filepath.Join(dir, name))
			require.NoError(t, err)
			n := bytes.Count(data, []byte("\n"))
			total += n
			if n > 500 {
				over = append(over, fmt.Sprintf("%s/%s: %d lines (at most 500 a file)", dir, name, n))
			}
		}
		if total > 1500 {
			over = append(over, fmt.Sprintf("%s: %d lines (at most 1,500 a package)", dir, total))
		}
	}
	require.NoError(t, sc.Err())
	require.Empty(t, over, "split along a seam (docs/ARCHITECTURE.md §2)")
}
