package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/SECURITY.md names, next to each guarantee, the tests that hold it,
// and docs/RELIABILITY.md and docs/BENCHMARKS.md the tests behind their
// figures: each must be a test (or fuzz target) of the repository, so a
// renamed or removed test cannot leave a claim standing on nothing.
func TestSecurityDocNamesRealTests(t *testing.T) {
	root := filepath.Join("..", "..")
	var doc []byte
	for _, name := range []string{"SECURITY.md", "RELIABILITY.md", "BENCHMARKS.md"} {
		d, err := os.ReadFile(filepath.Join(root, "docs", name))
		if name != "SECURITY.md" && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		require.NoError(t, err)
		doc = append(doc, d...)
	}
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)\w+)\(`)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			defined[m[1]] = true
		}
		return nil
	})
	require.NoError(t, err)
	named := regexp.MustCompile("`((?:Test|Fuzz)[A-Z]\\w*)`").FindAllStringSubmatch(string(doc), -1)
	require.NotEmpty(t, named)
	for _, m := range named {
		assert.True(t, defined[m[1]], "docs/ names %s, which is no test of the repository", m[1])
	}
}

// attackCounts are, per deployment, the guarantees docs/SECURITY.md's
// table holds there and the distinct tests that prove them: "all" is
// every deployment.
func attackCounts(t *testing.T, doc string) map[string][2]int {
	t.Helper()
	_, table, ok := strings.Cut(doc, "## Guarantees, each with the test that proves it")
	require.True(t, ok, "docs/SECURITY.md has its table of guarantees")
	deployments := []string{"containers", "another user", "same user"}
	rows, tests := map[string]int{}, map[string]map[string]bool{}
	for _, d := range deployments {
		tests[d] = map[string]bool{}
	}
	test := regexp.MustCompile("`((?:Test|Fuzz)[A-Z]\\w*)`")
	for line := range strings.Lines(table) {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) != 3 || strings.HasPrefix(cells[1], "---") || cells[1] == "Deployments" {
			continue
		}
		for _, d := range deployments {
			if cells[1] != "all" && !strings.Contains(cells[1], d) {
				continue
			}
			rows[d]++
			for _, m := range test.FindAllStringSubmatch(cells[2], -1) {
				tests[d][m[1]] = true
			}
		}
	}
	out := map[string][2]int{}
	for _, d := range deployments {
		out[d] = [2]int{rows[d], len(tests[d])}
	}
	return out
}

// docs/RELIABILITY.md counts the attack suite per deployment from
// docs/SECURITY.md's table, and names real tests: neither can drift.
func TestReliabilityDocCountsTheAttackSuite(t *testing.T) {
	root := filepath.Join("..", "..")
	sec, err := os.ReadFile(filepath.Join(root, "docs", "SECURITY.md"))
	require.NoError(t, err)
	rel, err := os.ReadFile(filepath.Join(root, "docs", "RELIABILITY.md"))
	require.NoError(t, err)
	counts := attackCounts(t, string(sec))
	for d, name := range map[string]string{"containers": "Agents in containers", "another user": "Agents as another OS user", "same user": "Agents as the same user"} {
		c := counts[d]
		require.NotZero(t, c[0], d)
		row := fmt.Sprintf("| %s | %d | %d |", name, c[0], c[1])
		assert.Contains(t, string(rel), row, "docs/RELIABILITY.md's attack-suite table, from docs/SECURITY.md's guarantees")
	}
}
