package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/SECURITY.md names, next to each guarantee, the tests that hold it:
// each must be a test (or fuzz target) of the repository, so a renamed or
// removed test cannot leave a guarantee standing on nothing.
func TestSecurityDocNamesRealTests(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "SECURITY.md"))
	require.NoError(t, err)
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)\w+)\(`)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
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
		assert.True(t, defined[m[1]], "docs/SECURITY.md names %s, which is no test of the repository", m[1])
	}
}
